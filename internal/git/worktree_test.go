package git

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// treeFiles lists the files in commit id's tree.
func treeFiles(t *testing.T, dir, id string) []string {
	t.Helper()
	out := gitT(t, dir, "ls-tree", "-r", "--name-only", "-z", id)
	return strings.Split(strings.TrimSuffix(out, "\x00"), "\x00")
}

func TestCheckoutNewBranchCarriesWork(t *testing.T) {
	dir, r := newRepo(t)
	ctx := t.Context()
	write(t, dir, "a.txt", "dirty\n")
	write(t, dir, "new.txt", "new\n")
	if err := r.CheckoutNewBranch(ctx, "ralph/x"); err != nil {
		t.Fatal(err)
	}
	if b, _ := r.CurrentBranch(ctx); b != "ralph/x" {
		t.Errorf("branch = %q, want ralph/x", b)
	}
	if err := r.AddAll(ctx); err != nil {
		t.Fatal(err)
	}
	id, err := r.Commit(ctx, "initial state", CommitOptions{AllowEmpty: true})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := treeFiles(t, dir, id), []string{".gitignore", "a.txt", "new.txt"}; !reflect.DeepEqual(got, want) {
		t.Errorf("initial state tree = %q, want %q", got, want)
	}
	// Again on a clean tree: AllowEmpty makes the commit anyway.
	id2, err := r.Commit(ctx, "empty", CommitOptions{AllowEmpty: true})
	if err != nil || id2 == id {
		t.Errorf("Commit(AllowEmpty) = %q, %v", id2, err)
	}
	var gerr *Error
	if _, err := r.Commit(ctx, "nothing", CommitOptions{}); !errors.As(err, &gerr) || gerr.ExitCode != 1 {
		t.Errorf("Commit with nothing to commit = %v, want *Error exit 1", err)
	}
}

func TestCheckoutPrefersBranchOverFile(t *testing.T) {
	dir, r := newRepo(t)
	ctx := t.Context()
	// A file named like a branch that does not exist: checkout must fail,
	// not restore the file from the index.
	commitFile(t, dir, "feature", "committed\n", "file named feature")
	write(t, dir, "feature", "precious\n")
	if err := r.Checkout(ctx, "feature"); err == nil {
		t.Fatal("Checkout(missing branch) succeeded")
	}
	if got := read(t, dir, "feature"); got != "precious\n" {
		t.Errorf("file was overwritten: %q", got)
	}
	gitT(t, dir, "branch", "other")
	if err := r.Checkout(ctx, "other"); err != nil {
		t.Fatal(err)
	}
	if b, _ := r.CurrentBranch(ctx); b != "other" {
		t.Errorf("branch = %q, want other", b)
	}
}

func TestResets(t *testing.T) {
	dir, r := newRepo(t)
	ctx := t.Context()
	base := gitT(t, dir, "rev-parse", "HEAD")
	commitFile(t, dir, "b.txt", "b\n", "agent commit")

	if err := r.SoftReset(ctx, base); err != nil {
		t.Fatal(err)
	}
	if head, _ := r.Head(ctx); head != base {
		t.Errorf("HEAD after SoftReset = %s, want %s", head, base)
	}
	if st := gitT(t, dir, "status", "--porcelain"); st != "A  b.txt" {
		t.Errorf("status after SoftReset = %q, want b.txt staged", st)
	}
	if err := r.MixedReset(ctx); err != nil {
		t.Fatal(err)
	}
	if st := gitT(t, dir, "status", "--porcelain"); st != "?? b.txt" {
		t.Errorf("status after MixedReset = %q, want b.txt untracked", st)
	}
	write(t, dir, "a.txt", "changed\n")
	if err := r.HardReset(ctx, "HEAD"); err != nil {
		t.Fatal(err)
	}
	if got := read(t, dir, "a.txt"); got != "a\n" {
		t.Errorf("a.txt after HardReset = %q", got)
	}
}

