package githubflow

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"syscall"
	"time"

	"github.com/git-ralph/git-ralph/internal/loop"
	"github.com/git-ralph/git-ralph/internal/run"
	"github.com/git-ralph/git-ralph/internal/tell"
)

// How long export gives a loop of the same change that is still running (an orphan
// whose step was killed, or one still saving after the cancel's SIGINT): it waits
// DefaultStopWait for the loop to end on its own, then stops it as Ctrl-C would and
// waits DefaultKillWait more before it kills it. Together they fit GitHub's budget of
// 5 minutes from a cancel to the end of everything (docs/DESIGN-LOG.md, issue 19).
const (
	DefaultStopWait = 30 * time.Second
	DefaultKillWait = 15 * time.Second
)

// LockAfterLoop takes the change's lock for export. A loop holding it is waited for
// (StopWait), then sent SIGINT (it saves its attempt and exits, as on Ctrl-C), waited for
// (KillWait) and killed. Only the holder the kernel names that the record also names as the
// loop of Actions run runID is signalled; any other holder is waited for, then refused.
func (fl *Flow) LockAfterLoop(ctx context.Context, change string, runID int64) (*run.Lock, error) {
	lock, err := fl.Store.Lock(change)
	if !errors.Is(err, run.ErrLocked) {
		return lock, err
	}
	stopWait, killWait := cmp.Or(fl.StopWait, DefaultStopWait), cmp.Or(fl.KillWait, DefaultKillWait)
	pid := fl.Store.Holder(change)
	fl.Loop.Report.Step(fmt.Sprintf("a loop of %s is still running (pid %s); waiting up to %s for it to end", change, pidText(pid), stopWait))
	if lock, err := fl.waitLock(ctx, change, stopWait); lock != nil || err != nil {
		return lock, err
	}
	running := tell.UserErr("export once the loop has stopped", "a loop is running for change %q", change)
	if testHookAfterStopWait != nil {
		testHookAfterStopWait()
	}
	pid = fl.Store.Holder(change)
	rec, err := fl.Store.Load(change)
	if pid <= 1 || err != nil || rec.PID != pid {
		// The holder may have ended between the wait and Holder (which then says 0):
		// one more try before refusing.
		return fl.lockOrRefuse(change, running)
	}
	if rec.Remote == nil || rec.Remote.RunID != runID {
		return nil, tell.UserErr("export only stops the loop of its own run: stop that loop yourself, or pass the run id it works for",
			"a loop of change %q that is not Actions run %d holds it (pid %d); it was left running", change, runID, pid)
	}
	fl.Loop.Report.Step(fmt.Sprintf("stopping the loop (pid %d) as Ctrl-C would, so that it saves the attempt under way", pid))
	if err := syscall.Kill(pid, syscall.SIGINT); err != nil && !errors.Is(err, syscall.ESRCH) {
		return nil, fmt.Errorf("stop the loop (pid %d): %w", pid, err)
	}
	if lock, err := fl.waitLock(ctx, change, killWait); lock != nil || err != nil {
		return lock, err
	}
	if now := fl.Store.Holder(change); now != pid {
		return fl.lockOrRefuse(change, running)
	}
	fl.Loop.Report.Warn(fmt.Sprintf("the loop (pid %d) did not stop within %s; killing it, and saving what it left", pid, killWait))
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
		return nil, fmt.Errorf("kill the loop (pid %d): %w", pid, err)
	}
	// The kernel releases the lock once the process is gone.
	if lock, err := fl.waitLock(ctx, change, killWait); lock != nil || err != nil {
		return lock, err
	}
	return nil, running
}

// testHookAfterStopWait, set by tests, runs between the end of StopWait and the look
// at the holder: where a loop that ends just then is seen.
var testHookAfterStopWait func()

// lockOrRefuse tries the change's lock once more: the holder seen a moment ago may
// just have ended. Still held: refused.
func (fl *Flow) lockOrRefuse(change string, refused error) (*run.Lock, error) {
	fl.Loop.Refresh()
	lock, err := fl.Store.Lock(change)
	if errors.Is(err, run.ErrLocked) {
		return nil, refused
	}
	return lock, err
}

// waitLock tries the change's lock until it is free (the lock), d has passed (nil, nil)
// or ctx is done.
func (fl *Flow) waitLock(ctx context.Context, change string, d time.Duration) (*run.Lock, error) {
	deadline := time.Now().Add(d)
	for {
		fl.Loop.Refresh() // an in-place loop that ended has put its git directory back
		lock, err := fl.Store.Lock(change)
		if errors.Is(err, fs.ErrNotExist) {
			fl.Loop.Refresh()
			lock, err = fl.Store.Lock(change)
		}
		if !errors.Is(err, run.ErrLocked) {
			return lock, err
		}
		if !time.Now().Before(deadline) {
			return nil, nil
		}
		if err := loop.Sleep(ctx, 50*time.Millisecond); err != nil {
			return nil, err
		}
	}
}

func pidText(pid int) string {
	if pid <= 0 {
		return "unknown"
	}
	return fmt.Sprint(pid)
}
