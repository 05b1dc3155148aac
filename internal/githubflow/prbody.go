package githubflow

import (
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/git-ralph/git-ralph/internal/loop"
	"github.com/git-ralph/git-ralph/internal/run"
	"github.com/git-ralph/git-ralph/internal/source"
)

// PRTitle is the pull request's title: the proposal's first "# " heading without the
// template's "Change: " prefix (OpenSpec's own rule for a change's title), else the
// change name; the template's "# Proposal" counts as no title.
func PRTitle(src *source.Source, change string) string {
	if src != nil && src.Title != "" {
		return clip(src.Title, maxPRTitle)
	}
	return change
}

// PRBody is the pull request's description (Markdown): why the change exists, the
// stories with their attempts, verify results and cost, the failed attempts and their
// reasons, the totals, the agent, and how to look at a kept attempt.
func PRBody(rec *run.Record, src *source.Source) string {
	b := &strings.Builder{}
	writeWhy(b, rec, src)
	writeStories(b, rec, src)
	writeSkipped(b, src)
	var failed []run.Attempt
	for _, a := range rec.Attempts {
		if a.Outcome != run.OutcomeComplete && a.Outcome != run.OutcomeRunning {
			failed = append(failed, a)
		}
	}
	writeFailed(b, failed)
	writeTotals(b, rec, len(failed))
	if len(failed) > 0 {
		a := failed[0]
		fmt.Fprintf(b, "## Looking at a failed attempt\n\n")
		fmt.Fprintf(b, "Each failed attempt is kept, with everything the agent changed, as a commit under `refs/ralph/%s/attempts/` in the repository the loop ran in (it is not pushed):\n\n", rec.Change)
		fmt.Fprintf(b, "%s\n", fenced("sh", "git log -p -1 "+loop.AttemptRef(rec.Change, a.Story, a.N)))
	}
	fmt.Fprintf(b, "<sub>Opened by git-ralph from %s.</sub>\n", code(rec.Branch))
	return fitBody(b.String(), rec.Change)
}

// writeWhy writes the body's "Why": the change's own words, or why there are none.
func writeWhy(b *strings.Builder, rec *run.Record, src *source.Source) {
	why := ""
	if src != nil {
		why = src.Why
	}
	switch {
	case why != "":
	case src != nil:
		why = "_" + src.NoWhy + "_"
	default:
		why = fmt.Sprintf("_The files of %s could not be read here: nothing says why._", code(rec.Change))
	}
	fmt.Fprintf(b, "## Why\n\n%s\n\n", why)
}

// writeStories writes the body's "Stories": whether the run ended, and a table of the
// stories with their attempts, verify results and cost.
func writeStories(b *strings.Builder, rec *run.Record, src *source.Source) {
	w := func(format string, args ...any) { fmt.Fprintf(b, format, args...) }
	w("## Stories\n\n")
	switch rec.Status {
	case run.Complete:
		w("Every story is done: one `checkpoint: <story>` commit each on %s.\n\n", code(rec.Branch))
	default:
		reason := string(rec.Status)
		if rec.StopReason != "" {
			reason += ": " + rec.StopReason
		}
		w("**The run stopped before the end** (%s); the stories marked done have their checkpoint commits on %s.\n\n", cell(code(reason)), code(rec.Branch))
	}
	w("| Story | Title | Result | Attempts | Verify | Cost |\n")
	w("|---|---|---|---:|---|---:|\n")
	for _, s := range prStories(rec, src) {
		w("| %s | %s | %s | %d | %s | %s |\n", cell(code(s.id)), cell(code(s.title)), s.result, s.attempts, cell(s.verify), s.cost)
	}
	w("\n")
}

// writeSkipped writes the tasks ticked as ones the agent could not do: someone must do
// them.
func writeSkipped(b *strings.Builder, src *source.Source) {
	if src == nil {
		return
	}
	var skipped []string
	for _, s := range src.Stories {
		for _, t := range s.Tasks {
			if t.Skipped != "" {
				skipped = append(skipped, fmt.Sprintf("- story %s: %s", code(s.ID), code(clip(t.SkipLine(), maxReason))))
			}
		}
	}
	if len(skipped) > 0 {
		fmt.Fprintf(b, "## Skipped tasks\n\nThe agent ticked these as not doable where it ran; they are not done:\n\n%s\n\n", strings.Join(skipped, "\n"))
	}
}

