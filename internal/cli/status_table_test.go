package cli

import (
	"strings"
	"testing"

	"github.com/cli/go-gh/v2/pkg/text"

	"github.com/git-ralph/git-ralph/internal/openspec"
	"github.com/git-ralph/git-ralph/internal/run"
	"github.com/git-ralph/git-ralph/internal/source"
	"github.com/git-ralph/git-ralph/internal/status"
	"github.com/git-ralph/git-ralph/internal/term"
)

// TestStatusTableLongIDs: in a terminal the status table is cut to 120 columns, but a
// story id (a slug may be 40 characters and more) is never cut: it is what checkpoint
// subjects, attempt refs and logs are named after.
func TestStatusTableLongIDs(t *testing.T) {
	tasks := openspec.ParseTasks([]byte("# Tasks\n" +
		"## Prerequisites and access to the staging cluster for the whole team\n- [x] a\n" +
		"## Implementation of the offline synchronisation engine, with conflict resolution\n- [ ] b\n" +
		"## Implementation of the offline synchronisation engine, with conflict resolution\n- [ ] c\n" +
		"## Phase 12: Rollout to every region, behind the feature flag, with dashboards\n- [ ] d\n"))
	// a run recorded before slugs were cut at a word's end keeps its ids (KeepIDs)
	long := "implementation-of-the-offline-synchronis"
	tasks.KeepIDs([]string{long, long + "_2"})
	rec := &run.Record{Change: "offline-sync", Branch: "ralph/offline-sync", Original: "main", Status: run.Failed,
		StopReason: "story " + long + " ran out of retries", Agent: "claude",
		Attempts: []run.Attempt{{Story: long, N: 1, Outcome: run.OutcomeFailed,
			Reason: "signalled COMPLETE but tasks b are still open in openspec/changes/offline-sync/tasks.md and the tests fail",
			Ref:    "refs/ralph/offline-sync/attempts/" + long + "-1"}}}
	s, out, _ := term.Test()
	s.StdoutTTY = true
	renderStatus(s, &status.Report{Record: rec, Status: string(run.Failed), Change: &source.Source{Name: "offline-sync", Tasks: tasks}, Branch: true})
	got := out.String()
	for _, id := range []string{"prerequisites-and-access-to-the-staging", long, long + "_2", "12"} {
		if !strings.Contains(got, " "+id+" ") {
			t.Errorf("the table does not show story id %q whole:\n%s", id, got)
		}
	}
	table := got[strings.Index(got, "STORY"):strings.Index(got, "failed attempts")]
	for _, line := range strings.Split(table, "\n") {
		if w := text.DisplayWidth(line); w > 120 {
			t.Errorf("line of %d columns: %q", w, line)
		}
	}
	if !strings.Contains(got, long+"-1  failed: signalled COMPLETE") {
		t.Errorf("the failed attempt is not listed by its full id:\n%s", got)
	}
}
