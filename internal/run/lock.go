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
	// extra are the lock files taken again after the one f names was removed or
	// replaced (Relock), held until Unlock.
	extra  []*os.File
	s      *Store
	change string
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
	l := &Lock{f: f, s: s, change: change}
	s.mu.Lock()
	if s.locks == nil {
		s.locks = map[string]*Lock{}
	}
	s.locks[change] = l
	s.mu.Unlock()
	return l, nil
}

// Relock makes sure the lock this process holds on change is still the one its lock file
// names, and reports whether it was not: an agent in place may remove or replace it, and
// another git-ralph would then take the same change. The file found there now is locked too
// (made where none is); ErrLocked when another loop holds it. Without a lock held, nothing.
func (s *Store) Relock(change string) (replaced bool, err error) {
	s.mu.Lock()
	held := s.locks[change]
	s.mu.Unlock()
	if held == nil || held.f == nil {
		return false, nil
	}
	if now, err := beneath.Lstat(s.Root(), s.rel(change, "lock")); err == nil {
		for _, f := range append(held.extra, held.f) {
			if mine, err := f.Stat(); err == nil && beneath.SameFile(now, mine) {
				return false, nil
			}
		}
	}
	f, err := beneath.OpenLock(s.Root(), s.rel(change, "lock"))
	if err != nil {
		return true, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return true, ErrLocked
		}
		return true, err
	}
	held.extra = append(held.extra, f)
	return true, nil
}

// Unlock releases the lock.
func (l *Lock) Unlock() {
	if l == nil || l.f == nil {
		return
	}
	for _, f := range append(l.extra, l.f) {
		_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		_ = f.Close()
	}
	l.f, l.extra = nil, nil
	if l.s != nil {
		l.s.mu.Lock()
		if l.s.locks[l.change] == l {
			delete(l.s.locks, l.change)
		}
		l.s.mu.Unlock()
	}
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
