package loop

import (
	"context"
	"time"

	"github.com/git-ralph/git-ralph/internal/agent"
	"github.com/git-ralph/git-ralph/internal/git"
	"github.com/git-ralph/git-ralph/internal/run"
	"github.com/git-ralph/git-ralph/internal/source"
)

// The loop's small text helpers, for the workflows beside it (internal/githubflow),
// which used to keep copies of them.

// Short is a commit id cut to 7 characters.
func Short(id string) string { return short(id) }

// Tail returns the last n lines of s, trimmed.
func Tail(s string, n int) string { return tail(s, n) }

// OrDetached names the branch the run started from, or its commit when detached.
func OrDetached(rec *run.Record) string { return orDetached(rec) }

// OrDetachedName names branch cur, or "detached HEAD <head>" when cur is "".
func OrDetachedName(cur, head string) string { return orDetachedName(cur, head) }

// What internal/wtrun (worktree runs) needs of the loop, which used to be in here.

// UserErr is an error the user can act on: hint says how.
func UserErr(hint, format string, args ...any) *Error { return userErr(hint, format, args...) }

// FinishCommand is the command that finishes change in mode, for hints.
func FinishCommand(change string, mode FinishMode) string { return finishCommand(change, mode) }

// BackupRef is the ref under which a change's work is kept at t.
func BackupRef(change string, t time.Time) string { return backupRef(change, t) }

// SquashTarget names what finish --squash of rec landed on.
func SquashTarget(rec *run.Record) string { return squashTarget(rec) }

// WorktreeStateOf is where rec's worktree stands; nil for a run in the user's checkout.
func WorktreeStateOf(rec *run.Record) *run.WorktreeState { return rec.WorktreeState() }

// RecordSource records o's task source in rec.
func (o Options) RecordSource(rec *run.Record) { source.Record(rec, o.srcKind, o.srcArg, o.StoryLevel) }

// In returns a Loop like l whose git runs in the worktree at path, without automatic gc.
func (l *Loop) In(ctx context.Context, path string) (*Loop, error) { return l.in(ctx, path) }

// StartPoint is the branch and commit a new run starts from, refusing (with hint) what
// it cannot start from.
func (l *Loop) StartPoint(ctx context.Context, branch, hint string) (cur, head string, err error) {
	return l.startPoint(ctx, branch, hint)
}

// BackupBranch keeps an existing branch rec.Branch under refs/ralph/ before it is reset.
func (l *Loop) BackupBranch(ctx context.Context, rec *run.Record) error {
	return l.backupBranch(ctx, rec)
}

// DropNewRun undoes a new run that could not be made.
func (l *Loop) DropNewRun(ctx context.Context, rec *run.Record) { l.dropNewRun(ctx, rec) }

// RestoreAfterCutShort puts branch back at id after a step (a merge) cut short,
// keeping what it left.
func (l *Loop) RestoreAfterCutShort(ctx context.Context, rec *run.Record, branch, id, step string) error {
	return l.restoreAfterCutShort(ctx, rec, branch, id, step)
}

// OriginRepo opens the checkout the worktree run rec started from.
func (l *Loop) OriginRepo(ctx context.Context, rec *run.Record) (*git.Repo, error) {
	return l.originRepo(ctx, rec)
}

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
