package loop

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/git-ralph/git-ralph/internal/agent"
	"github.com/git-ralph/git-ralph/internal/git"
	"github.com/git-ralph/git-ralph/internal/run"
)

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
		pat := itoa(i + 1)
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

const (
	resultComplete  = `{"type":"result","subtype":"success","is_error":false,"num_turns":1,"result":"done\n<promise>COMPLETE</promise>"}`
	resultOverload  = `{"type":"result","subtype":"success","is_error":true,"api_error_status":529,"num_turns":1,"result":"API Error: 529 {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}"}`
	resultLimitHint = `{"type":"result","subtype":"success","is_error":true,"num_turns":1,"result":"Claude AI usage limit reached|1767229200"}`
)

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

func newLoop(t *testing.T, dir string, clock *fakeClock) (*Loop, *recorder) {
	t.Helper()
	repo, err := git.Open(t.Context(), dir)
	if err != nil {
		t.Fatal(err)
	}
	rep := &recorder{}
	l := New(repo, rep)
	l.Now, l.Sleep = clock.Now, clock.Sleep
	return l, rep
}

func TestTransientErrorsBackOffWithoutUsingRetries(t *testing.T) {
	dir := newRepo(t)
	clock := &fakeClock{now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	l, rep := newLoop(t, dir, clock)
	sum, err := l.Start(t.Context(), Options{Change: "c", MaxRetries: 0,
		Driver: scriptAgent(t, resultOverload, resultOverload, resultComplete)})
	if err != nil {
		t.Fatalf("Start: %v\n%s", err, rep.text())
	}
	if want := []time.Duration{30 * time.Second, 2 * time.Minute}; !equalDurations(clock.slept, want) {
		t.Errorf("slept %v, want %v", clock.slept, want)
	}
	if sum.Stories != 1 || sum.Attempts != 3 {
		t.Errorf("summary: %d stories in %d attempts, want 1 in 3", sum.Stories, sum.Attempts)
	}
	rec, _ := l.Store.Load("c")
	if rec.Status != run.Complete || len(rec.Attempts) != 3 || rec.Attempts[0].Ref == "" {
		t.Errorf("record: status %s, %d attempts, first ref %q", rec.Status, len(rec.Attempts), rec.Attempts[0].Ref)
	}
}

func TestTransientErrorsCountOnceBackoffIsSpent(t *testing.T) {
	dir := newRepo(t)
	clock := &fakeClock{now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	l, rep := newLoop(t, dir, clock)
	_, err := l.Start(t.Context(), Options{Change: "c", MaxRetries: 0, Driver: scriptAgent(t, resultOverload)})
	var le *Error
	if !errors.As(err, &le) || !strings.Contains(le.Msg, "failed 1 attempt") {
		t.Fatalf("Start = %v, want the story to fail after the backoff\n%s", err, rep.text())
	}
	if len(clock.slept) != 3 {
		t.Errorf("slept %v, want the three backoff steps", clock.slept)
	}
}

func TestUsageLimitStopsResumably(t *testing.T) {
	dir := newRepo(t)
	clock := &fakeClock{now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	l, rep := newLoop(t, dir, clock)
	_, err := l.Start(t.Context(), Options{Change: "c", Driver: scriptAgent(t, resultLimitHint, resultComplete)})
	var le *Error
	if !errors.As(err, &le) || le.ExitCode() != 1 || !strings.Contains(le.Msg, "usage or rate limit") || !strings.Contains(le.Msg, "resets at 01:00 UTC") {
		t.Fatalf("Start = %v, want a usage-limit stop naming the reset\n%s", err, rep.text())
	}
	if len(clock.slept) != 0 {
		t.Errorf("slept %v without --wait-on-limit", clock.slept)
	}
	rec, _ := l.Store.Load("c")
	if rec.Status != run.Failed || !strings.Contains(rec.StopReason, "limit") {
		t.Errorf("record: %s %q", rec.Status, rec.StopReason)
	}
	// start again: it resumes and completes
	if _, err := l.Start(t.Context(), Options{Change: "c", Driver: scriptAgent(t, resultComplete)}); err != nil {
		t.Fatalf("resume: %v", err)
	}
}

func TestWaitOnLimitWaitsUntilTheReset(t *testing.T) {
	dir := newRepo(t)
	clock := &fakeClock{now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	l, rep := newLoop(t, dir, clock)
	_, err := l.Start(t.Context(), Options{Change: "c", MaxRetries: 0, WaitOnLimit: 5 * time.Hour,
		Driver: scriptAgent(t, resultLimitHint, resultComplete)})
	if err != nil {
		t.Fatalf("Start: %v\n%s", err, rep.text())
	}
	if want := []time.Duration{time.Hour}; !equalDurations(clock.slept, want) {
		t.Errorf("slept %v, want %v (until the reset at 01:00)", clock.slept, want)
	}
	if !strings.Contains(rep.text(), "waiting until 01:00:00 UTC") {
		t.Errorf("no 'waiting until' line:\n%s", rep.text())
	}
}

func TestWaitOnLimitIsCappedAndInterruptible(t *testing.T) {
	dir := newRepo(t)
	clock := &fakeClock{now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), cancel: true}
	l, _ := newLoop(t, dir, clock)
	_, err := l.Start(t.Context(), Options{Change: "c", WaitOnLimit: 10 * time.Minute,
		Driver: scriptAgent(t, resultLimitHint, resultComplete)})
	if !errors.Is(err, ErrInterrupted) {
		t.Fatalf("Start = %v, want interrupted", err)
	}
	if want := []time.Duration{10 * time.Minute}; !equalDurations(clock.slept, want) {
		t.Errorf("slept %v, want %v (capped by --wait-on-limit)", clock.slept, want)
	}
	rec, _ := l.Store.Load("c")
	if rec.Status != run.Interrupted {
		t.Errorf("status %s, want interrupted", rec.Status)
	}
}

func equalDurations(a, b []time.Duration) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