// writeFailed writes the failed attempts with their reasons.
func writeFailed(b *strings.Builder, failed []run.Attempt) {
	if len(failed) == 0 {
		return
	}
	fmt.Fprintf(b, "## Failed attempts\n\n")
	for _, a := range failed {
		reason := a.Reason
		if reason == "" {
			reason = "no reason given"
		}
		fmt.Fprintf(b, "- %s (story %s, attempt %d): %s — %s\n", code(fmt.Sprintf("%s-%d", a.Story, a.N)), code(a.Story), a.N, known(a.Outcome, outcomes), code(clip(firstLineOf(reason), maxReason)))
	}
	fmt.Fprintf(b, "\n")
}

// writeTotals writes the totals: attempts (failed of them), tokens (the judge's too),
// cost, duration, the agent and the judge.
func writeTotals(b *strings.Builder, rec *run.Record, failed int) {
	w := func(format string, args ...any) { fmt.Fprintf(b, format, args...) }
	w("## Totals\n\n")
	var in, out int64
	judge := ""
	for _, a := range rec.Attempts {
		in += a.InputTokens
		out += a.OutputTokens
		if j := a.Judge; j != nil {
			in += j.InputTokens
			out += j.OutputTokens
			judge = code(j.Agent)
			if j.Model != "" {
				judge += ", model " + code(j.Model)
			}
		}
	}
	w("- Attempts: %d (%d failed)\n", len(rec.Attempts), failed)
	w("- Tokens: %s in, %s out\n", loop.Thousands(in), loop.Thousands(out))
	if rec.CostKnown {
		w("- Cost: $%.2f\n", rec.CostUSD)
	} else {
		w("- Cost: not reported by the agent\n")
	}
	w("- Duration: %s\n", runDuration(rec).Round(time.Second))
	agent := code(rec.Agent)
	if rec.Model != "" {
		agent += ", model " + code(rec.Model)
	}
	w("- Agent: %s\n", agent)
	if judge != "" {
		w("- Judge: %s (its verdicts are in the attempts' reasons and the checkpoints' Ralph-Judge trailers)\n", judge)
	}
	w("\n")
}

// maxPRBody is the most characters GitHub takes in a pull request's body; a longer one
// is refused (422 "body is too long"), after the push, with nothing the user can fix.
const maxPRBody = 65536

// maxPRTitle is the most characters GitHub takes in a pull request's title.
const maxPRTitle = 256

// maxReason is how much of a failed attempt's reason the body shows (an agent's error
// can be a whole JSON document on one line); the attempt's commit keeps all of it.
const maxReason = 300

// clip cuts s to at most n characters, marking the cut with "…".
func clip(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n-1]) + "…"
}

// closer is a task source whose pull request closes things when it merges (a GitHub
// issue's kind): the lines the body ends with.
type closer interface {
	ClosingLines(src *source.Source, rec *run.Record, prRepo string) []string
}

// ClosingLines are the lines that close what src's run did when a commit or a pull
// request says them (a GitHub issue run's "Closes OWNER/REPO#N"), none for a source
// whose kind closes nothing. prRepo is the pull request's repository, "" for a message
// that may land anywhere (every issue is then named with its repository).
func ClosingLines(rec *run.Record, src *source.Source, prRepo string) []string {
	if src == nil || rec == nil {
		return nil
	}
	if c, ok := src.Kind.(closer); ok {
		return c.ClosingLines(src, rec, prRepo)
	}
	return nil
}

// withClosing ends body with the closing lines of src's kind, if it has any: after the
// cut to GitHub's limit, so that a long body never loses them.
func withClosing(body string, rec *run.Record, src *source.Source, prRepo string) string {
	lines := ClosingLines(rec, src, prRepo)
	if len(lines) == 0 {
		return body
	}
	tail := "\n" + strings.Join(lines, "\n") + "\n"
	if over := utf8.RuneCountInString(body) + utf8.RuneCountInString(tail) - maxPRBody; over > 0 {
		r := []rune(body)
		body = string(r[:len(r)-min(len(r), over)])
	}
	return body + tail
}

// fitBody cuts a body longer than GitHub takes at a line end and says where the rest is.
func fitBody(body, change string) string {
	if utf8.RuneCountInString(body) <= maxPRBody {
		return body
	}
	note := "\n\n_… cut to GitHub's limit of " + fmt.Sprint(maxPRBody) + " characters; `git ralph report " + change + "` shows all of it._\n"
	r := []rune(body)[:maxPRBody-utf8.RuneCountInString(note)-len("\n```")]
	cut := string(r)
	if i := strings.LastIndexByte(cut, '\n'); i > 0 {
		cut = cut[:i]
	}
	if strings.Count(cut, "```")%2 == 1 {
		cut += "\n```" // close a code block the cut left open
	}
	return cut + note
}

