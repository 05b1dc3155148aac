package git

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// CommitWorktree makes the "initial state" of a worktree run from a dirty checkout:
// staged, unstaged and untracked work in the commit, ignored files not, and the
// checkout (HEAD, index, files) exactly as it was.
func TestCommitWorktreeLeavesCheckoutAlone(t *testing.T) {
	dir, r := newRepo(t)
	ctx := t.Context()
	write(t, dir, "a.txt", "changed\n")
	write(t, dir, "staged.txt", "staged\n")
	gitT(t, dir, "add", "staged.txt")
	write(t, dir, "new/untracked.txt", "new\n")
	write(t, dir, "x.log", "ignored\n")
	head := gitT(t, dir, "rev-parse", "HEAD")
	index, err := os.ReadFile(filepath.Join(dir, ".git", "index"))
	if err != nil {
		t.Fatal(err)
	}
	status := gitT(t, dir, "status", "--porcelain")

	id, err := r.CommitWorktree(ctx, "initial state")
	if err != nil {
		t.Fatal(err)
	}
	if got := gitT(t, dir, "rev-parse", id+"^"); got != head {
		t.Errorf("parent = %s, want HEAD %s", got, head)
	}
	files := strings.Fields(gitT(t, dir, "ls-tree", "-r", "--name-only", id))
	for _, want := range []string{"a.txt", "staged.txt", "new/untracked.txt", ".gitignore"} {
		if !slices.Contains(files, want) {
			t.Errorf("commit lacks %s: %v", want, files)
		}
	}
	if slices.Contains(files, "x.log") {
		t.Errorf("commit holds the ignored x.log")
	}
	if got := gitT(t, dir, "show", id+":a.txt"); got != "changed" {
		t.Errorf("a.txt in commit = %q", got)
	}
	if got := gitT(t, dir, "rev-parse", "HEAD"); got != head {
		t.Errorf("HEAD moved to %s", got)
	}
	after, _ := os.ReadFile(filepath.Join(dir, ".git", "index"))
	if !bytes.Equal(after, index) {
		t.Errorf("the index changed")
	}
	if got := gitT(t, dir, "status", "--porcelain"); got != status {
		t.Errorf("status changed:\n%s\nwant\n%s", got, status)
	}
	if refs := gitT(t, dir, "for-each-ref"); strings.Count(refs, "\n") != 0 {
		t.Errorf("a ref was made: %s", refs)
	}
}

