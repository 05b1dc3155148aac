package githubflow

import (
	"context"
	"errors"
	"fmt"

	"github.com/git-ralph/git-ralph/internal/loop"
	"github.com/git-ralph/git-ralph/internal/run"
)

// errNothingPublished marks the error of a run that ended without publishing.
var errNothingPublished = errors.New("the run ended without publishing")

// resumeRemoteRun brings a dispatched run home for start to go on from (loop.RemoteRuns'
// Resume): its result once it has published, or, when it ended without publishing, its
// start commit (takeBackUnpublished).
func (fl *Flow) resumeRemoteRun(ctx context.Context, rec *run.Record) error {
	if err := fl.importRemoteRun(ctx, rec); !errors.Is(err, errNothingPublished) {
		return err
	}
	return fl.takeBackUnpublished(ctx, rec)
}

// takeBackUnpublished makes the record of a run that ended without publishing a local
// one at the start commit, for start to go on from: the local branch is where dispatch
// made it (created again if it was deleted; commits made on it since are start's to
// take as the checkpoint, as after any stop).
func (fl *Flow) takeBackUnpublished(ctx context.Context, rec *run.Record) error {
	l, r := fl.Loop, rec.Remote
	ref := "refs/heads/" + rec.Branch
	if _, ok, err := l.Repo.ResolveRef(ctx, ref); err != nil {
		return err
	} else if !ok {
		if err := l.Repo.CreateRef(ctx, ref, r.StartCommit); err != nil {
			return err
		}
	}
	rec.Stop(run.Interrupted, fmt.Sprintf("run %d on GitHub Actions ended (%s) without publishing", r.RunID, r.LastSeenConclusion), nil)
	rec.Checkpoint = r.StartCommit
	l.Report.Step(fmt.Sprintf("run %d on GitHub Actions published nothing (%s): going on here from %s at %s", r.RunID, r.LastSeenConclusion, rec.Branch, loop.Short(r.StartCommit)))
	return l.Save(rec)
}