func TestSaveAttempt(t *testing.T) {
	dir, r := newRepo(t)
	ctx := t.Context()
	commitFile(t, dir, "gone.txt", "x\n", "add gone")
	checkpoint := gitT(t, dir, "rev-parse", "HEAD")

	// The agent's mess: a staged change, an unstaged one, a deletion, an
	// untracked file, ignored files.
	write(t, dir, "staged.txt", "staged\n")
	gitT(t, dir, "add", "staged.txt")
	write(t, dir, "a.txt", "agent edit\n")
	if err := os.Remove(filepath.Join(dir, "gone.txt")); err != nil {
		t.Fatal(err)
	}
	write(t, dir, "sub/new file.txt", "untracked\n")
	write(t, dir, "debug.log", "ignored\n")
	write(t, dir, "build/out", "ignored\n")

	indexBefore := gitT(t, dir, "ls-files", "-s")
	cachedBefore := gitT(t, dir, "diff", "--cached")
	statusBefore := gitT(t, dir, "status", "--porcelain", "-z")

	id, err := r.SaveAttempt(ctx, checkpoint, "refs/ralph/x/attempts/1-1", "attempt 1 of story 1")
	if err != nil {
		t.Fatal(err)
	}

	if got := gitT(t, dir, "ls-files", "-s"); got != indexBefore {
		t.Errorf("index changed:\n%s\nwas\n%s", got, indexBefore)
	}
	if got := gitT(t, dir, "diff", "--cached"); got != cachedBefore {
		t.Errorf("staged diff changed")
	}
	if got := gitT(t, dir, "status", "--porcelain", "-z"); got != statusBefore {
		t.Errorf("status changed: %q, was %q", got, statusBefore)
	}
	if head := gitT(t, dir, "rev-parse", "HEAD"); head != checkpoint {
		t.Errorf("HEAD moved to %s", head)
	}
	if ref := gitT(t, dir, "rev-parse", "refs/ralph/x/attempts/1-1"); ref != id {
		t.Errorf("ref = %s, want %s", ref, id)
	}
	if got, want := treeFiles(t, dir, id), []string{".gitignore", "a.txt", "staged.txt", "sub/new file.txt"}; !reflect.DeepEqual(got, want) {
		t.Errorf("saved tree = %q, want %q", got, want)
	}
	if got := gitT(t, dir, "show", id+":a.txt"); got != "agent edit" {
		t.Errorf("saved a.txt = %q", got)
	}
	if parents := gitT(t, dir, "log", "-1", "--format=%P", id); parents != checkpoint {
		t.Errorf("parents = %q, want only the checkpoint", parents)
	}
	if msg := gitT(t, dir, "log", "-1", "--format=%B", id); msg != "attempt 1 of story 1" {
		t.Errorf("message = %q", msg)
	}
	if left, _ := filepath.Glob(filepath.Join(r.GitDir, "ralph-index-*")); len(left) != 0 {
		t.Errorf("temporary index left behind: %v", left)
	}
}

func TestSaveAttemptKeepsAgentCommits(t *testing.T) {
	dir, r := newRepo(t)
	ctx := t.Context()
	checkpoint := gitT(t, dir, "rev-parse", "HEAD")
	agent := commitFile(t, dir, "agent.txt", "agent\n", "agent commit")
	write(t, dir, "more.txt", "uncommitted\n")

	id, err := r.SaveAttempt(ctx, checkpoint, "refs/ralph/x/attempts/1-1", "attempt")
	if err != nil {
		t.Fatal(err)
	}
	if parents := gitT(t, dir, "log", "-1", "--format=%P", id); parents != checkpoint+" "+agent {
		t.Errorf("parents = %q, want checkpoint then the agent's commit", parents)
	}
	if got, want := treeFiles(t, dir, id), []string{".gitignore", "a.txt", "agent.txt", "more.txt"}; !reflect.DeepEqual(got, want) {
		t.Errorf("saved tree = %q, want %q", got, want)
	}

	// A rewound branch (HEAD behind the checkpoint) adds no parent.
	gitT(t, dir, "reset", "-q", "--hard", checkpoint)
	next := commitFile(t, dir, "b.txt", "b\n", "next checkpoint")
	gitT(t, dir, "reset", "-q", "--hard", "HEAD~1")
	id, err = r.SaveAttempt(ctx, next, "refs/ralph/x/attempts/2-1", "attempt")
	if err != nil {
		t.Fatal(err)
	}
	if parents := gitT(t, dir, "log", "-1", "--format=%P", id); parents != next {
		t.Errorf("parents = %q, want only %s", parents, next)
	}
}

