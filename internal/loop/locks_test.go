package loop

import (
	"context"
	"errors"
	"github.com/git-ralph/git-ralph/internal/tell"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/git-ralph/git-ralph/internal/git"
	"github.com/git-ralph/git-ralph/internal/run"
)

func TestLockError(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want string // "error: …" and "hint: …" lines
	}{
		{
			name: "open",
			err:  &git.LockHeldError{Name: ".git/index.lock", PID: 42, Command: "git commit -a", Open: true},
			want: "error: .git/index.lock is held by a running process: pid 42 (git commit -a)\n" +
				"hint: let that process end (or end it: kill 42), then run 'git ralph start x' again; nothing was changed",
		},
		{
			name: "git running",
			err:  &git.LockHeldError{Name: ".git/index.lock", PID: 42, Command: "git commit -a"},
			want: "error: .git/index.lock may be in use: git is running in this repository as pid 42 (git commit -a)\n" +
				"hint: let that git command end, then run 'git ralph start x' again; nothing was changed",
		},
		{
			name: "no proc",
			err:  &git.LockUnknownError{Names: []string{".git/index.lock"}, Paths: []string{"/r/.git/index.lock"}},
			want: "error: .git/index.lock exists and git-ralph cannot tell whether a git command still uses it\n" +
				"hint: if no git command is running in this repository, remove it: rm /r/.git/index.lock\n" +
				"hint: then run 'git ralph start x' again; nothing was changed",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := lockError(tt.err, "git ralph start x")
			var le *tell.Error
			if !errors.As(err, &le) {
				t.Fatalf("got %T %v, want *tell.Error", err, err)
			}
			got := "error: " + le.Error()
			for _, h := range le.Hints() {
				got += "\nhint: " + h
			}
			if got != tt.want {
				t.Errorf("got\n%s\nwant\n%s", got, tt.want)
			}
			if !errors.Is(err, tt.err) {
				t.Errorf("the git error is not wrapped")
			}
		})
	}
	if err := lockError(nil, "x"); err != nil {
		t.Errorf("lockError(nil) = %v", err)
	}
	other := errors.New("disk on fire")
	if err := lockError(other, "x"); err != other || strings.Contains(err.Error(), "hint") {
		t.Errorf("lockError(other) = %v", err)
	}
}

// TestClearKilledLoopLocksWaitsForItsGit: after a loop was killed, a git it ran (in a
// process group of its own, which the kill did not reach) may still be at work in the
// repository; its locks are waited for as long as export says (gitWait: as long as a
// loop would be), not Waits.LockWait, and cleared once it has ended.
func TestClearKilledLoopLocksWaitsForItsGit(t *testing.T) {
	dir := newRepo(t)
	l, rep := newLoop(t, dir, &fakeClock{At: time.Now()})
	l.Waits.LockMinAge, l.Waits.LockWait = 50*time.Millisecond, 200*time.Millisecond
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
	if err := l.clearKilledLoopLocks(context.Background(), rec, "git ralph export c", 2*time.Minute); err != nil {
		t.Fatalf("clearKilledLoopLocks with the loop's git still at work for 1s (gitWait 2m): %v", err)
	}
	if _, err := os.Stat(lockFile); !os.IsNotExist(err) {
		t.Errorf("index.lock is still there: %v\n%s", err, rep.Text())
	}
	if l.Waits.LockWait != 200*time.Millisecond {
		t.Errorf("LockWait is %s after, want it restored to 200ms", l.Waits.LockWait)
	}
}
