package loop

import (
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/git-ralph/git-ralph/internal/agent"
	"github.com/git-ralph/git-ralph/internal/run"
)

// groupLeader starts sleep as the leader of a process group of its own, with env added.
func groupLeader(t *testing.T, env ...string) (int, uint64) {
	t.Helper()
	cmd := exec.Command("sleep", "30")
	cmd.Env = append(os.Environ(), env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	t.Cleanup(func() { _ = cmd.Process.Kill(); <-done })
	start, err := agent.ProcStart(cmd.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	// Start returns once the exec has begun, which is before the kernel has set up the
	// new program's environment: /proc/<pid>/environ can still be empty (seen under
	// load, 2 in 300). An agent a crashed run left behind is long past that point.
	for deadline := time.Now().Add(2 * time.Minute); !agent.HasEnv(cmd.Process.Pid, env...); {
		if time.Now().After(deadline) {
			t.Fatalf("the environment of %d never showed %v", cmd.Process.Pid, env)
		}
		time.Sleep(time.Millisecond)
	}
	return cmd.Process.Pid, start
}

// A record's agent pid may be the agent's forgery: a crash-resume signals a process
// group only when its leader carries the attempt's RALPH_CHANGE and RALPH_ATTEMPT_ID.
func TestStopOrphanAgentOnlyOurs(t *testing.T) {
	rep := &recorder{}
	l := &Loop{Report: rep}

	other, otherStart := groupLeader(t, "RALPH_CHANGE=x")
	for _, rec := range []*run.Record{
		{Change: "x", AgentPID: other, AgentStart: otherStart, AgentID: "0123abcd"},
		{Change: "x", AgentPID: other, AgentStart: otherStart}, // a record with no id
	} {
		if err := l.stopOrphanAgent(rec); err != nil {
			t.Fatal(err)
		}
		if !agent.GroupAlive(other, otherStart) {
			t.Fatal("a process group without the attempt's markers was signalled")
		}
		if rec.AgentPID != 0 || rec.AgentID != "" {
			t.Errorf("record still names the agent: %+v", rec)
		}
	}
	if !strings.Contains(rep.Text(), "left alone") {
		t.Errorf("no warning: %s", rep.Text())
	}

	ours, oursStart := groupLeader(t, "RALPH_CHANGE=x", "RALPH_ATTEMPT_ID=0123abcd")
	if err := l.stopOrphanAgent(&run.Record{Change: "x", AgentPID: ours, AgentStart: oursStart, AgentID: "0123abcd"}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(2 * time.Minute)
	for agent.GroupAlive(ours, oursStart) {
		st, _ := os.ReadFile("/proc/" + itoa(ours) + "/stat")
		if strings.Contains(string(st), ") Z ") {
			break // signalled; the test's Wait reaps it
		}
		if time.Now().After(deadline) {
			t.Fatal("the attempt's own agent was not stopped")
		}
		time.Sleep(10 * time.Millisecond)
	}
}
