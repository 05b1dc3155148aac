package judge

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/git-ralph/git-ralph/internal/agent"
	"github.com/git-ralph/git-ralph/internal/run"
)

// A judge's verdict is its <verdict> line, unless its run says otherwise: a crash, a
// limit, or a budget it could not be counted against.
func TestVerdict(t *testing.T) {
	cost := 0.5
	pass := agent.Result{SawResult: true, Text: "<verdict>PASS</verdict>", CostUSD: &cost, InputTokens: 10}
	for _, c := range []struct {
		res          agent.Result
		l            Limits
		verdict, why string
	}{
		{pass, Limits{}, run.VerdictPass, ""},
		{agent.Result{SawResult: true, Text: "<verdict>FAIL: no tests</verdict>"}, Limits{}, run.VerdictFail, "no tests"},
		{agent.Result{SawResult: true, Text: "looks fine"}, Limits{}, run.VerdictNone, "its final answer had no <verdict> line"},
		{agent.Result{TimedOut: true}, Limits{Timeout: time.Minute}, run.VerdictNone, "timed out after 1m0s without a verdict"},
		{agent.Result{ExitCode: 2, Stderr: "a\nb\nboom\nlast\n"}, Limits{}, run.VerdictNone, "it exited with code 2 without a final result: b"},
		{agent.Result{ExitCode: -1, Signal: "killed"}, Limits{}, run.VerdictNone, "it was killed (killed) without a final result"},
		{agent.Result{SawResult: true, Text: "<verdict>PASS</verdict>"}, Limits{Cost: true}, run.VerdictNone, "reported no cost, so --max-cost cannot count it"},
		{agent.Result{SawResult: true, Text: "<verdict>PASS</verdict>", CostUSD: &cost}, Limits{Tokens: true}, run.VerdictNone, "reported no tokens, so --max-tokens cannot count it"},
		{pass, Limits{Cost: true, Tokens: true}, run.VerdictPass, ""},
	} {
		if v, why := Verdict(c.res, c.l); v != c.verdict || why != c.why {
			t.Errorf("Verdict(%+v, %+v) = %q, %q; want %q, %q", c.res, c.l, v, why, c.verdict, c.why)
		}
	}
}

// The diff's beginning goes to the prompt, its first FileMax bytes to the file, and
// all of it is counted.
func TestDiff(t *testing.T) {
	var file bytes.Buffer
	w := &Diff{File: &file, HeadMax: 4, FileMax: 10}
	for _, s := range []string{"abc", "defgh", "ijklmnop"} {
		if n, err := w.Write([]byte(s)); n != len(s) || err != nil {
			t.Fatalf("Write(%q) = %d, %v", s, n, err)
		}
	}
	if string(w.Head) != "abcd" || file.String() != "abcdefghij" || w.Total != 16 {
		t.Errorf("head %q, file %q, total %d", w.Head, file.String(), w.Total)
	}
}

// The verdict and the judge's use are trailers of the checkpoint; no verdict, none.
func TestTrailers(t *testing.T) {
	cost := 0.01234
	var b strings.Builder
	Trailers(&b, &run.Judge{Verdict: run.VerdictPass, Agent: "codex", Model: "m", InputTokens: 2, OutputTokens: 3, CostUSD: &cost})
	want := "Ralph-Judge: pass\nRalph-Judge-Agent: codex\nRalph-Judge-Model: m\nRalph-Judge-Tokens: 5\nRalph-Judge-Cost-USD: 0.0123\n"
	if b.String() != want {
		t.Errorf("trailers %q, want %q", b.String(), want)
	}
	b.Reset()
	Trailers(&b, &run.Judge{Agent: "codex"})
	if b.Len() != 0 {
		t.Errorf("a judge without a verdict wrote %q", b.String())
	}
}
