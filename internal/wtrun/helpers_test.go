package wtrun

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/git-ralph/git-ralph/internal/agent"
	"github.com/git-ralph/git-ralph/internal/git"
	"github.com/git-ralph/git-ralph/internal/loop"
)

// The helpers of internal/loop's tests that the worktree runs' tests use, with
// l.Worktrees set as the CLI sets it.

// recorder is a Reporter that keeps what it is told.
type recorder struct {
	mu    sync.Mutex
	lines []string
}

func (r *recorder) add(s string) { r.mu.Lock(); r.lines = append(r.lines, s); r.mu.Unlock() }

func (r *recorder) Step(msg string)                               { r.add("step: " + msg) }
func (r *recorder) Warn(msg string)                               { r.add("warn: " + msg) }
func (r *recorder) Attempt(_, _ int, story, _ string, n, max int) { r.add("attempt " + story) }
func (r *recorder) AgentText(string)                              {}
func (r *recorder) AgentTool(string, string)                      {}
func (r *recorder) Outcome(ok bool, msg string)                   { r.add("outcome: " + msg) }
func (r *recorder) text() string                                  { return strings.Join(r.lines, "\n") }

// newRepo makes an isolated repository holding one change with one story.
func newRepo(t *testing.T) string {
	t.Helper()
	home := t.TempDir()
	for k, v := range map[string]string{
		"HOME": home, "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": filepath.Join(home, ".gitconfig"),
		"GIT_AUTHOR_NAME": "T", "GIT_AUTHOR_EMAIL": "t@example.com", "GIT_COMMITTER_NAME": "T", "GIT_COMMITTER_EMAIL": "t@example.com",
	} {
		t.Setenv(k, v)
	}
	dir := t.TempDir()
	must := func(args ...string) {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	must("init", "-q", "--initial-branch=main")
	if err := os.MkdirAll(filepath.Join(dir, "openspec/changes/c"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "openspec/changes/c/tasks.md"), []byte("## 1. One\n- [ ] 1.1 do it\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	must("add", "-A")
	must("commit", "-q", "-m", "base")
	return dir
}

// scriptAgent writes a shell-script agent speaking Claude's stream-json: invocation k
// (from 1) prints lines[k-1] (the last repeating) as its result, after ticking the
// story when the line says COMPLETE.
func scriptAgent(t *testing.T, results ...string) agent.Driver {
	t.Helper()
	dir := t.TempDir()
	var b strings.Builder
	b.WriteString("#!/bin/sh\ncat >/dev/null\nn=$(cat " + dir + "/n 2>/dev/null || echo 0); n=$((n+1)); echo $n >" + dir + "/n\n")
	b.WriteString("case $n in\n")
	for i, r := range results {
		pat := strconv.Itoa(i + 1)
		if i == len(results)-1 {
			pat = "*"
		}
		b.WriteString(pat + ")\n")
		if strings.Contains(r, "COMPLETE") {
			b.WriteString("  sed -i 's/- \\[ \\]/- [x]/' openspec/changes/c/tasks.md\n")
		}
		b.WriteString("  cat <<'EOF'\n" + r + "\nEOF\n  ;;\n")
	}
	b.WriteString("esac\n")
	p := filepath.Join(dir, "agent.sh")
	if err := os.WriteFile(p, []byte(b.String()), 0o755); err != nil {
		t.Fatal(err)
	}
	d, err := agent.NewCustom([]string{p}, agent.FormatClaudeStreamJSON)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

const resultComplete = `{"type":"result","subtype":"success","is_error":false,"num_turns":1,"result":"done\n<promise>COMPLETE</promise>"}`

type fakeClock struct {
	now    time.Time
	slept  []time.Duration
	cancel bool // the sleep is interrupted (Ctrl-C)
}

func (c *fakeClock) Now() time.Time { return c.now }
func (c *fakeClock) Sleep(ctx context.Context, d time.Duration) error {
	c.slept = append(c.slept, d)
	if c.cancel {
		return context.Canceled
	}
	c.now = c.now.Add(d)
	return nil
}

func newLoop(t *testing.T, dir string, clock *fakeClock) (*loop.Loop, *recorder) {
	t.Helper()
	repo, err := git.Open(t.Context(), dir)
	if err != nil {
		t.Fatal(err)
	}
	rep := &recorder{}
	l := loop.New(repo, rep)
	l.Worktrees = Runs
	l.Now, l.Sleep = clock.Now, clock.Sleep
	return l, rep
}
