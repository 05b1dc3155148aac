package cli

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/git-ralph/git-ralph/hooks"
	"github.com/git-ralph/git-ralph/internal/git"
	"github.com/git-ralph/git-ralph/internal/tell"
)

// hookCmd is what the shims in hooks/ run: `git ralph hook <name> [<git's hook
// arguments>…]`. Everything after the command is passed through unparsed, since it
// comes from git, not from a person.
type hookCmd struct {
	Args []string `arg:"" optional:"" help:"The hook's name and the arguments git gave it."`
}

func (c *hookCmd) Run(e *env) error {
	if len(c.Args) == 0 {
		return &usageError{msg: "missing hook name", hint: "git ralph hook <name> [<args>…] is what the installed hooks run; see 'git ralph hooks -h'"}
	}
	name, args := c.Args[0], c.Args[1:]
	if strings.HasPrefix(name, "-") {
		return &usageError{msg: fmt.Sprintf("%q is not a hook name", name), hint: "git ralph hook <name> [<args>…] is what the installed hooks run; see 'git ralph hooks -h'"}
	}
	if !hooks.Known(name) {
		// A shim newer than this binary: never block the user's git over it.
		fmt.Fprintf(e.s.Err, "git-ralph: this git-ralph has no %s hook; skipping it (update git-ralph, or remove the hook with: git ralph hooks uninstall)\n", name)
		return nil
	}
	site := openHookSite(e)
	switch name {
	case "pre-commit":
		return c.preCommit(e, site, args)
	case "pre-push":
		return c.prePush(e, site, args)
	default:
		return c.verify(e, site, args)
	}
}

// hookSite is the repository a hook runs in. Hooks also run in bare
// repositories (a push from a mirror), where git.Open refuses; config is then read
// with git config in the current directory, which is where git runs their hooks.
type hookSite struct {
	ctx  context.Context
	repo *git.Repo // nil in a bare repository, or outside any
	cwd  string
}

func openHookSite(e *env) *hookSite {
	h := &hookSite{ctx: e.ctx}
	h.cwd, _ = os.Getwd()
	if repo, err := git.Open(e.ctx, "."); err == nil {
		if e.verbose {
			repo.Trace = e.s.Err
		}
		h.repo = repo
	}
	return h
}

// root is where the project's files are: the worktree root.
func (h *hookSite) root() string {
	if h.repo != nil {
		return h.repo.Root
	}
	return h.cwd
}

func (h *hookSite) config(key string) (string, bool, error) {
	return git.ConfigGet(h.ctx, h.repo, key)
}

// configBool reads key as git reads a boolean.
func (h *hookSite) configBool(key string) (bool, error) {
	if h.repo != nil {
		v, _, err := h.repo.ConfigBool(h.ctx, key)
		return v, err
	}
	v, ok, err := h.config(key)
	if err != nil || !ok {
		return false, err
	}
	switch strings.ToLower(v) {
	case "", "true", "yes", "on", "1":
		return true, nil
	}
	return false, nil
}

// hooksDir is the directory git takes hooks from, where <name>.local is kept.
func (h *hookSite) hooksDir() (string, error) {
	if h.repo != nil {
		return h.repo.HooksDir(h.ctx)
	}
	dir, ok, err := h.config("core.hooksPath")
	if err != nil {
		return "", err
	}
	if !ok || dir == "" {
		return filepath.Join(h.cwd, "hooks"), nil
	}
	if rest, ok := strings.CutPrefix(dir, "~/"); ok {
		if home, err := os.UserHomeDir(); err == nil {
			dir = filepath.Join(home, rest)
		}
	}
	if !filepath.IsAbs(dir) {
		dir = filepath.Join(h.cwd, dir)
	}
	return dir, nil
}

