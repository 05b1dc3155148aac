package surface

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
)

// userHome fills the repository's HOME (set by repo) with files a hostile agent would
// aim at through a link: a key, a shell start-up file, credentials. untouchedHome checks
// they are all still there, byte for byte, and that nothing else appeared.
func userHome(t *testing.T) string {
	t.Helper()
	home := os.Getenv("HOME")
	write(t, filepath.Join(home, ".ssh", "id_test"), "-----BEGIN KEY-----\nsecret\n", 0o600)
	write(t, filepath.Join(home, ".bashrc"), "export PS1=me\n", 0o644)
	write(t, filepath.Join(home, ".git-credentials"), "https://u:token@example.com\n", 0o600)
	return home
}

func untouchedHome(t *testing.T, home string) {
	t.Helper()
	want := map[string]string{".ssh/id_test": "-----BEGIN KEY-----\nsecret\n", ".bashrc": "export PS1=me\n",
		".git-credentials": "https://u:token@example.com\n"}
	var got []string
	_ = filepath.WalkDir(home, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			rel, _ := filepath.Rel(home, p)
			got = append(got, rel)
		}
		return nil
	})
	if len(got) != len(want) {
		t.Errorf("HOME holds %v, want only %d files of the user's", got, len(want))
	}
	for rel, content := range want {
		if b, err := os.ReadFile(filepath.Join(home, rel)); err != nil || string(b) != content {
			t.Errorf("~/%s = %q, %v; want it untouched", rel, b, err)
		}
	}
}

// noSecretIn fails when any file under dir holds the user's secrets.
func noSecretIn(t *testing.T, dir string) {
	t.Helper()
	_ = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return nil
		}
		if b, _ := os.ReadFile(p); strings.Contains(string(b), "secret") || strings.Contains(string(b), "token@") {
			t.Errorf("%s holds a secret of the user's", p)
		}
		return nil
	})
}

// Review finding 1: the agent moves .git/info (or .git/hooks) away and puts a symlink
// to ~ (or ~/.ssh) in its place. The check lists nothing of what the link leads to,
// the restore moves the link into the keep directory, as a link, and makes the
// directory again with its recorded files; nothing of HOME is read, copied or removed.
func TestWatchedDirectoryBecomesSymlink(t *testing.T) {
	for _, tc := range []struct{ dir, target string }{{"info", ""}, {"hooks", ".ssh"}} {
		t.Run(tc.dir, func(t *testing.T) {
			dir, r := repo(t)
			home := userHome(t)
			ctx := t.Context()
			write(t, filepath.Join(dir, ".git", "info", "exclude"), "*.log\n", 0o644)
			snap, err := Take(ctx, r, Options{Change: "x"})
			if err != nil {
				t.Fatal(err)
			}
			watched := filepath.Join(dir, ".git", tc.dir)
			if err := os.Rename(watched, watched+".old"); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(filepath.Join(home, tc.target), watched); err != nil {
				t.Fatal(err)
			}
			changes, err := snap.Compare(ctx, r)
			if err != nil {
				t.Fatal(err)
			}
			if got, want := Reason(changes, r.Root), "tampered: .git/"+tc.dir+" replaced by a symlink"; got != want {
				t.Fatalf("Reason = %q, want %q", got, want)
			}
			keep := filepath.Join(dir, ".git", "ralph", "x", "tampered", "1-1")
			lines, err := Restore(ctx, r, changes, "refs/ralph/x/tampered/1-1/", keep)
			if err != nil {
				t.Fatal(err)
			}
			if len(lines) != 1 || !strings.Contains(lines[0], "restored .git/"+tc.dir+" as the directory it was, with its files, (the agent replaced it by a symlink; its version is kept as "+filepath.Join(keep, tc.dir)+", a symlink, never followed)") {
				t.Errorf("lines:\n%s", strings.Join(lines, "\n"))
			}
			if l, err := os.Readlink(filepath.Join(keep, tc.dir)); err != nil || l != filepath.Join(home, tc.target) {
				t.Errorf("the link is not kept as a link: %q, %v", l, err)
			}
			if fi, err := os.Lstat(watched); err != nil || !fi.IsDir() {
				t.Fatalf(".git/%s after the restore: %v, %v", tc.dir, fi, err)
			}
			if tc.dir == "info" {
				if b, _ := os.ReadFile(filepath.Join(watched, "exclude")); string(b) != "*.log\n" {
					t.Errorf("info/exclude = %q", b)
				}
			} else if b, _ := os.ReadFile(filepath.Join(watched, "ralph-verify")); string(b) != "#!/bin/sh\nexit 1\n" {
				t.Errorf("hooks/ralph-verify = %q", b)
			}
			untouchedHome(t, home)
			noSecretIn(t, filepath.Join(dir, ".git"))
			if changes, err := snap.Compare(ctx, r); err != nil || len(changes) != 0 {
				t.Errorf("after the restore: %q, %v", Reason(changes, r.Root), err)
			}
		})
	}
}

