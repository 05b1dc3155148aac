package git

import (
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
		if _, code, err := r.Hook(ctx, "ralph-verify", nil); err != nil || code != 0 {
			t.Fatalf("Hook = %d, %v", code, err)
		}
		if got := ran(t, evil); got != "" {
			t.Errorf("git-ralph's git ran hooks from the planted core.hooksPath: %q", got)
		}
		if got := ran(t, own); got != "pre-commit\nralph-verify" {
			t.Errorf("the hooks in effect when the repository was opened ran %q, want pre-commit then ralph-verify", got)
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
