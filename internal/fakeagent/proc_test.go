package fakeagent

import (
	"bufio"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// proc is the test binary running as the fake agent (see TestMain), in its
// own process group like git-ralph starts agents.
type proc struct {
	t      *testing.T
	cmd    *exec.Cmd
	stdout *bufio.Reader
	done   chan error
}

func startProc(t *testing.T, env []string, args ...string) *proc {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), append([]string{"FAKEAGENT_TEST_MAIN=1"}, env...)...)
	cmd.Stdin = strings.NewReader("the prompt")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Dir = t.TempDir()
	// An os.Pipe rather than StdoutPipe: Wait must not close the read end
	// while the test still reads what the agent wrote before it died.
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout = pw
	err = cmd.Start()
	pw.Close()
	if err != nil {
		t.Fatal(err)
	}
	p := &proc{t: t, cmd: cmd, stdout: bufio.NewReader(pr), done: make(chan error, 1)}
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-p.done
		pr.Close()
	})
	go func() { p.done <- cmd.Wait() }()
	return p
}

// waitLine reads stdout until a line contains s.
func (p *proc) waitLine(s string) {
	p.t.Helper()
	for {
		line, err := p.stdout.ReadString('\n')
		if strings.Contains(line, s) {
			return
		}
		if err != nil {
			p.t.Fatalf("stdout ended (%v) before a line with %q", err, s)
		}
	}
}

func (p *proc) signalGroup(sig syscall.Signal) {
	p.t.Helper()
	if err := syscall.Kill(-p.cmd.Process.Pid, sig); err != nil {
		p.t.Fatal(err)
	}
}

// wait returns how the process ended: exit code, or the signal that killed it.
func (p *proc) wait(timeout time.Duration) (code int, sig syscall.Signal) {
	p.t.Helper()
	select {
	case err := <-p.done:
		p.done <- err // for Cleanup
		var ee *exec.ExitError
		if err != nil && !errors.As(err, &ee) {
			p.t.Fatal(err)
		}
		ws := p.cmd.ProcessState.Sys().(syscall.WaitStatus)
		if ws.Signaled() {
			return -1, ws.Signal()
		}
		return ws.ExitStatus(), 0
	case <-time.After(timeout):
		p.t.Fatalf("the fake agent did not end within %v", timeout)
		return 0, 0
	}
}

func (p *proc) running(d time.Duration) bool {
	select {
	case err := <-p.done:
		p.done <- err
		return false
	case <-time.After(d):
		return true
	}
}

func waitFile(t *testing.T, path string) string {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute) // a safety net, not a bound
	for time.Now().Before(deadline) {
		if data, err := os.ReadFile(path); err == nil {
			return string(data)
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("%s never appeared", path)
	return ""
}

var streamArgs = []string{"-p", "--output-format", "stream-json", "--verbose"}

func TestHangAfterInitExits143OnSIGTERM(t *testing.T) {
	p := startProc(t, []string{"FAKE_AGENT_SCENARIO=" + filepath.Join(testdata, "scenarios", "hang-after-init.json")}, streamArgs...)
	p.waitLine(`"text":"Thinking..."`)
	p.signalGroup(syscall.SIGTERM)
	if code, sig := p.wait(2 * time.Minute); code != 143 {
		t.Fatalf("exit %d (signal %v), want 143", code, sig)
	}
}

func TestHangSignals(t *testing.T) {
	tests := []struct {
		name     string
		scenario string
		args     []string
		send     syscall.Signal
		code     int
		sig      syscall.Signal
	}{
		{"codex dies by SIGTERM", `{"dialect":"codex","steps":[{"say":"x"},{"hang":{}}]}`,
			[]string{"exec", "--json", "-"}, syscall.SIGTERM, -1, syscall.SIGTERM},
		{"claude exits 0 on SIGINT", `{"steps":[{"say":"x"},{"hang":{"on_sigterm_exit":143,"on_sigint_exit":0}}]}`,
			streamArgs, syscall.SIGINT, 0, 0},
		{"hang after the result", `{"steps":[{"say":"x"}],"after":[{"hang":{"on_sigterm_exit":143}}]}`,
			streamArgs, syscall.SIGTERM, 143, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := startProc(t, []string{"FAKE_AGENT_SCENARIO_JSON=" + tt.scenario}, tt.args...)
			p.waitLine(`"x"`)
			if tt.name == "hang after the result" {
				p.waitLine(`"type":"result"`)
			}
			p.signalGroup(tt.send)
			if code, sig := p.wait(2 * time.Minute); code != tt.code || sig != tt.sig {
				t.Fatalf("exit %d signal %v, want exit %d signal %v", code, sig, tt.code, tt.sig)
			}
		})
	}
}

