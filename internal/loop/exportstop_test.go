package loop

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/git-ralph/git-ralph/internal/run"
)

// TestClearKilledLoopLocksWaitsForItsGit: after a loop was killed, a git it ran (in a
// process group of its own, which the kill did not reach) may still be at work in the
// repository; its locks are waited for as long as a loop would be (StopWait), not
// LockWait, and cleared once it has ended.
func TestClearKilledLoopLocksWaitsForItsGit(t *testing.T) {
	dir := newRepo(t)
	l, rep := newLoop(t, dir, &fakeClock{At: time.Now()})
	l.LockMinAge, l.LockWait, l.StopWait = 50*time.Millisecond, 200*time.Millisecond, 5*time.Second
	lockFile := filepath.Join(dir, ".git", "index.lock")
	if err := os.WriteFile(lockFile, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-time.Minute)
	if err := os.Chtimes(lockFile, old, old); err != nil {
		t.Fatal(err)
	}
	// the killed loop's git: at work in the repository until its stdin closes, ~1s on
	cmd := exec.Command("git", "cat-file", "--batch")
	cmd.Dir = dir
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Wait()
	go func() { time.Sleep(time.Second); stdin.Close() }()
	rec := &run.Record{Change: "c", Branch: "ralph/c", Status: run.Running}
	if err := l.clearKilledLoopLocks(context.Background(), rec, "git ralph export c"); err != nil {
		t.Fatalf("clearKilledLoopLocks with the loop's git still at work for 1s (StopWait 5s): %v", err)
	}
	if _, err := os.Stat(lockFile); !os.IsNotExist(err) {
		t.Errorf("index.lock is still there: %v\n%s", err, rep.Text())
	}
	if l.LockWait != 200*time.Millisecond {
		t.Errorf("LockWait is %s after, want it restored to 200ms", l.LockWait)
	}
}
