package loop

import (
	"context"
	"errors"
	"fmt"
	"github.com/git-ralph/git-ralph/internal/tell"
	"strings"

	"github.com/git-ralph/git-ralph/internal/git"
	"github.com/git-ralph/git-ralph/internal/preflight"
	"github.com/git-ralph/git-ralph/internal/run"
	"github.com/git-ralph/git-ralph/internal/source"
)

// ResolveRun picks the change a command means: the named one, or the only one with a run.
// A name is accepted only if it is one of the runs listed (never joined into a path).
func (l *Loop) ResolveRun(name string) (string, error) {
	return source.ResolveRunIn(l.Repo.Root, l.Store, name)
}

// SquashError is the error of a merge --squash of branch onto target that failed (err)
// and was undone: a conflict only when git reported one (a *git.ConflictError), with
// how to merge by hand (merge, a command line) and how to keep the branch instead (keep);
// else git's own failure. intact says where the user is now.
func SquashError(err error, branch, target, intact, merge, keep string) error {
	var conflict *git.ConflictError
	if errors.As(err, &conflict) {
		return &tell.Error{Msg: fmt.Sprintf("squashing %s onto %s conflicts", branch, target),
			Hint: fmt.Sprintf("%s moved on since the run started: git reported conflicts in %s\n%s is intact and %s\nmerge by hand: %s, resolve the conflicts, then git reset\nor keep the branch: %s",
				target, strings.Join(conflict.Paths, ", "), branch, intact, merge, keep),
			Err: err}
	}
	return &tell.Error{Msg: fmt.Sprintf("squashing %s onto %s failed: %v", branch, target, err),
		Hint: fmt.Sprintf("%s is as it was, %s is intact and %s\nor keep the branch: %s", target, branch, intact, keep),
		Err:  err}
}

// RestoreAfterCutShort keeps what a git step killed half-way left in the worktree
// (clean before it) under refs/ralph/<change>/backup/, then puts branch back at id,
// worktree and index included.
func (l *Loop) RestoreAfterCutShort(ctx context.Context, rec *run.Record, branch, id, step string) error {
	ref, err := l.freeRef(ctx, BackupRef(rec.Change, l.Time())+"-worktree")
	if err != nil {
		return err
	}
	if _, err := l.Repo.SaveAttempt(ctx, id, ref, "left over from an interrupted "+step+" of git ralph finish"); err != nil {
		return fmt.Errorf("keep the worktree an interrupted finish left: %w", err)
	}
	rec.Backups = append(rec.Backups, ref)
	l.Report.Step(fmt.Sprintf("kept what an interrupted %s left in the worktree as %s", step, ref))
	if err := l.Repo.Restore(ctx, branch, id); err != nil {
		return fmt.Errorf("restore %s: %w", branch, err)
	}
	return l.Save(rec)
}

// CheckOriginal is finish's look at the original branch (preflight.Moved), reported
// here, --onto-moved as l.OntoMoved says.
func (l *Loop) CheckOriginal(ctx context.Context, repo *git.Repo, rec *run.Record, warn bool, again string) error {
	return preflight.Moved{Report: l.Report, Store: l.Store, OntoMoved: l.OntoMoved}.Check(ctx, repo, rec, warn, again)
}
