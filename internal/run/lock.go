package run

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"

	"github.com/git-ralph/git-ralph/internal/beneath"
)

// Lock is an exclusive OS file lock on a change. The kernel releases it however the
// holder dies, so "is a loop running?" never depends on a recorded pid, which may have
// been reused after a crash or a reboot.
type Lock struct {
	f *os.File
}

// Lock takes the change's lock without waiting; ErrLocked if another process holds it.
// The lock file is opened beneath the git common dir following no symlink (a link the
// agent planted there is moved aside, and a file made).
func (s *Store) Lock(change string) (*Lock, error) {
	f, err := beneath.OpenLock(s.Root(), s.rel(change, "lock"))
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, ErrLocked
		}
		return nil, err
	}
	return &Lock{f: f}, nil
}

// Unlock releases the lock.
func (l *Lock) Unlock() {
	if l == nil || l.f == nil {
		return
	}
	_ = syscall.Flock(int(l.f.Fd()), syscall.LOCK_UN)
	_ = l.f.Close()
	l.f = nil
}

// Held reports whether some process holds the change's lock right now. It never
// creates anything: a change without a lock file is not locked.
func (s *Store) Held(change string) bool {
	f, err := beneath.OpenExisting(s.Root(), s.rel(change, "lock"), os.O_RDWR)
	if err != nil {
		return false
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		return errors.Is(err, syscall.EWOULDBLOCK)
	}
	_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
	return false
}

// LockWorktrees takes the repository-wide lock that git-ralph processes hold while they
// add, lock, unlock, prune or remove worktrees, waiting for it. git writes a new
// worktree's files one by one, and any git that lists the worktrees meanwhile (another
// loop's `worktree add`, or its `checkout -B`) dies reading a half-made one.
func (s *Store) LockWorktrees() (*Lock, error) {
	f, err := beneath.OpenLock(s.Root(), filepath.Join(filepath.Base(s.Dir), "worktrees.lock"))
	if err != nil {
		return nil, err
	}
	for {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
		if !errors.Is(err, syscall.EINTR) {
			break
		}
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return &Lock{f: f}, nil
}
