package loop

import (
	"errors"
	"fmt"
	"github.com/git-ralph/git-ralph/internal/tell"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/git-ralph/git-ralph/internal/agent"
	"github.com/git-ralph/git-ralph/internal/run"
	"github.com/git-ralph/git-ralph/internal/start"
)

// unsavable is a driver that makes the run record unwritable once the attempt is
// recorded and before its agent starts, and puts it back once the agent's output has
// ended: the save of the agent's process, and it alone, fails. git-ralph writes through
// no symlink in its store and moves one in its way aside, so the run's directory is made
// a symlink with every name it could be moved aside to already taken.
type unsavable struct {
	agent.Driver
	record string
}

func (d unsavable) Argv(req agent.Request) []string {
	dir := filepath.Dir(d.record)
	if _, err := os.Stat(dir + ".kept"); req.Prompt != "" && err != nil { // the attempt's run, once
		if err := os.Rename(dir, dir+".kept"); err != nil {
			panic(err)
		}
		if err := os.Symlink(filepath.Base(dir)+".kept", dir); err != nil {
			panic(err)
		}
		for n := 1; n < 1000; n++ {
			if err := os.WriteFile(fmt.Sprintf("%s.ralph-aside-%d", dir, n), nil, 0o644); err != nil {
				panic(err)
			}
		}
	}
	return d.Driver.Argv(req)
}

func (d unsavable) Decode(r io.Reader, ev agent.Events) (agent.Result, error) {
	res, err := d.Driver.Decode(r, ev)
	dir := filepath.Dir(d.record)
	if _, serr := os.Stat(dir + ".kept"); serr == nil {
		if err := os.Remove(dir); err != nil {
			panic(err)
		}
		for n := 1; n < 1000; n++ {
			if err := os.Remove(fmt.Sprintf("%s.ralph-aside-%d", dir, n)); err != nil {
				panic(err)
			}
		}
		if err := os.Rename(dir+".kept", dir); err != nil {
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
	_, err := l.Start(t.Context(), start.Options{Arg: "c", MaxRetries: 3, AllowSkip: true})
	var le *tell.Error
	if !errors.As(err, &le) || !strings.Contains(le.Msg, "could not name the agent's process") {
		t.Fatalf("Start = %v, want the run stopped because the record could not name the agent\n%s", err, rep.Text())
	}
	if !strings.Contains(err.Error(), "no free name") { // the real cause
		t.Errorf("Start = %v, want the refused write of the record as its cause", err)
	}
	rec, lerr := l.Store.Load("c")
	if lerr != nil {
		t.Fatal(lerr)
	}
	if rec.Status != run.Failed || !strings.Contains(rec.StopCause, "no free name") {
		t.Errorf("record: status %s, stop cause %q; want failed with the refused write as its cause", rec.Status, rec.StopCause)
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