// checkRestored runs Restore and checks that everything is back: on
// ralph/x at checkpoint, a clean tree, no operation in progress, ignored
// files kept.
func checkRestored(t *testing.T, dir string, r *Repo, checkpoint string) {
	t.Helper()
	ctx := t.Context()
	if err := r.Restore(ctx, "ralph/x", checkpoint); err != nil {
		t.Fatalf("Restore: %v", err)
	}
	if b, err := r.CurrentBranch(ctx); err != nil || b != "ralph/x" {
		t.Errorf("branch = %q, %v; want ralph/x", b, err)
	}
	if head, _ := r.Head(ctx); head != checkpoint {
		t.Errorf("HEAD = %s, want %s", head, checkpoint)
	}
	if st, err := r.Status(ctx); err != nil || len(st) != 0 {
		t.Errorf("tree not clean: %q, %v", st, err)
	}
	if op := inProgress(t, r); op != "" {
		t.Errorf("operation still in progress: %s", op)
	}
	if !exists(dir, "keep.log") || !exists(dir, "build/cache") {
		t.Errorf("ignored files were removed")
	}
	if got := read(t, dir, "a.txt"); got != "checkpoint\n" {
		t.Errorf("a.txt = %q, want the checkpoint's", got)
	}
}

// restoreRepo makes a checkpoint on ralph/x (with a branch "other" to
// wander off to) and some ignored files; the caller then plays the agent.
func restoreRepo(t *testing.T) (string, *Repo, string) {
	t.Helper()
	dir, r := newRepo(t)
	gitT(t, dir, "branch", "other")
	gitT(t, dir, "checkout", "-q", "-b", "ralph/x")
	checkpoint := commitFile(t, dir, "a.txt", "checkpoint\n", "checkpoint: 1")
	write(t, dir, "keep.log", "ignored\n")
	write(t, dir, "build/cache", "ignored\n")
	return dir, r, checkpoint
}

