package wtrun

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/git-ralph/git-ralph/internal/finish"
	"github.com/git-ralph/git-ralph/internal/looptest"
	"github.com/git-ralph/git-ralph/internal/run"
	"github.com/git-ralph/git-ralph/internal/start"
	"github.com/git-ralph/git-ralph/internal/tell"
)

// A worktree run's squash that conflicts, and whose undo cannot put the checkout back,
// says so: not that the checkout is as it was. The branch is intact and the record
// keeps the finish under way.
func TestWorktreeSquashUndoThatFailsSaysSo(t *testing.T) {
	dir := newRepo(t)
	clock := &fakeClock{At: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	l, rep := newLoop(t, dir, clock)
	l.Driver = scriptAgent(t, resultComplete)
	wt := filepath.Join(t.TempDir(), "wt")
	if _, err := l.Start(t.Context(), start.Options{Arg: "c", Worktree: start.WorktreeOption{On: true, Path: wt}}); err != nil {
		t.Fatalf("Start: %v\n%s", err, rep.Text())
	}
	if err := os.WriteFile(filepath.Join(dir, "openspec/changes/c/tasks.md"), []byte("## 1. One\n- [ ] 1.1 do it today\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	gitOut(t, dir, "commit", "-q", "-am", "main moved")
	tip := gitOut(t, dir, "rev-parse", "ralph/c")
	l.OntoMoved = true
	l.Repo.Trace = &looptest.LockOn{GitDir: l.Repo.GitDir, Want: "reset -q --hard"}
	_, err := finish.Run(t.Context(), l, "c", run.Squash)
	var le *tell.Error
	if !errors.As(err, &le) {
		t.Fatalf("Finish = %v, want a *tell.Error", err)
	}
	if text := le.Msg + "\n" + le.Hint; strings.Contains(text, "as it was") || !strings.Contains(le.Msg, "putting main back failed too") {
		t.Errorf("Finish = %s\nhint: %s\nwant the failed reset said, never that main is as it was", le.Msg, le.Hint)
	}
	if got := gitOut(t, dir, "rev-parse", "ralph/c"); got != tip {
		t.Errorf("ralph/c moved: %s, was %s", got, tip)
	}
	if rec, err := l.Store.Load("c"); err != nil || rec.Finishing == nil {
		t.Errorf("the record = %+v (%v), want its finish under way", rec, err)
	}
}
