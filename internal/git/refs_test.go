package git

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestCheckBranchName(t *testing.T) {
	_, r := newRepo(t)
	tests := []struct {
		name  string
		valid bool
	}{
		{"ralph/ok", true},
		{"ralph/login-form", true},
		{"ralph/2024.v1", true},
		{"ralph/../x", false},
		{"ralph/a b", false},
		{"ralph/x..y", false},
		{"ralph/foo~1", false},
		{"ralph/a:b", false},
		{"ralph/@{-1}", false},
		{"ralph/", false},
		{"ralph/x.lock", false},
		{"ralph/a\tb", false},
		{"ralph/a*", false},
		{"@{-1}", false},
		{"-x", false},
		{"", false},
	}
	extra := []string{"ralph/a.", "ralph/.a", "ralph//a", "ralph/a/", "/ralph", "ralph/x.lock/y", "a.lock",
		"ralph/ü", "ralph/a@b", "@", "ralph/a\\b", "ralph/a?", "ralph/a[", "ralph/a^", "HEAD", "ralph/-x", "x-", "_", "a.b.c"}
	for _, name := range extra {
		valid := exec.Command("git", "check-ref-format", "--branch", name).Run() == nil
		tests = append(tests, struct {
			name  string
			valid bool
		}{name, valid})
	}
	// The names git-ralph answers without git are a subset of git's valid ones.
	for _, tt := range tests {
		if plainBranchName(tt.name) && !tt.valid {
			t.Errorf("plainBranchName(%q) = true for a name git refuses", tt.name)
		}
	}
	for _, tt := range tests {
		err := r.CheckBranchName(t.Context(), tt.name)
		if tt.valid && err != nil {
			t.Errorf("CheckBranchName(%q) = %v, want nil", tt.name, err)
		}
		if !tt.valid && !errors.Is(err, ErrInvalidBranchName) {
			t.Errorf("CheckBranchName(%q) = %v, want ErrInvalidBranchName", tt.name, err)
		}
	}
}