func TestHangIgnoreSIGTERMScenario(t *testing.T) {
	p := startProc(t, []string{"FAKE_AGENT_SCENARIO=" + filepath.Join(testdata, "scenarios", "hang-ignore-sigterm.json")}, streamArgs...)
	p.waitLine(`"subtype":"init"`)
	p.signalGroup(syscall.SIGTERM)
	if !p.running(200 * time.Millisecond) {
		t.Fatal("the fake ended on SIGTERM")
	}
	p.signalGroup(syscall.SIGKILL)
	if _, sig := p.wait(2 * time.Minute); sig != syscall.SIGKILL {
		t.Fatalf("ended by %v, want SIGKILL", sig)
	}
}

// TestHangIgnoringSIGTERMNeedsGroupKill: only SIGKILL to the group ends the
// fake and its child.
func TestHangIgnoringSIGTERMNeedsGroupKill(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "pids")
	scenario := `{"steps":[{"hang":{"ignore_sigterm":true,"ignore_sigint":true,"spawn_child":true,"pid_file":"` + pidFile + `"}}]}`
	p := startProc(t, []string{"FAKE_AGENT_SCENARIO_JSON=" + scenario}, streamArgs...)
	pids := strings.Fields(waitFile(t, pidFile))
	if len(pids) != 2 || pids[0] != strconv.Itoa(p.cmd.Process.Pid) {
		t.Fatalf("pid file %q", pids)
	}
	child, _ := strconv.Atoi(pids[1])
	if pgid, err := syscall.Getpgid(child); err != nil || pgid != p.cmd.Process.Pid {
		t.Fatalf("child %d is in group %d (%v), want %d", child, pgid, err, p.cmd.Process.Pid)
	}
	p.signalGroup(syscall.SIGTERM)
	p.signalGroup(syscall.SIGINT)
	if !p.running(300 * time.Millisecond) {
		t.Fatal("the fake ended on SIGTERM/SIGINT")
	}
	p.signalGroup(syscall.SIGKILL)
	if _, sig := p.wait(2 * time.Minute); sig != syscall.SIGKILL {
		t.Fatalf("ended by %v, want SIGKILL", sig)
	}
	deadline := time.Now().Add(2 * time.Minute) // a safety net, not a bound
	for alive(child) {
		if time.Now().After(deadline) {
			t.Fatalf("child %d survived the group kill", child)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// alive reports whether pid exists and is not a zombie.
func alive(pid int) bool {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	s := string(data)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || s[i+2] != 'Z'
}

func TestCrashDiesBySignal(t *testing.T) {
	p := startProc(t, []string{`FAKE_AGENT_SCENARIO_JSON={"steps":[{"say":"x"},{"crash":{"signal":"SEGV"}}]}`}, streamArgs...)
	p.waitLine(`"x"`)
	if code, sig := p.wait(2 * time.Minute); sig != syscall.SIGSEGV {
		t.Fatalf("exit %d signal %v, want death by SIGSEGV", code, sig)
	}
	if _, err := os.Stat(filepath.Join(p.cmd.Dir, "core")); err == nil {
		t.Error("the crash left a core file")
	}
}

func TestMainUnconfigured(t *testing.T) {
	cmd := exec.Command(os.Args[0], streamArgs...)
	cmd.Env = append(os.Environ(), "FAKEAGENT_TEST_MAIN=1", "FAKE_AGENT_SCENARIO=", "FAKE_AGENT_SCENARIO_JSON=")
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 64 || !strings.Contains(string(out), "not configured") {
		t.Fatalf("%v: %s", err, out)
	}
}
