package git

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

const verifyScript = `echo "story=$RALPH_STORY change=$RALPH_CHANGE ralph=$GIT_RALPH"
echo "to stderr" >&2
pwd
exit "${VERIFY_EXIT:-0}"
`

func TestHook(t *testing.T) {
	for _, tc := range []struct {
		name string
		ver  version // zero: the installed git
	}{
		{"git hook run", version{}},
		{"git 2.31 fallback", version{2, 31}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir, r := newRepo(t)
			if tc.ver != (version{}) {
				r.version = tc.ver
			} else if !r.atLeast(t.Context(), 2, 36) {
				t.Skip("git hook run needs git 2.36")
			}
			ctx := t.Context()

			out, code, err := r.Hook(ctx, "ralph-verify", nil)
			if err != nil || code != 0 || out != "" {
				t.Errorf("missing hook: %q, %d, %v; want no output, 0, nil", out, code, err)
			}

			writeHook(t, dir, "ralph-verify", verifyScript)
			sub := filepath.Join(dir, "sub")
			if err := os.Mkdir(sub, 0o755); err != nil {
				t.Fatal(err)
			}
			env := []string{"RALPH_STORY=1.2", "RALPH_CHANGE=login form"}
			out, code, err = r.Hook(ctx, "ralph-verify", env)
			if err != nil || code != 0 {
				t.Fatalf("Hook = %d, %v", code, err)
			}
			for _, want := range []string{"story=1.2 change=login form ralph=1", "to stderr", dir + "\n"} {
				if !strings.Contains(out, want) {
					t.Errorf("output %q lacks %q", out, want)
				}
			}

			out, code, err = r.Hook(ctx, "ralph-verify", append(env, "VERIFY_EXIT=3"))
			if err != nil || code != 3 || !strings.Contains(out, "story=1.2") {
				t.Errorf("failing hook = %q, %d, %v; want its output and exit 3", out, code, err)
			}
		})
	}
}

func TestHookOutputBounded(t *testing.T) {
	dir, r := newRepo(t)
	// ~200 KiB of output ending in a marker: the tail must be kept.
	writeHook(t, dir, "ralph-verify", `i=0
while [ $i -lt 4000 ]; do echo "filler line number $i padded out to about fifty"; i=$((i+1)); done
echo THE-END
exit 1
`)
	out, code, err := r.Hook(t.Context(), "ralph-verify", nil)
	if err != nil || code != 1 {
		t.Fatalf("Hook = %d, %v", code, err)
	}
	if len(out) != maxOutput || !strings.HasSuffix(out, "THE-END\n") {
		t.Errorf("output is %d bytes ending %q; want %d bytes ending in THE-END", len(out), out[max(0, len(out)-20):], maxOutput)
	}
}

func TestHookCancel(t *testing.T) {
	dir, r := newRepo(t)
	// The hook sleeps an hour: Hook returning at all says the cancellation stopped it.
	writeHook(t, dir, "ralph-verify", "echo started\nsleep 3600\necho not reached\n")
	ctx, cancel := context.WithCancel(t.Context())
	time.AfterFunc(300*time.Millisecond, cancel)
	out, code, err := r.Hook(ctx, "ralph-verify", nil)
	if !errors.Is(err, context.Canceled) || code != -1 {
		t.Errorf("Hook = %d, %v; want -1, context.Canceled", code, err)
	}
	if strings.Contains(out, "not reached") {
		t.Errorf("hook ran to the end: %q", out)
	}
}

func TestHookExists(t *testing.T) {
	dir, r := newRepo(t)
	ctx := t.Context()
	if ok, err := r.HookExists(ctx, "pre-commit"); ok || err != nil {
		t.Errorf("HookExists(missing) = %v, %v", ok, err)
	}
	writeHook(t, dir, "pre-commit", "exit 0\n")
	if ok, err := r.HookExists(ctx, "pre-commit"); !ok || err != nil {
		t.Errorf("HookExists(present) = %v, %v", ok, err)
	}
	if err := os.Chmod(filepath.Join(dir, ".git", "hooks", "pre-commit"), 0o644); err != nil {
		t.Fatal(err)
	}
	if ok, err := r.HookExists(ctx, "pre-commit"); ok || err != nil {
		t.Errorf("HookExists(not executable) = %v, %v; git would not run it", ok, err)
	}
	if _, err := r.HookExists(ctx, "../config"); err == nil {
		t.Errorf("HookExists accepted a path")
	}

	hooksDir, err := r.HooksDir(ctx)
	if err != nil || hooksDir != filepath.Join(dir, ".git", "hooks") {
		t.Errorf("HooksDir = %q, %v", hooksDir, err)
	}
}

func TestHooksPathHonoured(t *testing.T) {
	dir, r := newRepo(t, "core.hooksPath", "custom-hooks")
	ctx := t.Context()
	hooksDir, err := r.HooksDir(ctx)
	if want := filepath.Join(dir, "custom-hooks"); err != nil || hooksDir != want {
		t.Fatalf("HooksDir = %q, %v; want %q", hooksDir, err, want)
	}
	write(t, dir, "custom-hooks/ralph-verify", "#!/bin/sh\necho from custom\n")
	if err := os.Chmod(filepath.Join(dir, "custom-hooks", "ralph-verify"), 0o755); err != nil {
		t.Fatal(err)
	}
	if ok, err := r.HookExists(ctx, "ralph-verify"); !ok || err != nil {
		t.Errorf("HookExists = %v, %v", ok, err)
	}
	for _, v := range []version{{}, {2, 31}} {
		r.version = v
		out, code, err := r.Hook(ctx, "ralph-verify", nil)
		if err != nil || code != 0 || out != "from custom\n" {
			t.Errorf("git %v: Hook = %q, %d, %v", v, out, code, err)
		}
	}
}

// The loop looks for the verify hook after every story: only the first look runs git.
func TestHookExistsAsksGitOnce(t *testing.T) {
	dir, r := newRepo(t)
	ctx := t.Context()
	if ok, err := r.HookExists(ctx, "ralph-verify"); ok || err != nil {
		t.Fatalf("HookExists(missing) = %v, %v", ok, err)
	}
	calls := r.Calls.Load()
	writeHook(t, dir, "ralph-verify", "exit 0\n")
	for range 3 {
		if ok, err := r.HookExists(ctx, "ralph-verify"); !ok || err != nil {
			t.Fatalf("HookExists(present) = %v, %v", ok, err)
		}
	}
	if n := r.Calls.Load() - calls; n != 0 {
		t.Errorf("HookExists ran git %d times after the first call, want 0", n)
	}
}
