package loop

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/git-ralph/git-ralph/internal/agent"
	"github.com/git-ralph/git-ralph/internal/run"
)

// unsavable is a driver that makes the run record unwritable (a directory in its place)
// once the attempt is recorded and before its agent starts, and puts it back once the
// agent's output has ended: the save of the agent's process, and it alone, fails.
type unsavable struct {
	agent.Driver
	record string
}

func (d unsavable) Argv(req agent.Request) []string {
	if req.Prompt != "" { // the attempt's run, not a preflight
		if err := os.Rename(d.record, d.record+".kept"); err != nil {
			panic(err)
		}
		if err := os.MkdirAll(filepath.Join(d.record, "in-the-way"), 0o755); err != nil {
			panic(err)
		}
	}
	return d.Driver.Argv(req)
}

func (d unsavable) Decode(r io.Reader, ev agent.Events) (agent.Result, error) {
	res, err := d.Driver.Decode(r, ev)
	if _, serr := os.Stat(d.record + ".kept"); serr == nil {
		if err := os.RemoveAll(d.record); err != nil {
			panic(err)
		}
		if err := os.Rename(d.record+".kept", d.record); err != nil {
			panic(err)
		}
	}
	return res, err
}

// A save of the run record that fails while the agent starts (it would name the agent's
// process for a crash-resume) is never dropped: the agent is stopped, its attempt is
// kept, no checkpoint is made of it, and the run stops with the save's own error, which
// the record keeps as its cause.
func TestUnsavedAgentProcessStopsTheRun(t *testing.T) {
	dir := newRepo(t)
	clock := &fakeClock{At: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	l, rep := newLoop(t, dir, clock)
	l.Driver = unsavable{Driver: scriptAgent(t, resultComplete), record: l.Store.RecordPath("c")}
	_, err := l.Start(t.Context(), Options{Arg: "c", MaxRetries: 3, AllowSkip: true})
	var le *Error
	if !errors.As(err, &le) || !strings.Contains(le.Msg, "could not name the agent's process") {
		t.Fatalf("Start = %v, want the run stopped because the record could not name the agent\n%s", err, rep.Text())
	}
	var rename *os.LinkError // the real cause: the record's rename into place failed
	if !errors.As(err, &rename) || rename.Op != "rename" {
		t.Errorf("Start = %#v, want the failed rename of the record as its cause", le.Err)
	}
	rec, lerr := l.Store.Load("c")
	if lerr != nil {
		t.Fatal(lerr)
	}
	if rec.Status != run.Failed || !strings.Contains(rec.StopCause, "rename") {
		t.Errorf("record: status %s, stop cause %q; want failed with the rename as its cause", rec.Status, rec.StopCause)
	}
	if len(rec.Attempts) != 1 {
		t.Fatalf("%d attempts, want 1 (the run stopped after it)", len(rec.Attempts))
	}
	if a := rec.Attempts[0]; a.Outcome != run.OutcomeInterrupted || a.Ref == "" || a.Commit != "" {
		t.Errorf("attempt: %+v; want it interrupted, kept under a ref, no checkpoint", a)
	}
	if rec.Checkpoint != rec.Initial {
		t.Errorf("checkpoint %s, want the initial state %s: no checkpoint of an agent the record did not name", rec.Checkpoint, rec.Initial)
	}
}
