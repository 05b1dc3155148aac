package git

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// RecordedHook runs script, the content of hook name as the caller recorded it, not what
// the hooks directory holds now: as git runs a hook, from a copy no one can change, with env
// added, stopped on ctx's cancellation; git exports nothing to it ($0 is the copy's path).
// Output and exit code are Hook's. Why: docs/GIT.md, "Hooks as recorded".
func (r *Repo) RecordedHook(ctx context.Context, name string, script []byte, env []string) (output string, exitCode int, err error) {
	if err := checkHookName(name); err != nil {
		return "", -1, err
	}
	c := call{env: env, combined: true, interruptible: true, show: filepath.Join(r.pinnedHooksDir(), name)}
	res, ran := r.runSealed(ctx, c, name, script)
	if !ran && sealedOnly {
		return "", -1, errors.New("no sealed copy") // tests: the fallback is not wanted
	}
	if !ran {
		// No sealed copy here (another system, or a kernel that will not execute one):
		// a private copy, made for this run alone.
		dir, err := os.MkdirTemp("", "git-ralph-hook-")
		if err != nil {
			return "", -1, err
		}
		defer os.RemoveAll(dir)
		c.program = filepath.Join(dir, name)
		if err := os.WriteFile(c.program, script, 0o700); err != nil {
			return "", -1, err
		}
		res = r.runOnce(ctx, c)
		if isExecFormat(res.err) {
			c.args, c.program = []string{c.program}, "/bin/sh"
			res = r.runOnce(ctx, c)
		}
	}
	return hookOutcome(ctx, name, res)
}

// ScratchEnv is what lets a hook whose git directory is read-only to it (a sandbox's)
// still run the git that hooks run (the pre-commit framework's write-tree, its stash of
// what is not staged): a copy of the index and an object directory of its own in dir,
// the repository's objects as its alternate. What they write there goes with dir.
func (r *Repo) ScratchEnv(dir string) ([]string, error) {
	index := filepath.Join(dir, "index")
	data, err := os.ReadFile(filepath.Join(r.GitDir, "index"))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	if err == nil {
		if err := os.WriteFile(index, data, 0o600); err != nil {
			return nil, err
		}
	}
	objects := filepath.Join(dir, "objects")
	if err := os.Mkdir(objects, 0o700); err != nil {
		return nil, err
	}
	return []string{"GIT_INDEX_FILE=" + index, "GIT_OBJECT_DIRECTORY=" + objects,
		"GIT_ALTERNATE_OBJECT_DIRECTORIES=" + filepath.Join(r.CommonDir, "objects")}, nil
}

// HookRunner runs hook name (its file at path) of repository r in git's stead, with
// git's arguments, input and environment additions, and returns its output and exit
// status.
type HookRunner func(ctx context.Context, r *Repo, name, path string, args []string, stdin []byte, env []string) (output string, exitCode int, err error)

// RunHooksWith makes every later git of r run no hook itself (core.hooksPath is
// /dev/null): the hooks of git's that git-ralph runs over what an agent wrote go
// through h instead (a sandbox). Push runs pre-push through it before it pushes, a
// refusal stopping the push; Checkout runs post-checkout, MergeSquash post-merge after
// them, their exit status ignored as git ignores it. Other hooks do not run.
func (r *Repo) RunHooksWith(h HookRunner) {
	r.hooksMu.Lock()
	defer r.hooksMu.Unlock()
	r.hooks = h
}

// RunHooksLike gives r the hook runner o has (none, if o has none): another checkout of
// the same finish.
func (r *Repo) RunHooksLike(o *Repo) { r.RunHooksWith(o.hookRunner()) }

func (r *Repo) hookRunner() HookRunner {
	r.hooksMu.Lock()
	defer r.hooksMu.Unlock()
	return r.hooks
}

// postHook runs hook name with args through the hook runner, if one is set and git
// would run the hook; its outcome is ignored, as git ignores a post-* hook's.
func (r *Repo) postHook(ctx context.Context, name string, args ...string) {
	h := r.hookRunner()
	if h == nil {
		return
	}
	if path, ok, err := r.hookFile(ctx, name); err == nil && ok {
		_, _, _ = h(ctx, r, name, path, args, nil, nil)
	}
}

