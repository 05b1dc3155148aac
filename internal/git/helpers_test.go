package git

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// isolate makes git hermetic for one test: no system or user config, a
// fixed identity and fixed dates (stable ids), no repository discovery
// above the temp dirs, and none of the variables a parent git may export.
// Extra config is injected with GIT_CONFIG_COUNT, as a user's -c would be.
func isolate(t *testing.T, config ...string) {
	t.Helper()
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	t.Setenv("GIT_AUTHOR_NAME", "Ralph Test")
	t.Setenv("GIT_AUTHOR_EMAIL", "ralph@example.com")
	t.Setenv("GIT_AUTHOR_DATE", "2026-01-02T03:04:05Z")
	t.Setenv("GIT_COMMITTER_NAME", "Ralph Test")
	t.Setenv("GIT_COMMITTER_EMAIL", "ralph@example.com")
	t.Setenv("GIT_COMMITTER_DATE", "2026-01-02T03:04:05Z")
	t.Setenv("GIT_CEILING_DIRECTORIES", filepath.Dir(filepath.Dir(home)))
	for _, k := range []string{
		"GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_PREFIX", "GIT_COMMON_DIR",
		"GIT_OBJECT_DIRECTORY", "GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_CONFIG",
		"GIT_CONFIG_PARAMETERS", "GIT_CONFIG_GLOBAL", "GIT_CONFIG_SYSTEM",
		"GIT_OPTIONAL_LOCKS", "GIT_RALPH", "GIT_TRACE", "GIT_EDITOR", "GIT_SEQUENCE_EDITOR",
		"RALPH_STORY", "RALPH_CHANGE",
	} {
		unsetenv(t, k)
	}
	setConfig(t, append([]string{
		"init.defaultBranch", "main",
		"advice.detachedHead", "false",
		"maintenance.auto", "false",
	}, config...)...)
}

// setConfig injects config as key, value pairs through GIT_CONFIG_COUNT,
// replacing what an earlier call injected.
func setConfig(t *testing.T, kv ...string) {
	t.Helper()
	if len(kv)%2 != 0 {
		t.Fatalf("setConfig: odd number of arguments")
	}
	t.Setenv("GIT_CONFIG_COUNT", fmt.Sprint(len(kv)/2))
	for i := 0; i < len(kv); i += 2 {
		t.Setenv(fmt.Sprintf("GIT_CONFIG_KEY_%d", i/2), kv[i])
		t.Setenv(fmt.Sprintf("GIT_CONFIG_VALUE_%d", i/2), kv[i+1])
	}
}

func unsetenv(t *testing.T, k string) {
	t.Helper()
	t.Setenv(k, "") // registers the restore
	if err := os.Unsetenv(k); err != nil {
		t.Fatal(err)
	}
}

// gitT runs git in dir for test setup and returns its trimmed stdout.
func gitT(t *testing.T, dir string, args ...string) string {
	t.Helper()
	out, err := gitTry(dir, args...)
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

// gitTry runs git in dir and returns its combined output, for setup steps
// that are expected to fail (a conflicting merge).
func gitTry(dir string, args ...string) (string, error) {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	return strings.TrimSpace(string(out)), err
}

// write creates dir/name (and its directories) with content.
func write(t *testing.T, dir, name, content string) {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func read(t *testing.T, dir, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func exists(dir, name string) bool {
	_, err := os.Lstat(filepath.Join(dir, name))
	return err == nil
}

// newRepo creates an isolated repository with one commit ("base": a.txt,
// and a .gitignore ignoring *.log and build/) and opens it.
func newRepo(t *testing.T, config ...string) (string, *Repo) {
	t.Helper()
	isolate(t, config...)
	dir := realDir(t, t.TempDir())
	gitT(t, dir, "init", "-q")
	write(t, dir, "a.txt", "a\n")
	write(t, dir, ".gitignore", "*.log\nbuild/\n")
	gitT(t, dir, "add", "-A")
	gitT(t, dir, "commit", "-q", "-m", "base")
	return dir, open(t, dir)
}

func open(t *testing.T, dir string) *Repo {
	t.Helper()
	r, err := Open(t.Context(), dir)
	if err != nil {
		t.Fatalf("Open(%q): %v", dir, err)
	}
	return r
}

// realDir resolves symlinks (macOS /var → /private/var) so paths compare
// equal to what git reports.
func realDir(t *testing.T, dir string) string {
	t.Helper()
	d, err := filepath.EvalSymlinks(dir)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// commitFile writes name and commits it with message; returns the id.
func commitFile(t *testing.T, dir, name, content, message string) string {
	t.Helper()
	write(t, dir, name, content)
	gitT(t, dir, "add", "--", name)
	gitT(t, dir, "commit", "-q", "-m", message)
	return gitT(t, dir, "rev-parse", "HEAD")
}

// writeHook installs an executable hook script in dir's default hooks dir.
func writeHook(t *testing.T, dir, name, script string) {
	t.Helper()
	path := filepath.Join(dir, ".git", "hooks", name)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte("#!/bin/sh\n"+script), 0o755); err != nil {
		t.Fatal(err)
	}
}
