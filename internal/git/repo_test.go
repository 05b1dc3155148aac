package git

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func TestOpen(t *testing.T) {
	dir, r := newRepo(t)
	gitDir := filepath.Join(dir, ".git")

	t.Run("root", func(t *testing.T) {
		if r.Root != dir || r.GitDir != gitDir || r.CommonDir != gitDir {
			t.Errorf("got Root=%q GitDir=%q CommonDir=%q, want %q, %q, %q", r.Root, r.GitDir, r.CommonDir, dir, gitDir, gitDir)
		}
	})

	t.Run("subdirectory", func(t *testing.T) {
		sub := filepath.Join(dir, "x", "y")
		if err := os.MkdirAll(sub, 0o755); err != nil {
			t.Fatal(err)
		}
		s := open(t, sub)
		if s.Root != dir || s.GitDir != gitDir {
			t.Errorf("got Root=%q GitDir=%q, want %q, %q", s.Root, s.GitDir, dir, gitDir)
		}
		// Commands run in the root, not in the directory Open was given.
		st, err := s.Status(t.Context())
		if err != nil || len(st) != 0 {
			t.Errorf("Status from subdirectory = %v, %v", st, err)
		}
	})

	t.Run("linked worktree", func(t *testing.T) {
		wt := filepath.Join(realDir(t, t.TempDir()), "wt")
		gitT(t, dir, "worktree", "add", "-q", "-b", "side", wt)
		w := open(t, wt)
		if w.Root != wt {
			t.Errorf("Root = %q, want %q", w.Root, wt)
		}
		if w.CommonDir != gitDir {
			t.Errorf("CommonDir = %q, want %q", w.CommonDir, gitDir)
		}
		if w.GitDir == w.CommonDir || filepath.Dir(w.GitDir) != filepath.Join(gitDir, "worktrees") {
			t.Errorf("GitDir = %q, want a directory under %q", w.GitDir, filepath.Join(gitDir, "worktrees"))
		}
		b, err := w.CurrentBranch(t.Context())
		if err != nil || b != "side" {
			t.Errorf("CurrentBranch = %q, %v; want side", b, err)
		}
	})

	t.Run("calls", func(t *testing.T) {
		// one rev-parse: Open's whole cost on the happy path (the version is
		// asked only where a feature depends on it).
		if got := r.Calls.Load(); got != 1 {
			t.Errorf("Open ran git %d times, want 1", got)
		}
	})
}

func TestOpenBare(t *testing.T) {
	isolate(t)
	dir := t.TempDir()
	gitT(t, dir, "init", "-q", "--bare", "b.git")
	_, err := Open(t.Context(), filepath.Join(dir, "b.git"))
	if !errors.Is(err, ErrBare) {
		t.Fatalf("Open(bare) = %v, want ErrBare", err)
	}
}

func TestOpenNotRepo(t *testing.T) {
	isolate(t)
	_, err := Open(t.Context(), t.TempDir())
	if !errors.Is(err, ErrNotRepo) {
		t.Fatalf("Open(non-repo) = %v, want ErrNotRepo", err)
	}
	// git's own message is kept for the user.
	var gerr *Error
	if !errors.As(err, &gerr) || gerr.ExitCode != 128 || gerr.Stderr == "" {
		t.Errorf("Open(non-repo) does not carry git's *Error: %#v", err)
	}
}

func TestOpenInsideGitDir(t *testing.T) {
	dir, _ := newRepo(t)
	_, err := Open(t.Context(), filepath.Join(dir, ".git"))
	if !errors.Is(err, ErrNotRepo) {
		t.Fatalf("Open(.git) = %v, want ErrNotRepo", err)
	}
}

func TestOpenMissingDir(t *testing.T) {
	isolate(t)
	_, err := Open(t.Context(), filepath.Join(t.TempDir(), "nope"))
	var gerr *Error
	if !errors.As(err, &gerr) || gerr.ExitCode != -1 {
		t.Fatalf("Open(missing dir) = %v, want an *Error with exit code -1", err)
	}
}

func TestOpenGitNotFound(t *testing.T) {
	isolate(t)
	t.Setenv("PATH", t.TempDir())
	_, err := Open(t.Context(), t.TempDir())
	if !errors.Is(err, ErrGitNotFound) {
		t.Fatalf("Open without git = %v, want ErrGitNotFound", err)
	}
}

func TestUnborn(t *testing.T) {
	isolate(t)
	dir := realDir(t, t.TempDir())
	gitT(t, dir, "init", "-q")
	r := open(t, dir)
	if _, err := r.Head(t.Context()); !errors.Is(err, ErrNoCommits) {
		t.Errorf("Head = %v, want ErrNoCommits", err)
	}
	b, err := r.CurrentBranch(t.Context())
	if err != nil || b != "main" {
		t.Errorf("CurrentBranch = %q, %v; want main", b, err)
	}
}

func TestHeadAndDetached(t *testing.T) {
	dir, r := newRepo(t)
	want := gitT(t, dir, "rev-parse", "HEAD")
	got, err := r.Head(t.Context())
	if err != nil || got != want {
		t.Fatalf("Head = %q, %v; want %q", got, err, want)
	}
	gitT(t, dir, "checkout", "-q", "--detach")
	if _, err := r.CurrentBranch(t.Context()); !errors.Is(err, ErrDetachedHead) {
		t.Errorf("CurrentBranch detached = %v, want ErrDetachedHead", err)
	}
}

func TestParseVersion(t *testing.T) {
	tests := []struct {
		in   string
		want version
		ok   bool
	}{
		{"git version 2.39.5\n", version{2, 39}, true},
		{"git version 2.31.0", version{2, 31}, true},
		{"git version 2.39.5.windows.1", version{2, 39}, true},
		{"git version 2.37.1 (Apple Git-137.1)", version{2, 37}, true},
		{"git version 2.45.rc0", version{2, 45}, true},
		{"git version 1.8", version{1, 8}, true},
		{"hub version 2.14.2", version{}, false},
		{"git version banana", version{}, false},
		{"", version{}, false},
	}
	for _, tt := range tests {
		got, ok := parseVersion(tt.in)
		if got != tt.want || ok != tt.ok {
			t.Errorf("parseVersion(%q) = %v, %v; want %v, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
	if !(version{2, 30}).less(minVersion) || (version{2, 31}).less(minVersion) || (version{3, 0}).less(minVersion) {
		t.Errorf("version.less disagrees with MinVersion %s", MinVersion)
	}
}

// A git older than MinVersion is named as such, though Open no longer asks every
// git its version: rev-parse --path-format fails there (an old git prints the
// option back), and only then is the version asked.
func TestOpenGitTooOld(t *testing.T) {
	isolate(t)
	bin := t.TempDir()
	// git 2.30 as it answers rev-parse: the unknown option echoed as a line.
	old := "#!/bin/sh\ncase \"$*\" in\n*version*) echo 'git version 2.30.9' ;;\n" +
		"*rev-parse*) echo --path-format=absolute; echo /r; echo .git; echo .git; echo .git/hooks ;;\nesac\n"
	if err := os.WriteFile(filepath.Join(bin, "git"), []byte(old), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin)
	_, err := Open(t.Context(), t.TempDir())
	if !errors.Is(err, ErrGitTooOld) {
		t.Fatalf("Open with git 2.30 = %v, want ErrGitTooOld", err)
	}
}
