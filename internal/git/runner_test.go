package git

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestIndexLockRetry(t *testing.T) {
	dir, r := newRepo(t)
	lock := filepath.Join(r.GitDir, "index.lock")
	write(t, dir, "b.txt", "b\n")

	t.Run("released", func(t *testing.T) {
		if err := os.WriteFile(lock, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		time.AfterFunc(100*time.Millisecond, func() { _ = os.Remove(lock) })
		before := r.Calls.Load()
		if err := r.AddAll(t.Context()); err != nil {
			t.Fatalf("AddAll with a briefly held lock: %v", err)
		}
		if n := r.Calls.Load() - before; n < 2 {
			t.Errorf("ran git %d times, want a retry", n)
		}
	})

	t.Run("held", func(t *testing.T) {
		if err := os.WriteFile(lock, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = os.Remove(lock) })
		before := r.Calls.Load()
		err := r.AddAll(t.Context())
		var gerr *Error
		if !errors.As(err, &gerr) || gerr.ExitCode != 128 {
			t.Fatalf("AddAll with a stuck lock = %v, want *Error exit 128", err)
		}
		if n := r.Calls.Load() - before; n != lockRetries {
			t.Errorf("ran git %d times, want %d", n, lockRetries)
		}
	})

	t.Run("other failures are not retried", func(t *testing.T) {
		before := r.Calls.Load()
		if err := r.HardReset(t.Context(), "no-such-commit"); err == nil {
			t.Fatal("HardReset(bad) succeeded")
		}
		if n := r.Calls.Load() - before; n != 1 {
			t.Errorf("ran git %d times, want 1", n)
		}
	})
}

func TestCancelledContextRunsNothing(t *testing.T) {
	_, r := newRepo(t)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	before := r.Calls.Load()
	err := r.AddAll(ctx)
	if !errors.Is(err, context.Canceled) {
		t.Errorf("AddAll(cancelled) = %v, want context.Canceled", err)
	}
	var gerr *Error
	if !errors.As(err, &gerr) || gerr.ExitCode != -1 {
		t.Errorf("AddAll(cancelled) = %#v, want *Error exit -1", err)
	}
	if r.Calls.Load() != before {
		t.Errorf("git ran despite the cancelled context")
	}
}

func TestScrubbedEnvironment(t *testing.T) {
	dir, r := newRepo(t)
	// As if git-ralph ran from a hook of another repository.
	other := t.TempDir()
	gitT(t, other, "init", "-q")
	t.Setenv("GIT_DIR", filepath.Join(other, ".git"))
	t.Setenv("GIT_WORK_TREE", other)
	t.Setenv("GIT_INDEX_FILE", filepath.Join(other, ".git", "index"))
	t.Setenv("GIT_PREFIX", "sub/")

	head, err := r.Head(t.Context())
	if err != nil {
		t.Fatalf("Head with a foreign GIT_DIR: %v", err)
	}
	unsetenv(t, "GIT_DIR")
	unsetenv(t, "GIT_WORK_TREE")
	if want := gitT(t, dir, "rev-parse", "HEAD"); head != want {
		t.Errorf("Head = %s, want this repository's %s", head, want)
	}
}

func TestChildEnv(t *testing.T) {
	base := []string{"PATH=/bin", "GIT_DIR=/x", "GIT_WORK_TREE=/y", "GIT_INDEX_FILE=/z", "GIT_PREFIX=p/",
		"GIT_RALPH=0", "GIT_OPTIONAL_LOCKS=1", "RALPH_STORY=old", "HOME=/h"}
	got := childEnv(base, call{readOnly: true, env: []string{"RALPH_STORY=2"}})
	want := []string{"PATH=/bin", "HOME=/h", "GIT_RALPH=1", "GIT_OPTIONAL_LOCKS=0", "RALPH_STORY=2"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("childEnv(read-only) = %q, want %q", got, want)
	}
	got = childEnv(base, call{env: []string{"GIT_INDEX_FILE=/tmp/i"}})
	want = []string{"PATH=/bin", "GIT_OPTIONAL_LOCKS=1", "RALPH_STORY=old", "HOME=/h", "GIT_RALPH=1", "GIT_INDEX_FILE=/tmp/i"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("childEnv(mutating) = %q, want %q", got, want)
	}
}