// runLocal runs <name>.local, the user's own hook kept aside by install --force,
// when there is one; a refusal is returned as an error with its exit code.
func runLocal(e *env, h *hookSite, name string, args []string, stdin io.Reader) error {
	dir, err := h.hooksDir()
	if err != nil {
		return err
	}
	path, ok, err := hooks.LocalHook(dir, name)
	if err != nil || !ok {
		return err
	}
	code, err := hooks.RunLocal(hooks.Local{Path: path, Args: args, Env: os.Environ(), Stdin: stdin, Stdout: e.s.Out, Stderr: e.s.Err})
	if err != nil {
		return fmt.Errorf("run %s: %w", path, err)
	}
	if code != 0 {
		if code <= 0 || code > 125 {
			code = 1 // killed by a signal, or a code of the shell's own
		}
		verb := "refused"
		if name == "ralph-verify" {
			verb = "failed"
		}
		return &tell.Error{Msg: fmt.Sprintf("%s%s %s (exit %d)", name, hooks.LocalSuffix, verb, code), Code: code}
	}
	return nil
}

// preCommit refuses a commit made by the agent of a loop. git-ralph sets RALPH_AGENT
// for the agent process only; its own commits carry GIT_RALPH=1.
func (c *hookCmd) preCommit(e *env, h *hookSite, args []string) error {
	if err := runLocal(e, h, "pre-commit", args, e.s.In); err != nil {
		return err
	}
	if os.Getenv("RALPH_AGENT") == "" || os.Getenv("GIT_RALPH") == "1" {
		return nil
	}
	return &tell.Error{
		Msg: "commit refused: RALPH_AGENT is set, so this is the agent of a git ralph loop, and during a loop git-ralph makes the commits",
		Hint: "leave the changes uncommitted and end with <promise>COMPLETE</promise>: git-ralph commits them as the story's checkpoint\n" +
			"not an agent? unset RALPH_AGENT and commit again",
	}
}

// prePush refuses to publish ralph/* branches (and the refs/ralph/ namespace) unless
// ralph.allowPush is true. git writes the refs being pushed on stdin; the user's own
// pre-push.local gets the same lines.
func (c *hookCmd) prePush(e *env, h *hookSite, args []string) error {
	in, err := io.ReadAll(e.s.In)
	if err != nil {
		return fmt.Errorf("read the refs being pushed: %w", err)
	}
	if err := runLocal(e, h, "pre-push", args, bytes.NewReader(in)); err != nil {
		return err
	}
	if os.Getenv("GIT_RALPH") == "1" {
		return nil
	}
	updates, err := hooks.ParsePrePush(in)
	if err != nil {
		// Never lock anybody out over input we do not understand.
		fmt.Fprintf(e.s.Err, "git-ralph: pre-push: %v; not checking this push\n", err)
		return nil
	}
	refused := hooks.RalphUpdates(updates)
	if len(refused) == 0 {
		return nil
	}
	allow, err := h.configBool("ralph.allowPush")
	if err != nil {
		return fmt.Errorf("read ralph.allowPush: %w", err)
	}
	if allow {
		return nil
	}
	names := make([]string, len(refused))
	for i, u := range refused {
		names[i] = u.String()
	}
	remote := "the remote"
	if len(args) > 0 && args[0] != "" {
		remote = args[0]
	}
	return &tell.Error{
		Msg: fmt.Sprintf("refusing to push %s to %s: ralph/* branches are git ralph's local checkpoints", strings.Join(names, ", "), remote),
		Hint: "bring the work onto your branch with 'git ralph finish <change> --squash' and push that\n" +
			"or push it as a pull request: git ralph finish <change> --pr\n" +
			"or allow pushing them from this repository: git config ralph.allowPush true",
	}
}

