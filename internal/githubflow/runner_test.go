package githubflow

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/git-ralph/git-ralph/internal/start"
)

// TestExportPartialKeepsTheCheckpoints: when export cannot settle the run (here a loop
// of the change that is not this run's holds the lock and is left running), it still
// writes an artifact: the record's checkpoint as the branch (not the tip, which the
// agent moved), the attempts already saved, a state saying why; it warns, says partial,
// and changes no ref and no record. Publish pushes that artifact.
func TestExportPartialKeepsTheCheckpoints(t *testing.T) {
	dir := newRepo(t)
	bare := withRemote(t, dir)
	l, _ := newLoop(t, dir, &fakeClock{At: time.Now()})
	ds, err := l.PrepareDispatch(t.Context(), DispatchOptions{Change: "c", GitRemote: "origin", Nonce: "n1"})
	if err != nil {
		t.Fatal(err)
	}
	loopDir := filepath.Join(t.TempDir(), "loop")
	gitOut(t, dir, "clone", "-q", "-b", "ralph/c", bare, loopDir)
	rl, rep := newLoop(t, loopDir, &fakeClock{At: time.Now()})
	rl.Driver = scriptAgent(t, resultComplete)
	if _, err := rl.Start(t.Context(), start.Options{Arg: "c", Adopt: true, RunID: 42, AllowSkip: true}); err != nil {
		t.Fatalf("runner Start: %v\n%s", err, rep.Text())
	}
	rec, err := rl.Store.Load("c")
	if err != nil {
		t.Fatal(err)
	}
	checkpoint := rec.Checkpoint
	// a loop of another run holds the change, its agent has moved the branch on
	held, err := rl.Store.Lock("c")
	if err != nil {
		t.Fatal(err)
	}
	defer held.Unlock()
	rec.Remote.RunID, rec.PID = 41, os.Getpid()
	if err := rl.Store.Save(rec, time.Now()); err != nil {
		t.Fatal(err)
	}
	gitOut(t, loopDir, "commit", "-q", "--allow-empty", "-m", "the agent's own commit")
	before := gitOut(t, loopDir, "for-each-ref")
	recBefore, _ := os.ReadFile(filepath.Join(rl.Store.ChangeDir("c"), "run.json"))

	rl.StopWait, rl.KillWait = 100*time.Millisecond, 100*time.Millisecond
	out := filepath.Join(t.TempDir(), "artifact")
	res, err := rl.Export(t.Context(), ExportOptions{Change: "c", RunID: 42, Out: out})
	if err != nil {
		t.Fatalf("Export: %v\n%s", err, rep.Text())
	}
	if !strings.Contains(res.Partial, "could not be stopped") {
		t.Errorf("Partial = %q", res.Partial)
	}
	if !strings.Contains(rep.Text(), "warn: export is partial: ") {
		t.Errorf("no warning:\n%s", rep.Text())
	}
	if res.Refs[0].Name != "refs/heads/ralph/c" || res.Refs[0].ID != checkpoint {
		t.Errorf("the bundle's branch is %v, want the checkpoint %s", res.Refs[0], checkpoint)
	}
	if after := gitOut(t, loopDir, "for-each-ref"); after != before {
		t.Errorf("a partial export changed refs:\n%s\n---\n%s", before, after)
	}
	if recAfter, _ := os.ReadFile(filepath.Join(rl.Store.ChangeDir("c"), "run.json")); string(recAfter) != string(recBefore) {
		t.Errorf("a partial export changed the loop's record")
	}
	var sum struct{ Partial, Status string }
	b, _ := os.ReadFile(filepath.Join(out, "summary.json"))
	if err := json.Unmarshal(b, &sum); err != nil || sum.Partial != res.Partial || sum.Status != "interrupted" {
		t.Errorf("summary.json: %v %+v", err, sum)
	}

	pubDir := filepath.Join(t.TempDir(), "publish")
	gitOut(t, dir, "clone", "-q", "-b", "ralph/c", bare, pubDir)
	pl, _ := newLoop(t, pubDir, &fakeClock{At: time.Now()})
	if _, err := Publish(t.Context(), pl.Repo, PublishOptions{Change: "c", RunID: 42, Bundle: res.Bundle, Start: ds.Record.Remote.StartCommit}); err != nil {
		t.Fatalf("Publish of the partial export: %v", err)
	}
	if got := gitOut(t, bare, "rev-parse", "ralph/c"); got != checkpoint {
		t.Errorf("published ralph/c at %s, want the checkpoint %s", got, checkpoint)
	}
	if got := gitOut(t, bare, "show", "refs/ralph/c/runs/42/state:record.json"); !strings.Contains(got, "export was partial") {
		t.Errorf("the published state does not say the export was partial:\n%s", got)
	}
}

// TestExportPartialWhenTheKilledLoopCannotBeSaved: a killed loop whose git is still at
// work (a lock in use past StopWait) cannot have its leftovers saved; export still
// writes the checkpoint and the saved attempts, and says it is partial.
func TestExportPartialWhenTheKilledLoopCannotBeSaved(t *testing.T) {
	dir := newRepo(t)
	bare := withRemote(t, dir)
	l, _ := newLoop(t, dir, &fakeClock{At: time.Now()})
	if _, err := l.PrepareDispatch(t.Context(), DispatchOptions{Change: "c", GitRemote: "origin", Nonce: "n1"}); err != nil {
		t.Fatal(err)
	}
	loopDir := filepath.Join(t.TempDir(), "loop")
	gitOut(t, dir, "clone", "-q", "-b", "ralph/c", bare, loopDir)
	rl, rep := newLoop(t, loopDir, &fakeClock{At: time.Now()})
	rl.Driver = scriptAgent(t, resultComplete)
	if _, err := rl.Start(t.Context(), start.Options{Arg: "c", Adopt: true, RunID: 42, AllowSkip: true}); err != nil {
		t.Fatalf("runner Start: %v\n%s", err, rep.Text())
	}
	rec, err := rl.Store.Load("c")
	if err != nil {
		t.Fatal(err)
	}
	rec.Status = "running" // killed: nobody holds the lock
	if err := rl.Store.Save(rec, time.Now()); err != nil {
		t.Fatal(err)
	}
	// the killed loop's git, still at work, with its index.lock
	lockFile := filepath.Join(loopDir, ".git", "index.lock")
	if err := os.WriteFile(lockFile, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-time.Minute)
	if err := os.Chtimes(lockFile, old, old); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("git", "cat-file", "--batch")
	cmd.Dir = loopDir
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { stdin.Close(); cmd.Wait() }()
	rl.StopWait, rl.Waits.LockWait, rl.Waits.LockMinAge = 100*time.Millisecond, 100*time.Millisecond, 10*time.Millisecond
	out := filepath.Join(t.TempDir(), "artifact")
	res, err := rl.Export(t.Context(), ExportOptions{Change: "c", RunID: 42, Out: out})
	if err != nil {
		t.Fatalf("Export: %v\n%s", err, rep.Text())
	}
	if !strings.Contains(res.Partial, "the attempt the killed loop left could not be saved") {
		t.Errorf("Partial = %q", res.Partial)
	}
	if len(res.Refs) == 0 || res.Refs[0].Name != "refs/heads/ralph/c" || res.Refs[0].ID != rec.Checkpoint {
		t.Errorf("the bundle's refs are %v, want ralph/c at the checkpoint %s", res.Refs, rec.Checkpoint)
	}
	if _, err := os.Stat(res.Bundle); err != nil {
		t.Error(err)
	}
}
