package sandbox

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

func TestHarden(t *testing.T) {
	Harden()
	if v, err := unix.PrctlRetInt(unix.PR_GET_DUMPABLE, 0, 0, 0, 0); err != nil || v != 0 {
		t.Errorf("dumpable %d, %v", v, err)
	}
}

// A reaper finds what a child left in sessions of their own (two daemons of a shell
// that has exited), kills and reaps them; with nothing left it does nothing.
func TestKillLeftovers(t *testing.T) {
	if err := BecomeReaper(); err != nil {
		t.Skipf("no child subreaper here: %v", err)
	}
	if !IsReaper() {
		t.Fatal("not a reaper after BecomeReaper")
	}
	out, err := exec.Command("sh", "-c", `setsid sleep 1000 </dev/null >/dev/null 2>&1 & echo $!; (setsid sleep 1000 </dev/null >/dev/null 2>&1 & echo $!)`).Output()
	if err != nil {
		t.Fatal(err)
	}
	var pids []int
	sc := bufio.NewScanner(strings.NewReader(string(out)))
	for sc.Scan() {
		n, err := strconv.Atoi(sc.Text())
		if err != nil {
			t.Fatalf("output %q", out)
		}
		pids = append(pids, n)
	}
	if len(pids) != 2 {
		t.Fatalf("pids %v", pids)
	}
	if n, err := KillLeftovers(context.Background(), nil); n != 2 || err != nil {
		t.Errorf("KillLeftovers killed %d (%v), want 2", n, err)
	}
	for _, p := range pids {
		if err := syscall.Kill(p, 0); err == nil {
			t.Errorf("pid %d is still there (reaped and gone is the goal)", p)
		}
	}
	if n, err := KillLeftovers(context.Background(), nil); n != 0 || err != nil {
		t.Errorf("KillLeftovers with nothing left killed %d (%v)", n, err)
	}
}

// What starts in the attempt's cgroup (Contain) is ended with it, all at once, with no
// walk of /proc: here with /proc out of the picture, as in a PID namespace whose /proc
// is another's. The cgroup is gone afterwards, and the next Contain makes a new one.
func TestKillLeftoversCgroup(t *testing.T) {
	if err := BecomeReaper(); err != nil {
		t.Skipf("no child subreaper here: %v", err)
	}
	if currentGroup() == nil {
		t.Skipf("no cgroup of its own here: %v", attemptGroup.broken)
	}
	cmd := exec.Command("sh", "-c", `setsid sleep 1000 </dev/null >/dev/null 2>&1 & echo $!; (setsid sleep 1000 </dev/null >/dev/null 2>&1 & echo $!)`)
	Contain(cmd)
	dir := attemptGroup.cg.dir
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	pids := strings.Fields(string(out))
	if got := attemptGroup.cg.procs(); got != 2 {
		t.Fatalf("the attempt's cgroup holds %d processes, want the 2 sleeps", got)
	}
	n, err := KillLeftovers(context.Background(), nil)
	if n != 2 || err != nil {
		t.Errorf("KillLeftovers killed %d (%v), want 2", n, err)
	}
	for _, p := range pids {
		n, _ := strconv.Atoi(p)
		if err := syscall.Kill(n, 0); err == nil {
			t.Errorf("pid %d is still there", n)
		}
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("the attempt's cgroup %s is left: %v", dir, err)
	}
}

// Whether processes start in a cgroup git-ralph made is asked once per run, with a
// start of true(1), not once per attempt: it does not change within a run.
func TestCgroupProbedOnce(t *testing.T) {
	if err := BecomeReaper(); err != nil {
		t.Skipf("no child subreaper here: %v", err)
	}
	probes := 0
	probe = func(fd int) error { probes++; return probeInto(fd) }
	defer func() { probe = probeInto }()
	for range 3 {
		if currentGroup() == nil {
			t.Skipf("no cgroup of its own here: %v", attemptGroup.broken)
		}
		if _, err := KillLeftovers(context.Background(), nil); err != nil {
			t.Fatal(err)
		}
	}
	if probes > 1 { // none when an earlier test made the run's first cgroup
		t.Errorf("3 attempts' cgroups were probed %d times, want once per run", probes)
	}
}

