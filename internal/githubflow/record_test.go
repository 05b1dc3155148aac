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
	ptr := func(v float64) *float64 { return &v }
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
	// Totals that are the attempts' sums, the cost rounded as a run brought home twice
	// rounds it; and a record written before git-ralph summed the tokens (0, unknown).
	summed := good()
	summed.Attempts[0].CostUSD, summed.Attempts[1].CostUSD = ptr(0.1), ptr(0.2)
	summed.Attempts[0].InputTokens, summed.Attempts[2].OutputTokens = 100, 20
	summed.CostUSD, summed.CostKnown, summed.Tokens, summed.TokensKnown = 0.30000000000000004, true, 120, true
	if err := validateRecord(summed, 100, "x", 7); err != nil {
		t.Fatalf("a record with its totals: %v", err)
	}
	summed.Tokens, summed.TokensKnown = 0, false
	if err := validateRecord(summed, 100, "x", 7); err != nil {
		t.Fatalf("a record without the token total: %v", err)
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
		{"stopCause", func(r *run.Record) { r.StopCause = strings.Repeat("x", maxReasonBytes+1) }, 0},
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
		{"attempts[0].inputTokens", func(r *run.Record) { r.Attempts[0].InputTokens = -1 }, 0},
		{"attempts[0].outputTokens", func(r *run.Record) { r.Attempts[0].OutputTokens = math.MaxInt64 }, 0},
		{"attempts[0].turns", func(r *run.Record) { r.Attempts[0].Turns = -1 }, 0},
		{"attempts[0].costUSD", func(r *run.Record) { r.Attempts[0].CostUSD = ptr(-5.0) }, 0},
		{"attempts[0].costUSD", func(r *run.Record) { r.Attempts[0].CostUSD = ptr(1e300) }, 0},
		{"attempts[0].premiumRequests", func(r *run.Record) { r.Attempts[0].PremiumRequests = -1 }, 0},
		{"costUSD", func(r *run.Record) { r.CostUSD = -1e300 }, 0},
		{"costUSD", func(r *run.Record) { r.CostUSD = 0.5 }, 0}, // its attempts cost nothing
		{"costUSD", func(r *run.Record) { r.Attempts[1].CostUSD = ptr(2.0) }, 0},
		{"tokens", func(r *run.Record) { r.Tokens, r.TokensKnown = -1e15, true }, 0},
		{"tokens", func(r *run.Record) { r.Tokens = -1 }, 0},
		{"tokens", func(r *run.Record) { r.Tokens, r.TokensKnown = 5, true }, 0},
		{"maxCost", func(r *run.Record) { r.MaxCost = -1 }, 0},
		{"maxTokens", func(r *run.Record) { r.MaxTokens = -1 }, 0},
		{"version", func(r *run.Record) { r.Version = -3 }, 0},
		{"pid", func(r *run.Record) { r.PID = -1 }, 0},
		{"attempts[3].n", func(r *run.Record) { r.Attempts = append(r.Attempts, r.Attempts[0]) }, 0},
		{"attempts[3].n", func(r *run.Record) { // attempt 2 at story 1, then attempt 1
			r.Attempts[0].N, r.Attempts[0].Ref = 2, "refs/ralph/x/attempts/1-2"
			r.Attempts = append(r.Attempts, run.Attempt{Story: "1", N: 1, Outcome: run.OutcomeFailed})
		}, 0},
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
