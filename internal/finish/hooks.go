package finish

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"

	"github.com/git-ralph/git-ralph/internal/agent"
	"github.com/git-ralph/git-ralph/internal/git"
	"github.com/git-ralph/git-ralph/internal/gitdir"
	"github.com/git-ralph/git-ralph/internal/sandbox"
)

// Hooks runs the hooks of a finish's git (post-checkout, post-merge, pre-push) in the
// verify gate's sandbox over the working tree of the repository whose git runs them
// (git.Repo.RunHooksWith), since they read what the agent wrote: the pre-commit
// framework runs what the agent's .pre-commit-config.yaml says, and husky's hooks are
// files of the tree. show gets what a hook printed. nil, for git to run them as always,
// where the gate itself runs outside: no sandbox, or ralph.verifySandbox=off. See
// docs/SANDBOX.md, "The verify gate and the commit hooks".
func Hooks(set sandbox.Settings, show, warn func(string)) git.HookRunner {
	if !set.Level.On() || set.VerifyOff {
		return nil
	}
	return func(ctx context.Context, repo *git.Repo, name, path string, args []string, stdin []byte, env []string) (string, int, error) {
		// In place the git directory is inside the working tree the gate may write: it
		// is moved out while the hook runs, as in a run (or else the tree is read-only).
		dir, putBack, why := moveOut(repo, warn)
		defer putBack()
		pol, err := set.GatePolicy(repo.Root, dir)
		if err != nil {
			return "", -1, err
		}
		if sandbox.Covers(pol.Write, dir) {
			pol.Write = slices.DeleteFunc(pol.Write, func(w string) bool { return sandbox.Covers([]string{w}, dir) })
			warn(fmt.Sprintf("the %s hook runs with the working tree read-only: the git directory, inside it, could not move out of it (%s)", name, why))
		}
		tmp, err := os.MkdirTemp("", "git-ralph-hook-")
		if err != nil {
			return "", -1, err
		}
		defer os.RemoveAll(tmp)
		pol.AddWrite(tmp)
		scratch, err := repo.ScratchEnv(tmp) // its git works, writing nothing of the repository's
		if err != nil {
			return "", -1, err
		}
		env = append(append(append(env, "TMPDIR="+tmp, "GIT_OPTIONAL_LOCKS=0"), scratch...), pol.Env...)
		start := func(cmd *exec.Cmd) (*exec.Cmd, error) {
			sandbox.Contain(cmd)
			return sandbox.Start(pol, cmd)
		}
		out, code, err := repo.SandboxedHookFile(ctx, name, path, args, stdin, agent.WithoutSecrets(os.Environ(), nil), env, start)
		// What it left goes before the git directory is back in the tree it may write.
		if n, _ := sandbox.KillLeftovers(ctx, warn); n > 0 {
			warn("the " + name + " hook left processes running: killed")
		}
		if err != nil {
			warn("the " + name + " hook: " + err.Error())
		} else if out != "" && (code == 0 || name != "pre-push") { // a refusal's words are its error's
			show(out)
		}
		return out, code, err
	}
}

// moveOut moves repo's git directory out of its working tree (internal/gitdir) when it
// lies there, and returns where it is, what puts it back (the hook and what it left
// gone by then) and, where it could not move, why.
func moveOut(repo *git.Repo, warn func(string)) (dir string, putBack func(), why string) {
	dir, putBack = repo.CommonDir, func() {}
	if repo.GitDir != repo.CommonDir || dir != filepath.Join(repo.Root, ".git") {
		return dir, putBack, "the git directory is not its own"
	}
	m, err := gitdir.Move(repo.Root)
	if err != nil {
		return dir, putBack, err.Error()
	}
	return m.Dir, func() {
		note, err := m.Restore()
		if note != "" {
			warn(note)
		}
		if err != nil {
			warn(err.Error() + "; .git links to it meanwhile, and the next git-ralph command in this repository puts it back")
		}
	}, ""
}