type prStory struct {
	id, title, result, verify, cost string
	attempts                        int
}

// prStories lists the change's stories (or, without the change, those with attempts),
// each with what the run's attempts say about it.
func prStories(rec *run.Record, src *source.Source) []prStory {
	var out []prStory
	seen := map[string]bool{}
	add := func(id, title string, ticked bool) {
		seen[id] = true
		s := prStory{id: id, title: title, result: "not started", verify: "–", cost: "–"}
		atts := rec.AttemptsOf(id)
		s.attempts = len(atts)
		var cost float64
		costKnown := len(atts) > 0
		for _, a := range atts {
			if c, _ := a.Uses(); c != nil { // the judge's cost with the agent's
				cost += *c
			} else {
				costKnown = false
			}
			if a.Outcome == run.OutcomeComplete {
				s.result = "done"
				if a.Verify != "" {
					s.verify = known(a.Verify, verifies)
				}
				if a.Judge != nil && a.Judge.Verdict != "" {
					s.verify += ", judge " + known(a.Judge.Verdict, verdicts)
				}
			}
		}
		if s.result != "done" && len(atts) > 0 {
			s.result = "not done"
		}
		if ticked && len(atts) == 0 {
			s.result = "done before the run"
		}
		if costKnown {
			s.cost = fmt.Sprintf("$%.2f", cost)
		}
		out = append(out, s)
	}
	if src != nil {
		for _, s := range src.Stories {
			add(s.ID, s.Title, s.Complete())
		}
	}
	for _, a := range rec.Attempts {
		if !seen[a.Story] {
			add(a.Story, "", false)
		}
	}
	return out
}

// runDuration is the time from the run's start to the end of its last attempt.
func runDuration(rec *run.Record) time.Duration {
	end := rec.Updated
	if last := rec.Last(); last != nil && !last.Ended.IsZero() {
		end = last.Ended
	}
	if end.Before(rec.Started) {
		return 0
	}
	return end.Sub(rec.Started)
}

// Text from the agent or a run record (story ids and titles, reasons, the agent and
// model names) goes into the body as code: GitHub renders no Markdown there, links no
// @mention or #reference, shows no image or link, and a closing keyword ("Fixes #1")
// closes nothing.

// code is s as an inline code span, whatever it holds: the fence is one backtick longer
// than s's longest run, padded with a space where s starts or ends with one; line endings
// become spaces (one would let the next line start a block); "" stays "".
func code(s string) string {
	s = lineEndings.Replace(strings.TrimSpace(s))
	if s == "" {
		return ""
	}
	fence := strings.Repeat("`", longestRun(s, '`')+1)
	if strings.HasPrefix(s, "`") || strings.HasSuffix(s, "`") {
		return fence + " " + s + " " + fence
	}
	return fence + s + fence
}

// fenced is a fenced code block of content, with a fence longer than any run of
// backticks in it.
func fenced(info, content string) string {
	fence := strings.Repeat("`", max(3, longestRun(content, '`')+1))
	return fence + info + "\n" + content + "\n" + fence + "\n"
}

func longestRun(s string, c byte) int {
	longest, n := 0, 0
	for i := 0; i < len(s); i++ {
		if s[i] == c {
			n++
			longest = max(longest, n)
		} else {
			n = 0
		}
	}
	return longest
}

var (
	outcomes = []string{run.OutcomeComplete, run.OutcomeFailed, run.OutcomeError, run.OutcomeNoSignal,
		run.OutcomeTimeout, run.OutcomeInterrupted, run.OutcomeRunning}
	verifies = []string{"passed", "failed", "skipped"}
	verdicts = []string{run.VerdictPass, run.VerdictFail, run.VerdictNone}
)

// known is s when it is one of the values git-ralph writes, else s as code.
func known(s string, values []string) string {
	if slices.Contains(values, s) {
		return s
	}
	return code(s)
}

// cell makes s safe inside a Markdown table cell.
func cell(s string) string {
	s = lineEndings.Replace(strings.TrimSpace(s))
	return strings.ReplaceAll(s, "|", `\|`)
}

// lineEndings turns CommonMark's line endings (LF, CR, CRLF) into spaces.
var lineEndings = strings.NewReplacer("\r\n", " ", "\r", " ", "\n", " ")

func firstLineOf(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexAny(s, "\r\n"); i >= 0 {
		return s[:i] + " …"
	}
	return s
}
