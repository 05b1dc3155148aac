// Package preflight holds the checks a start or a finish makes before it acts: of the
// checkout, of the task source, of the agent and the judge, the sandbox's level (and
// what a dry run says of it), and finish's look at the original branch. They change
// nothing; what they refuse comes back as a *tell.Error whose hint says what to do.
package preflight

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/git-ralph/git-ralph/internal/agent"
	"github.com/git-ralph/git-ralph/internal/agents"
	"github.com/git-ralph/git-ralph/internal/git"
	"github.com/git-ralph/git-ralph/internal/tell"
)

// Checkout refuses a checkout in the middle of an operation, or with unmerged paths:
// its work is what a new run of change starts from.
func Checkout(ctx context.Context, repo *git.Repo, change string) error {
	if op, err := repo.InProgress(); err != nil {
		return err
	} else if op != "" {
		return tell.UserErr(inProgressHint(op)+", then run 'git ralph start "+change+"' again",
			"a %s is in progress", op)
	}
	if paths, err := repo.UnmergedPaths(ctx); err != nil {
		return err
	} else if len(paths) > 0 {
		return tell.UserErr("resolve them and commit, then run 'git ralph start "+change+"' again",
			"%d unmerged path(s): %s", len(paths), strings.Join(paths, ", "))
	}
	return nil
}

// BranchFree refuses a run whose branch is checked out in a worktree other than here,
// the one the loop works in (the user's checkout, or the run's own worktree): git
// before 2.44 would reset it under whatever works there.
func BranchFree(ctx context.Context, repo *git.Repo, branch, here string) error {
	wts, err := repo.WorktreeBranches(ctx)
	if err != nil {
		return err
	}
	if p, ok := wts[branch]; ok && !git.SamePath(p, here) {
		return tell.UserErr("finish or remove that worktree first (git worktree remove "+p+")",
			"branch %s is checked out in another worktree: %s", branch, p)
	}
	return nil
}

// inProgressHint says how to end an operation git has in progress.
func inProgressHint(op string) string {
	switch op {
	case "bisect":
		return "end it with 'git bisect reset'"
	case "merge":
		return "finish it with 'git commit' or drop it with 'git merge --abort'"
	case "am":
		return "finish it with 'git am --continue' or drop it with 'git am --abort'"
	}
	return fmt.Sprintf("finish it with 'git %s --continue' or drop it with 'git %s --abort'", op, op)
}

// Budget is a run's --max-cost and --max-tokens; 0: no limit.
type Budget struct {
	Cost   float64
	Tokens int64
}

// Driver is the driver that runs the stories: custom when set, else the one name
// names.
func Driver(name string, custom agent.Driver) (agent.Driver, error) {
	if custom != nil {
		return custom, nil
	}
	drv, err := agents.Lookup(name)
	if err != nil {
		return nil, &tell.Error{Msg: fmt.Sprintf("unknown agent %q", name),
			Hint: "known agents: " + strings.Join(agents.Names(), ", ") + "; choose one with --agent or 'git config ralph.agent'", Err: err}
	}
	return drv, nil
}

// Agent runs drv's own checks on req, refuses a budget it could not be held to and
// looks for its binary (a dry run only warns when it is missing).
func Agent(drv agent.Driver, req agent.Request, b Budget, dryRun bool, warn func(string)) error {
	if err := agent.Preflight(drv, req); err != nil {
		var pe *agent.PreflightError
		if errors.As(err, &pe) {
			return &tell.Error{Msg: pe.Error(), Hint: pe.Hint(), Err: err}
		}
		return err
	}
	if err := b.check(drv); err != nil {
		return err
	}
	if _, err := agent.LookPath(drv); err != nil {
		hint := ""
		msg := fmt.Sprintf("agent %q: %s not found on PATH", drv.Name(), drv.Binary())
		var nf *agent.NotFoundError
		if errors.As(err, &nf) {
			hint = nf.Hint()
			if nf.NotExecutable != "" {
				msg = nf.Error()
			}
		}
		if !dryRun {
			return &tell.Error{Msg: msg, Hint: hint, Err: err}
		}
		// A preview of the prompt needs no agent: say that it is missing, and go on.
		warn(msg + "; a real run needs it")
	}
	return nil
}

