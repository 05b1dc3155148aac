package githubflow

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/git-ralph/git-ralph/internal/openspec"
	"github.com/git-ralph/git-ralph/internal/run"
)

func usd(f float64) *float64 { return &f }

// The pull request body of a complete run whose first story failed once (the agent
// said FAILED), then passed with the verify hook; testdata/pr-body.md is the golden
// (UPDATE_GOLDEN=1 rewrites it).
func TestPRBodyGolden(t *testing.T) {
	t0 := time.Date(2026, 11, 26, 1, 0, 0, 0, time.UTC)
	rec := &run.Record{
		Change: "add-catalogue", Branch: "ralph/add-catalogue", Status: run.Complete,
		Agent: "claude", Model: "claude-sonnet-4-5", CostUSD: 1.2345, CostKnown: true, Started: t0,
		Attempts: []run.Attempt{
			{Story: "1", N: 1, Outcome: run.OutcomeFailed, Reason: "the frobnicator is missing\nand more", Ref: "refs/ralph/add-catalogue/attempts/1-1",
				InputTokens: 12000, OutputTokens: 3400, CostUSD: usd(0.40), Started: t0, Ended: t0.Add(4 * time.Minute)},
			{Story: "1", N: 2, Outcome: run.OutcomeComplete, Verify: "passed",
				InputTokens: 15000, OutputTokens: 4100, CostUSD: usd(0.5345), Started: t0.Add(4 * time.Minute), Ended: t0.Add(11 * time.Minute)},
			{Story: "2", N: 1, Outcome: run.OutcomeComplete, Verify: "passed",
				InputTokens: 9000, OutputTokens: 2000, CostUSD: usd(0.30), Started: t0.Add(11 * time.Minute), Ended: t0.Add(15*time.Minute + 30*time.Second)},
		},
	}
	ch := &openspec.Change{Name: "add-catalogue",
		Proposal: "# Change: Add the widget catalogue\n\n## Why\n\nShoppers cannot find widgets;\nsupport gets 40 calls a day.\n\n## What Changes\n\n- A catalogue page.\n",
		Tasks:    openspec.ParseTasks([]byte("## 1. Catalogue page | list\n- [x] 1.1 page\n\n## 2. Search\n- [x] 2.1 box\n")),
	}
	if got := PRTitle(ch, rec.Change); got != "Add the widget catalogue" {
		t.Errorf("title %q", got)
	}
	got := PRBody(rec, ch)
	golden := filepath.Join("testdata", "pr-body.md")
	if os.Getenv("UPDATE_GOLDEN") != "" {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (UPDATE_GOLDEN=1 go test ./internal/githubflow writes it)", err)
	}
	if got != string(want) {
		t.Errorf("PR body differs from %s:\n%s", golden, got)
	}
}

func TestPRTitle(t *testing.T) {
	for _, tc := range []struct{ proposal, want string }{
		{"# Proposal\n\n## Why\n", "x"},
		{"## Why\n\n# Late heading\n", "Late heading"},
		{"", "x"},
		{"# Change:   Trim me  \n", "Trim me"},
		{"#NoSpace\n# Real\n", "Real"},
	} {
		if got := PRTitle(&openspec.Change{Proposal: tc.proposal}, "x"); got != tc.want {
			t.Errorf("PRTitle(%q) = %q, want %q", tc.proposal, got, tc.want)
		}
	}
	long := strings.Repeat("é", 300)
	if got := PRTitle(&openspec.Change{Proposal: "# " + long}, "x"); utf8.RuneCountInString(got) != maxPRTitle || !strings.HasSuffix(got, "é…") {
		t.Errorf("a long title is not clipped to GitHub's %d characters: %d", maxPRTitle, utf8.RuneCountInString(got))
	}
	if got := PRTitle(nil, "x"); got != "x" {
		t.Errorf("no change: %q", got)
	}
}

func TestPRBodyStoppedRun(t *testing.T) {
	rec := &run.Record{Change: "x", Branch: "ralph/x", Status: run.Failed, StopReason: "story 2 ran out of retries", Agent: "codex"}
	body := PRBody(rec, &openspec.Change{Tasks: openspec.ParseTasks([]byte("## 1. A\n- [x] 1.1 a\n## 2. B\n- [ ] 2.1 b\n"))})
	for _, want := range []string{"**The run stopped before the end** (failed: story 2 ran out of retries)",
		"| 1 | A | done before the run | 0 |", "| 2 | B | not started | 0 |", "proposal.md has no \"Why\" section", "Cost: not reported"} {
		if !strings.Contains(body, want) {
			t.Errorf("body lacks %q:\n%s", want, body)
		}
	}
}

// GitHub refuses a pull request body over 65536 characters (422 "body is too long"),
// which the user could never fix: a long run with long failure reasons (an agent's
// one-line JSON error) or a long "Why" still gets a body that fits, and says it was cut.
func TestPRBodyFitsGitHubsLimit(t *testing.T) {
	rec := &run.Record{Change: "x", Branch: "ralph/x", Status: run.Failed, Agent: "claude"}
	for i := range 300 {
		rec.Attempts = append(rec.Attempts, run.Attempt{Story: "1", N: i + 1, Outcome: run.OutcomeFailed,
			Reason: "agent-error: " + strings.Repeat("{\"é\":\"x|y\"}", 500)})
	}
	ch := &openspec.Change{Proposal: "## Why\n\n" + strings.Repeat("A long reason, word after word.\n", 4000)}
	body := PRBody(rec, ch)
	if n := utf8.RuneCountInString(body); n > maxPRBody {
		t.Fatalf("body has %d characters; GitHub takes at most %d", n, maxPRBody)
	}
	for _, want := range []string{"## Why", "git ralph report x"} {
		if !strings.Contains(body, want) {
			t.Errorf("body lacks %q", want)
		}
	}
	// A short body is left whole.
	short := PRBody(&run.Record{Change: "x", Branch: "ralph/x", Status: run.Complete}, nil)
	if strings.Contains(short, "git ralph report") {
		t.Errorf("a short body says it was cut:\n%s", short)
	}
}
