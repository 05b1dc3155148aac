package finish

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/git-ralph/git-ralph/internal/loop"
	"github.com/git-ralph/git-ralph/internal/looptest"
	"github.com/git-ralph/git-ralph/internal/run"
	"github.com/git-ralph/git-ralph/internal/start"
	"github.com/git-ralph/git-ralph/internal/tell"
)

// conflictingRun makes a complete run of change c and moves main on so that squashing
// ralph/c onto it conflicts; it returns the loop, ready to finish with --onto-moved.
func conflictingRun(t *testing.T) (string, *loop.Loop, *recorder) {
	t.Helper()
	dir := newRepo(t)
	clock := &fakeClock{At: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	l, rep := newLoop(t, dir, clock)
	l.Driver = scriptAgent(t, resultComplete)
	if _, err := l.Start(t.Context(), start.Options{Arg: "c"}); err != nil {
		t.Fatalf("Start: %v\n%s", err, rep.Text())
	}
	git := func(args ...string) string { return looptest.GitOut(t, dir, args...) }
	git("switch", "-q", "main")
	if err := os.WriteFile(filepath.Join(dir, "openspec/changes/c/tasks.md"), []byte("## 1. One\n- [ ] 1.1 do it today\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	git("commit", "-q", "-am", "main moved")
	git("switch", "-q", "ralph/c")
	l.OntoMoved = true
	return dir, l, rep
}

// A squash whose undo cannot put the target back (git cannot take the index) never says
// "you are back on it": it says where the user is and what is kept, the run's branch is
// intact, and the record keeps the finish under way. Once git works again the way the
// hint gives ends the finish.
func TestSquashUndoThatFailsSaysSo(t *testing.T) {
	dir, l, _ := conflictingRun(t)
	tip := looptest.GitOut(t, dir, "rev-parse", "ralph/c")
	l.Repo.Trace = &looptest.LockOn{GitDir: l.Repo.GitDir, Want: "reset -q --hard"}
	_, err := Run(t.Context(), l, "c", run.Squash)
	var le *tell.Error
	if !errors.As(err, &le) {
		t.Fatalf("Finish = %v, want a *tell.Error", err)
	}
	if text := le.Msg + "\n" + le.Hint; strings.Contains(text, "back on it") || !strings.Contains(le.Msg, "putting main back failed too") ||
		!strings.Contains(le.Hint, "you are on main with what the merge left") {
		t.Errorf("Finish = %s\nhint: %s\nwant the failed reset said, never \"back on it\"", le.Msg, le.Hint)
	}
	if got := looptest.GitOut(t, dir, "rev-parse", "ralph/c"); got != tip {
		t.Errorf("ralph/c moved: %s, was %s", got, tip)
	}
	rec, lerr := l.Store.Load("c")
	if lerr != nil || rec.Finishing == nil || looptest.GitOut(t, dir, "rev-parse", rec.Finishing.Backup) != tip {
		t.Fatalf("the record = %+v (%v), want its finish under way, with the backup at the tip", rec, lerr)
	}

	// The hint's way out: git works again, reset, switch back, keep.
	l.Repo.Trace = nil
	if err := os.Remove(filepath.Join(l.Repo.GitDir, "index.lock")); err != nil {
		t.Fatal(err)
	}
	looptest.GitOut(t, dir, "reset", "-q", "--hard")
	looptest.GitOut(t, dir, "switch", "-q", "ralph/c")
	if _, err := Run(t.Context(), l, "c", run.Keep); err != nil {
		t.Fatalf("finish --keep after the hint's steps: %v", err)
	}
	if _, err := l.Store.Load("c"); !errors.Is(err, run.ErrNoRun) {
		t.Errorf("after finish --keep the run is still there (%v)", err)
	}
}

// A squash undone whose switch back to the run's branch fails says the user is on the
// target, as it was, not back on the branch; the record no longer has a finish under
// way.
func TestSquashUndoWhoseSwitchBackFailsSaysSo(t *testing.T) {
	dir, l, _ := conflictingRun(t)
	l.Repo.Trace = &looptest.LockOn{GitDir: l.Repo.GitDir, Want: "checkout -q --no-guess ralph/c"}
	_, err := Run(t.Context(), l, "c", run.Squash)
	var le *tell.Error
	if !errors.As(err, &le) || !strings.Contains(le.Msg, "conflicts") {
		t.Fatalf("Finish = %v, want the conflict", err)
	}
	if strings.Contains(le.Hint, "back on it") || !strings.Contains(le.Hint, "you are on main, as it was: switching back to ralph/c failed") {
		t.Errorf("hint: %s\nwant the failed switch said, never \"back on it\"", le.Hint)
	}
	if cur := looptest.GitOut(t, dir, "branch", "--show-current"); cur != "main" {
		t.Errorf("on %q, want main", cur)
	}
	if st := looptest.GitOut(t, dir, "status", "--porcelain", "--untracked-files=no"); st != "" {
		t.Errorf("main is not as it was:\n%s", st)
	}
	if rec, err := l.Store.Load("c"); err != nil || rec.Finishing != nil {
		t.Errorf("the record = %+v (%v), want no finish under way", rec, err)
	}
}

// A finish whose record of how the run ended (finished.json) cannot be written still
// finishes, and says that status will not show it.
func TestFinishSaysWhenItCannotRecordHowItEnded(t *testing.T) {
	dir := newRepo(t)
	clock := &fakeClock{At: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	l, rep := newLoop(t, dir, clock)
	l.Driver = scriptAgent(t, resultComplete)
	if _, err := l.Start(t.Context(), start.Options{Arg: "c"}); err != nil {
		t.Fatalf("Start: %v\n%s", err, rep.Text())
	}
	// A directory at finished.json is moved aside before the write: with every name it
	// could be moved to taken, the write fails.
	name := filepath.Join(l.Store.ChangeDir("c"), "finished.json")
	if err := os.Mkdir(name, 0o755); err != nil {
		t.Fatal(err)
	}
	for n := 1; n < 1000; n++ {
		if err := os.WriteFile(name+".ralph-aside-"+strconv.Itoa(n), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := Run(t.Context(), l, "c", run.Keep); err != nil {
		t.Fatalf("finish --keep: %v", err)
	}
	if !strings.Contains(rep.Text(), "warn: could not record how the run of c ended") {
		t.Errorf("no warning that finished.json was not written:\n%s", rep.Text())
	}
	if _, err := l.Store.Load("c"); !errors.Is(err, run.ErrNoRun) {
		t.Errorf("the run is still there (%v)", err)
	}
}
