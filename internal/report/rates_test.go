package report

import (
	"slices"
	"testing"

	"github.com/git-ralph/git-ralph/internal/run"
)

func TestFirstAttempts(t *testing.T) {
	c, f, i := run.OutcomeComplete, run.OutcomeFailed, run.OutcomeInterrupted
	all, by := FirstAttempts([]Try{
		{"1", 1, c, "claude", "sonnet"},
		{"2", 1, f, "claude", "sonnet"},
		{"2", 2, i, "claude", "sonnet"}, // Ctrl-C: not the agent's doing
		{"2", 3, c, "codex", "gpt-5"},
		{"3", 1, c, "codex", "gpt-5"},
		{"4", 1, f, "codex", "gpt-5"}, // not done (yet)
	})
	if all != (Rate{Done: 3, First: 2, Attempts: 5}) || all.Percent() != 66 {
		t.Errorf("all = %+v (%d%%)", all, all.Percent())
	}
	want := []Rate{{Agent: "claude", Model: "sonnet", Done: 1, First: 1, Attempts: 2},
		{Agent: "codex", Model: "gpt-5", Done: 2, First: 1, Attempts: 3}}
	if !slices.Equal(by, want) {
		t.Errorf("by = %+v, want %+v", by, want)
	}
	if got := by[1].PerStory(); got != 1.5 {
		t.Errorf("PerStory = %v", got)
	}
	// One agent: no breakdown.
	if _, by := FirstAttempts([]Try{{"1", 1, c, "claude", ""}, {"2", 1, f, "claude", ""}}); by != nil {
		t.Errorf("by = %+v, want nil", by)
	}
	if r := (Rate{}); r.Percent() != 0 || r.PerStory() != 0 {
		t.Error("zero rate")
	}
}
