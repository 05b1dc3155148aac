package cli

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/git-ralph/git-ralph/internal/run"
)

// TestAttemptTextAgentModel: the LAST column names the agent and its model, and says a
// model named like its agent (the demo's "demo demo") once.
func TestAttemptTextAgentModel(t *testing.T) {
	for _, tc := range []struct {
		agent, model, want string
	}{
		{"demo", "demo", "complete [demo]"},
		{"claude", "claude-sonnet-4-5", "complete [claude claude-sonnet-4-5]"},
		{"codex", "", "complete [codex]"},
	} {
		got := attemptText(run.Attempt{Outcome: run.OutcomeComplete, Agent: tc.agent, Model: tc.model})
		if got != tc.want {
			t.Errorf("agent %q model %q: %q, want %q", tc.agent, tc.model, got, tc.want)
		}
	}
}

// TestFinished: after a squash onto a detached start, status says "detached HEAD <id>"
// and --json gives the full commit id; an older finished.json without target or backup
// still reads as before.
func TestFinished(t *testing.T) {
	id := "0123456789abcdef0123456789abcdef01234567"
	at := time.Date(2026, 11, 26, 3, 4, 5, 0, time.FixedZone("x", 3600))
	f := &run.Finished{Change: "x", Branch: "ralph/x", How: "squash", Target: id, Backup: "refs/ralph/x/backup/1", At: at}
	if got, want := finishedLine(f), "the run of x is finished: its work was squashed onto detached HEAD 0123456 (its commits are kept as refs/ralph/x/backup/1); start a new one with 'git ralph start x'"; got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
	data, err := json.Marshal(finishedJSON(f))
	if err != nil {
		t.Fatal(err)
	}
	want := `{"change":"x","status":"finished","running":false,"branch":"ralph/x","finished":{"how":"squash","at":"2026-11-26T02:04:05Z","target":"` + id + `","backup":"refs/ralph/x/backup/1"}}`
	if string(data) != want {
		t.Errorf("got  %s\nwant %s", data, want)
	}
	old := &run.Finished{Change: "x", Branch: "ralph/x", How: "squash", At: at}
	if got := finishedLine(old); !strings.Contains(got, "squashed onto the original branch;") {
		t.Errorf("got %q", got)
	}
}
