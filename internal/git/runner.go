package git

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

const (
	// maxOutput bounds what is kept of a child's stderr (and of combined
	// output for commands that run hooks): a chatty hook must not grow our
	// memory without limit, and the end of its output is what explains a
	// failure.
	maxOutput = 64 << 10

	// lockRetries and lockFirstDelay bound the index.lock retry: six tries
	// over about 1.3 s. Contention comes from a concurrent git (an editor's
	// background status, a prompt) that holds the lock for milliseconds; a
	// lock that lasts longer is a stale file or a real conflict, which the
	// user must see.
	lockRetries    = 6
	lockFirstDelay = 20 * time.Millisecond

	// pipeGrace is how long we wait, after git exits, for its pipes to
	// close. A hook that starts a background process which inherits stdout
	// would otherwise block us until that process ends.
	pipeGrace = time.Second

	// interruptGrace is how long an interrupted hook gets between SIGINT and
	// SIGKILL.
	interruptGrace = 3 * time.Second
)

// scrubbedEnv lists the variables removed from every child's environment.
// git exports them to hooks, so when git-ralph itself runs under a hook (or
// a user runs it from one) they would pin our git to the wrong repository,
// worktree or index.
var scrubbedEnv = []string{"GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_PREFIX", "GIT_COMMON_DIR"}

// tokenEnv are the GitHub tokens in git-ralph's own environment (agent.SecretEnv).
// Only a git that talks to a remote gets them (a credential helper such as gh's reads
// GH_TOKEN): any other child's /proc environ is readable to the processes of the user
// while it runs, an agent left running included where there is no sandbox.
var tokenEnv = []string{"GH_TOKEN", "GITHUB_TOKEN", "GH_ENTERPRISE_TOKEN", "GITHUB_ENTERPRISE_TOKEN"}

// call describes one child process.
type call struct {
	args []string
	// program is the executable; "" means git. Only the hook fallback for
	// git < 2.36 runs anything else.
	program string
	// dir overrides the working directory; "" means Repo.Root. Only Open
	// needs it, before Root is known.
	dir string
	// stdin is fed to the child; nil means no stdin (/dev/null). Kept as
	// bytes so that an index.lock retry can feed it again.
	stdin []byte
	// env is added to the environment (KEY=VALUE).
	env []string
	// readOnly adds GIT_OPTIONAL_LOCKS=0.
	readOnly bool
	// remote: the command talks to a remote (push, fetch, ls-remote), and keeps the
	// GitHub tokens every other child loses (tokenEnv).
	remote bool
	// combined sends stdout and stderr to the same bounded buffer, in the
	// order they were written. Used where hooks run, since hooks print to
	// either stream and a refusal must carry all of it.
	combined bool
	// interruptible makes context cancellation stop the child's process
	// group (SIGINT, then SIGKILL). Only for user code of unbounded
	// duration; see the package doc.
	interruptible bool
	// extra is passed to the child as its fd 3 (a sealed hook to run).
	extra *os.File
	// show is what --verbose prints for program (a hook's path, not the copy's).
	show string
	// stdout, when set, receives the child's stdout as it comes instead of
	// a buffer (run then returns nil output): for output too large to hold,
	// which the writer bounds. Only for read-only commands, which are never
	// retried.
	stdout io.Writer
	// start, when set, starts the child instead of cmd.Start and returns the command
	// to wait for (a hook run in the caller's sandbox: SandboxedHook).
	start Starter
	// base, when set, is the environment the child's is made from instead of
	// os.Environ() (the caller's, without its secrets).
	base []string
}

// Starter starts cmd (made, not started) some other way than cmd.Start, and returns
// the command that runs it, to be waited for: the loop's starts a hook in the sandbox.
type Starter func(cmd *exec.Cmd) (*exec.Cmd, error)

// result is what one child produced.
type result struct {
	stdout   []byte // nil when combined
	stderr   []byte // bounded; stdout+stderr when combined
	exitCode int    // -1 when it never ran or was killed by a signal
	err      error  // nil on exit 0
}

// run runs git and returns its stdout. A non-zero exit, or a failure to
// start, is an *Error. index.lock contention is retried briefly.
func (r *Repo) run(ctx context.Context, c call) ([]byte, error) {
	delay := lockFirstDelay
	for attempt := 1; ; attempt++ {
		res := r.runOnce(ctx, c)
		if res.err == nil {
			if c.combined {
				return res.stderr, nil
			}
			return res.stdout, nil
		}
		gerr := &Error{
			Args:     c.args,
			ExitCode: res.exitCode,
			Stderr:   strings.TrimSpace(string(res.stderr)),
			Err:      res.err,
		}
		if attempt >= lockRetries || !indexLockContention(gerr) && !worktreeBeingMade(gerr) {
			return nil, gerr
		}
		t := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, gerr
		case <-t.C:
		}
		delay *= 2
	}
}

