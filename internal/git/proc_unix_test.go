//go:build unix

package git

import (
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

func TestHookOwnProcessGroup(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc")
	}
	dir, r := newRepo(t)
	// Field 5 of /proc/<pid>/stat is the process group.
	writeHook(t, dir, "ralph-verify", "cut -d' ' -f5 /proc/$$/stat\n")
	out, _, err := r.Hook(t.Context(), "ralph-verify", nil)
	if err != nil {
		t.Fatal(err)
	}
	pgid, err := strconv.Atoi(strings.TrimSpace(out))
	if err != nil {
		t.Fatalf("hook printed %q", out)
	}
	if pgid == syscall.Getpgrp() {
		t.Errorf("git ran in our process group %d; a Ctrl-C would reach it", pgid)
	}
}
