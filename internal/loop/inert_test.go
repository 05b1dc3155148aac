package loop

import (
	"strings"
	"testing"
	"time"

	"github.com/git-ralph/git-ralph/internal/run"
	"github.com/git-ralph/git-ralph/internal/tasklist"
)

// A closing keyword that names an issue, in a story's title or a skip reason (text the
// agent may have written in the task list), closes nothing once the checkpoint is
// merged: a word joiner breaks the keyword, and the text reads the same. Words that
// name no issue are left as they are.
func TestCheckpointMessageClosesNothing(t *testing.T) {
	story := tasklist.Story{ID: "1", Title: "One Fixes #7, closes: o/r#8 and resolved https://github.com/o/r/issues/9",
		Tasks: []tasklist.Task{{ID: "1.1", Text: "do it", Done: true, Skipped: "Closes #10"}}}
	att := &run.Attempt{N: 1, Agent: "claude", Started: time.Unix(0, 0), Ended: time.Unix(1, 0)}
	msg, err := checkpointMessage(&run.Record{Change: "c"}, story, att, "feat: {{.Title}}", 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range closingRE().FindAllString(msg, -1) {
		t.Errorf("%q left in the message:\n%s", m, msg)
	}
	if n := strings.Count(msg, "\u2060"); n != 7 { // three in the subject, three in the body, one in the trailer
		t.Errorf("%d word joiners, want 7:\n%s", n, msg)
	}
	plain := strings.ReplaceAll(msg, "\u2060", "")
	for _, want := range []string{"feat: One Fixes #7, closes: o/r#8 and resolved https://github.com/o/r/issues/9\n", "Story 1: One Fixes #7", "Ralph-Skipped: 1.1 do it — Closes #10\n"} {
		if !strings.Contains(plain, want) {
			t.Errorf("without its word joiners the message lacks %q:\n%s", want, plain)
		}
	}
	if got := inertKeywords("Fix the login; resolve conflicts, closes the door #"); got != "Fix the login; resolve conflicts, closes the door #" {
		t.Errorf("words that name no issue changed: %q", got)
	}
}