// indexLockContention reports whether git failed because another process
// holds the index lock. This is the single place where git-ralph looks at
// error text: git has no exit code for it, and the file name "index.lock"
// appears untranslated in every locale.
func indexLockContention(e *Error) bool {
	return e.ExitCode == 128 && strings.Contains(e.Stderr, "index.lock")
}

// worktreeBeingMade reports whether git died reading the files of a linked worktree
// another process is still writing (a user's `git worktree add` at the same moment): git
// did nothing, so trying again is safe. It matches the untranslated path in git's message.
func worktreeBeingMade(e *Error) bool {
	return e.ExitCode == 128 && strings.Contains(e.Stderr, "/worktrees/") &&
		(strings.Contains(e.Stderr, "/commondir") || strings.Contains(e.Stderr, "/gitdir") || strings.Contains(e.Stderr, "/HEAD"))
}

// runOnce starts one child and waits for it. The context is only checked
// before the start (see the package doc for why git is not killed).
func (r *Repo) runOnce(ctx context.Context, c call) result {
	if err := ctx.Err(); err != nil {
		return result{exitCode: -1, err: err}
	}
	program := c.program
	if program == "" {
		program = "git"
	}
	traced := c
	if c.program == "" {
		if r.NoAutoGC {
			c.args = append([]string{"-c", "gc.auto=0"}, c.args...)
		}
		traced = c
		// The safety overrides are the same on every line: --verbose leaves
		// them out so that it stays readable.
		c.args = append(r.safetyArgs(), c.args...)
		if c.dir == "" && r.GitDir != "" {
			// Where the repository is, named on every call rather than read from files the agent
			// can rewrite; a foreign commondir stops the call (docs/GIT.md, "Where git runs").
			if err := r.checkCommonDir(); err != nil {
				return result{exitCode: -1, err: err}
			}
			c.args = append(r.locationArgs(), c.args...)
			c.env = append(slices.Clone(c.env), "GIT_COMMON_DIR="+r.CommonDir)
		}
	}
	cmd := exec.Command(program, c.args...)
	cmd.Dir = c.dir
	if cmd.Dir == "" {
		cmd.Dir = r.Root
	}
	base := c.base
	if base == nil {
		base = os.Environ()
	}
	cmd.Env = childEnv(base, c)
	if c.extra != nil {
		cmd.ExtraFiles = []*os.File{c.extra}
	}
	cmd.SysProcAttr = newProcAttr()
	cmd.WaitDelay = pipeGrace
	if c.stdin != nil {
		cmd.Stdin = bytes.NewReader(c.stdin)
	}
	var stdout bytes.Buffer
	stderr := &tailBuffer{max: maxOutput}
	if c.combined {
		// The same pointer for both: os/exec then shares one pipe, which
		// keeps the interleaving in the order the child wrote it.
		cmd.Stdout, cmd.Stderr = stderr, stderr
	} else {
		cmd.Stdout, cmd.Stderr = &stdout, stderr
		if c.stdout != nil {
			cmd.Stdout = c.stdout
		}
	}

	if c.show != "" {
		r.trace(c.show, call{env: c.env})
	} else {
		r.trace(program, traced)
	}
	r.Calls.Add(1)
	if c.start != nil {
		started, err := c.start(cmd)
		if err != nil {
			return result{exitCode: -1, err: err}
		}
		started.WaitDelay = cmd.WaitDelay
		cmd = started
	} else if err := cmd.Start(); err != nil {
		return result{exitCode: -1, err: err}
	}
	var stop func()
	if c.interruptible {
		stop = interruptOnDone(ctx, cmd.Process.Pid)
	}
	err := cmd.Wait()
	if stop != nil {
		stop()
	}
	if errors.Is(err, exec.ErrWaitDelay) {
		// git exited 0 but something it started still holds our pipe
		// (a backgrounded hook job). git's own work is done.
		err = nil
	}
	res := result{stderr: stderr.Bytes(), exitCode: cmd.ProcessState.ExitCode(), err: err}
	if !c.combined {
		res.stdout = stdout.Bytes()
	}
	if err == nil {
		res.exitCode = 0
	}
	return res
}

