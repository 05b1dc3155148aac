// Package testtmp puts a test binary's temporary directories in memory. Only tests
// import it; it holds no code of git-ralph's own.
//
// The tests make and remove a git repository per test, thousands in a run: on a disk
// file system (ext4 here), finding an inode to allocate among so many just deleted cost a
// quarter of the suite's CPU. A tmpfs has no such cost, and what the tests check (git's
// and git-ralph's behaviour) is the same there.
package testtmp

import (
	"fmt"
	"os"
	"syscall"
	"testing"
)

// Root is where the temporary directories go: /dev/shm when it is a writable tmpfs with
// 2 GiB free, "" (the system's) otherwise, or when GIT_RALPH_TEST_ON_DISK is set.
func Root() string {
	if os.Getenv("GIT_RALPH_TEST_ON_DISK") != "" || !tmpfsWithRoom("/dev/shm", 2<<30) {
		return ""
	}
	return "/dev/shm"
}

// Main runs m with TMPDIR (and so t.TempDir and os.MkdirTemp) in a directory of its own
// under Root, removed afterwards, and returns m's exit code:
//
//	func TestMain(m *testing.M) { os.Exit(testtmp.Main(m)) }
func Main(m *testing.M) int {
	root := Root()
	if root == "" {
		return m.Run()
	}
	dir, err := os.MkdirTemp(root, "git-ralph-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "testtmp:", err)
		return m.Run()
	}
	defer os.RemoveAll(dir)
	old, had := os.LookupEnv("TMPDIR")
	os.Setenv("TMPDIR", dir)
	defer func() {
		if had {
			os.Setenv("TMPDIR", old)
		} else {
			os.Unsetenv("TMPDIR")
		}
	}()
	return m.Run()
}

// tmpfsWithRoom reports whether dir is a writable tmpfs with at least room bytes free.
func tmpfsWithRoom(dir string, room uint64) bool {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return false
	}
	const tmpfsMagic = 0x01021994
	return int64(st.Type) == tmpfsMagic && uint64(st.Bavail)*uint64(st.Bsize) >= room && syscall.Access(dir, 2) == nil
}