func TestRefs(t *testing.T) {
	dir, r := newRepo(t)
	ctx := t.Context()
	base := gitT(t, dir, "rev-parse", "HEAD")
	second := commitFile(t, dir, "b.txt", "b\n", "second")

	t.Run("BranchExists", func(t *testing.T) {
		for name, want := range map[string]bool{"main": true, "nope": false, "ralph/x": false} {
			got, err := r.BranchExists(ctx, name)
			if err != nil || got != want {
				t.Errorf("BranchExists(%q) = %v, %v; want %v", name, got, err, want)
			}
		}
		// A file named like a missing branch must not count.
		write(t, dir, "ghost", "x")
		if ok, err := r.BranchExists(ctx, "ghost"); ok || err != nil {
			t.Errorf("BranchExists(ghost) = %v, %v; want false", ok, err)
		}
	})

	t.Run("ResolveRef", func(t *testing.T) {
		id, ok, err := r.ResolveRef(ctx, "HEAD~1")
		if err != nil || !ok || id != base {
			t.Errorf("ResolveRef(HEAD~1) = %q, %v, %v; want %q", id, ok, err, base)
		}
		if _, ok, err := r.ResolveRef(ctx, "refs/heads/nope"); ok || err != nil {
			t.Errorf("ResolveRef(missing) = %v, %v; want false, nil", ok, err)
		}
		tree := gitT(t, dir, "rev-parse", "HEAD^{tree}")
		if _, ok, err := r.ResolveRef(ctx, tree); ok || err != nil {
			t.Errorf("ResolveRef(tree) = %v, %v; want false, nil", ok, err)
		}
		if _, _, err := r.ResolveRef(ctx, "--all"); err == nil {
			t.Errorf("ResolveRef(--all) accepted an option")
		}
	})

	t.Run("UpdateRef and Refs", func(t *testing.T) {
		for _, ref := range []string{"refs/ralph/x/attempts/1-2", "refs/ralph/x/attempts/1-1", "refs/ralph/x/backup/9", "refs/ralph/xy/attempts/1-1"} {
			if err := r.UpdateRef(ctx, ref, base); err != nil {
				t.Fatal(err)
			}
		}
		if err := r.UpdateRef(ctx, "refs/ralph/x/attempts/1-1", second); err != nil {
			t.Fatal(err)
		}
		got, err := r.Refs(ctx, "refs/ralph/x/")
		if err != nil {
			t.Fatal(err)
		}
		want := []Ref{
			{"refs/ralph/x/attempts/1-1", second},
			{"refs/ralph/x/attempts/1-2", base},
			{"refs/ralph/x/backup/9", base},
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("Refs(refs/ralph/x/) = %v, want %v", got, want)
		}
		got, err = r.Refs(ctx, "refs/ralph/x/attempts/1-")
		if err != nil || len(got) != 2 {
			t.Errorf("Refs(partial component) = %v, %v; want 2 refs", got, err)
		}
		got, err = r.Refs(ctx, "refs/nothing/")
		if err != nil || len(got) != 0 {
			t.Errorf("Refs(empty namespace) = %v, %v", got, err)
		}

		if err := r.DeleteRef(ctx, "refs/ralph/x/backup/9"); err != nil {
			t.Fatal(err)
		}
		if err := r.DeleteRef(ctx, "refs/ralph/x/backup/9"); err != nil {
			t.Errorf("DeleteRef(missing) = %v, want nil", err)
		}
		if _, ok, _ := r.ResolveRef(ctx, "refs/ralph/x/backup/9"); ok {
			t.Errorf("ref still there after DeleteRef")
		}
	})

	t.Run("IsAncestor", func(t *testing.T) {
		if ok, err := r.IsAncestor(ctx, base, second); !ok || err != nil {
			t.Errorf("IsAncestor(base, second) = %v, %v", ok, err)
		}
		if ok, err := r.IsAncestor(ctx, second, base); ok || err != nil {
			t.Errorf("IsAncestor(second, base) = %v, %v", ok, err)
		}
		if _, err := r.IsAncestor(ctx, "nope", base); err == nil {
			t.Errorf("IsAncestor(bad rev) returned no error")
		}
	})

	t.Run("DeleteBranch", func(t *testing.T) {
		gitT(t, dir, "branch", "ralph/gone", second)
		if err := r.DeleteBranch(ctx, "ralph/gone"); err != nil {
			t.Fatal(err)
		}
		if ok, _ := r.BranchExists(ctx, "ralph/gone"); ok {
			t.Errorf("branch still exists")
		}
		var gerr *Error
		if err := r.DeleteBranch(ctx, "ralph/gone"); !errors.As(err, &gerr) || gerr.ExitCode == 0 {
			t.Errorf("DeleteBranch(missing) = %v, want *Error", err)
		}
	})
}

func TestHeadState(t *testing.T) {
	dir, r := newRepo(t)
	ctx := t.Context()
	head := gitT(t, dir, "rev-parse", "HEAD")
	write(t, dir, "HEAD", "a file named like the ref\n")
	check := func(what, wantBranch string, wantCalls int64) {
		t.Helper()
		calls := r.Calls.Load()
		branch, id, err := r.HeadState(ctx)
		if err != nil || branch != wantBranch || id != gitT(t, dir, "rev-parse", "HEAD") {
			t.Errorf("%s: HeadState = %q, %q, %v; want %q, HEAD", what, branch, id, err, wantBranch)
		}
		if n := r.Calls.Load() - calls; n != wantCalls {
			t.Errorf("%s: HeadState ran git %d times, want %d", what, n, wantCalls)
		}
	}
	check("on main", "main", 0)
	gitT(t, dir, "checkout", "-q", "-b", "ralph/x")
	check("on ralph/x", "ralph/x", 0)
	gitT(t, dir, "checkout", "-q", "--detach")
	check("detached", "", 0)
	// A packed ref has no loose file: git answers.
	gitT(t, dir, "checkout", "-q", "ralph/x")
	gitT(t, dir, "pack-refs", "--all", "--prune")
	check("packed ralph/x", "ralph/x", 1)
	if id, err := r.Head(ctx); err != nil || id != head {
		t.Errorf("Head with a packed ref = %q, %v", id, err)
	}

	empty := t.TempDir()
	gitT(t, empty, "init", "-q")
	u, err := Open(ctx, empty)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := u.HeadState(ctx); !errors.Is(err, ErrNoCommits) {
		t.Errorf("HeadState unborn = %v, want ErrNoCommits", err)
	}
	if b, err := u.CurrentBranch(ctx); err != nil || b != "main" {
		t.Errorf("CurrentBranch unborn = %q, %v; want main", b, err)
	}
}

