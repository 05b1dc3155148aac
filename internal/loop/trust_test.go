package loop

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/git-ralph/git-ralph/internal/looptest"
	"github.com/git-ralph/git-ralph/internal/run"
	"github.com/git-ralph/git-ralph/internal/start"
)

// swapper is a Reporter that, when the loop says it runs the ralph-verify hook, rewrites
// that hook: the moment between git-ralph's last look at the hook and its run, where a
// process the agent left behind swaps it (issue 29, attack 3), made deterministic.
type swapper struct {
	*looptest.Recorder
	hook, script string
	swapped      bool
}

func (s *swapper) Step(msg string) {
	if strings.Contains(msg, "running the ralph-verify hook") && !s.swapped {
		s.swapped = true
		if err := os.WriteFile(s.hook, []byte(s.script), 0o755); err != nil {
			panic(err)
		}
	}
	s.Recorder.Step(msg)
}

// The gate runs the hook as recorded before the attempt, never the file as it is when
// the gate starts.
func TestGateRunsRecordedHook(t *testing.T) {
	dir := newRepo(t)
	marks := t.TempDir()
	hook := filepath.Join(dir, ".git", "hooks", "ralph-verify")
	if err := os.WriteFile(hook, []byte("#!/bin/sh\necho real >> "+marks+"/ran\nexit 1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	clock := &fakeClock{At: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	l, rec := newLoop(t, dir, clock)
	sw := &swapper{Recorder: rec, hook: hook, script: "#!/bin/sh\necho swapped >> " + marks + "/ran\nexit 0\n"}
	l.Report = sw
	l.Driver = scriptAgent(t, resultComplete)
	_, err := l.Start(t.Context(), start.Options{Arg: "c", MaxRetries: 0, AllowSkip: true})
	if err == nil {
		t.Fatalf("the story passed a gate that never passes:\n%s", rec.Text())
	}
	if !sw.swapped {
		t.Fatalf("the gate never ran:\n%s", rec.Text())
	}
	if b, _ := os.ReadFile(filepath.Join(marks, "ran")); string(b) != "real\n" {
		t.Errorf("the gate ran %q, want the recorded hook alone", b)
	}
	r, _ := l.Store.Load("c")
	if a := r.Last(); a == nil || a.Verify != "failed" || a.Outcome != run.OutcomeFailed {
		t.Errorf("last attempt: %+v", a)
	}
	// What the swap left is put back after the last attempt, and kept.
	if b, _ := os.ReadFile(hook); !strings.Contains(string(b), "echo real") {
		t.Errorf("the hook is %q after the run; want the recorded one back", b)
	}
	if !strings.Contains(rec.Text(), "restored .git/hooks/ralph-verify") {
		t.Errorf("the last check did not name the hook:\n%s", rec.Text())
	}
}

// A worktree whose .git file was pointed at another repository (the agent's work tree
// holds it) is not opened as the run's: In refuses it.
func TestInRefusesForeignWorktree(t *testing.T) {
	dir := newRepo(t)
	l, _ := newLoop(t, dir, &fakeClock{})
	wt := filepath.Join(t.TempDir(), "wt")
	looptest.GitOut(t, dir, "worktree", "add", "-q", "-b", "ralph/c", wt)
	if _, err := l.In(t.Context(), wt); err != nil {
		t.Fatalf("In(its own worktree) = %v", err)
	}
	other := filepath.Join(t.TempDir(), "other")
	looptest.GitOut(t, dir, "init", "-q", other)
	if err := os.WriteFile(filepath.Join(wt, ".git"), []byte("gitdir: "+filepath.Join(other, ".git")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := l.In(t.Context(), wt); err == nil || !strings.Contains(err.Error(), "belongs to another repository") {
		t.Errorf("In(a worktree pointed elsewhere) = %v", err)
	}
}
