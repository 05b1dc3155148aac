package githubflow

import (
	"context"
	"os"
	"os/exec"

	"github.com/git-ralph/git-ralph/internal/agent"
	"github.com/git-ralph/git-ralph/internal/sandbox"
)

// prePush is how finish --pr runs the user's pre-push hook: in the verify gate's
// sandbox (set.GatePolicy over the repository's working tree), since the hook reads
// what the agent wrote (the pre-commit framework runs what .pre-commit-config.yaml
// says; husky's hooks are files of the tree). nil, for git to run it as always, where
// the gate itself runs outside: no sandbox, or ralph.verifySandbox=off.
func (fl *Flow) prePush(set sandbox.Settings) func(context.Context, string, []string, []byte, []string) (string, int, error) {
	if !set.Level.On() || set.VerifyOff {
		return nil
	}
	return func(ctx context.Context, path string, args []string, stdin []byte, env []string) (string, int, error) {
		pol, err := set.GatePolicy(fl.Repo.Root, fl.Repo.CommonDir)
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
		out, code, err := fl.Repo.SandboxedHookFile(ctx, "pre-push", path, args, stdin, agent.WithoutSecrets(os.Environ(), nil), env, start)
		_, _ = sandbox.KillLeftovers(ctx, fl.Loop.Report.Warn)
		return out, code, err
	}
}
