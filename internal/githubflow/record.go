package githubflow

import (
	"fmt"
	"math"
	"regexp"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/git-ralph/git-ralph/internal/git"
	"github.com/git-ralph/git-ralph/internal/run"
)

// A remote run's record.json was written on a runner where the agent ran: it is input,
// and is checked like user input before anything of it is used here (story ids become
// ref names and log paths; reasons reach the terminal, the report and a pull request).

// The bounds of an imported record.
const (
	maxRecordBytes  = 16 << 20 // the whole record.json
	maxAttempts     = 10000
	maxAttemptN     = 100000
	maxReasonBytes  = 64 << 10 // a reason carries at most 40 lines of a hook's output
	maxNameBytes    = 200      // agent and model names
	maxLearnedBytes = 4 << 20  // learnings.md
	maxAmount       = 1e6      // dollars, or premium requests: an attempt's, a budget, a run's
	maxTokens       = 1 << 40  // an attempt's input or output tokens, a budget (1.1e12)
	maxTurns        = 1 << 24
	maxPID          = 1 << 22 // Linux's pid_max at most
)

// storyIDRE is the story id alphabet of docs/TASKS.md, "Story ids": ASCII letters and digits, and
// the ".", "_" and "-" of numbered ids (2.3), repeated ones (setup_2), slugs and
// prd.json's ids (US-001), starting with a letter or a digit.
var storyIDRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,79}$`) })

// RecordError names the field of an imported record that was refused.
type RecordError struct {
	RunID int64
	Field string // e.g. attempts[3].story
	Why   string
}

func (e *RecordError) Error() string {
	return fmt.Sprintf("the record of run %d is not valid: %s %s", e.RunID, e.Field, e.Why)
}

// validateRecord checks an imported record field by field; the first bad field is the
// error. Every number is checked as input: non-negative, bounded, and the record's
// totals equal to what its attempts sum (they are never taken: the importer sums the
// attempts itself). Each story's attempts must be numbered upwards in the order they
// are recorded, each (story, number) once.
func validateRecord(r *run.Record, size int, change string, runID int64) error {
	bad := func(field, format string, args ...any) error {
		return &RecordError{RunID: runID, Field: field, Why: fmt.Sprintf(format, args...)}
	}
	if size > maxRecordBytes {
		return bad("record.json", "is %d bytes, more than %d", size, maxRecordBytes)
	}
	if err := validFields(r, bad); err != nil {
		return err
	}
	if err := validAttempts(r, change, bad); err != nil {
		return err
	}
	return validTotals(r, bad)
}

// validFields checks the record's own fields, its attempts and totals left out.
func validFields(r *run.Record, bad func(string, string, ...any) error) error {
	if r.Version < 0 || r.Version > 1 {
		return bad("version", "%d is not a version of the record git-ralph reads (1)", r.Version)
	}
	if !slices.Contains([]run.Status{run.Running, run.Starting, run.Interrupted, run.Failed, run.Budget, run.Complete, ""}, r.Status) {
		return bad("status", "%q is not a status of a run", clipped(string(r.Status)))
	}
	if err := text("stopCause", r.StopCause, maxReasonBytes, bad); err != nil {
		return err
	}
	if err := text("stopReason", r.StopReason, maxReasonBytes, bad); err != nil {
		return err
	}
	if r.CurrentStory != "" && !validStoryID(r.CurrentStory) {
		return bad("currentStory", "%q is not a story id (letters, digits, \".\", \"_\" and \"-\")", clipped(r.CurrentStory))
	}
	if r.Initial != "" && !git.IsObjectID(r.Initial) {
		return bad("initialCommit", "%q is not a commit id", clipped(r.Initial))
	}
	if r.StoryLevel < 0 || r.StoryLevel > 6 {
		return bad("storyLevel", "%d is not a heading level (0 to 6)", r.StoryLevel)
	}
	for _, n := range []struct {
		field string
		v     int
	}{{"pid", r.PID}, {"agentPID", r.AgentPID}} {
		if n.v < 0 || n.v > maxPID {
			return bad(n.field, "%d is not a process id", n.v)
		}
	}
	if err := amount("maxCost", r.MaxCost, bad); err != nil {
		return err
	}
	if r.MaxTokens < 0 || r.MaxTokens > maxTokens {
		return bad("maxTokens", "%d is not a number of tokens (0 to %d)", r.MaxTokens, int64(maxTokens))
	}
	if r.Remote != nil && r.Remote.RunID < 0 {
		return bad("remote.runId", "%d is not a run id", r.Remote.RunID)
	}
	return nil
}

// validAttempts checks the record's attempts of change, each story's numbered upwards.
func validAttempts(r *run.Record, change string, bad func(string, string, ...any) error) error {
	if len(r.Attempts) > maxAttempts {
		return bad("attempts", "holds %d attempts, more than %d", len(r.Attempts), maxAttempts)
	}
	last := map[string]int{} // each story's last attempt number so far, and where it was
	where := map[string]int{}
	for i, a := range r.Attempts {
		f := func(name string) string { return fmt.Sprintf("attempts[%d].%s", i, name) }
		switch {
		case !validStoryID(a.Story):
			return bad(f("story"), "%q is not a story id (letters, digits, \".\", \"_\" and \"-\")", clipped(a.Story))
		case a.N < 1 || a.N > maxAttemptN:
			return bad(f("n"), "%d is not an attempt number (1 to %d)", a.N, maxAttemptN)
		case a.N == last[a.Story]:
			return bad(f("n"), "is attempt %d at story %s again (attempts[%d] is that attempt)", a.N, a.Story, where[a.Story])
		case a.N < last[a.Story]:
			return bad(f("n"), "is attempt %d at story %s, recorded after its attempt %d (attempts[%d]): out of order", a.N, a.Story, last[a.Story], where[a.Story])
		}
		last[a.Story], where[a.Story] = a.N, i
		if err := validAttempt(&r.Attempts[i], change, f, bad); err != nil {
			return err
		}
	}
	return nil
}

// validAttempt checks the fields of one attempt but its story and number; f names a
// field of it.
func validAttempt(a *run.Attempt, change string, f func(string) string, bad func(string, string, ...any) error) error {
	outcomes := []string{run.OutcomeComplete, run.OutcomeFailed, run.OutcomeError, run.OutcomeNoSignal,
		run.OutcomeTimeout, run.OutcomeInterrupted, run.OutcomeRunning}
	switch {
	case !slices.Contains(outcomes, a.Outcome):
		return bad(f("outcome"), "%q is not an outcome", clipped(a.Outcome))
	case a.Ref != "" && a.Ref != fmt.Sprintf("refs/ralph/%s/attempts/%s-%d", change, a.Story, a.N):
		return bad(f("ref"), "%q is not the attempt's ref", clipped(a.Ref))
	case a.Commit != "" && !git.IsObjectID(a.Commit):
		return bad(f("commit"), "%q is not a commit id", clipped(a.Commit))
	case !slices.Contains([]string{"", "passed", "failed", "skipped"}, a.Verify):
		return bad(f("verify"), "%q is not passed, failed or skipped", clipped(a.Verify))
	case a.Turns < 0 || a.Turns > maxTurns:
		return bad(f("turns"), "%d is not a number of turns (0 to %d)", a.Turns, maxTurns)
	case a.InputTokens < 0 || a.InputTokens > maxTokens:
		return bad(f("inputTokens"), "%d is not a number of tokens (0 to %d)", a.InputTokens, int64(maxTokens))
	case a.OutputTokens < 0 || a.OutputTokens > maxTokens:
		return bad(f("outputTokens"), "%d is not a number of tokens (0 to %d)", a.OutputTokens, int64(maxTokens))
	}
	if a.CostUSD != nil {
		if err := amount(f("costUSD"), *a.CostUSD, bad); err != nil {
			return err
		}
	}
	if err := amount(f("premiumRequests"), a.PremiumRequests, bad); err != nil {
		return err
	}
	if err := text(f("reason"), a.Reason, maxReasonBytes, bad); err != nil {
		return err
	}
	if err := text(f("agent"), a.Agent, maxNameBytes, bad); err != nil {
		return err
	}
	if err := text(f("model"), a.Model, maxNameBytes, bad); err != nil {
		return err
	}
	return validJudge(a.Judge, f, bad)
}

// validTotals checks the record's totals are what its attempts sum (the sum of the same
// values in the same order as the runner added them, give or take the rounding of a
// run brought home twice).
func validTotals(r *run.Record, bad func(string, string, ...any) error) error {
	cost, costKnown, tokens, tokensKnown := r.Spent()
	if err := amount("costUSD", r.CostUSD, bad); err != nil {
		return err
	}
	if math.Abs(r.CostUSD-cost) > 1e-6+1e-9*cost || r.CostKnown && !costKnown {
		return bad("costUSD", "is %v, but its attempts cost %v in all", r.CostUSD, cost)
	}
	if r.Tokens < 0 || r.Tokens != tokens && (r.Tokens != 0 || r.TokensKnown) || r.TokensKnown && !tokensKnown {
		return bad("tokens", "is %d, but its attempts report %d in all", r.Tokens, tokens)
	}
	return nil
}

// amount checks a number of dollars (or premium requests): finite, 0 to maxAmount.
func amount(field string, v float64, bad func(string, string, ...any) error) error {
	if !finite(v) || v < 0 || v > maxAmount {
		return bad(field, "%v is not an amount (0 to %v)", v, float64(maxAmount))
	}
	return nil
}

// validStoryID reports whether id is in the alphabet of docs/TASKS.md, "Story ids", without a ".." (ids name
// log files and refs).
func validStoryID(id string) bool {
	return storyIDRE().MatchString(id) && !strings.Contains(id, "..")
}

func text(field, s string, maxBytes int, bad func(string, string, ...any) error) error {
	if len(s) > maxBytes {
		return bad(field, "is %d bytes, more than %d", len(s), maxBytes)
	}
	if !utf8.ValidString(s) {
		return bad(field, "is not UTF-8")
	}
	return nil
}

func finite(f float64) bool { return !math.IsNaN(f) && !math.IsInf(f, 0) }

// clipped is s cut for an error message.
func clipped(s string) string { return clip(s, 80) }

// validJudge checks what a record says of an attempt's judge (start --judge), as the
// attempt's own fields are checked.
func validJudge(j *run.Judge, f func(string) string, bad func(field, format string, args ...any) error) error {
	if j == nil {
		return nil
	}
	switch {
	case !slices.Contains([]string{"", run.VerdictPass, run.VerdictFail, run.VerdictNone}, j.Verdict):
		return bad(f("judge.verdict"), "%q is not pass, fail or none", clipped(j.Verdict))
	case j.Turns < 0 || j.Turns > maxTurns:
		return bad(f("judge.turns"), "%d is not a number of turns (0 to %d)", j.Turns, maxTurns)
	case j.InputTokens < 0 || j.InputTokens > maxTokens:
		return bad(f("judge.inputTokens"), "%d is not a number of tokens (0 to %d)", j.InputTokens, int64(maxTokens))
	case j.OutputTokens < 0 || j.OutputTokens > maxTokens:
		return bad(f("judge.outputTokens"), "%d is not a number of tokens (0 to %d)", j.OutputTokens, int64(maxTokens))
	}
	if j.CostUSD != nil {
		if err := amount(f("judge.costUSD"), *j.CostUSD, bad); err != nil {
			return err
		}
	}
	for _, t := range []struct {
		name, s string
		max     int
	}{{"judge.agent", j.Agent, maxNameBytes}, {"judge.model", j.Model, maxNameBytes}, {"judge.reason", j.Reason, maxReasonBytes}, {"judge.log", j.Log, maxReasonBytes}} {
		if err := text(f(t.name), t.s, t.max, bad); err != nil {
			return err
		}
	}
	return nil
}
