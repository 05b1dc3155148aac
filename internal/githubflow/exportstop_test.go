package githubflow

import (
	"context"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/git-ralph/git-ralph/internal/loop"
	"github.com/git-ralph/git-ralph/internal/run"
)

// TestLockAfterLoopWaitsForTheLoop: a lock released while export waits is taken, and
// nothing is signalled.
func TestLockAfterLoopWaitsForTheLoop(t *testing.T) {
	rep := &recorder{}
	l := &Flow{Remote: Remote{Store: run.NewStore(t.TempDir())}, Loop: &loop.Loop{Report: rep}, StopWait: 2 * time.Minute, KillWait: time.Second}
	held, err := l.Store.Lock("c")
	if err != nil {
		t.Fatal(err)
	}
	go func() { time.Sleep(100 * time.Millisecond); held.Unlock() }()
	lock, err := l.LockAfterLoop(context.Background(), "c", 7)
	if err != nil || lock == nil {
		t.Fatalf("LockAfterLoop: %v, %v", lock, err)
	}
	lock.Unlock()
	if want := "a loop of c is still running (pid " + strconv.Itoa(os.Getpid()) + ")"; !strings.Contains(rep.Text(), want) {
		t.Errorf("reported %q, want %q", rep.Text(), want)
	}
	if strings.Contains(rep.Text(), "stopping") {
		t.Errorf("stopped a loop that ended on its own: %q", rep.Text())
	}
}

// TestLockAfterLoopLeavesOtherHolders: a holder that the run record does not name as
// its loop (a finish, another export) is waited for, then refused; never signalled (a
// SIGINT to this process would end the test binary).
func TestLockAfterLoopLeavesOtherHolders(t *testing.T) {
	rep := &recorder{}
	l := &Flow{Remote: Remote{Store: run.NewStore(t.TempDir())}, Loop: &loop.Loop{Report: rep}, StopWait: 100 * time.Millisecond, KillWait: 100 * time.Millisecond}
	held, err := l.Store.Lock("c")
	if err != nil {
		t.Fatal(err)
	}
	defer held.Unlock()
	for _, rec := range []*run.Record{nil, {Change: "c", Branch: "ralph/c", Status: run.Running, PID: os.Getpid() + 1}} {
		if rec != nil {
			if err := l.Store.Save(rec, time.Now()); err != nil {
				t.Fatal(err)
			}
		}
		lock, err := l.LockAfterLoop(context.Background(), "c", 7)
		if lock != nil || err == nil || err.Error() != `a loop is running for change "c"` {
			t.Fatalf("LockAfterLoop with record %v: %v, %v; want the refusal", rec, lock, err)
		}
		if strings.Contains(rep.Text(), "stopping") || strings.Contains(rep.Text(), "killing") {
			t.Errorf("signalled a holder that is not the run's loop: %q", rep.Text())
		}
	}
}

// TestLockAfterLoopHolderEndsAfterTheWait: a loop that ends just after StopWait
// (Holder then says 0) leaves the lock to export, which takes it rather than refuse.
func TestLockAfterLoopHolderEndsAfterTheWait(t *testing.T) {
	rep := &recorder{}
	l := &Flow{Remote: Remote{Store: run.NewStore(t.TempDir())}, Loop: &loop.Loop{Report: rep}, StopWait: 100 * time.Millisecond, KillWait: 100 * time.Millisecond}
	held, err := l.Store.Lock("c")
	if err != nil {
		t.Fatal(err)
	}
	testHookAfterStopWait = func() { held.Unlock() }
	defer func() { testHookAfterStopWait = nil }()
	lock, err := l.LockAfterLoop(context.Background(), "c", 7)
	if err != nil || lock == nil {
		t.Fatalf("LockAfterLoop after the loop ended: %v, %v; want the lock", lock, err)
	}
	lock.Unlock()
}

// TestLockAfterLoopLeavesOtherRuns: the loop the record names is signalled only when
// it works for the export's run id: a user's own loop of the change (no run id), or a
// loop of another Actions run, is refused and left running (a SIGINT here would end
// the test binary).
func TestLockAfterLoopLeavesOtherRuns(t *testing.T) {
	rep := &recorder{}
	l := &Flow{Remote: Remote{Store: run.NewStore(t.TempDir())}, Loop: &loop.Loop{Report: rep}, StopWait: 100 * time.Millisecond, KillWait: 100 * time.Millisecond}
	held, err := l.Store.Lock("c")
	if err != nil {
		t.Fatal(err)
	}
	defer held.Unlock()
	for _, remote := range []*run.Remote{nil, {RunID: 8}} {
		rec := &run.Record{Change: "c", Branch: "ralph/c", Status: run.Running, PID: os.Getpid(), Remote: remote}
		if err := l.Store.Save(rec, time.Now()); err != nil {
			t.Fatal(err)
		}
		lock, err := l.LockAfterLoop(context.Background(), "c", 7)
		if lock != nil || err == nil || !strings.Contains(err.Error(), "that is not Actions run 7") {
			t.Fatalf("LockAfterLoop with remote %v: %v, %v; want the refusal", remote, lock, err)
		}
		if strings.Contains(rep.Text(), "stopping") || strings.Contains(rep.Text(), "killing") {
			t.Errorf("signalled a loop of another run: %q", rep.Text())
		}
	}
}