func TestTrace(t *testing.T) {
	_, r := newRepo(t)
	var buf bytes.Buffer
	r.Trace = &buf
	if _, err := r.Status(t.Context()); err != nil {
		t.Fatal(err)
	}
	if _, err := r.SaveAttempt(t.Context(), "HEAD", "refs/ralph/x/attempts/1-1", "it's saved"); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if lines[0] != "$ git status --porcelain=v1 -z --untracked-files=all --ignore-submodules=dirty" {
		t.Errorf("first trace line = %q", lines[0])
	}
	if !strings.HasPrefix(lines[1], "$ GIT_INDEX_FILE="+filepath.Join(r.GitDir, "ralph-index-")) || !strings.HasSuffix(lines[1], " git add -A") {
		t.Errorf("second trace line = %q", lines[1])
	}
}

func TestErrorMessage(t *testing.T) {
	tests := []struct {
		err  *Error
		want string
	}{
		{&Error{Args: []string{"commit", "-q"}, ExitCode: 1, Stderr: "hook said no\nmore"}, "git commit: hook said no"},
		{&Error{Args: []string{"-c", "a=b", "merge", "x"}, ExitCode: 1}, "git merge: exit status 1"},
		{&Error{Args: []string{"add"}, ExitCode: -1, Err: context.Canceled}, "git add: context canceled"},
	}
	for _, tt := range tests {
		if got := tt.err.Error(); got != tt.want {
			t.Errorf("Error() = %q, want %q", got, tt.want)
		}
	}
	var err error = &Error{Args: []string{"add"}, ExitCode: -1, Err: context.Canceled}
	if !errors.Is(err, context.Canceled) {
		t.Errorf("Unwrap does not reach the cause")
	}
}

func TestTailBuffer(t *testing.T) {
	tb := &tailBuffer{max: 5}
	for _, s := range []string{"ab", "cd", "efg"} {
		if n, err := tb.Write([]byte(s)); n != len(s) || err != nil {
			t.Fatalf("Write = %d, %v", n, err)
		}
	}
	if got := string(tb.Bytes()); got != "cdefg" {
		t.Errorf("tail = %q, want cdefg", got)
	}
	if _, err := tb.Write([]byte("0123456789")); err != nil {
		t.Fatal(err)
	}
	if got := string(tb.Bytes()); got != "56789" {
		t.Errorf("tail = %q, want 56789", got)
	}
}

func TestShellQuote(t *testing.T) {
	for in, want := range map[string]string{
		"status":           "status",
		"--format=%H%x00":  "--format=%H%x00",
		"a b":              "'a b'",
		"it's":             `'it'\''s'`,
		"":                 "''",
		"HEAD^{commit}":    "HEAD^{commit}",
		"refs/ralph/x/1-1": "refs/ralph/x/1-1",
	} {
		if got := shellQuote(in); got != want {
			t.Errorf("shellQuote(%q) = %q, want %q", in, got, want)
		}
	}
}

// Only a git that talks to a remote gets git-ralph's GitHub tokens: any other child's
// environment is readable in /proc to the user's processes while it runs.
func TestChildEnvKeepsTokensForRemotesOnly(t *testing.T) {
	base := []string{"PATH=/bin", "GH_TOKEN=a", "GITHUB_TOKEN=b", "GH_ENTERPRISE_TOKEN=c", "GITHUB_ENTERPRISE_TOKEN=d", "OTHER=e"}
	got := childEnv(base, call{args: []string{"commit"}})
	if want := []string{"PATH=/bin", "OTHER=e", "GIT_RALPH=1"}; !slices.Equal(got, want) {
		t.Errorf("childEnv(commit) = %q, want %q", got, want)
	}
	got = childEnv(base, call{remote: true, args: []string{"push"}})
	if want := append(slices.Clone(base), "GIT_RALPH=1"); !slices.Equal(got, want) {
		t.Errorf("childEnv(push) = %q, want %q", got, want)
	}
}
