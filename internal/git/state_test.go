package git

import (
	"path/filepath"
	"reflect"
	"testing"
)

// conflictRepo returns a repository with branches main and other that
// both changed a.txt, checked out on main.
func conflictRepo(t *testing.T) (string, *Repo) {
	t.Helper()
	dir, r := newRepo(t)
	gitT(t, dir, "branch", "other")
	commitFile(t, dir, "a.txt", "main\n", "main changes a")
	gitT(t, dir, "checkout", "-q", "other")
	commitFile(t, dir, "a.txt", "other\n", "other changes a")
	commitFile(t, dir, "c.txt", "c\n", "other adds c")
	gitT(t, dir, "checkout", "-q", "main")
	return dir, r
}

func inProgress(t *testing.T, r *Repo) string {
	t.Helper()
	op, err := r.InProgress()
	if err != nil {
		t.Fatal(err)
	}
	return op
}

func TestInProgress(t *testing.T) {
	t.Run("none", func(t *testing.T) {
		_, r := newRepo(t)
		if op := inProgress(t, r); op != "" {
			t.Errorf("InProgress = %q, want none", op)
		}
	})

	t.Run("merge", func(t *testing.T) {
		dir, r := conflictRepo(t)
		if _, err := gitTry(dir, "merge", "-q", "other"); err == nil {
			t.Fatal("merge did not conflict")
		}
		if op := inProgress(t, r); op != OpMerge {
			t.Errorf("InProgress = %q, want merge", op)
		}
		paths, err := r.UnmergedPaths(t.Context())
		if err != nil || !reflect.DeepEqual(paths, []string{"a.txt"}) {
			t.Errorf("UnmergedPaths = %q, %v; want [a.txt]", paths, err)
		}
	})

	t.Run("cherry-pick", func(t *testing.T) {
		dir, r := conflictRepo(t)
		if _, err := gitTry(dir, "cherry-pick", "other~1"); err == nil {
			t.Fatal("cherry-pick did not conflict")
		}
		if op := inProgress(t, r); op != OpCherryPick {
			t.Errorf("InProgress = %q, want cherry-pick", op)
		}
	})

	t.Run("cherry-pick sequence after commit", func(t *testing.T) {
		dir, r := conflictRepo(t)
		if _, err := gitTry(dir, "cherry-pick", "other~1", "other"); err == nil {
			t.Fatal("cherry-pick did not conflict")
		}
		// Resolve and commit the stopped pick: CHERRY_PICK_HEAD goes,
		// the sequence (sequencer/) is still pending.
		write(t, dir, "a.txt", "resolved\n")
		gitT(t, dir, "add", "a.txt")
		gitT(t, dir, "commit", "-q", "--no-edit")
		if exists(r.GitDir, "CHERRY_PICK_HEAD") || !exists(r.GitDir, "sequencer") {
			t.Fatal("setup: expected a pending sequence without CHERRY_PICK_HEAD")
		}
		if op := inProgress(t, r); op != OpCherryPick {
			t.Errorf("InProgress = %q, want cherry-pick", op)
		}
	})

	t.Run("revert", func(t *testing.T) {
		dir, r := newRepo(t)
		commitFile(t, dir, "a.txt", "two\n", "two")
		commitFile(t, dir, "a.txt", "three\n", "three")
		if _, err := gitTry(dir, "revert", "--no-edit", "HEAD~1"); err == nil {
			t.Fatal("revert did not conflict")
		}
		if op := inProgress(t, r); op != OpRevert {
			t.Errorf("InProgress = %q, want revert", op)
		}
	})

	t.Run("rebase", func(t *testing.T) {
		dir, r := conflictRepo(t)
		if _, err := gitTry(dir, "rebase", "other"); err == nil {
			t.Fatal("rebase did not conflict")
		}
		if op := inProgress(t, r); op != OpRebase {
			t.Errorf("InProgress = %q, want rebase", op)
		}
	})

	t.Run("bisect", func(t *testing.T) {
		dir, r := newRepo(t)
		commitFile(t, dir, "a.txt", "two\n", "two")
		commitFile(t, dir, "a.txt", "three\n", "three")
		gitT(t, dir, "bisect", "start", "HEAD", "HEAD~2")
		if op := inProgress(t, r); op != OpBisect {
			t.Errorf("InProgress = %q, want bisect", op)
		}
	})

	t.Run("linked worktree", func(t *testing.T) {
		// State files live in the worktree's own git dir.
		dir, _ := conflictRepo(t)
		wt := filepath.Join(t.TempDir(), "wt")
		gitT(t, dir, "worktree", "add", "-q", "-b", "wtb", wt, "main")
		w := open(t, wt)
		if _, err := gitTry(wt, "merge", "-q", "other"); err == nil {
			t.Fatal("merge did not conflict")
		}
		if op := inProgress(t, w); op != OpMerge {
			t.Errorf("InProgress in worktree = %q, want merge", op)
		}
		if op := inProgress(t, open(t, dir)); op != "" {
			t.Errorf("InProgress in main worktree = %q, want none", op)
		}
	})
}

