package finish

import (
	"context"
	"os"
	"os/exec"

	"github.com/git-ralph/git-ralph/internal/agent"
	"github.com/git-ralph/git-ralph/internal/git"
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
		pol, err := set.GatePolicy(repo.Root, repo.CommonDir)
		if err != nil {
			return "", -1, err
		}
		tmp, err := os.MkdirTemp("", "git-ralph-hook-")
		if err != nil {
			return "", -1, err
		}
		defer os.RemoveAll(tmp)
		pol.AddWrite(tmp)
		env = append(append(env, "TMPDIR="+tmp, "GIT_OPTIONAL_LOCKS=0"), pol.Env...)
		start := func(cmd *exec.Cmd) (*exec.Cmd, error) {
			sandbox.Contain(cmd)
			return sandbox.Start(pol, cmd)
		}
		out, code, err := repo.SandboxedHookFile(ctx, name, path, args, stdin, agent.WithoutSecrets(os.Environ(), nil), env, start)
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
