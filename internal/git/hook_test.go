package git

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

const verifyScript = `echo "story=$RALPH_STORY change=$RALPH_CHANGE ralph=$GIT_RALPH"
echo "to stderr" >&2
pwd
exit "${VERIFY_EXIT:-0}"
`

// The gate runs the hook as recorded, whatever the hooks directory holds when it
// starts: from the sealed copy and from the fallback's private one alike.
func TestRecordedHook(t *testing.T) {
	for _, tc := range []struct {
		name     string
		fallback bool
	}{
		{"sealed copy", false},
		{"private copy", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if !tc.fallback && runtime.GOOS == "linux" {
				sealedOnly = true
				t.Cleanup(func() { sealedOnly = false })
			}
			if tc.fallback {
				noSealedCopy = true
				t.Cleanup(func() { noSealedCopy = false })
			}
			dir, r := newRepo(t)
			ctx := t.Context()
			// What the hooks directory holds now is not what runs.
			writeHook(t, dir, "ralph-verify", "echo swapped\nexit 0\n")
			sub := filepath.Join(dir, "sub")
			if err := os.Mkdir(sub, 0o755); err != nil {
				t.Fatal(err)
			}
			script := []byte("#!/bin/sh\necho \"git_dir=$GIT_DIR common=$GIT_COMMON_DIR work=$GIT_WORK_TREE\"\n" + verifyScript)
			env := []string{"RALPH_STORY=1.2", "RALPH_CHANGE=login form"}
			out, code, err := r.RecordedHook(ctx, "ralph-verify", script, env)
			if err != nil || code != 0 {
				t.Fatalf("RecordedHook = %d, %v\n%s", code, err, out)
			}
			for _, want := range []string{"story=1.2 change=login form ralph=1", "to stderr", dir + "\n", "git_dir= common= work=\n"} {
				if !strings.Contains(out, want) {
					t.Errorf("output %q lacks %q", out, want)
				}
			}
			if strings.Contains(out, "swapped") {
				t.Errorf("the hook file on disk ran, not the recorded one: %q", out)
			}
			out, code, err = r.RecordedHook(ctx, "ralph-verify", script, append(env, "VERIFY_EXIT=3"))
			if err != nil || code != 3 || !strings.Contains(out, "story=1.2") {
				t.Errorf("failing hook = %q, %d, %v; want its output and exit 3", out, code, err)
			}
			// No #! line: /bin/sh runs it, as git does.
			out, code, err = r.RecordedHook(ctx, "ralph-verify", []byte("echo plain; exit 4\n"), nil)
			if err != nil || code != 4 || out != "plain\n" {
				t.Errorf("script without #! = %q, %d, %v; want plain, 4", out, code, err)
			}
			if _, _, err := r.RecordedHook(ctx, "../config", script, nil); err == nil {
				t.Error("RecordedHook accepted a path as a hook name")
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
	out, code, err := r.RecordedHook(t.Context(), "ralph-verify", []byte(read(t, dir, ".git/hooks/ralph-verify")), nil)
	if err != nil || code != 1 {
		t.Fatalf("Hook = %d, %v", code, err)
	}
	if len(out) != maxOutput || !strings.HasSuffix(out, "THE-END\n") {
		t.Errorf("output is %d bytes ending %q; want %d bytes ending in THE-END", len(out), out[max(0, len(out)-20):], maxOutput)
	}
}

func TestHookCancel(t *testing.T) {
	dir, r := newRepo(t)
	// The hook sleeps an hour: RecordedHook returning at all says the cancellation stopped it.
	writeHook(t, dir, "ralph-verify", "echo started\nsleep 3600\necho not reached\n")
	ctx, cancel := context.WithCancel(t.Context())
	time.AfterFunc(300*time.Millisecond, cancel)
	out, code, err := r.RecordedHook(ctx, "ralph-verify", []byte(read(t, dir, ".git/hooks/ralph-verify")), nil)
	if !errors.Is(err, context.Canceled) || code != -1 {
		t.Errorf("RecordedHook = %d, %v; want -1, context.Canceled", code, err)
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
