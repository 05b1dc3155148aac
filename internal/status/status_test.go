package status

import (
	"context"
	"testing"
	"time"

	"github.com/git-ralph/git-ralph/internal/git"
	"github.com/git-ralph/git-ralph/internal/run"
)

// TestEffective: a record that says running or starting while nobody holds its lock
// belongs to a process that died, and reads as interrupted; any other status is the
// record's.
func TestEffective(t *testing.T) {
	store := run.NewStore(t.TempDir())
	rd := Reader{Store: store}
	for _, tc := range []struct {
		status  run.Status
		held    bool
		want    string
		running bool
	}{
		{run.Running, false, "interrupted", false},
		{run.Starting, false, "interrupted", false},
		{run.Running, true, "running", true},
		{run.Failed, false, "failed", false},
		{run.Complete, true, "complete", true},
	} {
		var lock *run.Lock
		if tc.held {
			var err error
			if lock, err = store.Lock("c"); err != nil {
				t.Fatal(err)
			}
		}
		got, running := rd.Effective(&run.Record{Change: "c", Status: tc.status})
		lock.Unlock()
		if got != tc.want || running != tc.running {
			t.Errorf("%s, lock held %v: %q, running %v; want %q, %v", tc.status, tc.held, got, running, tc.want, tc.running)
		}
	}
}

// TestNoRun: Status of no run, or of a name without a record, is nil without an error,
// and Summaries leaves such a name out.
func TestNoRun(t *testing.T) {
	dir := t.TempDir()
	store := run.NewStore(dir)
	if err := store.Save(&run.Record{Change: "here", Branch: "ralph/here", Status: run.Failed}, time.Now()); err != nil {
		t.Fatal(err)
	}
	rd := Reader{Repo: &git.Repo{Root: dir}, Store: store}
	for _, name := range []string{"", "gone"} {
		if r, err := rd.Status(context.Background(), name); r != nil || err != nil {
			t.Errorf("Status(%q) = %v, %v; want nil, nil", name, r, err)
		}
	}
	rs, err := rd.Summaries(context.Background(), []string{"gone", "here"})
	if err != nil || len(rs) != 1 || rs[0].Record.Change != "here" || rs[0].Status != "failed" {
		t.Fatalf("Summaries = %v, %v; want the run of here alone, failed", rs, err)
	}
}
