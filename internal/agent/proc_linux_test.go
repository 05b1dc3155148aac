package agent

import (
	"bufio"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// processGone reports whether pid has died; a zombie counts.
func processGone(pid int) bool {
	st, err := readStat(pid)
	return err != nil || st.state == 'Z'
}

func TestParseStat(t *testing.T) {
	// The command name may hold spaces and parentheses: fields are counted
	// from the last ')'.
	rest := " S 1 4242 4242 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 987654 1000 10 18446744073709551615 0 0 0 0 0 0 0 0 0 0 0 0 17 0 0 0 0 0 0\n"
	st, err := parseStat([]byte("4242 (we(ird) ) na) me)" + rest))
	if err != nil {
		t.Fatal(err)
	}
	if st.state != 'S' || st.pgrp != 4242 || st.session != 4242 || st.start != 987654 {
		t.Fatalf("parseStat = %+v", st)
	}
	for _, bad := range []string{"", "4242 no paren", "4242 (x) S 1 2", "4242 (x) S 1 x 4242" + strings.Repeat(" 0", 20), "4242 (x) S 1 1 1" + strings.Repeat(" 0", 15) + " notanumber"} {
		if _, err := parseStat([]byte(bad)); err == nil {
			t.Errorf("parseStat(%q) accepted", bad)
		}
	}
}

func TestProcStart(t *testing.T) {
	start, err := ProcStart(os.Getpid())
	if err != nil || start == 0 {
		t.Fatalf("ProcStart(self) = %d, %v", start, err)
	}
	if again, _ := ProcStart(os.Getpid()); again != start {
		t.Fatalf("ProcStart changed: %d then %d", start, again)
	}
	for _, pid := range []int{0, -1, 1 << 30} {
		if _, err := ProcStart(pid); err == nil {
			t.Errorf("ProcStart(%d) succeeded", pid)
		}
	}
	if GroupAlive(0, start) || GroupAlive(-1, start) || GroupAlive(1, start) || GroupAlive(os.Getpid(), 0) {
		t.Error("GroupAlive accepted a bogus pid or start")
	}
}

// startGroup starts the helper in mode as the leader of a new session, and
// reaps it in the background.
func startGroup(t *testing.T, mode string) (cmd *exec.Cmd, start uint64, stdout *bufio.Reader, exited chan struct{}) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd = exec.Command(exe, "-p")
	cmd.Env = append(os.Environ(), helperEnv+"="+mode)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited = make(chan struct{})
	go func() {
		_ = cmd.Wait()
		close(exited)
	}()
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-exited
	})
	start, err = ProcStart(cmd.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	return cmd, start, bufio.NewReader(out), exited
}

func TestKillGroupEscalates(t *testing.T) {
	cmd, start, out, exited := startGroup(t, "group")
	line, err := out.ReadString('\n') // the leader has its child and ignores SIGTERM
	if err != nil {
		t.Fatal(err)
	}
	child := childPid(t, line)
	if !GroupAlive(cmd.Process.Pid, start) {
		t.Fatal("GroupAlive = false for a running group")
	}
	t0 := time.Now()
	if err := killGroup(cmd.Process.Pid, start, 150*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(t0); d < 150*time.Millisecond {
		t.Errorf("killGroup returned after %v, before its grace", d)
	}
	select {
	case <-exited:
	case <-time.After(2 * time.Minute): // a safety net: the SIGKILL has been sent
		t.Fatal("the leader survived")
	}
	waitGone(t, child)
	if GroupAlive(cmd.Process.Pid, start) {
		t.Error("GroupAlive = true after the kill")
	}
}

func TestKillGroupPolite(t *testing.T) {
	// A leader that exits on SIGTERM (as claude does) needs no SIGKILL.
	cmd, start, out, exited := startGroup(t, "hang-init")
	if _, err := out.ReadString('\n'); err != nil { // init: signals are trapped
		t.Fatal(err)
	}
	// killGroup returning at all says SIGTERM was enough: the grace is an hour.
	if err := killGroup(cmd.Process.Pid, start, time.Hour); err != nil {
		t.Fatal(err)
	}
	<-exited
	if code := cmd.ProcessState.ExitCode(); code != 143 {
		t.Errorf("exit code %d, want 143 (SIGTERM handled)", code)
	}
}

func TestKillGroupSparesAReusedPid(t *testing.T) {
	cmd, start, _, exited := startGroup(t, "sleeper")
	if err := KillGroup(cmd.Process.Pid, start+1); err != nil {
		t.Fatal(err)
	}
	select {
	case <-exited:
		t.Fatal("KillGroup killed a process whose start time differs")
	case <-time.After(100 * time.Millisecond):
	}
	if err := KillGroup(cmd.Process.Pid, 0); err != nil {
		t.Fatal(err)
	}
	if !GroupAlive(cmd.Process.Pid, start) {
		t.Fatal("the process should still be alive")
	}
}

func TestKillGroupGone(t *testing.T) {
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Skip(err)
	}
	if GroupAlive(cmd.Process.Pid, 12345) {
		t.Fatal("GroupAlive for a reaped process")
	}
	if err := KillGroup(cmd.Process.Pid, 12345); err != nil {
		t.Fatal(err)
	}
}
