// Package wtrun holds the worktree runs (start --worktree): making the run's branch
// and linked worktree from the user's checkout (which is never touched), completing a
// start a crash cut short, re-creating a deleted worktree, running the loop there, and
// finish --squash/--keep of such a run, including a --squash killed half-way.
//
// It is built on internal/loop and reached from it only through loop.WorktreeRuns,
// which the CLI sets (Loop.Worktrees = wtrun.Runs): internal/loop must never import
// it, and it must import no other workflow package (internal/githubflow,
// internal/parallel). What the loop, status and finish --pr read of a worktree run
// (where it works, its state, its crash locks, removing its worktree) stays in
// internal/loop.
package wtrun

import (
	"context"

	"github.com/git-ralph/git-ralph/internal/agent"
	"github.com/git-ralph/git-ralph/internal/loop"
	"github.com/git-ralph/git-ralph/internal/run"
)

// Runs is the loop.WorktreeRuns of git-ralph.
var Runs loop.WorktreeRuns = runs{}

type runs struct{}

func (runs) Start(ctx context.Context, l *loop.Loop, o loop.Options, drv agent.Driver, path string) (*loop.Summary, error) {
	return startWorktree(ctx, l, o, drv, path)
}

func (runs) Finish(ctx context.Context, l *loop.Loop, rec *run.Record, mode loop.FinishMode) (*loop.FinishResult, error) {
	return finishWorktree(ctx, l, rec, mode)
}
