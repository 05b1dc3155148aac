package loop

import (
	"context"

	"github.com/git-ralph/git-ralph/internal/agent"
	"github.com/git-ralph/git-ralph/internal/run"
	"github.com/git-ralph/git-ralph/internal/source"
)

// RecordSource records o's task source in rec.
func (o Options) RecordSource(rec *run.Record) { source.Record(rec, o.srcKind, o.srcArg, o.StoryLevel) }

// RunInWorktree runs the loop of o in l, a Loop made by In for the run's worktree,
// once the run and its worktree exist: the stories are read from the worktree (the
// branch's tasks.md is the one the agent ticks, never the copy in the user's checkout).
func (l *Loop) RunInWorktree(ctx context.Context, o Options, drv agent.Driver) (*Summary, error) {
	gctx := context.WithoutCancel(ctx)
	rec, err := l.prepare(ctx, o)
	if err != nil {
		return nil, err
	}
	ch, err := l.reopen(gctx, l.Repo, o)
	if err != nil {
		return nil, err
	}
	sum, err := l.work(ctx, o, ch, drv, rec)
	if sum != nil {
		sum.Worktree = rec.Worktree.Path
	}
	return sum, err
}