func TestStatus(t *testing.T) {
	dir, r := newRepo(t)
	commitFile(t, dir, "old name.txt", "rename me\nwith enough content to match\n", "add old")
	gitT(t, dir, "mv", "old name.txt", "new name.txt")
	write(t, dir, "a.txt", "changed\n")
	write(t, dir, "sub/dir/untracked.txt", "u\n")
	write(t, dir, "line\nbreak.txt", "n\n")
	write(t, dir, "debug.log", "ignored\n")
	write(t, dir, "build/out.bin", "ignored\n")

	got, err := r.Status(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	want := []StatusEntry{
		{XY: " M", Path: "a.txt"},
		{XY: "R ", Path: "new name.txt", Orig: "old name.txt"},
		{XY: "??", Path: "line\nbreak.txt"},
		{XY: "??", Path: "sub/dir/untracked.txt"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Status =\n%q\nwant\n%q", got, want)
	}
}

func TestParseStatus(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []StatusEntry
	}{
		{"empty", "", nil},
		{"modified", " M a.txt\x00", []StatusEntry{{XY: " M", Path: "a.txt"}}},
		{"rename then untracked", "R  new\x00old\x00?? x y\x00",
			[]StatusEntry{{XY: "R ", Path: "new", Orig: "old"}, {XY: "??", Path: "x y"}}},
		{"copy", "C  b\x00a\x00", []StatusEntry{{XY: "C ", Path: "b", Orig: "a"}}},
		{"worktree rename", " R b\x00a\x00", []StatusEntry{{XY: " R", Path: "b", Orig: "a"}}},
		{"unmerged", "UU c\x00", []StatusEntry{{XY: "UU", Path: "c"}}},
	}
	for _, tt := range tests {
		got, err := parseStatus([]byte(tt.in))
		if err != nil || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s: parseStatus = %q, %v; want %q", tt.name, got, err, tt.want)
		}
	}
	for _, bad := range []string{"M\x00", "R  new\x00", " M a\x00\x00"} {
		if _, err := parseStatus([]byte(bad)); err == nil {
			t.Errorf("parseStatus(%q) accepted malformed input", bad)
		}
	}
}

func TestParseUnmerged(t *testing.T) {
	in := "100644 aaaa 1\ta b\x00100644 bbbb 2\ta b\x00100644 cccc 3\ta b\x00100644 dddd 2\tz\x00"
	got := parseUnmerged([]byte(in))
	if want := []string{"a b", "z"}; !reflect.DeepEqual(got, want) {
		t.Errorf("parseUnmerged = %q, want %q", got, want)
	}
}

func TestWorktreeBranches(t *testing.T) {
	dir, r := newRepo(t)
	wt := filepath.Join(realDir(t, t.TempDir()), "w t")
	gitT(t, dir, "worktree", "add", "-q", "-b", "ralph/x", wt)
	detached := filepath.Join(realDir(t, t.TempDir()), "d")
	gitT(t, dir, "worktree", "add", "-q", "--detach", detached)
	want := map[string]string{"main": dir, "ralph/x": wt}

	got, err := r.WorktreeBranches(t.Context())
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("WorktreeBranches (-z) = %v, %v; want %v", got, err, want)
	}

	// Before git 2.36 there is no -z; the line form must give the same.
	r.version = version{2, 31}
	got, err = r.WorktreeBranches(t.Context())
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("WorktreeBranches (lines) = %v, %v; want %v", got, err, want)
	}
}

func TestParseWorktrees(t *testing.T) {
	in := "worktree /r\x00HEAD 1111\x00branch refs/heads/main\x00\x00" +
		"worktree /a\nb\x00HEAD 2222\x00branch refs/heads/ralph/x\x00locked\x00\x00" +
		"worktree /d\x00HEAD 3333\x00detached\x00\x00"
	got := parseWorktrees([]byte(in), 0)
	want := map[string]string{"main": "/r", "ralph/x": "/a\nb"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("parseWorktrees = %q, want %q", got, want)
	}
	bare := "worktree /r.git\nbare\n\nworktree /w\nHEAD 1\nbranch refs/heads/w\n\n"
	if got := parseWorktrees([]byte(bare), '\n'); !reflect.DeepEqual(got, map[string]string{"w": "/w"}) {
		t.Errorf("parseWorktrees(bare, lines) = %q", got)
	}
}

// TestIgnored: an untracked ignored file is ignored; a tracked one that matches a pattern,
// an untracked one that does not, and a missing one are not.
func TestIgnored(t *testing.T) {
	dir, r := newRepo(t)
	write(t, dir, ".gitignore", "notes/\n*.log\n")
	write(t, dir, "forced.log", "tracked\n")
	gitT(t, dir, "add", "-f", "forced.log")
	write(t, dir, "notes/plan.md", "- [ ] a\n")
	write(t, dir, "plan.md", "- [ ] a\n")
	for path, want := range map[string]bool{"notes/plan.md": true, "forced.log": false, "plan.md": false, "missing.md": false, "other.log": true} {
		got, err := r.Ignored(t.Context(), path)
		if err != nil || got != want {
			t.Errorf("Ignored(%q) = %v, %v; want %v", path, got, err, want)
		}
	}
	if _, err := r.Ignored(t.Context(), "-x"); err == nil {
		t.Error("an option-like path was passed to git")
	}
}

// TestTracked: a file the index holds is tracked; an ignored, an untracked or a
// missing one is not, nor a directory or a glob that would match a tracked file.
func TestTracked(t *testing.T) {
	dir, r := newRepo(t)
	commitFile(t, dir, "docs/design.md", "d\n", "add design")
	write(t, dir, ".gitignore", ".env\n")
	write(t, dir, ".env", "TOKEN=x\n")
	write(t, dir, "new.md", "n\n")
	for rel, want := range map[string]bool{"docs/design.md": true, ".env": false, "new.md": false, "gone.md": false,
		"docs": false, "docs/*.md": false, "/docs/design.md": false} {
		got, err := r.Tracked(t.Context(), rel)
		if err != nil || got != want {
			t.Errorf("Tracked(%q) = %v, %v; want %v", rel, got, err, want)
		}
	}
}