// safetyArgs are the -c overrides every git git-ralph runs carries, so that what an agent
// writes into the config cannot make git-ralph's git run its program: core.fsmonitor=false
// and core.hooksPath pinned to the hooks directory Open found. Why these and not the other
// keys: docs/GIT.md, "What the config cannot make git-ralph's git do".
func (r *Repo) safetyArgs() []string {
	args := []string{"-c", "core.fsmonitor=false"}
	if r.hookRunner() != nil {
		args = append(args, "-c", "core.hooksPath="+os.DevNull) // RunHooksWith runs them
	} else if dir := r.pinnedHooksDir(); dir != "" {
		args = append(args, "-c", "core.hooksPath="+dir)
	}
	return args
}

// locationArgs name the git directory and the work tree Open found, so that no file
// the agent can write (a .git file, a commondir, core.worktree) decides where
// git-ralph's git runs. Like safetyArgs, --verbose leaves them out of its trace.
func (r *Repo) locationArgs() []string {
	return []string{"--git-dir=" + r.GitDir, "--work-tree=" + r.Root}
}

// checkCommonDir refuses a git directory whose commondir file, read now, no longer
// names the common directory Open found (checkLayout): the agent wrote one. A stat, or
// for a linked worktree a read of a few bytes, before each git.
func (r *Repo) checkCommonDir() error {
	file := filepath.Join(r.GitDir, "commondir")
	if r.GitDir == r.CommonDir {
		if _, err := os.Lstat(file); err == nil {
			return fmt.Errorf("%w: %s appeared, pointing this checkout elsewhere", ErrForeignCommonDir, file)
		}
		return nil
	}
	b, err := os.ReadFile(file)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrForeignCommonDir, err)
	}
	dir := strings.TrimRight(string(b), "\r\n")
	if !filepath.IsAbs(dir) {
		dir = filepath.Join(r.GitDir, dir)
	}
	if !SamePath(dir, r.CommonDir) {
		return fmt.Errorf("%w: %s points this checkout at %s", ErrForeignCommonDir, file, dir)
	}
	return nil
}

// childEnv builds a child's environment from base (os.Environ()): the
// scrubbed variables and every variable that c sets are removed first, so
// each key appears once.
func childEnv(base []string, c call) []string {
	set := []string{"GIT_RALPH=1"}
	if c.readOnly {
		set = append(set, "GIT_OPTIONAL_LOCKS=0")
	}
	set = append(set, c.env...)

	drop := make(map[string]bool, len(scrubbedEnv)+len(tokenEnv)+len(set))
	for _, k := range scrubbedEnv {
		drop[k] = true
	}
	if !c.remote {
		for _, k := range tokenEnv {
			drop[k] = true
		}
	}
	for _, kv := range set {
		k, _, _ := strings.Cut(kv, "=")
		drop[k] = true
	}
	env := make([]string, 0, len(base)+len(set))
	for _, kv := range base {
		k, _, _ := strings.Cut(kv, "=")
		if !drop[k] {
			env = append(env, kv)
		}
	}
	return append(env, set...)
}

// trace echoes the command for --verbose, with the variables the call adds
// (GIT_INDEX_FILE, hook variables) so the line can be pasted into a shell;
// only the safety overrides (safetyArgs) are left out.
func (r *Repo) trace(program string, c call) {
	if r.Trace == nil {
		return
	}
	var b strings.Builder
	b.WriteString("$ ")
	for _, kv := range c.env {
		b.WriteString(shellQuote(kv))
		b.WriteByte(' ')
	}
	b.WriteString(shellQuote(program))
	for _, a := range c.args {
		b.WriteByte(' ')
		b.WriteString(shellQuote(a))
	}
	b.WriteByte('\n')
	fmt.Fprint(r.Trace, b.String())
}

// shellQuote quotes s for display only; nothing here is ever run by a shell.
func shellQuote(s string) string {
	if s == "" {
		return "''"
	}
	safe := true
	for _, ch := range s {
		if !(ch >= 'a' && ch <= 'z' || ch >= 'A' && ch <= 'Z' || ch >= '0' && ch <= '9' ||
			strings.ContainsRune("-_./:=@%+,^{}~", ch)) {
			safe = false
			break
		}
	}
	if safe {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// tailBuffer is an io.Writer that keeps only the last max bytes written.
type tailBuffer struct {
	max int
	buf []byte
}

var _ io.Writer = (*tailBuffer)(nil)

func (t *tailBuffer) Write(p []byte) (int, error) {
	n := len(p)
	if len(p) >= t.max {
		t.buf = append(t.buf[:0], p[len(p)-t.max:]...)
		return n, nil
	}
	if over := len(t.buf) + len(p) - t.max; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
	}
	t.buf = append(t.buf, p...)
	return n, nil
}

// Bytes returns the kept tail.
func (t *tailBuffer) Bytes() []byte { return t.buf }