// readHead answers from the files only when that is certain, and then as git would;
// HEAD, CurrentBranch and HeadState agree with git in every state.
func TestReadHeadAgreesWithGit(t *testing.T) {
	dir, r := newRepo(t)
	ctx := t.Context()
	base := gitT(t, dir, "rev-parse", "HEAD")
	agree := func(what string, fast bool) {
		t.Helper()
		_, _, ok := r.readHead()
		if ok != fast {
			t.Errorf("%s: readHead ok = %v, want %v", what, ok, fast)
		}
		wantID := gitT(t, dir, "rev-parse", "HEAD")
		wantBranch := ""
		if out, err := exec.Command("git", "-C", dir, "symbolic-ref", "-q", "--short", "HEAD").Output(); err == nil {
			wantBranch = strings.TrimSpace(string(out))
		}
		if id, err := r.Head(ctx); err != nil || id != wantID {
			t.Errorf("%s: Head = %q, %v; git says %s", what, id, err, wantID)
		}
		b, err := r.CurrentBranch(ctx)
		if errors.Is(err, ErrDetachedHead) {
			b, err = "", nil
		}
		if err != nil || b != wantBranch {
			t.Errorf("%s: CurrentBranch = %q, %v; git says %q", what, b, err, wantBranch)
		}
		if b, id, err := r.HeadState(ctx); err != nil || b != wantBranch || id != wantID {
			t.Errorf("%s: HeadState = %q, %q, %v; git says %q, %s", what, b, id, err, wantBranch, wantID)
		}
	}
	agree("a branch", true)
	commitFile(t, dir, "b.txt", "b\n", "second")
	agree("after a commit", true)
	gitT(t, dir, "checkout", "-q", base)
	agree("detached", true)
	gitT(t, dir, "checkout", "-q", "-b", "deep/er/name")
	agree("a nested branch name", true)
	gitT(t, dir, "pack-refs", "--all", "--prune")
	agree("a packed branch", false)
	commitFile(t, dir, "c.txt", "c\n", "third")
	agree("loose again after a commit", true)
	// A symlinked HEAD (core.preferSymlinkRefs) is left to git.
	gitT(t, dir, "update-ref", "refs/heads/main", base) // loose again
	gitT(t, dir, "-c", "core.preferSymlinkRefs=true", "symbolic-ref", "HEAD", "refs/heads/main")
	if fi, err := os.Lstat(filepath.Join(r.GitDir, "HEAD")); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("HEAD is not a symlink: %v", err)
	}
	agree("a symlinked HEAD", false)
	gitT(t, dir, "symbolic-ref", "HEAD", "refs/heads/main")
	agree("a regular HEAD again", true)

	// A linked worktree keeps its HEAD in its own git dir and refs in the common dir.
	wt := filepath.Join(t.TempDir(), "wt")
	gitT(t, dir, "worktree", "add", "-q", "-b", "side", wt)
	w, err := Open(ctx, wt)
	if err != nil {
		t.Fatal(err)
	}
	if b, id, err := w.HeadState(ctx); err != nil || b != "side" || id != gitT(t, wt, "rev-parse", "HEAD") {
		t.Errorf("linked worktree: HeadState = %q, %q, %v", b, id, err)
	}
	if _, _, ok := w.readHead(); !ok {
		t.Errorf("linked worktree: readHead did not answer")
	}
}
