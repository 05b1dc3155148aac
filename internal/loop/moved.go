package loop

import (
	"context"
	"fmt"
	"strings"

	"github.com/git-ralph/git-ralph/internal/git"
	"github.com/git-ralph/git-ralph/internal/run"
)

// maxMovedCommits bounds the commits a refusal lists.
const maxMovedCommits = 10

// CheckOriginal is finish's look at the original branch: when it no longer points
// where the run recorded it at start, something other than the loop moved it (the
// trust surface restores what an agent does, so it was you, or an agent in a --worktree
// run, where a branch moved forward is let be). finish --squash and --pr refuse, naming
// the branch, both commits and the commits in between, unless OntoMoved; --keep (warn)
// only warns. repo is the checkout the original branch lives in. Nothing changes.
func (l *Loop) CheckOriginal(ctx context.Context, repo *git.Repo, rec *run.Record, warn bool, again string) error {
	if rec.Original == "" || rec.OriginalCommit == "" {
		return nil
	}
	now, ok, err := repo.ResolveRef(ctx, "refs/heads/"+rec.Original)
	if err != nil || !ok || now == rec.OriginalCommit {
		return err // a branch that is gone is the callers' business
	}
	commits, err := repo.Log(ctx, rec.OriginalCommit+".."+now, maxMovedCommits+1)
	if err != nil {
		return err
	}
	var b strings.Builder
	more := len(commits) > maxMovedCommits
	if more {
		commits = commits[:maxMovedCommits]
	}
	for _, c := range commits {
		fmt.Fprintf(&b, "  %s %s\n", Short(c.ID), c.Subject)
	}
	if more {
		fmt.Fprintf(&b, "  … ('git log %s..%s' shows them all)\n", Short(rec.OriginalCommit), Short(now))
	}
	if ff, err := repo.IsAncestor(ctx, rec.OriginalCommit, now); err == nil && !ff {
		fmt.Fprintf(&b, "  (and %s no longer contains %s: it was rewritten)\n", rec.Original, Short(rec.OriginalCommit))
	}
	what := fmt.Sprintf("%s moved since the run started: it was at %s, it is at %s", rec.Original, Short(rec.OriginalCommit), Short(now))
	switch {
	case warn:
		l.Report.Warn(what + ":\n" + strings.TrimSuffix(b.String(), "\n"))
		return nil
	case l.OntoMoved:
		l.Report.Step(what + "; going on (--onto-moved)")
		return nil
	}
	return UserErr("the commits on "+rec.Original+" since then:\n"+b.String()+
		"if they are yours, run '"+again+" --onto-moved'; if not, look at them first (git log -p "+Short(rec.OriginalCommit)+".."+Short(now)+"); nothing was changed", "%s", what)
}
