package githubflow

import (
	"fmt"
	"math"
	"regexp"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"

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
)

// storyIDRE is the story id alphabet of SPEC §2 and §2b: ASCII letters and digits, and
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
// error.
func validateRecord(r *run.Record, size int, change string, runID int64) error {
	bad := func(field, format string, args ...any) error {
		return &RecordError{RunID: runID, Field: field, Why: fmt.Sprintf(format, args...)}
	}
	if size > maxRecordBytes {
		return bad("record.json", "is %d bytes, more than %d", size, maxRecordBytes)
	}
	if !slices.Contains([]run.Status{run.Running, run.Starting, run.Interrupted, run.Failed, run.Budget, run.Complete, ""}, r.Status) {
		return bad("status", "%q is not a status of a run", clipped(string(r.Status)))
	}
	if err := text("stopReason", r.StopReason, maxReasonBytes, bad); err != nil {
		return err
	}
	if r.CurrentStory != "" && !validStoryID(r.CurrentStory) {
		return bad("currentStory", "%q is not a story id (letters, digits, \".\", \"_\" and \"-\")", clipped(r.CurrentStory))
	}
	if r.Initial != "" && !isObjectID(r.Initial) {
		return bad("initialCommit", "%q is not a commit id", clipped(r.Initial))
	}
	if !finite(r.CostUSD) {
		return bad("costUSD", "is not an amount")
	}
	if len(r.Attempts) > maxAttempts {
		return bad("attempts", "holds %d attempts, more than %d", len(r.Attempts), maxAttempts)
	}
	outcomes := []string{run.OutcomeComplete, run.OutcomeFailed, run.OutcomeError, run.OutcomeNoSignal,
		run.OutcomeTimeout, run.OutcomeInterrupted, run.OutcomeRunning}
	for i, a := range r.Attempts {
		f := func(name string) string { return fmt.Sprintf("attempts[%d].%s", i, name) }
		switch {
		case !validStoryID(a.Story):
			return bad(f("story"), "%q is not a story id (letters, digits, \".\", \"_\" and \"-\")", clipped(a.Story))
		case a.N < 1 || a.N > maxAttemptN:
			return bad(f("n"), "%d is not an attempt number (1 to %d)", a.N, maxAttemptN)
		case !slices.Contains(outcomes, a.Outcome):
			return bad(f("outcome"), "%q is not an outcome", clipped(a.Outcome))
		case a.Ref != "" && a.Ref != fmt.Sprintf("refs/ralph/%s/attempts/%s-%d", change, a.Story, a.N):
			return bad(f("ref"), "%q is not the attempt's ref", clipped(a.Ref))
		case a.Commit != "" && !isObjectID(a.Commit):
			return bad(f("commit"), "%q is not a commit id", clipped(a.Commit))
		case !slices.Contains([]string{"", "passed", "failed", "skipped"}, a.Verify):
			return bad(f("verify"), "%q is not passed, failed or skipped", clipped(a.Verify))
		case a.Turns < 0 || a.InputTokens < 0 || a.OutputTokens < 0:
			return bad(f("turns"), "or its tokens are negative")
		case a.CostUSD != nil && (!finite(*a.CostUSD) || *a.CostUSD < 0):
			return bad(f("costUSD"), "is not an amount")
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
	}
	return nil
}

// validStoryID reports whether id is in SPEC §2's alphabet, without a ".." (ids name
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

func isObjectID(s string) bool {
	if len(s) != 40 && len(s) != 64 {
		return false
	}
	for _, c := range s {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// clipped is s cut for an error message.
func clipped(s string) string { return clip(s, 80) }