// verify is the ralph-verify gate: ralph.verifyCommand, or the project's obvious
// test command. The loop runs it (as recorded before the attempt) after a COMPLETE; a non-zero
// exit fails the attempt, and the end of the output is the reason in the next prompt.
func (c *hookCmd) verify(e *env, h *hookSite, args []string) error {
	if err := runLocal(e, h, "ralph-verify", args, e.s.In); err != nil {
		return err
	}
	tc, ok, err := verifyCommand(h, e.s.Err)
	if err != nil {
		return err
	}
	if !ok {
		return nil
	}
	timeout, err := verifyTimeout(h)
	if err != nil {
		return err
	}
	shown := quoteArgv(tc.Argv)
	fmt.Fprintf(e.s.Err, "ralph-verify: running %s (%s)\n", shown, tc.From)
	res, err := hooks.RunCommand(e.ctx, hooks.Command{
		Argv: tc.Argv, Dir: h.root(), Env: hooks.VerifyEnv(os.Environ()),
		Stdout: e.s.Out, Stderr: e.s.Err, Timeout: timeout,
	})
	if hooks.NotFound(err) {
		return &tell.Error{Msg: fmt.Sprintf("ralph-verify: %s: %s is not on PATH", shown, tc.Argv[0]), Code: 127,
			Hint: "install it, or set the command to run: git config ralph.verifyCommand '<command>'"}
	}
	if err != nil {
		return &tell.Error{Msg: fmt.Sprintf("ralph-verify: %s: %v", shown, err), Code: 126,
			Hint: "check ralph.verifyCommand: git config ralph.verifyCommand '<command>'", Err: err}
	}
	switch {
	case res.Interrupted:
		return &tell.Error{Msg: fmt.Sprintf("ralph-verify: %s was interrupted", shown), Code: 130}
	case res.TimedOut:
		return &tell.Error{Msg: fmt.Sprintf("ralph-verify: %s timed out after %s and was stopped", shown, timeout), Code: 124,
			Hint: "allow it longer with git ralph start --verify-timeout, or git config ralph.verifyTimeout"}
	case res.ExitCode != 0:
		return &tell.Error{Msg: fmt.Sprintf("ralph-verify: %s failed (exit %d)", shown, res.ExitCode)}
	}
	fmt.Fprintf(e.s.Err, "ralph-verify: passed\n")
	return nil
}

// verifyCommand is ralph.verifyCommand, split into argv without a shell, or else the
// command Detect finds. ok is false when there is nothing to run, which it says.
func verifyCommand(h *hookSite, w io.Writer) (tc hooks.TestCommand, ok bool, err error) {
	v, set, err := h.config("ralph.verifyCommand")
	if err != nil {
		return tc, false, err
	}
	if set {
		argv, err := hooks.SplitWords(v)
		if err != nil {
			return tc, false, &tell.Error{Msg: "ralph.verifyCommand: " + err.Error(),
				Hint: "quote arguments as a shell would, e.g. git config ralph.verifyCommand \"go test -run 'Test(A|B)' ./...\"", Err: err}
		}
		if len(argv) == 0 {
			fmt.Fprintln(w, "ralph-verify: ralph.verifyCommand is empty; nothing to verify")
			return tc, false, nil
		}
		return hooks.TestCommand{Argv: argv, From: "ralph.verifyCommand"}, true, nil
	}
	tc, ok, err = hooks.Detect(h.root())
	if err != nil {
		return tc, false, fmt.Errorf("ralph-verify: look for the project's test command: %w", err)
	}
	if !ok {
		fmt.Fprintln(w, "ralph-verify: no test command found (no go.mod, Cargo.toml, package.json test script, Makefile test target, pyproject.toml or pytest.ini); nothing to verify. Set one with: git config ralph.verifyCommand '<command>'")
	}
	return tc, ok, nil
}

// verifyTimeout is RALPH_VERIFY_TIMEOUT (set by git ralph start --verify-timeout), else
// ralph.verifyTimeout; 0 means none.
func verifyTimeout(h *hookSite) (time.Duration, error) {
	v, from := os.Getenv("RALPH_VERIFY_TIMEOUT"), "RALPH_VERIFY_TIMEOUT"
	if v == "" {
		cv, ok, err := h.config("ralph.verifyTimeout")
		if err != nil {
			return 0, err
		}
		if !ok {
			return 0, nil
		}
		v, from = cv, "ralph.verifyTimeout"
	}
	d, err := time.ParseDuration(strings.TrimSpace(v))
	if err != nil || d < 0 {
		return 0, &tell.Error{Msg: fmt.Sprintf("%s: %q is not a duration", from, v), Hint: "give a Go duration such as 10m or 1h30m"}
	}
	return d, nil
}
