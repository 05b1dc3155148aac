// Package wtrun holds the worktree runs (start --worktree): making the run's branch
// and linked worktree from the user's checkout (which is never touched), completing a
// start a crash cut short, re-creating a deleted worktree, running the loop there, and
// finish --squash/--keep of such a run, including a --squash killed half-way.
//
// It is built on internal/loop and reached from it only through loop.WorktreeRuns,
// which the CLI sets (Loop.Worktrees = wtrun.Runs): internal/loop must never import
// it, and it must import no other workflow package (internal/githubflow,
// internal/parallel). What the loop reads of a worktree run (where it works) stays in
// internal/loop, and its state is the record's (run.Record.WorktreeState, ChangeRoot);
// what finish --pr does with its worktree and checkout (checkout.go) it asks of this
// package through loop.WorktreeRuns.
package wtrun

import (
	"context"

	"github.com/git-ralph/git-ralph/internal/git"
	"github.com/git-ralph/git-ralph/internal/loop"
	"github.com/git-ralph/git-ralph/internal/run"
	"github.com/git-ralph/git-ralph/internal/start"
)

// Runs is the loop.WorktreeRuns of git-ralph.
var Runs loop.WorktreeRuns = runs{}

type runs struct{}

func (runs) Start(ctx context.Context, l *loop.Loop, r *loop.Resolved, path string) (*start.Summary, error) {
	return startWorktree(ctx, l, r, path)
}

func (runs) Path(ctx context.Context, l *loop.Loop, change, path string) (string, error) {
	return worktreePath(ctx, l, change, path)
}

func (runs) Finish(ctx context.Context, l *loop.Loop, rec *run.Record, mode run.FinishMode) (*run.FinishResult, error) {
	return finishWorktree(ctx, l, rec, mode)
}

func (runs) FromOrigin(ctx context.Context, l *loop.Loop, rec *run.Record) (*loop.Loop, error) {
	return fromOrigin(ctx, l, rec)
}

func (runs) ClearCrashLocks(ctx context.Context, l *loop.Loop, rec *run.Record, again string) error {
	return clearCrashLocks(ctx, l, rec, again)
}

func (runs) Dirty(ctx context.Context, l *loop.Loop, rec *run.Record) ([]git.StatusEntry, bool, error) {
	return worktreeDirty(ctx, l, rec)
}

func (runs) Remove(ctx context.Context, l *loop.Loop, rec *run.Record, dirty []git.StatusEntry, present bool, res *run.FinishResult) error {
	return removeWorktree(ctx, l, rec, dirty, present, res)
}
