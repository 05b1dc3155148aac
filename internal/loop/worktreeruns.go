package loop

import (
	"context"
	"fmt"
	"github.com/git-ralph/git-ralph/internal/start"

	"github.com/git-ralph/git-ralph/internal/git"
	"github.com/git-ralph/git-ralph/internal/run"
)

// WorktreeRuns starts and finishes runs in a linked worktree of their own: internal/wtrun
// implements it and the CLI sets it (Loop.Worktrees). Start is the loop's way there,
// Finish internal/finish's; FromOrigin and ClearCrashLocks are the finish pipeline's,
// Dirty and Remove finish --pr's (internal/githubflow), reached through here so that no
// workflow package imports another. A Loop without it refuses such runs.
type WorktreeRuns interface {
	// Start runs the loop of r (what Start resolved) in the worktree at path, with the
	// change's lock held: it makes the run (or completes a start a crash cut short),
	// re-creates a deleted worktree from the branch, locks the worktree and runs the
	// loop there.
	Start(ctx context.Context, l *Loop, r *Resolved, path string) (*start.Summary, error)
	// Path is where a new worktree run of change works: path (--worktree=PATH) when
	// given, else a directory of its own under ralph.worktreeDir or the default; absolute.
	Path(ctx context.Context, l *Loop, change, path string) (string, error)
	// Finish ends the worktree run rec in mode (--squash or --keep).
	Finish(ctx context.Context, l *Loop, rec *run.Record, mode run.FinishMode) (*run.FinishResult, error)

	// FromOrigin returns l, or, when l works inside rec's worktree (which a finish may
	// remove), a Loop working in the checkout the run started from. The caller holds
	// the worktrees lock.
	FromOrigin(ctx context.Context, l *Loop, rec *run.Record) (*Loop, error)
	// ClearCrashLocks is ClearCrashLocks over this checkout, the run's origin and its
	// worktree, judged all together.
	ClearCrashLocks(ctx context.Context, l *Loop, rec *run.Record, again string) error
	// Dirty returns the uncommitted changes in the run's worktree, and whether the
	// worktree is there at all.
	Dirty(ctx context.Context, l *Loop, rec *run.Record) ([]git.StatusEntry, bool, error)
	// Remove removes the run's worktree when it is clean (dirty, as Dirty said) and
	// keeps it otherwise (res says which); a deleted one is pruned from git's list.
	Remove(ctx context.Context, l *Loop, rec *run.Record, dirty []git.StatusEntry, present bool, res *run.FinishResult) error
}

func (l *Loop) startWorktree(ctx context.Context, r *Resolved, path string) (*start.Summary, error) {
	if l.Worktrees == nil {
		return nil, fmt.Errorf("start of %q in a worktree: no way to run in a worktree here", r.Change)
	}
	return l.Worktrees.Start(ctx, l, r, path)
}

// RunInWorktree runs the loop of r in l, a Loop made by In for the run's worktree,
// once the run and its worktree exist: the stories are read from the worktree (the
// branch's tasks.md is the one the agent ticks, never the copy in the user's checkout).
func (l *Loop) RunInWorktree(ctx context.Context, r *Resolved) (*start.Summary, error) {
	rec, err := l.prepare(ctx, r)
	if err != nil {
		return nil, err
	}
	src, err := l.openResolved(ctx, r)
	if err != nil {
		return nil, err
	}
	sum, err := l.session(r, rec, src).work(ctx)
	if sum != nil {
		sum.Worktree = rec.Worktree.Path
	}
	return sum, err
}
