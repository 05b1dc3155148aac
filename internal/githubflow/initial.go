package githubflow

import (
	"context"

	"github.com/git-ralph/git-ralph/internal/git"
	"github.com/git-ralph/git-ralph/internal/run"
)

// A run's "initial state" commit holds the user's words as the run began: the pull
// request's title and "Why" are read from it, and start --fresh goes back to it. So
// it is never a commit a remote record names: it is the one this machine recorded
// (start, or dispatch), or found here from a commit made here, and checked.

// initialOf is the "initial state" commit a run from tip began with, for a run that
// recorded none (dispatch continuing ralph/<change>, or an older git-ralph's run): the
// oldest commit on tip's first-parent line that original lacks, when that line has no merge
// (which could bring in anyone's "initial state"), the commit is this change's "initial
// state" and its parent is original; else "". tip is a commit of this machine's.
func (rem *Remote) initialOf(ctx context.Context, change, tip, original string) (string, error) {
	if tip == "" || original == "" || tip == original {
		return "", nil
	}
	cs, err := rem.Repo.FirstParentLog(ctx, original+".."+tip, maxAdoptWalk+1)
	if err != nil || len(cs) == 0 || len(cs) > maxAdoptWalk {
		return "", err
	}
	for _, c := range cs {
		if len(c.Parents) != 1 {
			return "", nil
		}
	}
	if root := cs[len(cs)-1]; isInitial(root, change, original) {
		return root.ID, nil
	}
	return "", nil
}

// isInitial reports whether c is an "initial state" commit of change on original.
func isInitial(c git.Commit, change, original string) bool {
	other := c.Trailers["Ralph-Change"]
	return c.Subject == "initial state" && len(c.Parents) == 1 && c.Parents[0] == original && (other == "" || other == change)
}

// userText is the commit the pull request's title and "Why" are read from: the run's
// initial state commit when it is one (an "initial state" commit on the original
// commit: the user's files as the run began, uncommitted edits included), else the
// original commit itself, the user's branch as the run began. Never a commit a runner
// made, nor one a run.json edited to name another would choose.
func (rem *Remote) userText(ctx context.Context, rec *run.Record) string {
	if rec.Initial != "" && rec.OriginalCommit != "" {
		if cs, err := rem.Repo.Log(ctx, rec.Initial, 1); err == nil && len(cs) == 1 && isInitial(cs[0], rec.Change, rec.OriginalCommit) {
			return rec.Initial
		}
	}
	return rec.OriginalCommit
}