// A hook the agent plants as a symlink to a secret is never followed: kept as the link,
// no copy of what it leads to.
func TestNewLinkNotFollowed(t *testing.T) {
	dir, r := repo(t)
	home := userHome(t)
	ctx := t.Context()
	snap, err := Take(ctx, r, Options{Change: "x"})
	if err != nil {
		t.Fatal(err)
	}
	hook := filepath.Join(dir, ".git", "hooks", "pre-commit")
	if err := os.Symlink(filepath.Join(home, ".ssh", "id_test"), hook); err != nil {
		t.Fatal(err)
	}
	// and the user's ralph-verify replaced by a link to the credentials
	verify := filepath.Join(dir, ".git", "hooks", "ralph-verify")
	os.Remove(verify)
	if err := os.Symlink(filepath.Join(home, ".git-credentials"), verify); err != nil {
		t.Fatal(err)
	}
	changes, err := snap.Compare(ctx, r)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range changes {
		if c.NowFile.TargetData != nil || c.NowFile.Target != "" {
			t.Errorf("%s: the check followed the agent's link to %s", c.File, c.NowFile.Target)
		}
	}
	keep := filepath.Join(dir, ".git", "ralph", "x", "tampered", "1-1")
	if _, err := Restore(ctx, r, changes, "refs/ralph/x/tampered/1-1/", keep); err != nil {
		t.Fatal(err)
	}
	if l, _ := os.Readlink(filepath.Join(keep, "hooks", "pre-commit")); l != filepath.Join(home, ".ssh", "id_test") {
		t.Errorf("the planted link is not kept as a link: %q", l)
	}
	if b, _ := os.ReadFile(verify); string(b) != "#!/bin/sh\nexit 1\n" {
		t.Errorf("ralph-verify = %q", b)
	}
	if _, err := os.Lstat(hook); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the planted hook is still there: %v", err)
	}
	untouchedHome(t, home)
	noSecretIn(t, filepath.Join(dir, ".git"))
}

// Review finding 5: a directory the agent made in the hooks directory, not empty, and a
// new pre-commit beside it: both moved aside, each named; nothing stops at the first.
func TestRestoreMovesAsideAndGoesOn(t *testing.T) {
	dir, r := repo(t)
	ctx := t.Context()
	snap, err := Take(ctx, r, Options{Change: "x"})
	if err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(dir, ".git", "hooks", "a", "b", "c"), "x\n", 0o644)
	write(t, filepath.Join(dir, ".git", "hooks", "pre-commit"), "#!/bin/sh\necho agent\n", 0o755)
	// and the agent's objects/info is a link now: what git reads through it cannot be
	// looked at, and is named, with the rest still put back
	info := filepath.Join(dir, ".git", "objects", "info")
	if err := os.Rename(info, info+".old"); err != nil {
		t.Fatal(err)
	}
	elsewhere := t.TempDir()
	write(t, filepath.Join(elsewhere, "alternates"), "/tmp/evil/objects\n", 0o644)
	if err := os.Symlink(elsewhere, info); err != nil {
		t.Fatal(err)
	}
	run(t, dir, "branch", "evil")
	changes, err := snap.Compare(ctx, r)
	if err != nil {
		t.Fatal(err)
	}
	keep := filepath.Join(dir, ".git", "ralph", "x", "tampered", "1-1")
	lines, err := Restore(ctx, r, changes, "refs/ralph/x/tampered/1-1/", keep)
	var re *RestoreError
	if !errors.As(err, &re) {
		t.Fatalf("Restore = %v, want a *RestoreError", err)
	}
	msg := err.Error()
	for _, want := range []string{".git/objects/info/alternates (.git/objects/info is no longer a directory", "refs/heads/evil"} {
		if !strings.Contains(msg, want) {
			t.Errorf("the error does not name %q:\n%s", want, msg)
		}
	}
	all := strings.Join(lines, "\n")
	for _, want := range []string{"removed .git/hooks/a (the agent created it; its version is kept as " + filepath.Join(keep, "hooks", "a") + ")",
		"removed .git/hooks/pre-commit (the agent created it; its version is kept as " + filepath.Join(keep, "hooks", "pre-commit") + ")"} {
		if !strings.Contains(all, want) {
			t.Errorf("no line %q in:\n%s", want, all)
		}
	}
	for _, p := range []string{"a", "pre-commit"} {
		if _, err := os.Lstat(filepath.Join(dir, ".git", "hooks", p)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("hooks/%s is still there", p)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(keep, "hooks", "a", "b", "c")); string(b) != "x\n" {
		t.Errorf("the agent's directory is not kept whole: %q", b)
	}
	if b, _ := os.ReadFile(filepath.Join(elsewhere, "alternates")); string(b) != "/tmp/evil/objects\n" {
		t.Errorf("what the link leads to was touched: %q", b)
	}
}

