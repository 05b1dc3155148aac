package sandbox

import (
	"context"
	"errors"
	"fmt"
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

// KillLeftovers kills and reaps every process the attempt left, when this process is a
// reaper, and returns how many it killed; the caller has waited for its own children.
// It ends the attempt's cgroup, then walks /proc if it is ours (procIsOurs), with no
// deadline: only ctx ending stops it, with a *LeftoverError naming what remains. note
// hears once of a long wait. Why: docs/SANDBOX.md, "What the agent leaves running".
func KillLeftovers(ctx context.Context, note func(string)) (int, error) {
	if !reaper.Load() {
		return 0, nil
	}
	w := &leftWait{ctx: ctx, note: note, start: now()}
	killed := 0
	if cg := takeGroup(); cg != nil {
		killed += cg.procs()
		if err := cg.kill(); err != nil {
			return killed, fmt.Errorf("end the attempt's cgroup %s: %w", cg.dir, err)
		}
		for {
			left, err := cg.populated()
			if err != nil {
				return killed, fmt.Errorf("the attempt's cgroup %s: %w", cg.dir, err)
			}
			reapChildren()
			if !left {
				break
			}
			if err := w.wait(cg.pids, cg.dir); err != nil {
				return killed, err
			}
		}
		cg.remove()
	}
	if procIsOurs() {
		self := os.Getpid()
		seen := map[int]bool{}
		for {
			all := descendants(self)
			if len(all) == 0 {
				break
			}
			for _, p := range all {
				if !seen[p] {
					sigkill(p)
					seen[p] = true
					killed++
				}
			}
			if reapChildren() {
				continue
			}
			if err := w.wait(func() []int { return descendants(self) }, ""); err != nil {
				return killed, err
			}
		}
	}
	reapChildren()
	return killed, nil
}

// sigkill kills a process the /proc walk found (a test's does not).
var sigkill = killPid

func killPid(pid int) { _ = syscall.Kill(pid, syscall.SIGKILL) }

// now is KillLeftovers' clock: a test's makes a walk of /proc take an hour.
var now = time.Now

// interruptGrace is how long KillLeftovers still waits for what it killed to die once
// its context has ended.
const interruptGrace = 2 * time.Second

// leftWait is KillLeftovers' waiting: a moment at a time, a note once it grows long,
// and a stop a moment after its context ends.
type leftWait struct {
	ctx    context.Context
	note   func(string)
	start  time.Time
	noted  bool
	giveUp time.Time
}

// wait waits a moment for killed processes to die, or returns the *LeftoverError
// naming those that remain (pids) once the context has ended and its grace passed.
func (w *leftWait) wait(pids func() []int, cgroup string) error {
	if w.ctx.Err() != nil {
		if w.giveUp.IsZero() {
			w.giveUp = now().Add(interruptGrace)
		} else if now().After(w.giveUp) {
			return &LeftoverError{Pids: pids(), Cgroup: cgroup}
		}
	}
	if !w.noted && w.note != nil && now().Sub(w.start) > 5*time.Second {
		w.noted = true
		w.note(fmt.Sprintf("waiting for the processes the attempt left to end (pids %s); git-ralph checks and commits nothing before they have: Ctrl-C stops it", pidList(pids())))
	}
	time.Sleep(time.Millisecond) // a killed process takes a moment to die
	return nil
}

// LeftoverError is KillLeftovers stopped (its context ended) before every process the
// attempt left was gone: nothing may be checked or committed.
type LeftoverError struct {
	Pids   []int
	Cgroup string // the attempt's cgroup that holds them, if any
}

func (e *LeftoverError) Error() string {
	where := ""
	if e.Cgroup != "" {
		where = " in " + e.Cgroup
	}
	return fmt.Sprintf("processes the attempt left are still running%s (pids %s)", where, pidList(e.Pids))
}

func pidList(pids []int) string {
	if len(pids) == 0 {
		return "unknown"
	}
	s := make([]string, 0, len(pids))
	for i, p := range pids {
		if i == 20 {
			s = append(s, fmt.Sprintf("and %d more", len(pids)-i))
			break
		}
		s = append(s, strconv.Itoa(p))
	}
	return strings.Join(s, ", ")
}

// reapChildren reaps every child of this process that has exited (wait4(-1) with
// WNOHANG), and reports whether it reaped any.
func reapChildren() bool {
	reaped := false
	for {
		var ws syscall.WaitStatus
		pid, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil)
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		if err != nil || pid <= 0 {
			return reaped
		}
		reaped = true
	}
}

// procIsOurs reports whether /proc is of this process's PID namespace: /proc/self
// names this process by the pid it has here. In a PID namespace started without a
// /proc of its own (unshare --pid --fork, without --mount-proc), /proc/<pid> is
// another process, and its children are not this process's.
func procIsOurs() bool {
	s, err := os.Readlink("/proc/self")
	return err == nil && s == strconv.Itoa(os.Getpid())
}

// Containment says how what an attempt leaves running is found and ended here, and ok
// false (with why) when it is not: /proc is another PID namespace's and no cgroup can
// be made. In a reaper, it makes the first attempt's cgroup if it can; elsewhere (a
// dry run) it says what a run would do.
func Containment() (how string, ok bool) {
	var cg bool
	if reaper.Load() {
		cg = currentGroup() != nil
	} else {
		cg = CanContain()
	}
	switch {
	case cg:
		return "each attempt's processes run in a cgroup of their own, ended with cgroup.kill", true
	case procIsOurs():
		return "found through /proc and killed after each attempt (no cgroup of git-ralph's own here)", true
	}
	return "what the agent leaves running outside its process group is not found here: /proc is not of git-ralph's PID namespace, and git-ralph can make no cgroup of its own (give it a /proc of its own: unshare --pid --fork --mount-proc)", false
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
