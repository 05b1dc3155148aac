package loop

import (
	"errors"
	"github.com/git-ralph/git-ralph/internal/tell"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/git-ralph/git-ralph/internal/looptest"
	"github.com/git-ralph/git-ralph/internal/start"
)

// saveBreaker is a git trace that, when the failed attempt's ref is about to be written,
// plants that ref's lock file (the save fails) and makes the run record unwritable as
// unsavable does (the record of the failure fails too).
type saveBreaker struct {
	commonDir, ref, record string
	done                   bool
}

func (w *saveBreaker) Write(p []byte) (int, error) {
	if w.done || !strings.Contains(string(p), "update-ref "+w.ref) {
		return len(p), nil
	}
	w.done = true
	lock := filepath.Join(w.commonDir, filepath.FromSlash(w.ref)+".lock")
	if err := os.MkdirAll(filepath.Dir(lock), 0o755); err != nil {
		return 0, err
	}
	if err := os.WriteFile(lock, nil, 0o644); err != nil {
		return 0, err
	}
	dir := filepath.Dir(w.record)
	if err := os.Rename(dir, dir+".kept"); err != nil {
		return 0, err
	}
	if err := os.Symlink(filepath.Base(dir)+".kept", dir); err != nil {
		return 0, err
	}
	for n := 1; n < 1000; n++ {
		if err := os.WriteFile(dir+".ralph-aside-"+strconv.Itoa(n), nil, 0o644); err != nil {
			return 0, err
		}
	}
	return len(p), nil
}

// A failed attempt that can be saved neither as a ref nor in the record says both: the
// work tree is as the agent left it, and the next start takes it for a crash's.
func TestUnsavedAttemptSaysTheRecordFailedToo(t *testing.T) {
	dir := newRepo(t)
	clock := &fakeClock{At: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	l, rep := newLoop(t, dir, clock)
	l.Driver = scriptAgent(t, `{"type":"result","subtype":"success","is_error":false,"num_turns":1,"result":"<promise>FAILED: not yet</promise>"}`)
	l.Repo.Trace = &saveBreaker{commonDir: l.Repo.CommonDir, ref: "refs/ralph/c/attempts/1-1", record: l.Store.RecordPath("c")}
	_, err := l.Start(t.Context(), start.Options{Arg: "c", MaxRetries: 0})
	var le *tell.Error
	if !errors.As(err, &le) || !strings.Contains(le.Msg, "could not save the failed attempt") {
		t.Fatalf("Start = %v, want the failed save\n%s", err, rep.Text())
	}
	if !strings.Contains(le.Hint, "nothing was reset") || !strings.Contains(le.Hint, "the run record could not be written either") {
		t.Errorf("hint: %s\nwant the failed record said beside the failed save", le.Hint)
	}

	// As the hint says: once the record and the ref can be written, the next start saves
	// the attempt (here, a file it left) as one a crash cut short.
	l.Repo.Trace = nil
	if err := os.WriteFile(filepath.Join(dir, "left.txt"), []byte("the agent's\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	rdir := filepath.Dir(l.Store.RecordPath("c"))
	if err := os.Remove(rdir); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(rdir+".kept", rdir); err != nil {
		t.Fatal(err)
	}
	for n := 1; n < 1000; n++ {
		if err := os.Remove(rdir + ".ralph-aside-" + strconv.Itoa(n)); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Remove(filepath.Join(l.Repo.CommonDir, "refs/ralph/c/attempts/1-1.lock")); err != nil {
		t.Fatal(err)
	}
	_, _ = l.Start(t.Context(), start.Options{Arg: "c", MaxRetries: 0})
	if got := looptest.GitOut(t, dir, "for-each-ref", "--format=%(refname)", "refs/ralph/c/attempts/"); !strings.Contains(got, "refs/ralph/c/attempts/1-1\n") {
		t.Fatalf("attempt refs: %s\nwant 1-1 saved by the next start\n%s", got, rep.Text())
	}
	if got := looptest.GitOut(t, dir, "show", "refs/ralph/c/attempts/1-1:left.txt"); got != "the agent's" {
		t.Errorf("attempt 1-1 holds left.txt = %q", got)
	}
}
