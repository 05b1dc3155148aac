package demo

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/git-ralph/git-ralph/internal/agent"
	"github.com/git-ralph/git-ralph/internal/agent/claude"
)

// The demo agent's output decodes with the Claude Code driver into the outcome the
// demo promises: story 2 fails on its first attempt with a reason, then passes, reading
// the reason from its prompt.
func TestAgentScript(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	tasks := filepath.Join(dir, "openspec/changes", Change, "tasks.md")
	b, err := files.ReadFile("repo/openspec/changes/" + Change + "/tasks.md")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(tasks), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(tasks, b, 0o644); err != nil {
		t.Fatal(err)
	}
	run := func(story, attempt, prompt string) agent.Result {
		t.Helper()
		var out, errOut bytes.Buffer
		env := map[string]string{"RALPH_STORY": story, "RALPH_ATTEMPT": attempt}
		if code := AgentMain([]string{"--delay", "0s", "-p"}, strings.NewReader(prompt), &out, &errOut, func(k string) string { return env[k] }); code != 0 {
			t.Fatalf("story %s attempt %s exited %d: %s", story, attempt, code, errOut.String())
		}
		res, err := claude.Claude{}.Decode(&out, nil)
		if err != nil || !res.SawResult {
			t.Fatalf("decode: %v %+v", err, res)
		}
		return res
	}
	if p := run("1", "1", "prompt").Promise(); p.Kind != agent.PromiseComplete {
		t.Errorf("story 1: %v", p)
	}
	p := run("2", "1", "prompt").Promise()
	if p.Kind != agent.PromiseFailed || !strings.Contains(p.Reason, "spec scenario") {
		t.Errorf("story 2 attempt 1: %v", p)
	}
	if p := run("2", "2", "# Why the previous attempt failed\n\nbecause\n\nmore").Promise(); p.Kind != agent.PromiseComplete {
		t.Errorf("story 2 attempt 2: %v", p)
	}
	b, _ = os.ReadFile(tasks)
	if strings.Count(string(b), "- [x]") != 4 || strings.Count(string(b), "- [ ]") != 2 {
		t.Errorf("tasks after stories 1 and 2:\n%s", b)
	}
}

func TestAgentRefusesToRunOutsideTheLoop(t *testing.T) {
	var out, errOut bytes.Buffer
	if code := AgentMain(nil, strings.NewReader(""), &out, &errOut, func(string) string { return "" }); code == 0 {
		t.Error("ran without RALPH_STORY")
	}
}

func TestSetupRefusesANonEmptyDirectory(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "keep"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Setup(t.Context(), dir); err != ErrNotEmpty {
		t.Errorf("Setup = %v, want ErrNotEmpty", err)
	}
}
