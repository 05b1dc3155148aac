//go:build unix

package git

import (
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestRecordedHookOwnProcessGroup(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc")
	}
	dir, r := newRepo(t)
	// Field 5 of /proc/<pid>/stat is the process group.
	_ = dir
	out, _, err := r.RecordedHook(t.Context(), "ralph-verify", []byte("#!/bin/sh\ncut -d' ' -f5 /proc/$$/stat\n"), nil)
	if err != nil {
		t.Fatal(err)
	}
	pgid, err := strconv.Atoi(strings.TrimSpace(out))
	if err != nil {
		t.Fatalf("hook printed %q", out)
	}
	if pgid == syscall.Getpgrp() {
		t.Errorf("the hook ran in our process group %d; a Ctrl-C would reach it", pgid)
	}
}

// A zombie is gone: a killed git-ralph whose parent died too stays one until init
// reaps it, which some container inits never do, and its temporary index must still
// be swept (found by the chaos test).
func TestProcessGoneZombie(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc")
	}
	cmd := exec.Command("true")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pid := cmd.Process.Pid
	// Not waited for yet: once it exits it is our zombie.
	for i := 0; ; i++ {
		stat, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if strings.Contains(string(stat), ") Z") {
			break
		}
		if i > 500 {
			t.Fatalf("no zombie: %s", stat)
		}
		time.Sleep(2 * time.Millisecond)
	}
	if !processGone(pid) {
		t.Errorf("a zombie counts as alive")
	}
	_ = cmd.Wait()
	if !processGone(pid) {
		t.Errorf("a reaped process counts as alive")
	}
	if processGone(os.Getpid()) {
		t.Errorf("this process counts as gone")
	}
}