func TestRestore(t *testing.T) {
	t.Run("switched branch with dirty files", func(t *testing.T) {
		dir, r, cp := restoreRepo(t)
		gitT(t, dir, "checkout", "-q", "other")
		write(t, dir, "a.txt", "dirty on other\n")
		write(t, dir, "stray.txt", "untracked\n")
		write(t, dir, "newdir/deep/f", "untracked\n")
		checkRestored(t, dir, r, cp)
		if exists(dir, "stray.txt") || exists(dir, "newdir") {
			t.Errorf("untracked files survived")
		}
	})

	t.Run("commits on the branch", func(t *testing.T) {
		dir, r, cp := restoreRepo(t)
		commitFile(t, dir, "a.txt", "agent 1\n", "agent 1")
		commitFile(t, dir, "agent.txt", "agent 2\n", "agent 2")
		write(t, dir, "a.txt", "and dirty\n")
		gitT(t, dir, "add", "a.txt")
		checkRestored(t, dir, r, cp)
		if exists(dir, "agent.txt") {
			t.Errorf("agent's committed file survived")
		}
	})

	t.Run("branch rewound", func(t *testing.T) {
		dir, r, cp := restoreRepo(t)
		gitT(t, dir, "reset", "-q", "--hard", "HEAD~1")
		checkRestored(t, dir, r, cp)
	})

	t.Run("branch deleted", func(t *testing.T) {
		dir, r, cp := restoreRepo(t)
		gitT(t, dir, "checkout", "-q", "other")
		gitT(t, dir, "branch", "-D", "ralph/x")
		checkRestored(t, dir, r, cp)
	})

	t.Run("branch deleted while checked out", func(t *testing.T) {
		dir, r, cp := restoreRepo(t)
		gitT(t, dir, "update-ref", "-d", "refs/heads/ralph/x")
		checkRestored(t, dir, r, cp)
	})

	t.Run("detached with conflicts", func(t *testing.T) {
		dir, r, cp := restoreRepo(t)
		gitT(t, dir, "checkout", "-q", "other")
		commitFile(t, dir, "a.txt", "other\n", "other a")
		gitT(t, dir, "checkout", "-q", "--detach", cp)
		if _, err := gitTry(dir, "merge", "-q", "other"); err == nil {
			t.Fatal("merge did not conflict")
		}
		checkRestored(t, dir, r, cp)
	})

	t.Run("rebase stopped", func(t *testing.T) {
		dir, r, cp := restoreRepo(t)
		gitT(t, dir, "checkout", "-q", "other")
		commitFile(t, dir, "a.txt", "other\n", "other a")
		gitT(t, dir, "checkout", "-q", "ralph/x")
		if _, err := gitTry(dir, "rebase", "other"); err == nil {
			t.Fatal("rebase did not conflict")
		}
		checkRestored(t, dir, r, cp)
	})

	t.Run("cherry-pick sequence stopped", func(t *testing.T) {
		dir, r, cp := restoreRepo(t)
		gitT(t, dir, "checkout", "-q", "other")
		commitFile(t, dir, "a.txt", "other\n", "other a")
		commitFile(t, dir, "o.txt", "o\n", "other o")
		gitT(t, dir, "checkout", "-q", "ralph/x")
		if _, err := gitTry(dir, "cherry-pick", "other~1", "other"); err == nil {
			t.Fatal("cherry-pick did not conflict")
		}
		checkRestored(t, dir, r, cp)
	})

	t.Run("bisect", func(t *testing.T) {
		dir, r, cp := restoreRepo(t)
		commitFile(t, dir, "x.txt", "x\n", "x")
		gitT(t, dir, "bisect", "start", "HEAD", "HEAD~2")
		checkRestored(t, dir, r, cp)
	})

	// No hook runs, neither from Restore's checkout nor from the bisect reset that ends an
	// operation the agent left: both would check out the agent's tree.
	t.Run("no hook runs", func(t *testing.T) {
		dir, r, cp := restoreRepo(t)
		commitFile(t, dir, "x.txt", "x\n", "x")
		gitT(t, dir, "bisect", "start", "HEAD", "HEAD~2")
		gitT(t, dir, "checkout", "-q", "other")
		ran := filepath.Join(t.TempDir(), "ran")
		hook := filepath.Join(dir, ".git", "hooks", "post-checkout")
		if err := os.WriteFile(hook, []byte("#!/bin/sh\necho \"post-checkout $*\" >> "+ran+"\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		checkRestored(t, dir, r, cp)
		if b, err := os.ReadFile(ran); err == nil {
			t.Errorf("Restore ran a hook: %s", b)
		}
	})

	t.Run("nothing to do", func(t *testing.T) {
		dir, r, cp := restoreRepo(t)
		before := r.Calls.Load()
		if err := r.Restore(t.Context(), "ralph/x", cp); err != nil {
			t.Fatal(err)
		}
		if n := r.Calls.Load() - before; n != 2 {
			t.Errorf("Restore ran git %d times, want 2 (checkout, clean)", n)
		}
		checkRestored(t, dir, r, cp)
	})
}

func TestCommitHookRefusal(t *testing.T) {
	dir, r := newRepo(t)
	ctx := t.Context()
	writeHook(t, dir, "pre-commit", `echo "lint: 3 problems (stdout)"
echo "refused by policy (stderr)" >&2
[ "$GIT_RALPH" = 1 ] && echo "GIT_RALPH seen"
exit 1
`)
	write(t, dir, "a.txt", "change\n")
	if err := r.AddAll(ctx); err != nil {
		t.Fatal(err)
	}
	before := gitT(t, dir, "rev-parse", "HEAD")
	_, err := r.Commit(ctx, "checkpoint: 1", CommitOptions{})
	var gerr *Error
	if !errors.As(err, &gerr) {
		t.Fatalf("Commit = %v, want *Error", err)
	}
	if gerr.ExitCode != 1 {
		t.Errorf("ExitCode = %d, want 1", gerr.ExitCode)
	}
	for _, want := range []string{"lint: 3 problems (stdout)", "refused by policy (stderr)", "GIT_RALPH seen"} {
		if !strings.Contains(gerr.Stderr, want) {
			t.Errorf("Stderr %q lacks %q", gerr.Stderr, want)
		}
	}
	if !strings.HasPrefix(err.Error(), "git commit: lint: 3 problems") {
		t.Errorf("Error() = %q", err.Error())
	}
	if after := gitT(t, dir, "rev-parse", "HEAD"); after != before {
		t.Errorf("HEAD moved despite the refusal")
	}
}

func TestCommitMessageAndHooks(t *testing.T) {
	dir, r := newRepo(t)
	ctx := t.Context()
	// commit-msg may rewrite the message; Commit must return the commit
	// that was actually made.
	writeHook(t, dir, "commit-msg", `printf '\nHooked: yes\n' >> "$1"`)
	write(t, dir, "a.txt", "change\n")
	if err := r.AddAll(ctx); err != nil {
		t.Fatal(err)
	}
	msg := "checkpoint: 1\n\n# Title with a hash\n-F - and 'quotes' $HOME\n\nRalph-Story: 1\n"
	id, err := r.Commit(ctx, msg, CommitOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if head := gitT(t, dir, "rev-parse", "HEAD"); id != head {
		t.Errorf("Commit returned %s, HEAD is %s", id, head)
	}
	got := gitT(t, dir, "log", "-1", "--format=%B")
	if !strings.Contains(got, "# Title with a hash\n-F - and 'quotes' $HOME") || !strings.Contains(got, "Hooked: yes") {
		t.Errorf("message = %q", got)
	}
}

func TestMergeSquash(t *testing.T) {
	t.Run("clean", func(t *testing.T) {
		// merge.ff=false is a common setting that git refuses to
		// combine with --squash unless told --ff.
		dir, r := newRepo(t, "merge.ff", "false")
		ctx := t.Context()
		base := gitT(t, dir, "rev-parse", "HEAD")
		gitT(t, dir, "checkout", "-q", "-b", "ralph/x")
		commitFile(t, dir, "a.txt", "story 1\n", "checkpoint: 1")
		commitFile(t, dir, "b.txt", "story 2\n", "checkpoint: 2")
		if err := r.Checkout(ctx, "main"); err != nil {
			t.Fatal(err)
		}
		if err := r.MergeSquash(ctx, "ralph/x"); err != nil {
			t.Fatal(err)
		}
		if err := r.MixedReset(ctx); err != nil {
			t.Fatal(err)
		}
		if err := r.DeleteBranch(ctx, "ralph/x"); err != nil {
			t.Fatal(err)
		}
		if head := gitT(t, dir, "rev-parse", "HEAD"); head != base {
			t.Errorf("HEAD moved")
		}
		st, _ := r.Status(ctx)
		want := []StatusEntry{{XY: " M", Path: "a.txt"}, {XY: "??", Path: "b.txt"}}
		if !reflect.DeepEqual(st, want) {
			t.Errorf("status = %q, want %q", st, want)
		}
	})

	t.Run("conflict", func(t *testing.T) {
		dir, r := newRepo(t)
		ctx := t.Context()
		gitT(t, dir, "checkout", "-q", "-b", "ralph/x")
		tip := commitFile(t, dir, "a.txt", "story\n", "checkpoint: 1")
		gitT(t, dir, "checkout", "-q", "main")
		moved := commitFile(t, dir, "a.txt", "main moved on\n", "main work")

		err := r.MergeSquash(ctx, "ralph/x")
		var gerr *Error
		if !errors.As(err, &gerr) || gerr.ExitCode != 1 {
			t.Fatalf("MergeSquash = %v, want *Error exit 1", err)
		}
		if paths, _ := r.UnmergedPaths(ctx); !reflect.DeepEqual(paths, []string{"a.txt"}) {
			t.Errorf("unmerged = %q", paths)
		}
		var conflict *ConflictError
		if !errors.As(err, &conflict) || !reflect.DeepEqual(conflict.Paths, []string{"a.txt"}) {
			t.Errorf("MergeSquash = %#v, want a *ConflictError naming a.txt", err)
		}
		// The documented undo.
		if err := r.HardReset(ctx, "HEAD"); err != nil {
			t.Fatal(err)
		}
		if st, _ := r.Status(ctx); len(st) != 0 {
			t.Errorf("not clean after undo: %q", st)
		}
		if head := gitT(t, dir, "rev-parse", "HEAD"); head != moved {
			t.Errorf("main moved")
		}
		if id := gitT(t, dir, "rev-parse", "ralph/x"); id != tip {
			t.Errorf("ralph/x changed")
		}
	})
}

// A merge that fails without a conflict (histories git will not join) is git's error,
// no *ConflictError: nothing may say "conflict" without git saying so.
func TestMergeSquashFailsWithoutConflict(t *testing.T) {
	dir, r := newRepo(t)
	ctx := t.Context()
	gitT(t, dir, "checkout", "-q", "--orphan", "other")
	commitFile(t, dir, "z.txt", "unrelated\n", "another history")
	gitT(t, dir, "checkout", "-q", "main")
	err := r.MergeSquash(ctx, "other")
	var gerr *Error
	if !errors.As(err, &gerr) || !strings.Contains(gerr.Stderr, "unrelated histories") {
		t.Fatalf("MergeSquash = %v, want git's refusal of unrelated histories", err)
	}
	var conflict *ConflictError
	if errors.As(err, &conflict) {
		t.Errorf("MergeSquash = %#v: a *ConflictError without conflicts", err)
	}
}

// A commit a hook refuses (git exits 1, the hook is there) is a *CommitHookError naming
// it; a commit that fails otherwise (git dies, exit 128) is not, hooks there or not.
func TestCommitHookErrorOnlyWhenAHookRefused(t *testing.T) {
	dir, r := newRepo(t)
	ctx := t.Context()
	writeHook(t, dir, "commit-msg", "exit 1\n")
	_, err := r.Commit(ctx, "refused", CommitOptions{AllowEmpty: true})
	var he *CommitHookError
	if !errors.As(err, &he) || !reflect.DeepEqual(he.Hooks, []string{"commit-msg"}) || he.Err.ExitCode != 1 {
		t.Fatalf("Commit = %#v, want a *CommitHookError naming commit-msg", err)
	}
	writeHook(t, dir, "commit-msg", "exit 0\n")
	gitT(t, dir, "config", "commit.cleanup", "bogus")
	_, err = r.Commit(ctx, "not the hook", CommitOptions{AllowEmpty: true})
	var gerr *Error
	if !errors.As(err, &gerr) || gerr.ExitCode != 128 || !strings.Contains(gerr.Stderr, "bogus") {
		t.Fatalf("Commit = %v, want git's fatal error about commit.cleanup", err)
	}
	if errors.As(err, &he) {
		t.Errorf("Commit = %#v: a *CommitHookError though git died of its config", err)
	}
}

func TestCommitHookBackgroundJob(t *testing.T) {
	dir, r := newRepo(t)
	// A post-commit hook that leaves a job running with our stdout: git
	// itself is done, and Commit must not wait for the job.
	// The job runs an hour (killed when the test ends): Commit returning at all
	// says it did not wait for it.
	pidFile := filepath.Join(t.TempDir(), "job.pid")
	writeHook(t, dir, "post-commit", "sleep 3600 &\necho $! >"+pidFile+"\necho hook done\n")
	t.Cleanup(func() {
		if b, err := os.ReadFile(pidFile); err == nil {
			if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
		}
	})
	id, err := r.Commit(t.Context(), "empty", CommitOptions{AllowEmpty: true})
	if err != nil {
		t.Fatal(err)
	}
	if head := gitT(t, dir, "rev-parse", "HEAD"); head != id {
		t.Errorf("Commit returned %s, HEAD is %s", id, head)
	}
}

// The chaos test found that a git-ralph killed while saving an attempt leaves its
// temporary index in .git, as large as the index itself, one per kill.
func TestSaveAttemptSweepsTempIndexOfKilledProcess(t *testing.T) {
	dir, r := newRepo(t)
	ctx := t.Context()
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	gone := fmt.Sprintf("ralph-index-%d-123", dead.Process.Pid)
	live := fmt.Sprintf("ralph-index-%d-456", os.Getppid())
	mine := fmt.Sprintf("ralph-index-%d-789", os.Getpid())
	for _, name := range []string{gone, gone + ".lock", live, mine, "ralph-index-old"} {
		write(t, r.GitDir, name, "stale\n")
	}
	write(t, dir, "new.txt", "agent work\n")
	if _, err := r.SaveAttempt(ctx, gitT(t, dir, "rev-parse", "HEAD"), "refs/ralph/x/attempts/1-1", "attempt"); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{gone, gone + ".lock"} {
		if _, err := os.Stat(filepath.Join(r.GitDir, name)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s of a dead process is still there (%v)", name, err)
		}
	}
	for _, name := range []string{live, mine, "ralph-index-old"} {
		if _, err := os.Stat(filepath.Join(r.GitDir, name)); err != nil {
			t.Errorf("%s was removed: %v", name, err)
		}
	}
}

// SaveAttempt seeds its temporary index with the user's index (stat data included, so
// add -A re-hashes only what changed), and from the parent's tree when there is no
// index file. Both save the same tree.
func TestSaveAttemptSeedsTempIndex(t *testing.T) {
	dir, r := newRepo(t)
	ctx := t.Context()
	checkpoint := gitT(t, dir, "rev-parse", "HEAD")
	write(t, dir, "a.txt", "agent edit\n")
	write(t, dir, "new.txt", "untracked\n")
	var trace strings.Builder
	r.Trace = &trace
	fromIndex, err := r.SaveAttempt(ctx, checkpoint, "refs/ralph/x/attempts/1-1", "attempt")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(trace.String(), "read-tree") {
		t.Errorf("seeded with read-tree although the index exists:\n%s", trace.String())
	}
	if err := os.Remove(filepath.Join(r.GitDir, "index")); err != nil {
		t.Fatal(err)
	}
	trace.Reset()
	fromTree, err := r.SaveAttempt(ctx, checkpoint, "refs/ralph/x/attempts/1-2", "attempt")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(trace.String(), "git read-tree "+checkpoint) {
		t.Errorf("no index file, yet not seeded from the parent:\n%s", trace.String())
	}
	a, b := gitT(t, dir, "rev-parse", fromIndex+"^{tree}"), gitT(t, dir, "rev-parse", fromTree+"^{tree}")
	if a != b {
		t.Errorf("trees differ: %s seeded from the index, %s from the parent", a, b)
	}
	if got, want := treeFiles(t, dir, fromIndex), []string{".gitignore", "a.txt", "new.txt"}; !reflect.DeepEqual(got, want) {
		t.Errorf("saved tree = %q, want %q", got, want)
	}
}

func TestWorktreeTree(t *testing.T) {
	dir, r := newRepo(t)
	ctx := t.Context()
	head, err := r.TreeOf(ctx, "HEAD")
	if err != nil || head != gitT(t, dir, "rev-parse", "HEAD^{tree}") {
		t.Fatalf("TreeOf(HEAD) = %s, %v", head, err)
	}
	if tree, err := r.WorktreeTree(ctx); err != nil || tree != head {
		t.Fatalf("WorktreeTree of a clean worktree = %s, %v; want HEAD's tree %s", tree, err, head)
	}
	// An unstaged change, a staged one, an untracked file and an ignored one: the tree
	// holds the worktree's content, the index stays as it was.
	write(t, dir, "a.txt", "changed\n")
	write(t, dir, "staged.txt", "staged\n")
	gitT(t, dir, "add", "staged.txt")
	write(t, dir, "untracked.txt", "new\n")
	write(t, dir, "debug.log", "ignored\n")
	index := gitT(t, dir, "ls-files", "-s")
	tree, err := r.WorktreeTree(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got := gitT(t, dir, "ls-files", "-s"); got != index {
		t.Errorf("the index changed:\n%s\nwas\n%s", got, index)
	}
	got := strings.Split(gitT(t, dir, "ls-tree", "-r", "--name-only", tree), "\n")
	if want := []string{".gitignore", "a.txt", "staged.txt", "untracked.txt"}; !reflect.DeepEqual(got, want) {
		t.Errorf("tree holds %q, want %q", got, want)
	}
	if c := gitT(t, dir, "cat-file", "-p", tree+":a.txt"); c != "changed" {
		t.Errorf("a.txt in the tree = %q", c)
	}
	if left, _ := filepath.Glob(filepath.Join(r.GitDir, "ralph-index-*")); len(left) != 0 {
		t.Errorf("temporary index left behind: %v", left)
	}
}

// A same-size edit whose stat data still matches the index entry (an edit made in the
// same second as the last `git add`, the "racily clean" case) must be in the saved tree.
// git finds such edits only by comparing the entry's mtime with the index file's own
// mtime, so the temporary copy of the index must keep the original's mtime.
func TestWorktreeTreeRacyCleanEdit(t *testing.T) {
	dir, r := newRepo(t)
	gitT(t, dir, "config", "core.checkStat", "minimal")
	gitT(t, dir, "config", "core.trustctime", "false")
	path := filepath.Join(dir, "a.txt")
	// An entry with clean stat data: the file is older than the index that records it.
	stamp := time.Now().Add(-time.Minute).Truncate(time.Second)
	if err := os.Chtimes(path, stamp, stamp); err != nil {
		t.Fatal(err)
	}
	gitT(t, dir, "update-index", "--refresh")
	write(t, dir, "a.txt", "b\n") // same size as "a\n"
	if err := os.Chtimes(path, stamp, stamp); err != nil {
		t.Fatal(err)
	}
	// The index was written in the same second as the entry: git must re-read a.txt.
	if err := os.Chtimes(filepath.Join(r.GitDir, "index"), stamp, stamp); err != nil {
		t.Fatal(err)
	}
	tree, err := r.WorktreeTree(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if c := gitT(t, dir, "cat-file", "-p", tree+":a.txt"); c != "b" {
		t.Errorf("a.txt in the saved tree = %q, want the edit %q", c, "b")
	}
}

func TestRenamedTo(t *testing.T) {
	out := []byte("R100\x00docs/plans/x.md\x00docs/plans/completed/x.md\x00R087\x00a\x00b\x00")
	if got := renamedTo(out, "docs/plans/x.md"); got != "docs/plans/completed/x.md" {
		t.Errorf("renamedTo = %q", got)
	}
	if got := renamedTo(out, "b"); got != "" {
		t.Errorf("a rename's new path taken for its old: %q", got)
	}
	if got := renamedTo(nil, "a"); got != "" {
		t.Errorf("no output: %q", got)
	}
}

// The loop's checkpoint commit (NoHooks) runs none of the hooks a commit runs, from the
// hooks directory or from where core.hooksPath points (the pre-commit framework, husky
// and lefthook run what the work tree's files say): each would leave a mark.
func TestCommitNoHooks(t *testing.T) {
	dir, r := newRepo(t)
	marks := t.TempDir()
	hooks := []string{"pre-commit", "prepare-commit-msg", "commit-msg", "post-commit", "reference-transaction"}
	for _, h := range hooks {
		writeHook(t, dir, h, "echo ran >"+filepath.Join(marks, h)+"\n")
	}
	if _, err := r.Commit(t.Context(), "checkpoint", CommitOptions{AllowEmpty: true, NoHooks: true}); err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(dir, ".husky")
	if err := os.MkdirAll(other, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, h := range hooks {
		p := filepath.Join(other, h)
		if err := os.WriteFile(p, []byte("#!/bin/sh\necho ran >"+filepath.Join(marks, "husky-"+h)+"\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	gitT(t, dir, "config", "core.hooksPath", other)
	if _, err := open(t, dir).Commit(t.Context(), "checkpoint", CommitOptions{AllowEmpty: true, NoHooks: true}); err != nil {
		t.Fatal(err)
	}
	if ran, _ := os.ReadDir(marks); len(ran) > 0 {
		t.Errorf("hooks ran: %v", ran)
	}
	// the control: without NoHooks they do
	if _, err := r.Commit(t.Context(), "user's", CommitOptions{AllowEmpty: true}); err != nil {
		t.Fatal(err)
	}
	if ran, _ := os.ReadDir(marks); len(ran) == 0 {
		t.Error("no hook ran for a commit with hooks: the test proves nothing")
	}
}