// However long finding and killing them takes (here every look at the clock is an hour
// later: a walk of /proc slowed by the scheduling), KillLeftovers gives up on nothing:
// it returns once every process is gone, and says once that it is waiting.
func TestKillLeftoversNoDeadline(t *testing.T) {
	if err := BecomeReaper(); err != nil {
		t.Skipf("no child subreaper here: %v", err)
	}
	clock := time.Now()
	now = func() time.Time { clock = clock.Add(time.Hour); return clock }
	defer func() { now = time.Now }()
	out, err := exec.Command("sh", "-c", `for i in 1 2 3 4 5 6 7 8; do setsid sleep 1000 </dev/null >/dev/null 2>&1 & echo $!; done`).Output()
	if err != nil {
		t.Fatal(err)
	}
	var notes []string
	n, err := KillLeftovers(context.Background(), func(s string) { notes = append(notes, s) })
	if n != 8 || err != nil {
		t.Errorf("KillLeftovers killed %d (%v), want 8", n, err)
	}
	for _, p := range strings.Fields(string(out)) {
		n, _ := strconv.Atoi(p)
		if err := syscall.Kill(n, 0); err == nil {
			t.Errorf("pid %d is still there", n)
		}
	}
	if len(notes) > 1 {
		t.Errorf("notes %q, want one at most", notes)
	}
}

// Ctrl-C (its context ended) stops the wait a moment later, naming what remains: here
// a process whose SIGKILL never comes (as one stuck in the kernel never dies of it), so
// that the wait cannot end otherwise.
func TestKillLeftoversInterrupted(t *testing.T) {
	if err := BecomeReaper(); err != nil {
		t.Skipf("no child subreaper here: %v", err)
	}
	clock := time.Now()
	now = func() time.Time { clock = clock.Add(time.Second); return clock }
	defer func() { now = time.Now }()
	cmd := exec.Command("sleep", "1000")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	sigkill = func(int) {}
	defer func() { sigkill = killPid }()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := KillLeftovers(ctx, nil)
	var left *LeftoverError
	if !errors.As(err, &left) || len(left.Pids) != 1 || left.Pids[0] != cmd.Process.Pid {
		t.Fatalf("KillLeftovers: %v, want a LeftoverError naming pid %d", err, cmd.Process.Pid)
	}
}

// The cgroups a git-ralph killed with SIGKILL left are removed by the next run's first
// attempt: empty, their pid gone. A live one's is not.
func TestSweepGroups(t *testing.T) {
	parent, err := ownCgroupDir()
	if err != nil || !CanContain() {
		t.Skip("no cgroup of git-ralph's own to make here")
	}
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	left := filepath.Join(parent, fmt.Sprintf("%s%d-1", groupPrefix(), dead.Process.Pid))
	live := filepath.Join(parent, fmt.Sprintf("%s%d-999", groupPrefix(), os.Getpid()))
	other := filepath.Join(parent, fmt.Sprintf("git-ralph-1-%d-1", dead.Process.Pid)) // another namespace's
	for _, d := range []string{left, live, other} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() { os.Remove(left); os.Remove(live); os.Remove(other) })
	sweepGroups(parent)
	if _, err := os.Stat(left); !os.IsNotExist(err) {
		t.Errorf("the dead run's cgroup is still there: %v", err)
	}
	if _, err := os.Stat(live); err != nil {
		t.Errorf("this run's cgroup went: %v", err)
	}
	if _, err := os.Stat(other); err != nil {
		t.Errorf("another PID namespace's cgroup went (its pid means nothing here): %v", err)
	}
}
