package loop

import (
	"context"
	"fmt"

	"github.com/git-ralph/git-ralph/internal/run"
)

// FinishStrategy is the last step of the finish pipeline (FinishWith): squash and keep
// (Finish), pr (internal/githubflow).
type FinishStrategy struct {
	Command func(change string) string // the command line a hint says to run again
	// Resumes says the strategy meets a finish --squash a kill cut short
	// (rec.Finishing); the pipeline refuses such a run to the others.
	Resumes bool
	// Act checks the record against git, then finishes the run.
	Act func(ctx context.Context, f *FinishRun) error
}

// FinishRun is a run the pipeline has locked, brought home, located and recovered.
type FinishRun struct {
	Change, Again string // Again: the strategy's Command
	Rec           *run.Record
	// Loop works where the run's work goes back to: the checkout finish was called in,
	// or, called from inside a worktree run's worktree, the checkout the run started from.
	Loop *Loop
}

// FinishWith is the one way a run ends (ARCHITECTURE.md, "The way of a finish"): lock
// the run, bring a run on GitHub Actions home, locate it (a worktree run also under the
// worktrees lock), recover from a crash, then s.Act checks the record and acts.
func (l *Loop) FinishWith(ctx context.Context, name string, s FinishStrategy) error {
	change, rec, lock, err := l.LockRun(name)
	if err != nil {
		return err
	}
	defer lock.Unlock()
	if rec.Finishing != nil && !s.Resumes {
		return UserErr("run 'git ralph finish "+change+" --squash' to complete it",
			"an interrupted 'git ralph finish --squash' of %q is pending", change)
	}
	if rec.Status == run.Dispatching || rec.Status == run.Dispatched {
		if err := l.importRemoteRun(context.WithoutCancel(ctx), rec); err != nil {
			return err
		}
	}
	f := &FinishRun{Change: change, Again: s.Command(change), Rec: rec, Loop: l}
	if rec.Worktree != nil {
		if l.Worktrees == nil {
			return fmt.Errorf("finish of %q: its run is in a worktree, and there is no way to finish it here", change)
		}
		wlock, err := l.Store.LockWorktrees()
		if err != nil {
			return err
		}
		defer wlock.Unlock()
		if f.Loop, err = l.Worktrees.FromOrigin(ctx, l, rec); err != nil {
			return err
		}
	}
	if err := f.recover(ctx); err != nil {
		return err
	}
	return s.Act(ctx, f)
}

// recover is the crash-resume: the record says a loop or a finish was at work, yet the
// run lock was free. The locks a killed git left go (for a worktree run, in each of its
// checkouts), and the trust surface saved before a killed attempt is checked.
func (f *FinishRun) recover(ctx context.Context) error {
	rec, l := f.Rec, f.Loop
	if rec.Finishing == nil && rec.Status != run.Running && rec.Busy == "" {
		return nil
	}
	var err error
	if rec.Worktree != nil {
		err = l.Worktrees.ClearCrashLocks(ctx, l, rec, f.Again)
	} else {
		err = l.ClearCrashLocks(ctx, rec, f.Again)
	}
	if err != nil {
		return err
	}
	return l.CheckCrashedSurface(ctx, rec, f.Again)
}
