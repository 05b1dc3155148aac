package report

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/git-ralph/git-ralph/internal/repofile"
	"github.com/git-ralph/git-ralph/internal/run"
)

// TestLogTail: a log an agent's driver can read shows as its words and tool calls, then
// git-ralph's closing line; another shows its raw last lines; both are bounded.
func TestLogTail(t *testing.T) {
	dir := t.TempDir()
	claude := filepath.Join(dir, "claude.log")
	var b strings.Builder
	b.WriteString(strings.Repeat(`{"type":"assistant","message":{"content":[{"type":"text","text":"padding"}]}}`+"\n", 2000))
	b.WriteString(`{"type":"assistant","message":{"content":[{"type":"tool_use","name":"Bash","input":{"command":"go test ./..."}}]}}` + "\n")
	b.WriteString(`{"type":"assistant","message":{"content":[{"type":"text","text":"All green.\n<promise>COMPLETE</promise>"}]}}` + "\n")
	b.WriteString("--- git-ralph: agent exited with status 0 ---\n")
	if err := os.WriteFile(claude, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	got, _ := logTail(repofile.OpenRegular, claude, "claude")
	lines := strings.Split(got, "\n")
	if len(lines) != logTailLines {
		t.Errorf("%d lines, want %d", len(lines), logTailLines)
	}
	want := "↳ Bash go test ./...\nAll green.\n<promise>COMPLETE</promise>\n--- git-ralph: agent exited with status 0 ---"
	if !strings.HasSuffix(got, want) {
		t.Errorf("decoded tail ends\n%s\nwant\n%s", got[max(0, len(got)-200):], want)
	}
	if strings.Contains(got, `"type"`) {
		t.Errorf("raw JSON in a decoded tail")
	}

	raw := filepath.Join(dir, "custom.log")
	long := strings.Repeat("x", 1000)
	if err := os.WriteFile(raw, []byte("one\n"+long+"\nlast line\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	got, _ = logTail(repofile.OpenRegular, raw, "custom")
	if !strings.HasPrefix(got, "one\n"+strings.Repeat("x", logLineMax)+" …\n") || !strings.HasSuffix(got, "\nlast line") {
		t.Errorf("raw tail = %q", got)
	}
	if tail, ok := logTail(repofile.OpenRegular, filepath.Join(dir, "missing.log"), "claude"); tail != "" || ok {
		t.Errorf("a missing log has a tail")
	}
}

// TestAddLogsWithinRoom: the page holds log tails up to its room for logs, those of the
// attempts that did not complete first, newest first; every attempt with a log links
// it, and a note says how many tails were left out.
func TestAddLogsWithinRoom(t *testing.T) {
	store := run.NewStore(t.TempDir())
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	rep := &Report{}
	for i := 1; i <= 3; i++ {
		s := Story{ID: strconv.Itoa(i)}
		for n := 1; n <= 2; n++ {
			a := Attempt{Story: s.ID, N: n, Outcome: run.OutcomeFailed, Started: t0.Add(time.Duration(10*i+n) * time.Minute)}
			if n == 2 {
				a.Outcome = run.OutcomeComplete
			}
			path := store.LogPath("c", s.ID, n)
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				t.Fatal(err)
			}
			// 100 bytes of tail each: "story i attempt n" padded.
			line := fmt.Sprintf("story %s attempt %d ", s.ID, n)
			if err := os.WriteFile(path, []byte(line+strings.Repeat(".", 100-len(line))+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			s.Attempts = append(s.Attempts, a)
		}
		rep.Stories = append(rep.Stories, s)
	}
	rep.Stories[0].Attempts = append(rep.Stories[0].Attempts, Attempt{Story: "1", N: 3, Outcome: run.OutcomeRunning}) // no log yet
	if note := addLogs(rep, store, "c", 350); note != "" {
		rep.Notes = append(rep.Notes, note)
	}
	var got []string
	for _, s := range rep.Stories {
		for _, a := range s.Attempts {
			if a.LogTail != "" {
				got = append(got, s.ID+"-"+strconv.Itoa(a.N))
			}
			if want := store.LogPath("c", a.Story, a.N); a.N < 3 && a.Log != want || a.N == 3 && a.Log != "" {
				t.Errorf("attempt %s-%d links %q", a.Story, a.N, a.Log)
			}
		}
	}
	// Three tails fit: the failed attempts, newest (story 3) first.
	if strings.Join(got, " ") != "1-1 2-1 3-1" {
		t.Errorf("tails on the page: %v, want the three failed attempts", got)
	}
	if len(rep.Notes) != 1 || !strings.HasPrefix(rep.Notes[0], "3 log tail(s) are left out") {
		t.Errorf("notes: %q", rep.Notes)
	}
	var b bytes.Buffer
	if err := Render(&b, rep); err != nil {
		t.Fatal(err)
	}
	if want := `href="file://` + filepath.ToSlash(store.LogPath("c", "3", 2)) + `"`; !strings.Contains(b.String(), want) {
		t.Errorf("the page does not link a left-out log: no %s", want)
	}
}

// TestLearningsBounded: the page shows the end of a learnings file of any size, from a
// line's start, and how much of its beginning it left out; a small file whole.
func TestLearningsBounded(t *testing.T) {
	dir := t.TempDir()
	small := filepath.Join(dir, "small.md")
	if err := os.WriteFile(small, []byte("- use the router\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if text, path, cut := learnings(repofile.OpenRegular, small); text != "- use the router\n" || path != small || cut != 0 {
		t.Errorf("small file: %q %q %d", text, path, cut)
	}
	big := filepath.Join(dir, "big.md")
	var b strings.Builder
	for i := 0; b.Len() < 3*maxLearnings; i++ {
		fmt.Fprintf(&b, "- learning %d: keep the tests fast\n", i)
	}
	if err := os.WriteFile(big, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	text, _, cut := learnings(repofile.OpenRegular, big)
	if len(text) > maxLearnings || !strings.HasPrefix(text, "- learning ") || !strings.HasSuffix(b.String(), text) ||
		cut+int64(len(text)) != int64(b.Len()) {
		t.Errorf("big file: %d bytes shown from %.30q, %d cut of %d", len(text), text, cut, b.Len())
	}
	if text, _, _ := learnings(repofile.OpenRegular, filepath.Join(dir, "missing.md")); text != "" {
		t.Errorf("a missing file has learnings")
	}
}

// TestBudget: a use the agent never reported reads as unknown, never as 0 of the budget.
func TestBudget(t *testing.T) {
	for _, c := range []struct {
		tokens, maxTokens int64
		tokensKnown       bool
		cost, maxCost     float64
		costKnown         bool
		want              string
	}{
		{0, 0, false, 0, 0, false, ""},
		{240, 200, true, 0.02, 0.015, true, "240 of 200 tokens (120%); $0.0200 of $0.015"},
		{0, 2000000, false, 0, 5, false, "tokens not reported, budget 2,000,000; cost not reported, limit $5"},
		{1250000, 2000000, true, 0, 0, false, "1,250,000 of 2,000,000 tokens (62%)"},
	} {
		if got := Budget(c.tokens, c.maxTokens, c.tokensKnown, c.cost, c.maxCost, c.costKnown); got != c.want {
			t.Errorf("Budget(%+v) = %q, want %q", c, got, c.want)
		}
	}
}

// TestBudgetTextBeforeAnAttemptEnds: while no attempt has ended the agent could not have
// reported anything yet, so the budget reads 0 so far; once one ended without a report,
// it reads not reported.
func TestBudgetTextBeforeAnAttemptEnds(t *testing.T) {
	rep := &Report{MaxTokens: 1000, MaxCost: 5, Stories: []Story{{Attempts: []Attempt{{Outcome: run.OutcomeRunning}}}}}
	summarize(rep)
	if got, want := rep.BudgetText(), "0 of 1,000 tokens (0%); $0.0000 of $5"; got != want {
		t.Errorf("while the first attempt runs: %q, want %q", got, want)
	}
	rep = &Report{MaxTokens: 1000, MaxCost: 5, Stories: []Story{{Attempts: []Attempt{{Outcome: run.OutcomeComplete}}}}}
	summarize(rep)
	if got, want := rep.BudgetText(), "tokens not reported, budget 1,000; cost not reported, limit $5"; got != want {
		t.Errorf("after an attempt that reported nothing: %q, want %q", got, want)
	}
}

// The learnings file is read through the store: a directory on its way that the agent
// made a link (.git/ralph/<change> -> a directory of the user's) is not followed.
func TestLearningsFollowNoLink(t *testing.T) {
	common, elsewhere := t.TempDir(), t.TempDir()
	store := run.NewStore(common)
	path := store.LearningsPath("x")
	if err := os.WriteFile(filepath.Join(elsewhere, filepath.Base(path)), []byte("the user's secret\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(filepath.Dir(path)), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(elsewhere, filepath.Dir(path)); err != nil {
		t.Fatal(err)
	}
	if text, _, _ := learnings(store.Open, path); text != "" {
		t.Errorf("read through the link: %q", text)
	}
	if text, _, _ := learnings(repofile.OpenRegular, path); text == "" {
		t.Error("the link is not on the way: the test shows nothing")
	}
}

// A long reason keeps its first line and its end (a hook's last lines) on the page.
func TestCutReason(t *testing.T) {
	long := "the ralph-verify hook failed (exit 1):\n" + strings.Repeat("noise\n", 1000) + "FAIL: TestLogin"
	got := cutReason(long)
	if !strings.HasPrefix(got, "the ralph-verify hook failed (exit 1):\n…\n") || !strings.HasSuffix(got, "FAIL: TestLogin") || len(got) > reasonMax+10 {
		t.Errorf("cutReason kept %d bytes: %.80q … %q", len(got), got, got[max(0, len(got)-40):])
	}
	if cutReason("short") != "short" {
		t.Error("a short reason changed")
	}
}
