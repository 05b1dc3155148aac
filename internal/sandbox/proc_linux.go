package sandbox

import (
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Harden makes this process's /proc files (environ, mem, fd) unreadable to the other
// processes of its user (PR_SET_DUMPABLE 0): git-ralph's environment holds the GitHub
// token its GitHub commands use. It lasts until an exec, so git-ralph's children are
// not affected.
func Harden() { _ = unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0) }

var reaper atomic.Bool

// BecomeReaper makes this process the child subreaper of everything it starts
// (PR_SET_CHILD_SUBREAPER): a process the agent leaves behind (double-forked, in a
// session of its own) becomes git-ralph's child when its parent dies, instead of
// init's, and KillLeftovers finds it. Only a process that runs one thing at a time
// (the loop: git, the hook or the agent, each waited for) may call it, since
// KillLeftovers kills every descendant.
func BecomeReaper() error {
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		return err
	}
	reaper.Store(true)
	return nil
}

// IsReaper reports whether BecomeReaper was called.
func IsReaper() bool { return reaper.Load() }

// KillLeftovers kills (SIGKILL) and reaps every descendant of this process, when it is
// a reaper (BecomeReaper), and returns how many it killed; elsewhere it does nothing.
// The caller must have waited for every child it started itself: what is left is what
// they left behind. It gives up on processes that do not die within 5 seconds (stuck in
// the kernel), leaving them to be reaped later.
func KillLeftovers() int {
	if !reaper.Load() {
		return 0
	}
	self := os.Getpid()
	killed := map[int]bool{}
	deadline := time.Now().Add(5 * time.Second)
	for {
		all := descendants(self)
		if len(all) == 0 || time.Now().After(deadline) {
			return len(killed)
		}
		for _, p := range all {
			if !killed[p] {
				_ = syscall.Kill(p, syscall.SIGKILL)
				killed[p] = true
			}
		}
		reaped := false
		for _, c := range children(self) {
			var ws syscall.WaitStatus
			if pid, err := syscall.Wait4(c, &ws, syscall.WNOHANG, nil); err == nil && pid == c {
				reaped = true
			}
		}
		if !reaped {
			time.Sleep(time.Millisecond) // a killed process takes a moment to die
		}
	}
}

// descendants lists every process below pid, zombies included.
func descendants(pid int) []int {
	var out []int
	queue := []int{pid}
	seen := map[int]bool{pid: true}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		for _, c := range children(p) {
			if !seen[c] {
				seen[c] = true
				out = append(out, c)
				queue = append(queue, c)
			}
		}
	}
	return out
}

// children lists pid's children, from /proc/<pid>/task/*/children, or, on a kernel
// without that file, from every process's parent in /proc/*/stat.
func children(pid int) []int {
	dir := "/proc/" + strconv.Itoa(pid) + "/task"
	tasks, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var out []int
	for _, t := range tasks {
		b, err := os.ReadFile(dir + "/" + t.Name() + "/children")
		if os.IsNotExist(err) {
			return childrenFromStat(pid)
		}
		for _, f := range strings.Fields(string(b)) {
			if n, err := strconv.Atoi(f); err == nil {
				out = append(out, n)
			}
		}
	}
	return out
}

// childrenFromStat finds pid's children by the parent each process names.
func childrenFromStat(pid int) []int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var out []int
	for _, e := range entries {
		n, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		i := strings.LastIndexByte(string(b), ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(string(b[i+1:])) // f[0] is the state, f[1] the parent
		if len(f) > 1 && f[1] == strconv.Itoa(pid) {
			out = append(out, n)
		}
	}
	return out
}
