package sandbox

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// The direct start holds the agent as the launcher does, and the agent runs not one
// instruction while the thread that started it, git-ralph's and in its domain, is
// alive: held (on that thread, just before it ends) sees the agent stopped and its
// first command not run; once Start has returned, that thread is gone (signalling it
// finds nothing) and git-ralph is out of reach.
func TestStartDirectHoldsTheAgent(t *testing.T) {
	s := needLandlock(t)
	root, work, _, secret := holdDirs(t)
	var state byte
	var ran bool
	held = func(pid int) {
		if err := os.WriteFile(filepath.Join(work, "thread"), []byte(strconv.Itoa(unix.Gettid())), 0o644); err != nil {
			t.Error(err)
		}
		state = await(pid, "tTZX")
		_, err := os.Stat(filepath.Join(work, "ran"))
		ran = err == nil
	}
	t.Cleanup(func() { held = nil })
	script := `cd "$1"
: > work/ran
echo in > work/ok && echo write-work-ok
echo out > outside/new 2>/dev/null || echo write-outside-denied
cat secret/key 2>/dev/null || echo read-secret-denied
kill -0 "$(cat work/thread)" 2>/dev/null && echo thread-alive || echo thread-gone
kill -STOP $PPID 2>/dev/null && kill -CONT $PPID && echo signal-allowed || echo signal-denied
grep -c . /proc/$PPID/environ 2>/dev/null || echo environ-denied
echo done`
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Fatal(err)
	}
	p := Policy{ABI: min(s.ABI, maxABI), Write: []string{work, "/dev/null"}, Hide: []string{secret}}
	out := runDirect(t, p, sh, "sh", "-c", script, "sh", root)
	if state != 'T' && state != 't' || ran {
		t.Errorf("while the thread was alive the agent was in state %q, its first command run: %v", state, ran)
	}
	want := []string{"write-work-ok", "write-outside-denied", "read-secret-denied", "thread-gone", "environ-denied", "done"}
	if s.ABI >= 6 {
		want = append(want, "signal-denied")
	}
	for _, w := range want {
		if !strings.Contains(out, w+"\n") {
			t.Errorf("no %q in the output:\n%s", w, out)
		}
	}
}

// runDirect starts argv (its program at path) with startDirect under p, waits for it
// and returns what it printed; a system with no direct start skips the test.
func runDirect(t *testing.T, p Policy, path string, argv ...string) string {
	t.Helper()
	var buf bytes.Buffer
	cmd, err := startDirect(p, &exec.Cmd{Path: path, Args: argv, Stdout: &buf, Stderr: &buf})
	if err != nil {
		if strings.Contains(err.Error(), errNoDirect.Error()) {
			t.Skipf("no direct start on this system (the launcher is used): %v", err)
		}
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("%v\n%s", err, buf.String())
	}
	return buf.String()
}

// await polls the state letter of process pid (/proc/pid/stat) until it is one of
// states, and returns it ('X' once the process is gone).
func await(pid int, states string) byte {
	for {
		b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if err != nil {
			return 'X'
		}
		if i := bytes.LastIndexByte(b, ')'); i > 0 && i+2 < len(b) && strings.IndexByte(states, b[i+2]) >= 0 {
			return b[i+2]
		}
		unix.Nanosleep(&unix.Timespec{Nsec: 100_000}, nil)
	}
}

// A failure before the agent runs is said, with nothing left running: a writable path
// that is missing, an agent that cannot be executed.
func TestStartDirectReportsFailure(t *testing.T) {
	s := needLandlock(t)
	p := &Policy{ABI: min(s.ABI, maxABI), Write: []string{filepath.Join(t.TempDir(), "missing")}}
	if _, err := startDirect(*p, &exec.Cmd{Path: "/bin/true", Args: []string{"true"}}); err == nil || !strings.Contains(err.Error(), "writable path") {
		t.Errorf("a policy with a missing path: %v", err)
	}
	dir := t.TempDir()
	p = &Policy{ABI: min(s.ABI, maxABI), Write: []string{dir}}
	if _, err := startDirect(*p, &exec.Cmd{Path: filepath.Join(dir, "none"), Args: []string{"none"}}); err == nil || strings.Contains(err.Error(), errNoDirect.Error()) {
		t.Errorf("an agent that is not there: %v", err)
	}
	// refused before the fork, as an exec that fails could leave the start waiting
	if err := os.WriteFile(filepath.Join(dir, "plain"), []byte("#!/bin/sh\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := startDirect(*p, &exec.Cmd{Path: filepath.Join(dir, "plain"), Args: []string{"plain"}}); err == nil || !strings.Contains(err.Error(), "exec "+filepath.Join(dir, "plain")+": permission denied") {
		t.Errorf("an agent that is not executable: %v", err)
	}
}

// Start falls back on the launcher once asked to (as where the direct start cannot be
// made), and the agent is held the same.
func TestStartLauncher(t *testing.T) {
	s := needLandlock(t)
	t.Cleanup(func() { launcherOnly.Store(false) })
	UseLauncher()
	root := t.TempDir()
	work := filepath.Join(root, "work")
	if err := os.Mkdir(work, 0o755); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	p := &Policy{ABI: min(s.ABI, maxABI), Write: []string{work, "/dev/null"}}
	sh, _ := exec.LookPath("sh")
	script := `echo in > "$1/work/ok" && echo write-work-ok; echo out > "$1/new" 2>/dev/null || echo write-outside-denied; echo fd >&3 && echo extra-file-ok`
	cmd, err := Start(p, &exec.Cmd{Path: sh, Args: []string{"sh", "-c", script, "sh", root}, Stdout: &buf, Stderr: &buf, ExtraFiles: []*os.File{w}})
	w.Close()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("%v\n%s", err, buf.String())
	}
	if cmd.Path != Self {
		t.Errorf("started %s, not the launcher", cmd.Path)
	}
	for _, want := range []string{"write-work-ok", "write-outside-denied", "extra-file-ok"} {
		if !strings.Contains(buf.String(), want+"\n") {
			t.Errorf("no %q in the output:\n%s", want, buf.String())
		}
	}
	if p.MaxProcs {
		t.Error("Start changed the caller's policy")
	}
}

// The restricted thread is never the process's main thread, which the Go runtime
// keeps alive: where the goroutine lands there, another takes a thread of its own.
func TestOnOwnThreadLeavesTheMainThread(t *testing.T) {
	mainTid := make(chan int, 1)
	first := true
	onMain = func() bool {
		if first {
			first = false
			mainTid <- unix.Gettid()
			return true
		}
		return false
	}
	t.Cleanup(func() { onMain = func() bool { return unix.Gettid() == os.Getpid() } })
	ran := make(chan int, 1)
	onOwnThread(func() bool {
		ran <- unix.Gettid()
		return true
	})
	if m, r := <-mainTid, <-ran; m == r {
		t.Errorf("f ran on the thread taken as the main one (%d)", m)
	}
}
