package sandbox

import (
	"bufio"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"

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
	if n := KillLeftovers(); n != 2 {
		t.Errorf("KillLeftovers killed %d, want 2", n)
	}
	for _, p := range pids {
		if err := syscall.Kill(p, 0); err == nil {
			t.Errorf("pid %d is still there (reaped and gone is the goal)", p)
		}
	}
	if n := KillLeftovers(); n != 0 {
		t.Errorf("KillLeftovers with nothing left killed %d", n)
	}
}