// Worktrees lists the main worktree first, a linked one with its branch, its lock,
// and as prunable once its directory is gone; add, lock, unlock, remove and prune
// work on it, and remove refuses a dirty worktree (it never forces).
func TestWorktreeLifecycle(t *testing.T) {
	dir, r := newRepo(t)
	ctx := t.Context()
	gitT(t, dir, "branch", "ralph/x")
	wt := filepath.Join(filepath.Dir(dir), filepath.Base(dir)+".ralph", "x")
	if err := r.AddWorktree(ctx, wt, "ralph/x", true); err != nil {
		t.Fatal(err)
	}
	if err := r.LockWorktree(ctx, wt, "git-ralph x pid 1"); err != nil {
		t.Fatal(err)
	}
	if err := r.LockWorktree(ctx, wt, "git-ralph x pid 2"); err != nil { // relock: the reason is current
		t.Fatalf("second lock: %v", err)
	}
	if out := gitT(t, dir, "worktree", "list", "--porcelain"); !strings.Contains(out, "locked git-ralph x pid 2") {
		t.Errorf("lock reason not updated:\n%s", out)
	}
	wts, err := r.Worktrees(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(wts) != 2 || wts[0].Path != dir || wts[1].Path != wt || wts[1].Branch != "ralph/x" || !wts[1].Locked || wts[1].Prunable {
		t.Fatalf("Worktrees = %+v", wts)
	}
	if err := r.RemoveWorktree(ctx, wt); err == nil {
		t.Fatal("removed a locked worktree")
	}
	if err := r.UnlockWorktree(ctx, wt); err != nil {
		t.Fatal(err)
	}
	if err := r.UnlockWorktree(ctx, wt); err != nil {
		t.Fatalf("unlock of an unlocked worktree: %v", err)
	}
	write(t, wt, "scratch.txt", "mine\n")
	if err := r.RemoveWorktree(ctx, wt); err == nil {
		t.Fatal("removed a worktree with an untracked file")
	}
	if !exists(wt, "scratch.txt") {
		t.Fatal("the untracked file is gone")
	}
	if err := os.RemoveAll(wt); err != nil {
		t.Fatal(err)
	}
	if wts, _ = r.Worktrees(ctx); len(wts) != 2 || !wts[1].Prunable {
		t.Fatalf("after rm: %+v", wts)
	}
	if err := r.PruneWorktrees(ctx); err != nil {
		t.Fatal(err)
	}
	if wts, _ = r.Worktrees(ctx); len(wts) != 1 {
		t.Fatalf("after prune: %+v", wts)
	}
	if ok, _ := r.BranchExists(ctx, "ralph/x"); !ok {
		t.Fatal("prune dropped the branch")
	}
}

// NoAutoGC runs git with gc.auto=0, whatever the repository says.
func TestNoAutoGC(t *testing.T) {
	dir, r := newRepo(t)
	gitT(t, dir, "config", "gc.auto", "50")
	v, _, err := r.Config(t.Context(), "gc.auto")
	if err != nil || v != "50" {
		t.Fatalf("without NoAutoGC: %q %v", v, err)
	}
	r.NoAutoGC = true
	r.dropConfigCache() // Config answers from one listing: read it again, now with -c gc.auto=0
	if v, _, err = r.Config(t.Context(), "gc.auto"); err != nil || v != "0" {
		t.Fatalf("with NoAutoGC: %q %v", v, err)
	}
}

// The helpers of finish --squash in a dirty checkout: which paths a branch changes,
// whether a file still holds a commit's version, unstaging only some paths, and
// dropping changes that are kept elsewhere.
func TestSquashHelpers(t *testing.T) {
	dir, r := newRepo(t)
	ctx := t.Context()
	base := gitT(t, dir, "rev-parse", "HEAD")
	gitT(t, dir, "switch", "-q", "-c", "work")
	tip := commitFile(t, dir, "b.txt", "b\n", "b")
	gitT(t, dir, "switch", "-q", "main")
	paths, err := r.ChangedPaths(ctx, base+"..."+tip)
	if err != nil || !slices.Equal(paths, []string{"b.txt"}) {
		t.Fatalf("ChangedPaths = %v, %v", paths, err)
	}

	write(t, dir, "b.txt", "b\n")
	write(t, dir, "a.txt", "other\n")
	now, err := r.HashFiles(ctx, []string{"a.txt", "b.txt", "gone.txt"})
	if err != nil {
		t.Fatal(err)
	}
	then, err := r.BlobIDs(ctx, tip, []string{"a.txt", "b.txt", "gone.txt"})
	if err != nil {
		t.Fatal(err)
	}
	if now["b.txt"] != then["b.txt"] || now["a.txt"] == then["a.txt"] || now["gone.txt"] != "" || then["gone.txt"] != "" {
		t.Fatalf("now %v then %v", now, then)
	}

	gitT(t, dir, "add", "a.txt", "b.txt")
	if err := r.ResetPaths(ctx, []string{"b.txt"}); err != nil {
		t.Fatal(err)
	}
	if got := gitT(t, dir, "diff", "--cached", "--name-only"); got != "a.txt" {
		t.Fatalf("staged after ResetPaths: %q", got)
	}
	gitT(t, dir, "add", "b.txt")
	if err := r.DropPaths(ctx, []string{"a.txt", "b.txt"}); err != nil {
		t.Fatal(err)
	}
	if got := gitT(t, dir, "status", "--porcelain"); got != "" {
		t.Fatalf("status after DropPaths: %q", got)
	}
	if read(t, dir, "a.txt") != "a\n" || exists(dir, "b.txt") {
		t.Fatal("DropPaths did not restore HEAD's files")
	}
}

// MainWorktree names the main worktree from the main worktree and from a linked one.
func TestMainWorktree(t *testing.T) {
	dir, r := newRepo(t)
	ctx := t.Context()
	wt := filepath.Join(t.TempDir(), "linked")
	gitT(t, dir, "worktree", "add", "-q", "-b", "side", wt)
	linked, err := Open(ctx, wt)
	if err != nil {
		t.Fatal(err)
	}
	for _, repo := range []*Repo{r, linked} {
		got, err := repo.MainWorktree(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if !SamePath(got, dir) {
			t.Errorf("MainWorktree from %s = %s, want %s", repo.Root, got, dir)
		}
	}
}
