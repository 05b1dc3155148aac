package run

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/git-ralph/git-ralph/internal/beneath"
)

// lockStat is the stat of the change's lock file, reached as Lock reaches it (beneath
// the git common dir, no symlink followed).
func (s *Store) lockStat(change string) (*unix.Stat_t, bool) {
	fi, err := beneath.Lstat(s.Root(), filepath.Join(filepath.Base(s.Dir), change, "lock"))
	if err != nil || !fi.Mode().IsRegular() {
		return nil, false
	}
	st, ok := fi.Sys().(*unix.Stat_t)
	return st, ok
}

// Holder returns the pid of the process that holds the change's lock, as the kernel
// lists it in /proc/locks (the lock file's device and inode, an FLOCK that is held, not
// waited for); 0 when nobody holds it or the system cannot tell.
func (s *Store) Holder(change string) int {
	st, ok := s.lockStat(change)
	if !ok {
		return 0
	}
	f, err := os.Open("/proc/locks")
	if err != nil {
		return 0
	}
	defer f.Close()
	return lockHolder(bufio.NewScanner(f), uint64(st.Dev), st.Ino)
}

// lockHolder reads /proc/locks lines ("1: FLOCK  ADVISORY  WRITE 4242 08:01:1234 0 EOF";
// a waiter's line has "->" after the number) for the FLOCK on device dev, inode ino.
// Where the device /proc/locks names is not the one stat gives (overlay file systems
// may differ), the only FLOCK on that inode is taken.
func lockHolder(sc *bufio.Scanner, dev, ino uint64) int {
	major := (dev>>8)&0xfff | (dev>>32)&^0xfff
	minor := dev&0xff | (dev>>12)&^0xff
	want := strconv.FormatUint(major, 16) + ":" + strconv.FormatUint(minor, 16) + ":" + strconv.FormatUint(ino, 10)
	var sameInode []int
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 6 || f[1] != "FLOCK" {
			continue // a waiter ("->"), or another kind of lock
		}
		pid, err := strconv.Atoi(f[4])
		if err != nil || pid <= 0 {
			continue
		}
		if sameFileID(f[5], want) {
			return pid
		}
		if i := strings.LastIndexByte(f[5], ':'); i >= 0 && f[5][i+1:] == strconv.FormatUint(ino, 10) {
			sameInode = append(sameInode, pid)
		}
	}
	if len(sameInode) == 1 {
		return sameInode[0]
	}
	return 0
}

// sameFileID compares "maj:min:inode" as /proc/locks prints it (hex device numbers,
// zero-padded to two digits) with want (hex without padding).
func sameFileID(got, want string) bool {
	g, w := strings.Split(got, ":"), strings.Split(want, ":")
	if len(g) != 3 || len(w) != 3 {
		return false
	}
	for i := range 2 {
		a, err1 := strconv.ParseUint(g[i], 16, 64)
		b, err2 := strconv.ParseUint(w[i], 16, 64)
		if err1 != nil || err2 != nil || a != b {
			return false
		}
	}
	return g[2] == w[2]
}

// busyOf is Busy of each of changes, /proc/locks read once for them all (and not at
// all for none): the kernel makes each read of it wait for an RCU grace period, 5 to 20
// ms.
func (s *Store) busyOf(changes []string) map[string]bool {
	out := map[string]bool{}
	type id struct{ dev, ino uint64 }
	files := map[string]id{}
	for _, x := range changes {
		if st, ok := s.lockStat(x); ok {
			files[x] = id{uint64(st.Dev), st.Ino}
		}
	}
	if len(files) == 0 {
		return out
	}
	data, err := os.ReadFile("/proc/locks")
	if err != nil {
		for x := range files {
			out[x] = s.Held(x)
		}
		return out
	}
	for x, f := range files {
		out[x] = lockHolder(bufio.NewScanner(bytes.NewReader(data)), f.dev, f.ino) != 0
	}
	return out
}

// Busy reports whether some process holds the change's lock, without taking it even for
// a moment (Held does, and a process that tries to lock the change just then would find
// it locked): /proc/locks tells; where it cannot be read, Held.
func (s *Store) Busy(change string) bool {
	st, ok := s.lockStat(change)
	if !ok {
		return false
	}
	f, err := os.Open("/proc/locks")
	if err != nil {
		return s.Held(change)
	}
	defer f.Close()
	return lockHolder(bufio.NewScanner(f), uint64(st.Dev), st.Ino) != 0
}
