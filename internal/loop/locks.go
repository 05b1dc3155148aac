package loop

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"github.com/git-ralph/git-ralph/internal/tell"
	"path"
	"slices"
	"time"

	"github.com/git-ralph/git-ralph/internal/git"
	"github.com/git-ralph/git-ralph/internal/run"
	"github.com/git-ralph/git-ralph/internal/surface"
)

// Busy runs git steps with rec.Busy recording them, where the status does not say
// that git is at work, so that a kill in them is met by a crash-resume (which removes
// the locks its git left). A step that fails is no crash: Busy is cleared again, and a
// lock it met stays someone else's. After success the next status saved clears it.
func (l *Loop) Busy(rec *run.Record, name string, step func() error) error {
	mark := rec.Busy == "" && rec.Status != run.Running && rec.Status != run.Starting
	if mark {
		rec.Busy = name
		if err := l.Save(rec); err != nil {
			return err
		}
	}
	err := step()
	if err != nil && mark {
		rec.Busy = ""
		_ = l.Save(rec) // the step's error is the one to report
	}
	return err
}

// ClearCrashLocks removes the lock files a git killed with git-ralph left (every later git
// would refuse to run) before a crash-resume changes anything, in this repository and also's.
// Only a crash-resume calls it (the record says a run or finish was under way, yet the run
// lock was free): a lock met at any other time is someone else's. again is the command the
// hint of a lock in use names.
func (l *Loop) ClearCrashLocks(ctx context.Context, rec *run.Record, again string, also ...*git.Repo) error {
	branches := []string{rec.Branch}
	if rec.Original != "" {
		branches = append(branches, rec.Original)
	}
	dirs := []string{"refs/ralph/" + rec.Change}
	// Killed during an attempt: restoring the trust surface may have been under way,
	// and its git's locks are on the surface's refs.
	if snap, err := surface.Load(l.Store.Root(), l.surfacePath(rec.Change)); err == nil && snap != nil {
		for _, r := range snap.Refs {
			if d := path.Dir(r.Name); d != "refs" && !slices.Contains(dirs, d) {
				dirs = append(dirs, d)
			}
		}
	}
	removed, err := l.Repo.ClearStaleLocks(ctx, git.LockCheck{
		Branches: branches,
		RefDirs:  dirs,
		Also:     also,
		MinAge:   l.Waits.LockMinAge,
		Wait:     l.Waits.LockWait,
	})
	for _, name := range removed {
		l.Report.Step(fmt.Sprintf("removed a stale %s left by a crashed git", name))
	}
	return lockError(err, again)
}

// lockError turns ClearStaleLocks' refusals into errors for the user; again is the
// command to run once the lock is dealt with.
func lockError(err error, again string) error {
	var held *git.LockHeldError
	var unknown *git.LockUnknownError
	switch {
	case errors.As(err, &held) && held.PID == 0:
		return &tell.Error{Msg: held.Error(), Hint: "a git command may be running in this repository; when it is done, run '" + again + "' again; nothing was changed", Err: err}
	case errors.As(err, &held) && held.Open:
		return &tell.Error{Msg: held.Error(), Hint: fmt.Sprintf("let that process end (or end it: kill %d), then run '%s' again; nothing was changed", held.PID, again), Err: err}
	case errors.As(err, &held):
		return &tell.Error{Msg: held.Error(), Hint: "let that git command end, then run '" + again + "' again; nothing was changed", Err: err}
	case errors.As(err, &unknown):
		return &tell.Error{Msg: unknown.Error(), Hint: "if no git command is running in this repository, remove it: " + unknown.RmCommand() + "\nthen run '" + again + "' again; nothing was changed", Err: err}
	}
	return err
}

// LockRun resolves the change a finish means (the named one, or the only run), takes
// its run lock and loads its record under the lock, so that a loop which ended just
// before has had its last word. It refuses a run whose loop is at work, or whose start
// never completed. The caller unlocks.
func (l *Loop) LockRun(name string) (change string, rec *run.Record, lock *run.Lock, err error) {
	if change, err = l.ResolveRun(name); err != nil {
		return "", nil, nil, err
	}
	lock, err = l.Store.Lock(change)
	if errors.Is(err, run.ErrLocked) {
		return "", nil, nil, tell.UserErr("wait for it to end, or stop it with Ctrl-C in its terminal", "a loop is running for change %q", change)
	}
	if err != nil {
		return "", nil, nil, err
	}
	if rec, err = l.Store.Load(change); err == nil && rec.Status == run.Starting {
		err = tell.UserErr("run 'git ralph start "+change+"' to complete it, or 'git ralph start "+change+" --fresh'",
			"the run of %q never finished starting", change)
	}
	if err != nil {
		lock.Unlock()
		return "", nil, nil, err
	}
	return change, rec, lock, nil
}

// BranchGone is the error for a run whose branch was deleted: there is nothing to finish.
func BranchGone(rec *run.Record) error {
	return tell.UserErr("nothing is left to finish; remove the record with 'git ralph start "+rec.Change+" --fresh' or start over",
		"branch %s no longer exists", rec.Branch)
}

// clearKilledLoopLocks is ClearCrashLocks after a loop was killed: a git it ran may
// live on (it has a process group of its own, which a runner's kill of the loop does
// not reach) and is waited for gitWait (export's: as long as a loop would be), not a
// few seconds (Waits.LockWait).
func (l *Loop) clearKilledLoopLocks(ctx context.Context, rec *run.Record, again string, gitWait time.Duration) error {
	wait := l.Waits.LockWait
	l.Waits.LockWait = max(cmp.Or(wait, git.DefaultLockWait), gitWait)
	defer func() { l.Waits.LockWait = wait }()
	return l.ClearCrashLocks(ctx, rec, again)
}