// SandboxedHookFile runs the hook file at path as git would run hook name, with args
// and stdin, but started by start (the caller's sandbox) from base plus env. The file
// is opened inside the sandbox (/bin/sh execs it), so a link in its path leads only
// where the sandbox may read; /bin/sh runs a file with no #! line, as git does.
func (r *Repo) SandboxedHookFile(ctx context.Context, name, path string, args []string, stdin []byte, base, env []string, start Starter) (output string, exitCode int, err error) {
	if err := checkHookName(name); err != nil {
		return "", -1, err
	}
	c := call{env: env, base: base, combined: true, interruptible: true, start: start, stdin: stdin,
		show: path, program: "/bin/sh", args: append([]string{"-c", `exec "$0" "$@"`, path}, args...)}
	return hookOutcome(ctx, name, r.runOnce(ctx, c))
}

// SandboxedHook runs script, hook name as the caller recorded it, the way RecordedHook
// does, but started by start (the caller's sandbox) with args, from an environment
// made from base instead of git-ralph's own: from a private copy of script (a sealed
// copy's /proc/self/fd/3 is no path a sandbox's start can check), with /bin/sh when it
// has no #! line (git's own fallback, decided before the start: a sandboxed exec must
// not fail).
func (r *Repo) SandboxedHook(ctx context.Context, name string, script []byte, args, base, env []string, start Starter) (output string, exitCode int, err error) {
	if err := checkHookName(name); err != nil {
		return "", -1, err
	}
	dir, err := os.MkdirTemp("", "git-ralph-hook-")
	if err != nil {
		return "", -1, err
	}
	defer os.RemoveAll(dir)
	copyPath := filepath.Join(dir, name)
	if err := os.WriteFile(copyPath, script, 0o500); err != nil {
		return "", -1, err
	}
	c := call{env: env, base: base, combined: true, interruptible: true, start: start,
		show: filepath.Join(r.pinnedHooksDir(), name), program: copyPath, args: args}
	if !strings.HasPrefix(string(script), "#!") {
		c.program, c.args = "/bin/sh", append([]string{copyPath}, args...)
	}
	return hookOutcome(ctx, name, r.runOnce(ctx, c))
}

// hookOutcome is a hook's run as the hook functions return it: its output, its exit
// status, and an error when it did not run to an exit (ctx's, or the start's).
func hookOutcome(ctx context.Context, name string, res result) (string, int, error) {
	output := string(res.stderr)
	if res.exitCode == -1 {
		if ctxErr := ctx.Err(); ctxErr != nil {
			return output, -1, fmt.Errorf("hook %s: %w", name, ctxErr)
		}
		return output, -1, fmt.Errorf("hook %s: %w", name, res.err)
	}
	return output, res.exitCode, nil
}

// runSealed runs c from a sealed copy of script, passed to the child as its fd 3
// (/proc/self/fd/3), with /bin/sh when it has no #! line. ran is false when no sealed
// copy could be made or executed.
func (r *Repo) runSealed(ctx context.Context, c call, name string, script []byte) (res result, ran bool) {
	if noSealedCopy {
		return result{}, false
	}
	f, err := sealedCopy(name, script)
	if err != nil {
		return result{}, false
	}
	defer f.Close()
	c.extra, c.program = f, "/proc/self/fd/3"
	res = r.runOnce(ctx, c)
	if isExecFormat(res.err) {
		c.args, c.program = []string{"/proc/self/fd/3"}, "/bin/sh"
		res = r.runOnce(ctx, c)
	}
	if res.exitCode == -1 && ctx.Err() == nil && !isExecFormat(res.err) && errors.Is(res.err, fs.ErrPermission) {
		return result{}, false // vm.memfd_noexec forbids it
	}
	return res, true
}

// noSealedCopy and sealedOnly let tests take RecordedHook's fallback, or refuse it.
var noSealedCopy, sealedOnly bool

// isExecFormat reports a start that failed because the file is no executable the
// kernel knows (a script without #!), which git runs with /bin/sh.
func isExecFormat(err error) bool { return errors.Is(err, syscall.ENOEXEC) }

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
