package git

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Hook runs the hook called name (for instance ralph-verify) the way git
// runs its own hooks, with env (KEY=VALUE) added to its environment, and
// returns its combined stdout and stderr (the last 64 KiB) and its exit
// code. A missing hook is exit code 0 with no output. err is non-nil only
// when the hook could not be run at all; a failing hook is not an error,
// it is exit code != 0.
//
// Unlike every other method, Hook stops the hook when ctx is cancelled
// (SIGINT to its process group, then SIGKILL): a verify hook may run a
// whole test suite, and Ctrl-C must not wait for it. It then returns
// exit code -1 and the context's error.
//
// git 2.36 and later run it with `git hook run --ignore-missing`, which
// honours core.hooksPath and any future hook configuration. Older gits
// have no `git hook`, so Hook runs the file HookExists finds, from the
// worktree root, as git would.
func (r *Repo) Hook(ctx context.Context, name string, env []string) (output string, exitCode int, err error) {
	if err := checkHookName(name); err != nil {
		return "", -1, err
	}
	c := call{env: env, combined: true, interruptible: true}
	if r.atLeast(ctx, 2, 36) {
		c.args = []string{"hook", "run", "--ignore-missing", name}
	} else {
		path, ok, err := r.hookFile(ctx, name)
		if err != nil {
			return "", -1, err
		}
		if !ok {
			return "", 0, nil
		}
		c.program = path
	}
	res := r.runOnce(ctx, c)
	output = string(res.stderr)
	if res.exitCode == -1 {
		if ctxErr := ctx.Err(); ctxErr != nil {
			return output, -1, fmt.Errorf("hook %s: %w", name, ctxErr)
		}
		return output, -1, fmt.Errorf("hook %s: %w", name, res.err)
	}
	return output, res.exitCode, nil
}

// HookExists reports whether an executable hook file called name is where
// git looks for it (core.hooksPath honoured).
func (r *Repo) HookExists(ctx context.Context, name string) (bool, error) {
	if err := checkHookName(name); err != nil {
		return false, err
	}
	_, ok, err := r.hookFile(ctx, name)
	return ok, err
}

// HooksDir returns the absolute directory git takes hooks from:
// core.hooksPath when set, else the common dir's hooks/. Open reads it,
// with the rest of the repository's layout, and every later git runs with
// core.hooksPath pinned to it: an agent that points core.hooksPath
// elsewhere during a run changes nothing git-ralph's git runs.
func (r *Repo) HooksDir(ctx context.Context) (string, error) {
	if dir := r.pinnedHooksDir(); dir != "" {
		return dir, nil
	}
	dir, err := r.gitPath(ctx, "hooks")
	if err != nil {
		return "", err
	}
	r.setHooksDir(dir)
	return dir, nil
}

// PinHooksDir makes dir the hooks directory every later git of this Repo runs with
// (core.hooksPath): the loop pins the one it recorded before an attempt, after
// restoring a config the agent had pointed elsewhere.
func (r *Repo) PinHooksDir(dir string) { r.setHooksDir(dir) }

func (r *Repo) pinnedHooksDir() string {
	r.hooksMu.Lock()
	defer r.hooksMu.Unlock()
	return r.hooksDir
}

func (r *Repo) setHooksDir(dir string) {
	r.hooksMu.Lock()
	defer r.hooksMu.Unlock()
	r.hooksDir = dir
}

// hookFile returns the path of hook name and whether it is an executable
// file there, which is git's own test for running a hook. Only the first
// call runs git (HooksDir); the file itself is looked at every time.
func (r *Repo) hookFile(ctx context.Context, name string) (string, bool, error) {
	dir, err := r.HooksDir(ctx)
	if err != nil {
		return "", false, err
	}
	path := filepath.Join(dir, name)
	fi, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return path, false, nil
	}
	if err != nil {
		return "", false, err
	}
	return path, fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0, nil
}

// gitPath resolves a path inside the git directory the way git does
// (rev-parse --git-path), which applies core.hooksPath and the split
// between per-worktree and common files.
func (r *Repo) gitPath(ctx context.Context, rel string) (string, error) {
	out, err := r.run(ctx, call{readOnly: true, args: []string{"rev-parse", "--path-format=absolute", "--git-path", rel}})
	if err != nil {
		return "", err
	}
	return strings.TrimSuffix(string(out), "\n"), nil
}

func checkHookName(name string) error {
	if name == "" || strings.HasPrefix(name, "-") || strings.ContainsAny(name, `/\`) || name == "." || name == ".." {
		return fmt.Errorf("invalid hook name %q", name)
	}
	return nil
}
