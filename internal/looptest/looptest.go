// Package looptest holds the test helpers that the tests of internal/loop and of the
// workflow packages over it (githubflow, wtrun) share: a Reporter that records, a
// repository with one change, a scripted agent and a fake clock.
//
// Only tests import it. It imports no package of the loop, so that the loop's own
// tests can use it too; it runs git only to build the test's repository.
package looptest

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
	"github.com/git-ralph/git-ralph/internal/agent/custom"
)

// Recorder is a loop Reporter that keeps what it is told.
type Recorder struct {
	mu    sync.Mutex
	lines []string
}

func (r *Recorder) add(s string) { r.mu.Lock(); r.lines = append(r.lines, s); r.mu.Unlock() }

func (r *Recorder) Step(msg string)                               { r.add("step: " + msg) }
func (r *Recorder) Warn(msg string)                               { r.add("warn: " + msg) }
func (r *Recorder) Attempt(_, _ int, story, _ string, n, max int) { r.add("attempt " + story) }
func (r *Recorder) AgentText(string)                              {}
func (r *Recorder) AgentTool(string, string)                      {}
func (r *Recorder) Outcome(ok bool, msg string)                   { r.add("outcome: " + msg) }

// Text is everything recorded, a line each.
func (r *Recorder) Text() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return strings.Join(r.lines, "\n")
}

// NewRepo makes an isolated repository (its own HOME and global config, no system
// config, a set identity) holding one change "c" with one story.
func NewRepo(t *testing.T) string {
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

// GitOut runs git in dir and returns its trimmed output, failing the test on an error.
func GitOut(t *testing.T, dir string, args ...string) string {
	t.Helper()
	out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

// ScriptAgent writes a shell-script agent speaking Claude's stream-json: invocation k
// (from 1) prints results[k-1] (the last repeating) as its result, after ticking the
// story when the line says COMPLETE.
func ScriptAgent(t *testing.T, results ...string) agent.Driver {
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
	d, err := custom.New([]string{p}, custom.FormatClaudeStreamJSON)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// ResultComplete is a Claude result line that says COMPLETE.
const ResultComplete = `{"type":"result","subtype":"success","is_error":false,"num_turns":1,"result":"done\n<promise>COMPLETE</promise>"}`

// Clock is a fake clock: Sleep records the wait and moves At on at once, or, with
// Cancel, returns as a Ctrl-C would.
type Clock struct {
	At     time.Time
	Slept  []time.Duration
	Cancel bool
}

func (c *Clock) Now() time.Time { return c.At }

func (c *Clock) Sleep(ctx context.Context, d time.Duration) error {
	c.Slept = append(c.Slept, d)
	if c.Cancel {
		return context.Canceled
	}
	c.At = c.At.Add(d)
	return nil
}

// LockOn is a git trace (Repo.Trace) that plants index.lock in GitDir when git-ralph is
// about to run the git command whose trace line holds Want: that command, and every
// later one that needs the index, fails as a git killed half-way would make it fail.
type LockOn struct {
	GitDir, Want string
	done         bool
}

func (w *LockOn) Write(p []byte) (int, error) {
	if !w.done && strings.Contains(string(p), w.Want) {
		w.done = true
		if err := os.WriteFile(filepath.Join(w.GitDir, "index.lock"), nil, 0o644); err != nil {
			return 0, err
		}
	}
	return len(p), nil
}
