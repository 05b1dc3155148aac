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
	"github.com/git-ralph/git-ralph/internal/source"
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
	ch := source.FromChange(&openspec.Change{Name: "add-catalogue",
		Proposal: "# Change: Add the widget catalogue\n\n## Why\n\nShoppers cannot find widgets;\nsupport gets 40 calls a day.\n\n## What Changes\n\n- A catalogue page.\n",
		Tasks:    openspec.ParseTasks([]byte("## 1. Catalogue page | list\n- [x] 1.1 page\n\n## 2. Search\n- [x] 2.1 box\n")),
	})
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
		if got := PRTitle(source.FromChange(&openspec.Change{Proposal: tc.proposal}), "x"); got != tc.want {
			t.Errorf("PRTitle(%q) = %q, want %q", tc.proposal, got, tc.want)
		}
	}
	long := strings.Repeat("é", 300)
	if got := PRTitle(source.FromChange(&openspec.Change{Proposal: "# " + long}), "x"); utf8.RuneCountInString(got) != maxPRTitle || !strings.HasSuffix(got, "é…") {
		t.Errorf("a long title is not clipped to GitHub's %d characters: %d", maxPRTitle, utf8.RuneCountInString(got))
	}
	if got := PRTitle(nil, "x"); got != "x" {
		t.Errorf("no change: %q", got)
	}
}

