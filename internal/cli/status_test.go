package cli

import (
	"testing"

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