// Review finding 8: the agent's version of a file over MaxKept is moved into the keep
// directory, never copied (a sparse file stays one file, not a dense copy).
func TestLargeFileMovedNotCopied(t *testing.T) {
	dir, r := repo(t)
	ctx := t.Context()
	snap, err := Take(ctx, r, Options{Change: "x"})
	if err != nil {
		t.Fatal(err)
	}
	big := filepath.Join(dir, ".git", "hooks", "pre-push")
	f, err := os.Create(big)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(8 << 20); err != nil { // over MaxKept, sparse (the review used 1 GiB)
		t.Fatal(err)
	}
	f.Close()
	var before syscall.Stat_t
	if err := syscall.Stat(big, &before); err != nil {
		t.Fatal(err)
	}
	changes, err := snap.Compare(ctx, r)
	if err != nil {
		t.Fatal(err)
	}
	keep := filepath.Join(dir, ".git", "ralph", "x", "tampered", "1-1")
	if _, err := Restore(ctx, r, changes, "refs/ralph/x/tampered/1-1/", keep); err != nil {
		t.Fatal(err)
	}
	var after syscall.Stat_t
	if err := syscall.Stat(filepath.Join(keep, "hooks", "pre-push"), &after); err != nil {
		t.Fatal(err)
	}
	if after.Ino != before.Ino || after.Blocks > before.Blocks {
		t.Errorf("the large file was copied (inode %d -> %d, %d -> %d blocks), not moved", before.Ino, after.Ino, before.Blocks, after.Blocks)
	}
}

// A .git/hooks that is the user's own symlink to a directory is watched where it led
// when recorded: its hooks are read there (the gate's copy too), a hook changed there
// is put back there, and the link re-pointed by the agent is put back as the user's
// link, the agent's kept as a link.
func TestUserLinkedHooksDir(t *testing.T) {
	dir, r := repo(t)
	ctx := t.Context()
	mine := t.TempDir()
	write(t, filepath.Join(mine, "ralph-verify"), "#!/bin/sh\nexit 3\n", 0o755)
	hooks := filepath.Join(dir, ".git", "hooks")
	if err := os.RemoveAll(hooks); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(mine, hooks); err != nil {
		t.Fatal(err)
	}
	snap, err := Take(ctx, r, Options{Change: "x"})
	if err != nil {
		t.Fatal(err)
	}
	f, ok := snap.Recorded(filepath.Join(snap.HooksDir, "ralph-verify"))
	if got, run := f.Runnable(); !ok || !run || string(got) != "#!/bin/sh\nexit 3\n" {
		t.Fatalf("the recorded hook = %q, %v", got, ok)
	}
	// the agent rewrites the hook where it lives, and re-points the link
	write(t, filepath.Join(mine, "ralph-verify"), "#!/bin/sh\nexit 0\n", 0o755)
	agent := t.TempDir()
	os.Remove(hooks)
	if err := os.Symlink(agent, hooks); err != nil {
		t.Fatal(err)
	}
	changes, err := snap.Compare(ctx, r)
	if err != nil {
		t.Fatal(err)
	}
	if got := Reason(changes, r.Root); got != "tampered: .git/hooks changed, .git/hooks/ralph-verify changed" {
		t.Errorf("Reason = %q", got)
	}
	keep := filepath.Join(dir, ".git", "ralph", "x", "tampered", "1-1")
	lines, err := Restore(ctx, r, changes, "refs/ralph/x/tampered/1-1/", keep)
	if err != nil {
		t.Fatal(err)
	}
	want := "restored .git/hooks (the agent changed it; its version is kept as " + filepath.Join(keep, "hooks.2") + ", a symlink, never followed)"
	if !slices.Contains(lines, want) {
		t.Errorf("no line %q in:\n%s", want, strings.Join(lines, "\n"))
	}
	if b, _ := os.ReadFile(filepath.Join(keep, "hooks", "ralph-verify")); string(b) != "#!/bin/sh\nexit 0\n" {
		t.Errorf("the agent's hook is not kept: %q", b)
	}
	if l, _ := os.Readlink(hooks); l != mine {
		t.Errorf(".git/hooks -> %q, want the user's %q", l, mine)
	}
	if l, _ := os.Readlink(filepath.Join(keep, "hooks.2")); l != agent {
		t.Errorf("the agent's link is not kept: %q", l)
	}
	if b, _ := os.ReadFile(filepath.Join(mine, "ralph-verify")); string(b) != "#!/bin/sh\nexit 3\n" {
		t.Errorf("the user's hook = %q", b)
	}
	if changes, err := snap.Compare(ctx, r); err != nil || len(changes) != 0 {
		t.Errorf("after the restore: %q, %v", Reason(changes, r.Root), err)
	}
}
