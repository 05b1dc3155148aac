package git

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// planted writes an executable script at dir/name that appends its name to
// dir/ran when something runs it, and returns its path.
func planted(t *testing.T, dir, name string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	script := "#!/bin/sh\necho " + name + " >> '" + filepath.Join(dir, "ran") + "'\ncat >/dev/null 2>&1\nexit 0\n"
	if err := os.WriteFile(path, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

// ran returns what the planted scripts in dir recorded.
func ran(t *testing.T, dir string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "ran"))
	if os.IsNotExist(err) {
		return ""
	}
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(b))
}

// What an agent writes into the repository's config after git-ralph opened it
// must not make git-ralph's own git run a program: each override in
// safetyArgs, against a script that records being run.
func TestPlantedConfigRunsNothing(t *testing.T) {
	t.Run("core.fsmonitor", func(t *testing.T) {
		dir, r := newRepo(t)
		evil := t.TempDir()
		gitT(t, dir, "config", "core.fsmonitor", planted(t, evil, "fsmonitor"))
		// Control: plain git runs it, so the test can fail.
		gitT(t, dir, "status", "--porcelain")
		if ran(t, evil) == "" {
			t.Fatal("control: git status did not run core.fsmonitor; the test proves nothing")
		}
		_ = os.Remove(filepath.Join(evil, "ran"))

		ctx := t.Context()
		write(t, dir, "b.txt", "b\n")
		if _, err := r.Status(ctx); err != nil {
			t.Fatal(err)
		}
		if err := r.AddAll(ctx); err != nil {
			t.Fatal(err)
		}
		id, err := r.Commit(ctx, "b", CommitOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := r.ChangedPaths(ctx, "HEAD~1..HEAD"); err != nil {
			t.Fatal(err)
		}
		if err := r.HardReset(ctx, id); err != nil {
			t.Fatal(err)
		}
		if err := r.CheckoutNewBranch(ctx, "other"); err != nil {
			t.Fatal(err)
		}
		if got := ran(t, evil); got != "" {
			t.Errorf("git-ralph's git ran the planted core.fsmonitor: %q", got)
		}
	})

	t.Run("core.hooksPath", func(t *testing.T) {
		dir, r := newRepo(t)
		ctx := t.Context()
		own := filepath.Join(r.CommonDir, "hooks")
		if err := os.MkdirAll(own, 0o755); err != nil {
			t.Fatal(err)
		}
		planted(t, own, "pre-commit")
		planted(t, own, "ralph-verify")
		evil := t.TempDir()
		planted(t, evil, "pre-commit")
		planted(t, evil, "ralph-verify")
		planted(t, evil, "post-checkout")
		planted(t, evil, "reference-transaction")
		gitT(t, dir, "config", "core.hooksPath", evil)

		write(t, dir, "b.txt", "b\n")
		if err := r.AddAll(ctx); err != nil {
			t.Fatal(err)
		}
		if _, err := r.Commit(ctx, "b", CommitOptions{}); err != nil {
			t.Fatal(err)
		}
		if err := r.CheckoutNewBranch(ctx, "other"); err != nil {
			t.Fatal(err)
		}
		if ok, err := r.HookExists(ctx, "ralph-verify"); err != nil || !ok {
			t.Fatalf("HookExists = %v, %v; want the one in the hooks directory in effect at Open", ok, err)
		}
		if got := ran(t, evil); got != "" {
			t.Errorf("git-ralph's git ran hooks from the planted core.hooksPath: %q", got)
		}
		if got := ran(t, own); got != "pre-commit" {
			t.Errorf("the hooks in effect when the repository was opened ran %q, want pre-commit", got)
		}
		if d, err := r.HooksDir(ctx); err != nil || d != own {
			t.Errorf("HooksDir = %q, %v; want %q", d, err, own)
		}
	})

	t.Run("diff.external and textconv", func(t *testing.T) {
		dir, r := newRepo(t)
		ctx := t.Context()
		evil := t.TempDir()
		write(t, dir, ".gitattributes", "*.txt diff=evil\n")
		write(t, dir, "a.txt", "changed\n")
		gitT(t, dir, "add", "-A")
		gitT(t, dir, "commit", "-q", "-m", "two")
		gitT(t, dir, "config", "diff.external", planted(t, evil, "external"))
		gitT(t, dir, "config", "diff.evil.command", planted(t, evil, "command"))
		gitT(t, dir, "config", "diff.evil.textconv", planted(t, evil, "textconv"))
		// Control: a plain diff runs them.
		gitT(t, dir, "diff", "HEAD~1", "HEAD")
		if ran(t, evil) == "" {
			t.Fatal("control: git diff ran neither diff.external nor the driver")
		}
		_ = os.Remove(filepath.Join(evil, "ran"))

		patch, err := r.Diff(ctx, "HEAD~1", "HEAD")
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(patch, "+changed") {
			t.Errorf("Diff is not the real patch:\n%s", patch)
		}
		if _, err := r.ChangedPaths(ctx, "HEAD~1..HEAD"); err != nil {
			t.Fatal(err)
		}
		if _, err := r.Log(ctx, "HEAD", 0); err != nil {
			t.Fatal(err)
		}
		if got := ran(t, evil); got != "" {
			t.Errorf("git-ralph's git ran a planted diff program: %q", got)
		}
	})
}

// The overrides come before the caller's own -c, which wins where both set
// the same key (the bundle fetch turns hooks off with core.hooksPath=/dev/null).
func TestSafetyArgsOrder(t *testing.T) {
	_, r := newRepo(t)
	args := r.safetyArgs()
	want := []string{"-c", "core.fsmonitor=false", "-c", "core.hooksPath=" + filepath.Join(r.CommonDir, "hooks")}
	if strings.Join(args, " ") != strings.Join(want, " ") {
		t.Errorf("safetyArgs = %q, want %q", args, want)
	}
}

// A main worktree's .git/commondir, written after Open (the agent can: .git is in its
// work tree), points every git that finds the repository at another one: its config,
// its hooks, its refs. --git-dir and GIT_COMMON_DIR pin config, hooks and objects, but
// git's files ref backend reads the commondir file whatever GIT_COMMON_DIR says, so
// git-ralph's git refuses to start while it is there; and a later Open refuses the
// layout, which git itself never writes.
func TestCommondirSteersNothing(t *testing.T) {
	dir, r := newRepo(t)
	ctx := t.Context()
	evil := realDir(t, t.TempDir())
	other := filepath.Join(evil, "other.git")
	gitT(t, evil, "init", "-q", "--bare", other)
	write(t, other, "objects/info/alternates", filepath.Join(r.CommonDir, "objects")+"\n")
	gitT(t, dir, "push", "-q", other, "HEAD:refs/heads/main")
	gitT(t, dir, "--git-dir="+other, "config", "core.fsmonitor", planted(t, evil, "fsmonitor"))
	gitT(t, dir, "--git-dir="+other, "config", "filter.evil.clean", planted(t, evil, "clean"))
	write(t, other, "info/attributes", "* filter=evil\n")
	for _, h := range []string{"pre-commit", "post-commit", "post-checkout", "reference-transaction"} {
		planted(t, filepath.Join(other, "hooks"), h)
	}
	write(t, r.GitDir, "commondir", other+"\n")
	// Control: a plain git here is in the other repository now.
	if got := gitT(t, dir, "rev-parse", "--path-format=absolute", "--git-common-dir"); got != other {
		t.Fatalf("control: git's common dir is %q, want %q; the test proves nothing", got, other)
	}
	before := gitT(t, dir, "--git-dir="+other, "for-each-ref")

	write(t, dir, "b.txt", "b\n")
	if _, err := r.Status(ctx); !errors.Is(err, ErrForeignCommonDir) {
		t.Errorf("Status = %v, want ErrForeignCommonDir", err)
	}
	if err := r.AddAll(ctx); !errors.Is(err, ErrForeignCommonDir) {
		t.Errorf("AddAll = %v, want ErrForeignCommonDir", err)
	}
	if _, err := r.Commit(ctx, "b", CommitOptions{}); !errors.Is(err, ErrForeignCommonDir) {
		t.Errorf("Commit = %v, want ErrForeignCommonDir", err)
	}
	if err := r.CheckoutNewBranch(ctx, "feature"); !errors.Is(err, ErrForeignCommonDir) {
		t.Errorf("CheckoutNewBranch = %v, want ErrForeignCommonDir", err)
	}
	if got := ran(t, evil); got != "" {
		t.Errorf("git-ralph's git ran the other repository's programs: %q", got)
	}
	if after := gitT(t, dir, "--git-dir="+other, "for-each-ref"); after != before {
		t.Errorf("git-ralph's git changed the other repository's refs:\n%s\nwas\n%s", after, before)
	}
	if _, err := Open(ctx, dir); !errors.Is(err, ErrForeignCommonDir) {
		t.Errorf("Open with a main worktree's commondir = %v, want ErrForeignCommonDir", err)
	}

	// Gone again (the trust surface puts it back), git-ralph's git goes on.
	_ = os.Remove(filepath.Join(r.GitDir, "commondir"))
	if err := r.AddAll(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Commit(ctx, "b", CommitOptions{}); err != nil {
		t.Fatal(err)
	}
}

// A linked worktree's admin commondir rewritten after Open: the same refusal.
func TestWorktreeCommondirSteersNothing(t *testing.T) {
	dir, _ := newRepo(t)
	wt := filepath.Join(realDir(t, t.TempDir()), "wt")
	gitT(t, dir, "worktree", "add", "-q", wt)
	r := open(t, wt)
	other := filepath.Join(t.TempDir(), "other.git")
	gitT(t, dir, "init", "-q", "--bare", other)
	write(t, r.GitDir, "commondir", other+"\n")
	if _, err := r.Status(t.Context()); !errors.Is(err, ErrForeignCommonDir) {
		t.Errorf("Status = %v, want ErrForeignCommonDir", err)
	}
	write(t, r.GitDir, "commondir", "../..\n") // what git writes
	if _, err := r.Status(t.Context()); err != nil {
		t.Errorf("Status with git's own commondir: %v", err)
	}
}
