// Package finish holds squash and keep, the last steps of the finish pipeline
// (loop.FinishWith) for a run in the user's checkout: a worktree run's are
// internal/wtrun's (through loop.WorktreeRuns), pr is internal/githubflow's. It is built
// on internal/loop, which never imports it, and imports no other workflow package.
package finish

import (
	"context"
	"fmt"

	"github.com/git-ralph/git-ralph/internal/loop"
	"github.com/git-ralph/git-ralph/internal/run"
	"github.com/git-ralph/git-ralph/internal/tell"
)

// Run ends the run of change (or of the only run) the way mode says: the finish
// pipeline with squash or keep as its last step, here or, for a worktree run, in
// Loop.Worktrees. No step is cut short by Ctrl-C.
func Run(ctx context.Context, l *loop.Loop, change string, mode run.FinishMode) (*run.FinishResult, error) {
	var res *run.FinishResult
	err := l.FinishWith(context.WithoutCancel(ctx), change, loop.FinishStrategy{
		Command: func(change string) string { return run.FinishCommand(change, mode) },
		Resumes: true,
		Act: func(ctx context.Context, f *loop.FinishRun) (err error) {
			if f.Rec.Worktree != nil {
				res, err = f.Loop.Worktrees.Finish(ctx, f.Loop, f.Rec, mode)
				return err
			}
			// finish's own git here (checkout, merge, reset) reads the config and runs
			// hooks and filters: the surface is guarded while it runs.
			return f.GuardSurface(ctx, func() (err error) {
				res, err = here(ctx, f.Loop, f.Rec, mode)
				return err
			})
		},
	})
	if err != nil {
		return nil, err
	}
	return res, nil
}

// here is the last step of a finish in place: a pending squash is completed
// (resumeSquash) first.
func here(ctx context.Context, l *loop.Loop, rec *run.Record, mode run.FinishMode) (*run.FinishResult, error) {
	if rec.Finishing != nil {
		if res, err := resumeSquash(ctx, l, rec, mode); res != nil || err != nil {
			return res, err
		}
	}
	return act(ctx, l, rec.Change, rec, mode)
}

// act is Run of change (rec) once its checks are made and no finish --squash is
// pending: the branch must exist and the original branch be where the run recorded it
// (or --keep warns), then --keep switches to the branch and --squash starts the squash.
func act(ctx context.Context, l *loop.Loop, change string, rec *run.Record, mode run.FinishMode) (*run.FinishResult, error) {
	if ok, err := l.Repo.BranchExists(ctx, rec.Branch); err != nil {
		return nil, err
	} else if !ok {
		return nil, loop.BranchGone(rec)
	}
	cur, err := l.Repo.Branch(ctx)
	if err != nil {
		return nil, err
	}
	st, err := l.Repo.Status(ctx)
	if err != nil {
		return nil, err
	}
	res := &run.FinishResult{Change: change, Branch: rec.Branch}
	if err := l.CheckOriginal(ctx, l.Repo, rec, mode == run.Keep, run.FinishCommand(change, mode)); err != nil {
		return nil, err
	}
	if mode == run.Keep {
		return keep(ctx, l, rec, cur, len(st) > 0, res)
	}
	if len(st) > 0 {
		return nil, tell.UserErr(fmt.Sprintf("commit them on %s (they will be squashed too) or stash them, then run 'git ralph finish --squash' again", rec.Branch),
			"the working tree has %d uncommitted change(s)", len(st))
	}
	return startSquash(ctx, l, rec, res)
}

// keep is finish --keep of res.Change (rec): the checkout goes to the run's branch (from
// cur, dirty when it has uncommitted changes), and the run is forgotten.
func keep(ctx context.Context, l *loop.Loop, rec *run.Record, cur string, dirty bool, res *run.FinishResult) (*run.FinishResult, error) {
	if cur != rec.Branch {
		if dirty && rec.Busy != "" && cur != "" {
			// A switch to the branch was killed half-way (the worktree was clean):
			// keep what it left, put cur back as it was, and switch again.
			head, err := l.Repo.Head(ctx)
			if err != nil {
				return nil, err
			}
			if err := l.RestoreAfterCutShort(ctx, rec, cur, head, "switch to "+rec.Branch); err != nil {
				return nil, err
			}
		} else if dirty {
			return nil, tell.UserErr("commit or stash them, then run 'git ralph finish --keep' again", "you have uncommitted changes on %s", loop.BranchOrDetached(cur, ""))
		}
		if err := l.Busy(rec, "finish --keep", func() error { return l.Repo.Checkout(ctx, rec.Branch) }); err != nil {
			return nil, err
		}
	}
	l.SaveFinished(run.Finished{Change: res.Change, Branch: rec.Branch, How: "keep", At: l.Time()})
	return res, l.Store.Remove(res.Change)
}
