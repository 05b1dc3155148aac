package wtrun

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/git-ralph/git-ralph/internal/run"
	"github.com/git-ralph/git-ralph/internal/start"
)

func gitOut(t *testing.T, dir string, args ...string) string {
	t.Helper()
	out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

// A worktree run's start killed at any step is completed by the next start: one
// "initial state" (the one recorded, once it was), the branch, the worktree, the loop.
func TestWorktreeStartCompletesAfterACrash(t *testing.T) {
	for _, stage := range []string{"record only", "initial commit made", "branch made", "worktree added"} {
		t.Run(stage, func(t *testing.T) {
			dir := newRepo(t)
			clock := &fakeClock{At: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
			l, rep := newLoop(t, dir, clock)
			ctx := t.Context()
			wt := filepath.Join(t.TempDir(), "wt")
			head := gitOut(t, dir, "rev-parse", "HEAD")
			rec := &run.Record{Change: "c", Branch: "ralph/c", Original: "main", OriginalCommit: head,
				Status: run.Starting, Agent: "custom", Started: clock.At,
				Worktree: &run.Worktree{Path: wt, Created: true, Origin: dir}}
			if stage != "record only" {
				id, err := l.Repo.CommitWorktree(ctx, "initial state")
				if err != nil {
					t.Fatal(err)
				}
				rec.Initial = id
			}
			if stage == "branch made" || stage == "worktree added" {
				gitOut(t, dir, "update-ref", "refs/heads/ralph/c", rec.Initial)
			}
			if stage == "worktree added" {
				gitOut(t, dir, "worktree", "add", "-q", wt, "ralph/c")
			}
			if err := l.Store.Save(rec, clock.At); err != nil {
				t.Fatal(err)
			}

			l.Driver = scriptAgent(t, resultComplete)
			if _, err := l.Start(ctx, start.Options{Arg: "c", AllowSkip: true}); err != nil {
				t.Fatalf("Start: %v\n%s", err, rep.Text())
			}
			if got := gitOut(t, dir, "log", "--format=%s", "ralph/c"); got != "checkpoint: 1\ninitial state\nbase" {
				t.Errorf("ralph/c:\n%s", got)
			}
			if rec.Initial != "" {
				if got := gitOut(t, dir, "rev-parse", "ralph/c~1"); got != rec.Initial {
					t.Errorf("initial state %s, want the recorded %s", got, rec.Initial)
				}
			}
			if _, err := os.Stat(filepath.Join(wt, "openspec/changes/c/tasks.md")); err != nil {
				t.Errorf("worktree: %v", err)
			}
			if got := gitOut(t, dir, "status", "--porcelain"); got != "" {
				t.Errorf("the checkout changed: %q", got)
			}
			if refs := gitOut(t, dir, "for-each-ref", "--format=%(refname)", "refs/ralph/"); refs != "" {
				t.Errorf("refs left: %s", refs)
			}
			got, _ := l.Store.Load("c")
			if got.Status != run.Complete || got.Worktree == nil || got.Worktree.Path != wt {
				t.Errorf("record: %+v", got)
			}
		})
	}
}
