//go:build unix

package hooks

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// alive reports whether pid still exists (and is not a zombie we could still signal).
func alive(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true
	}
	// state is the field after the ")" of the command name
	s := string(b)
	if i := strings.LastIndexByte(s, ')'); i >= 0 && i+2 < len(s) {
		return s[i+2] != 'Z'
	}
	return true
}

func TestRunCommandTimeoutKillsTheWholeGroup(t *testing.T) {
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "child.pid")
	// The child ignores SIGTERM and keeps our output pipe open: only SIGKILL to
	// the group ends it.
	// The child sleeps an hour: RunCommand returning at all says the group was killed.
	script := `trap '' TERM; sleep 3600 & echo $! > ` + pidFile + `; wait`
	var out bytes.Buffer
	res, err := RunCommand(t.Context(), Command{Argv: []string{"sh", "-c", script}, Dir: dir, Stdout: &out, Stderr: &out, Timeout: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if !res.TimedOut || !res.Failed() {
		t.Errorf("res %+v", res)
	}
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	deadline := time.Now().Add(2 * time.Minute) // a safety net: the SIGKILL was sent
	for alive(pid) && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if alive(pid) {
		_ = syscall.Kill(pid, syscall.SIGKILL)
		t.Errorf("the child %d outlived the timeout", pid)
	}
}
