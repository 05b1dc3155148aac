package githubflow

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/git-ralph/git-ralph/internal/run"
)

// Every field an imported record is checked on, refused by name.
func TestValidateRecord(t *testing.T) {
	good := func() *run.Record {
		return &run.Record{Status: run.Complete, CurrentStory: "US-001", Initial: strings.Repeat("a", 40),
			Attempts: []run.Attempt{
				{Story: "1", N: 1, Outcome: run.OutcomeFailed, Reason: "not yet", Ref: "refs/ralph/x/attempts/1-1", Agent: "claude", Verify: "failed"},
				{Story: "2.3", N: 2, Outcome: run.OutcomeComplete, Commit: strings.Repeat("b", 40), Verify: "passed"},
				{Story: "setup_2", N: 1, Outcome: run.OutcomeNoSignal},
			}}
	}
	if err := validateRecord(good(), 100, "x", 7); err != nil {
		t.Fatalf("a good record: %v", err)
	}
	// A runner's loop that ran out of a --max-cost or --max-tokens budget is brought home
	// like one that failed.
	stopped := good()
	stopped.Status = run.Budget
	if err := validateRecord(stopped, 100, "x", 7); err != nil {
		t.Fatalf("a record stopped by its budget: %v", err)
	}
	nan := math.NaN()
	for _, tc := range []struct {
		field string
		spoil func(r *run.Record)
		size  int
	}{
		{"record.json", func(r *run.Record) {}, maxRecordBytes + 1},
		{"status", func(r *run.Record) { r.Status = "pwned" }, 0},
		{"stopReason", func(r *run.Record) { r.StopReason = strings.Repeat("x", maxReasonBytes+1) }, 0},
		{"currentStory", func(r *run.Record) { r.CurrentStory = "../x" }, 0},
		{"initialCommit", func(r *run.Record) { r.Initial = "HEAD" }, 0},
		{"costUSD", func(r *run.Record) { r.CostUSD = math.Inf(1) }, 0},
		{"attempts", func(r *run.Record) { r.Attempts = make([]run.Attempt, maxAttempts+1) }, 0},
		{"attempts[0].story", func(r *run.Record) { r.Attempts[0].Story = "../../../../secret/creds" }, 0},
		{"attempts[0].story", func(r *run.Record) { r.Attempts[0].Story = "a..b" }, 0},
		{"attempts[0].story", func(r *run.Record) { r.Attempts[0].Story = "1```" }, 0},
		{"attempts[0].story", func(r *run.Record) { r.Attempts[0].Story = "" }, 0},
		{"attempts[1].n", func(r *run.Record) { r.Attempts[1].N = 0 }, 0},
		{"attempts[1].n", func(r *run.Record) { r.Attempts[1].N = maxAttemptN + 1 }, 0},
		{"attempts[2].outcome", func(r *run.Record) { r.Attempts[2].Outcome = "`@octocat`" }, 0},
		{"attempts[0].ref", func(r *run.Record) { r.Attempts[0].Ref = "refs/heads/main" }, 0},
		{"attempts[1].commit", func(r *run.Record) { r.Attempts[1].Commit = "--upload-pack=x" }, 0},
		{"attempts[1].verify", func(r *run.Record) { r.Attempts[1].Verify = "passed (trust me)" }, 0},
		{"attempts[0].turns", func(r *run.Record) { r.Attempts[0].InputTokens = -1 }, 0},
		{"attempts[0].costUSD", func(r *run.Record) { r.Attempts[0].CostUSD = &nan }, 0},
		{"attempts[0].reason", func(r *run.Record) { r.Attempts[0].Reason = strings.Repeat("x", maxReasonBytes+1) }, 0},
		{"attempts[0].reason", func(r *run.Record) { r.Attempts[0].Reason = "bad \xff utf-8" }, 0},
		{"attempts[0].agent", func(r *run.Record) { r.Attempts[0].Agent = strings.Repeat("a", maxNameBytes+1) }, 0},
		{"attempts[0].model", func(r *run.Record) { r.Attempts[0].Model = strings.Repeat("m", maxNameBytes+1) }, 0},
	} {
		r := good()
		tc.spoil(r)
		err := validateRecord(r, max(tc.size, 100), "x", 7)
		var re *RecordError
		if !errors.As(err, &re) || re.Field != tc.field || re.RunID != 7 {
			t.Errorf("%s: got %v, want a RecordError naming it", tc.field, err)
		}
	}
}
