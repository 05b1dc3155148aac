// Package judge is what the judge of a run (start --judge AGENT) is, apart from the
// attempt it judges: a second agent that reads the diff a COMPLETE attempt's checkpoint
// would record, read-only, and answers PASS or FAIL. Here: its run on an attempt
// (Review), the verdict read from its result, the tasks and the diff its prompt shows,
// the trailers that record it on a checkpoint. What a verdict means for the attempt is
// the loop's (internal/loop, judge.go), its prompt's template internal/prompt's, its
// sandbox internal/sandbox's (Settings.JudgePolicy). FAIL, or no verdict, fails the
// attempt and uses a retry, so a broken judge is bounded too (docs/LOOP.md; the
// manual's JUDGE).
package judge

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/git-ralph/git-ralph/internal/agent"
	"github.com/git-ralph/git-ralph/internal/run"
	"github.com/git-ralph/git-ralph/internal/tasklist"
)

// MaxDiffFile bounds the file the whole diff is written to for the judge to read.
const MaxDiffFile = 16 << 20

// Limits are what a judge's run was held to: its --timeout and --idle-timeout, and
// whether the run has a budget in money (--max-cost) or in tokens (--max-tokens).
type Limits struct {
	Timeout, Idle time.Duration
	Cost, Tokens  bool
}

// Verdict is the verdict of a judge that ran to its end (res), and its reason. A judge
// whose use the budget cannot count gets no say: the run's cap would not hold.
func Verdict(res agent.Result, l Limits) (verdict, reason string) {
	verdict, reason = judged(res, l.Timeout, l.Idle)
	switch {
	case !res.SawResult || res.Class == agent.ClassTransient || res.Class == agent.ClassLimit:
	case l.Cost && res.CostUSD == nil:
		return run.VerdictNone, "reported no cost, so --max-cost cannot count it"
	case l.Tokens && res.InputTokens+res.OutputTokens == 0:
		return run.VerdictNone, "reported no tokens, so --max-tokens cannot count it"
	}
	return verdict, reason
}

// judged is the verdict of res as the judge gave it, and its reason.
func judged(res agent.Result, timeout, idle time.Duration) (verdict, reason string) {
	switch {
	case res.TimedOut:
		return run.VerdictNone, fmt.Sprintf("timed out after %s without a verdict", timeout)
	case res.Idle:
		return run.VerdictNone, fmt.Sprintf("printed nothing for %s", idle)
	case res.Fatal != "":
		return run.VerdictNone, res.Fatal
	case !res.SawResult && res.ExitCode == 0:
		return run.VerdictNone, "ended without a final result"
	case !res.SawResult:
		return run.VerdictNone, exited(res) + " without a final result" + stderrNote(res)
	case res.IsError:
		return run.VerdictNone, "reported an error: " + orText(strings.Join(res.Errors, "; "), orText(firstLine(res.Text), res.Subtype))
	case res.ExitCode > 0:
		return run.VerdictNone, fmt.Sprintf("exited with code %d", res.ExitCode)
	}
	v := agent.ParseVerdict(res.Text)
	switch v.Kind {
	case agent.VerdictPass:
		return run.VerdictPass, ""
	case agent.VerdictFail:
		return run.VerdictFail, v.Reason
	}
	return run.VerdictNone, "its final answer had no <verdict> line"
}

// Record keeps in j what the judge's run (res) reported of its use and its model.
func Record(j *run.Judge, res agent.Result) {
	j.Turns, j.InputTokens, j.OutputTokens, j.CostUSD = res.Turns, res.InputTokens, res.OutputTokens, res.CostUSD
	if res.Model != "" {
		j.Model = res.Model
	}
}

// Tasks are the lines of done's tasks the judge's prompt shows: ticked or not, with
// their ids, skipped ones as they were ticked.
func Tasks(done tasklist.Story) []string {
	var out []string
	for _, t := range done.Tasks {
		line := t.Text
		if t.ID != "" && !strings.HasPrefix(line, t.ID) {
			line = t.ID + " " + line
		}
		if t.Skipped != "" {
			line = t.SkipLine()
		}
		if t.Done {
			line = "[x] " + line
		} else {
			line = "[ ] " + line
		}
		out = append(out, line)
	}
	return out
}

// Diff keeps the beginning of a diff for the prompt (its first HeadMax bytes) and writes
// its first FileMax bytes to File, counting all (Total).
type Diff struct {
	File    io.Writer
	Head    []byte
	HeadMax int
	FileMax int
	Total   int
	err     error
}

func (w *Diff) Write(p []byte) (int, error) {
	if n := min(len(p), w.HeadMax-len(w.Head)); n > 0 {
		w.Head = append(w.Head, p[:n]...)
	}
	if n := min(len(p), w.FileMax-w.Total); n > 0 && w.err == nil {
		_, w.err = w.File.Write(p[:n])
	}
	w.Total += len(p)
	return len(p), w.err
}

// Trailers writes the judge's verdict on an attempt as trailers: Ralph-Judge (pass,
// fail, none) and the agent, model and use of the judge.
func Trailers(b *strings.Builder, j *run.Judge) {
	if j == nil || j.Verdict == "" {
		return
	}
	fmt.Fprintf(b, "Ralph-Judge: %s\nRalph-Judge-Agent: %s\n", j.Verdict, j.Agent)
	if j.Model != "" {
		fmt.Fprintf(b, "Ralph-Judge-Model: %s\n", j.Model)
	}
	if n := j.InputTokens + j.OutputTokens; n > 0 {
		fmt.Fprintf(b, "Ralph-Judge-Tokens: %d\n", n)
	}
	if j.CostUSD != nil {
		fmt.Fprintf(b, "Ralph-Judge-Cost-USD: %.4f\n", *j.CostUSD)
	}
}

// exited says how the judge's process ended: killed, or its exit code.
func exited(res agent.Result) string {
	if res.Signal != "" {
		return "it was killed (" + res.Signal + ")"
	}
	return fmt.Sprintf("it exited with code %d", res.ExitCode)
}

// stderrNote is ": " and the first of the last 3 lines of its stderr, "" when empty.
func stderrNote(res agent.Result) string {
	lines := strings.Split(strings.TrimRight(res.Stderr, "\n \t\r"), "\n")
	if s := firstLine(strings.Join(lines[max(0, len(lines)-3):], "\n")); s != "" {
		return ": " + s
	}
	return ""
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return s
}

func orText(s, alt string) string {
	if s == "" {
		return alt
	}
	return s
}