func TestPRBodyStoppedRun(t *testing.T) {
	rec := &run.Record{Change: "x", Branch: "ralph/x", Status: run.Failed, StopReason: "story 2 ran out of retries", Agent: "codex"}
	body := PRBody(rec, source.FromChange(&openspec.Change{Tasks: openspec.ParseTasks([]byte("## 1. A\n- [x] 1.1 a\n## 2. B\n- [ ] 2.1 b\n"))}))
	for _, want := range []string{"**The run stopped before the end** (`failed: story 2 ran out of retries`)",
		"| `1` | `A` | done before the run | 0 |", "| `2` | `B` | not started | 0 |", "proposal.md has no \"Why\" section", "Cost: not reported"} {
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
	ch := source.FromChange(&openspec.Change{Proposal: "## Why\n\n" + strings.Repeat("A long reason, word after word.\n", 4000)})
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

// The body neutralises what the agent or a run record wrote: mentions, closing keywords,
// images, links and HTML in reasons, story ids, titles and names stay inside code spans
// and blocks whose fences their backticks cannot close. testdata/pr-body-hostile.md is
// the golden; outsideCode checks what GitHub would render as Markdown.
func TestPRBodyHostile(t *testing.T) {
	t0 := time.Date(2026, 11, 26, 1, 0, 0, 0, time.UTC)
	hostile := "@octocat @acme/security Fixes #1 closes #2 ![](https://elsewhere/pixel.png) [click](https://evil.example) <img src=x onerror=alert(1)> ``` `"
	storyID := "1``` `x"
	rec := &run.Record{
		Change: "x", Branch: "ralph/x", Status: run.Failed, StopReason: "story failed: " + hostile,
		Agent: "claude`@octocat`", Model: "m ``` Fixes #3", Started: t0,
		Attempts: []run.Attempt{
			{Story: storyID, N: 1, Outcome: "failed **@octocat**", Reason: hostile + "\nsecond line @octocat", Verify: "@octocat",
				Started: t0, Ended: t0.Add(time.Minute)},
			{Story: storyID, N: 2, Outcome: run.OutcomeComplete, Verify: "passed @octocat", Started: t0.Add(time.Minute), Ended: t0.Add(2 * time.Minute)},
		},
	}
	ch := source.FromChange(&openspec.Change{Name: "x",
		Tasks: openspec.ParseTasks([]byte("## 1. Title @octocat resolves #4 ![i](https://e/i.png) `tick`\n- [ ] 1.1 it\n")),
	})
	got := PRBody(rec, ch)
	golden := filepath.Join("testdata", "pr-body-hostile.md")
	if os.Getenv("UPDATE_GOLDEN") != "" {
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
	rendered := outsideCode(got)
	for _, bad := range []string{"@octocat", "@acme", "#1", "#2", "#3", "#4", "![", "](", "<img", "evil.example", "elsewhere"} {
		if strings.Contains(rendered, bad) {
			t.Errorf("%q is outside every code span or block:\n%s", bad, rendered)
		}
	}
	for _, keep := range []string{"@octocat @acme/security Fixes #1 closes #2", "Title @octocat resolves #4"} {
		if !strings.Contains(got, keep) {
			t.Errorf("the text %q is not shown as written", keep)
		}
	}
}

// outsideCode is what of md is not inside a fenced code block or a code span
// (CommonMark: a span runs from a run of n backticks to the next run of exactly n; a
// fence from a line of three or more backticks to a line of at least as many), the
// text GitHub would render as Markdown.
func outsideCode(md string) string {
	var out strings.Builder
	fence := ""
	for _, line := range strings.SplitAfter(md, "\n") {
		trimmed := strings.TrimRight(line, "\n")
		if fence != "" {
			if strings.HasPrefix(trimmed, fence) && strings.Trim(trimmed, "`") == "" {
				fence = ""
			}
			continue
		}
		if strings.HasPrefix(trimmed, "```") {
			fence = trimmed[:len(trimmed)-len(strings.TrimLeft(trimmed, "`"))]
			continue
		}
		out.WriteString(line)
	}
	s, rest := out.String(), ""
	for {
		i := strings.IndexByte(s, '`')
		if i < 0 {
			return rest + s
		}
		n := len(s[i:]) - len(strings.TrimLeft(s[i:], "`"))
		rest += s[:i]
		after := s[i+n:]
		closed := false
		for j := 0; j < len(after); {
			if after[j] != '`' {
				j++
				continue
			}
			m := len(after[j:]) - len(strings.TrimLeft(after[j:], "`"))
			if m == n {
				s, closed = after[j+m:], true
				break
			}
			j += m
		}
		if !closed {
			return rest + s[i:] // an unclosed run is literal text
		}
	}
}

// A carriage return is a line ending to CommonMark (and GitHub): inside a code span it
// would end the line, and a next line starting with "> " or "# " would be a block of its
// own, outside the span, where a mention or a closing keyword takes effect.
func TestPRBodyCarriageReturn(t *testing.T) {
	t0 := time.Date(2026, 11, 26, 1, 0, 0, 0, time.UTC)
	evil := "ok\r> Fixes #1 @octocat\r\n# heading @octocat"
	rec := &run.Record{
		Change: "x", Branch: "ralph/x", Status: run.Failed, StopReason: evil, Agent: "claude", Started: t0,
		Attempts: []run.Attempt{{Story: "1", N: 1, Outcome: run.OutcomeFailed, Reason: evil, Started: t0, Ended: t0.Add(time.Minute)}},
	}
	ch := source.FromChange(&openspec.Change{Name: "x", Tasks: openspec.ParseTasks([]byte("## 1. Title\r> resolves #4 @octocat\n- [ ] 1.1 it\n"))})
	got := PRBody(rec, ch)
	if strings.Contains(got, "\r") {
		t.Errorf("the body has a carriage return, a line ending that breaks out of a code span:\n%q", got)
	}
}

// A run with a judge (start --judge): the failed attempt's reason is the judge's, the
// story's verify cell says its PASS, its cost counts in the story's and its tokens in
// the totals, and the body names it.
func TestPRBodyJudge(t *testing.T) {
	rec := &run.Record{Change: "x", Branch: "ralph/x", Status: run.Complete, Agent: "claude", CostKnown: true, CostUSD: 0.1,
		Attempts: []run.Attempt{
			{Story: "1", N: 1, Outcome: run.OutcomeFailed, Reason: "judge: 1.1 has no test", CostUSD: usd(0.02), InputTokens: 100,
				Judge: &run.Judge{Agent: "codex", Model: "gpt-9", Verdict: run.VerdictFail, Reason: "1.1 has no test", CostUSD: usd(0.03), InputTokens: 1000}},
			{Story: "1", N: 2, Outcome: run.OutcomeComplete, Verify: "passed", CostUSD: usd(0.02), InputTokens: 100,
				Judge: &run.Judge{Agent: "codex", Model: "gpt-9", Verdict: run.VerdictPass, CostUSD: usd(0.03), InputTokens: 1000}},
		}}
	body := PRBody(rec, source.FromChange(&openspec.Change{Tasks: openspec.ParseTasks([]byte("## 1. A\n- [x] 1.1 a\n"))}))
	for _, want := range []string{"| `1` | `A` | done | 2 | passed, judge pass | $0.10 |",
		"(story `1`, attempt 1): failed — `judge: 1.1 has no test`", "- Tokens: 2,200 in", "- Judge: `codex`, model `gpt-9`"} {
		if !strings.Contains(body, want) {
			t.Errorf("body lacks %q:\n%s", want, body)
		}
	}
}