// check refuses a budget the agent could not be held to: --max-cost for an agent that
// reports no cost, --max-tokens for one that reports no tokens. Not capping while the
// user believes it caps would be worse than not starting.
func (b Budget) check(drv agent.Driver) error {
	cost, tokens := agent.Reports(drv)
	switch {
	case b.Cost > 0 && !cost && tokens:
		return tell.UserErr("cap it with --max-tokens N (or 'git config ralph.maxTokens N') instead, or drop --max-cost",
			"agent %q reports no cost, so --max-cost could not stop it", drv.Name())
	case b.Cost > 0 && !cost:
		return tell.UserErr("drop --max-cost (and 'git config ralph.maxCost'), or use an agent that reports its cost",
			"agent %q reports neither cost nor tokens, so --max-cost could not stop it", drv.Name())
	case b.Tokens > 0 && !tokens:
		return tell.UserErr("drop --max-tokens (and 'git config ralph.maxTokens'), or use an agent that reports its tokens",
			"agent %q reports no tokens, so --max-tokens could not stop it", drv.Name())
	}
	return nil
}

// Judge resolves the judge name names (custom when set: a custom judge's command from
// git config) and checks it as Agent checks the agent: the driver's own checks on req,
// a budget it could not be held to, its binary.
func Judge(name string, custom agent.Driver, req agent.Request, b Budget, dryRun bool, warn func(string)) (agent.Driver, error) {
	drv := custom
	if drv == nil {
		var err error
		if drv, err = agents.Lookup(name); err != nil {
			return nil, &tell.Error{Msg: fmt.Sprintf("unknown judge agent %q", name),
				Hint: "known agents: " + strings.Join(agents.Names(), ", ") + "; choose one with --judge or 'git config ralph.judge'", Err: err}
		}
	}
	if err := agent.Preflight(drv, req); err != nil {
		var pe *agent.PreflightError
		if errors.As(err, &pe) {
			return nil, &tell.Error{Msg: "judge: " + pe.Error(), Hint: pe.Hint(), Err: err}
		}
		return nil, err
	}
	cost, tokens := agent.Reports(drv)
	switch {
	case b.Cost > 0 && !cost:
		return nil, tell.UserErr("choose a judge that reports its cost, or drop --max-cost",
			"judge %q reports no cost, so --max-cost could not count it", drv.Name())
	case b.Tokens > 0 && !tokens:
		return nil, tell.UserErr("choose a judge that reports its tokens, or drop --max-tokens",
			"judge %q reports no tokens, so --max-tokens could not count it", drv.Name())
	}
	if _, err := agent.LookPath(drv); err != nil {
		hint := ""
		var nf *agent.NotFoundError
		if errors.As(err, &nf) {
			hint = nf.Hint()
		}
		msg := fmt.Sprintf("judge %q: %s not found on PATH", drv.Name(), drv.Binary())
		if !dryRun {
			return nil, &tell.Error{Msg: msg, Hint: hint, Err: err}
		}
		warn(msg + "; a real run needs it")
	}
	return drv, nil
}

// Filters warns of the filter drivers of the config (git.Repo.FilterCommands) that
// git-ralph's own git add and checkouts run, outside the sandbox, over the files the
// agent writes: a command that runs a file of the work tree (./clean.sh, python -m of a
// module there) runs the agent's, with the user's rights. Only said: see the manual's
// SECURITY MODEL.
func Filters(ctx context.Context, repo *git.Repo, warn func(string)) {
	cmds := repo.FilterCommands(ctx)
	keys := make([]string, 0, len(cmds))
	for k := range cmds {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		warn(fmt.Sprintf("git config %s (%q) runs in git-ralph's own git add and checkouts, outside the sandbox, over the files the agent writes: if it runs a file of the work tree, it runs the agent's", k, cmds[k]))
	}
}
