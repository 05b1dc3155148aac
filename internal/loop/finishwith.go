package loop

import (
	"context"
	"fmt"
	"github.com/git-ralph/git-ralph/internal/tell"
	"strings"

	"github.com/git-ralph/git-ralph/internal/run"
	"github.com/git-ralph/git-ralph/internal/surface"
)

// FinishStrategy is the last step of the finish pipeline (FinishWith): squash and keep
// (internal/finish, and internal/wtrun for a worktree run), pr (internal/githubflow).
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
		return tell.UserErr("run 'git ralph finish "+change+" --squash' to complete it",
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

// GuardSurface runs act, finish's own git, with the trust surface recorded before it:
// what differs after it was changed by a program of the agent's that git ran (or a
// process the agent left running), and is put back and warned of.
func (f *FinishRun) GuardSurface(ctx context.Context, act func() error) (err error) {
	l, rec := f.Loop, f.Rec
	snap, err := surface.Take(ctx, l.Repo, surface.Options{Change: rec.Change, Others: l.runStamps})
	if err != nil {
		return fmt.Errorf("record the trust surface: %w", err)
	}
	defer func() {
		if cerr := l.finishCheck(ctx, snap, rec); cerr != nil && err == nil {
			err = cerr
		}
	}()
	return act()
}

// finishCheck compares the trust surface with snap and puts back what differs.
func (l *Loop) finishCheck(ctx context.Context, snap *surface.Snapshot, rec *run.Record) error {
	changes, err := l.restoreSurface(ctx, snap, rec, "finish", false)
	if err != nil || len(changes) == 0 {
		return err
	}
	l.Report.Warn(strings.TrimPrefix(surface.Reason(changes, l.Repo.Root), "tampered: ") + " while finish ran (a program of the agent's that git ran, " +
		"or a process the agent left running): put back as listed above")
	return nil
}
