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
	if all != (Rate{Done: 3, First: 2, Attempts: 5, DoneAttempts: 4}) || all.Percent() != 66 {
		t.Errorf("all = %+v (%d%%)", all, all.Percent())
	}
	// claude's failure on story 2, which codex completed, is claude's attempt on a done story
	want := []Rate{{Agent: "claude", Model: "sonnet", Done: 1, First: 1, Attempts: 2, DoneAttempts: 2},
		{Agent: "codex", Model: "gpt-5", Done: 2, First: 1, Attempts: 3, DoneAttempts: 2}}
	if !slices.Equal(by, want) {
		t.Errorf("by = %+v, want %+v", by, want)
	}
	if got := by[1].PerStory(); got != 1 {
		t.Errorf("PerStory = %v", got)
	}
	// One story done at once and another failing four times: 1 attempt a done story, not 5.
	if all, _ := FirstAttempts([]Try{{"1", 1, c, "claude", ""}, {"2", 1, f, "claude", ""}, {"2", 2, f, "claude", ""},
		{"2", 3, f, "claude", ""}, {"2", 4, f, "claude", ""}}); all.PerStory() != 1 || all.Attempts != 5 {
		t.Errorf("PerStory = %v of %+v", all.PerStory(), all)
	}
	// One agent: no breakdown.
	if _, by := FirstAttempts([]Try{{"1", 1, c, "claude", ""}, {"2", 1, f, "claude", ""}}); by != nil {
		t.Errorf("by = %+v, want nil", by)
	}
	if r := (Rate{}); r.Percent() != 0 || r.PerStory() != 0 {
		t.Error("zero rate")
	}
}
