package cli

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/git-ralph/git-ralph/hooks"
	"github.com/git-ralph/git-ralph/internal/agent"
	"github.com/git-ralph/git-ralph/internal/agent/custom"
	"github.com/git-ralph/git-ralph/internal/demo"
	"github.com/git-ralph/git-ralph/internal/git"
	"github.com/git-ralph/git-ralph/internal/githubflow"
	"github.com/git-ralph/git-ralph/internal/loop"
	"github.com/git-ralph/git-ralph/internal/sandbox"
	"github.com/git-ralph/git-ralph/internal/term"
)

type startCmd struct {
	Changes          []string      `arg:"" optional:"" name:"change" help:"What to run: an OpenSpec change (openspec/changes/<change>), a spec-kit feature (specs/<feature>, or its number), a markdown plan (a .md path), a prd.json (a .json path) or a GitHub issue ('#N', OWNER/REPO#N or its URL). Left out: the run of the branch you are on, spec-kit's current feature, or the only run. Several need --worktree; they run in parallel."`
	StoryLevel       int           `config:"ralph.storyLevel" help:"For a markdown plan: 3 makes every '###' section a story (ralph.storyLevel; default: '##' sections, or ralphex's '### Task N' ones)." placeholder:"N"`
	MaxRetries       int           `config:"ralph.maxRetries" default:"3" help:"Retries after a story's first attempt: at most N+1 attempts per story (ralph.maxRetries; default ${default})." placeholder:"N"`
	Timeout          time.Duration `config:"ralph.timeout" help:"Kill an attempt after this long and count it failed, e.g. 30m (ralph.timeout)." placeholder:"D"`
	IdleTimeout      time.Duration `config:"ralph.idleTimeout" help:"Kill an attempt that printed nothing for this long (ralph.idleTimeout)." placeholder:"D"`
	Agent            string        `config:"ralph.agent" default:"claude" help:"The agent that runs the stories: claude, codex, gemini, opencode, amp, cursor, copilot, qwen or custom (ralph.agent; default ${default})." placeholder:"NAME"`
	AgentEnvKeep     []string      `name:"agent-env-keep" config:"ralph.agentEnvKeep" help:"Leave this GitHub token in the agent's environment: GH_TOKEN, GITHUB_TOKEN, GH_ENTERPRISE_TOKEN or GITHUB_ENTERPRISE_TOKEN, which it loses otherwise; repeatable (ralph.agentEnvKeep, comma-separated)." placeholder:"NAME"`
	Model            string        `config:"ralph.model" help:"Model passed to the agent; default: the agent's own (ralph.model)." placeholder:"M"`
	MaxCost          float64       `config:"ralph.maxCost" help:"Stop once the agent-reported cost of this run passes USD, resumes included (ralph.maxCost)." placeholder:"USD"`
	MaxTokens        int64         `config:"ralph.maxTokens" help:"Stop before an attempt once the agent-reported tokens of this run (input, cache reads as the agent counts them, and output; resumes included) reach N (ralph.maxTokens)." placeholder:"N"`
	VerifyTimeout    time.Duration `config:"ralph.verifyTimeout" help:"Stop the ralph-verify hook after this long and fail the attempt, e.g. 10m (ralph.verifyTimeout)." placeholder:"D"`
	WaitOnLimit      time.Duration `config:"ralph.waitOnLimit" help:"On a usage or rate limit, wait up to this long for it to reset and go on, instead of stopping (ralph.waitOnLimit)." placeholder:"D"`
	AllowRefChanges  bool          `name:"allow-ref-changes" config:"ralph.allowRefChanges" help:"Let the agent create, move and delete refs outside its own branch (ralph.allowRefChanges); git config and hooks stay protected."`
	AllowSkip        bool          `name:"allow-skip" negatable:"" default:"true" config:"ralph.allowSkip" help:"Let the agent tick a task it cannot do here with \"(skipped - not automatable: why)\"; the checkpoint, status, the report and the PR say so. --no-allow-skip fails such an attempt (ralph.allowSkip; default true)."`
	TrustCurrent     bool          `name:"trust-current" help:"After a crash, go on although the record of what the agent may not change (.git/ralph/<change>/surface.json) is missing or not valid: refs, git config and hooks are taken as they are now. Look at them first."`
	Fresh            bool          `help:"Discard an earlier run of this change and start over (its branch tip is kept under refs/ralph/<change>/backup/)."`
	DryRun           bool          `help:"Print the next story's prompt and the agent command; run nothing, change nothing."`
	Worktree         worktreeFlag  `help:"Run in a linked worktree of its own, --worktree=PATH or under ralph.worktreeDir (default ../<repo>.ralph/<change>); your checkout is not touched."`
	Jobs             int           `short:"j" config:"ralph.jobs" help:"With --worktree and several changes: run at most N loops at a time (ralph.jobs; default: all)." placeholder:"N"`
	Label            string        `name:"label" help:"Work a queue: every open GitHub issue with this label that no open issue blocks, each as its own run in a worktree of its own (-j N), claimed with the label ralph:running (ralph.issueClaimLabel) until the runs end; --dry-run lists what it would take and why it skips the rest." placeholder:"LABEL"`
	TrustIssueAuthor bool          `name:"trust-issue-author" config:"ralph.trustIssueAuthors" help:"Run a GitHub issue (and its sub-issues) whoever wrote it; by default only those of the repository's owners, members and collaborators run (ralph.trustIssueAuthors)."`
	Sandbox          string        `config:"ralph.sandbox" enum:"auto,on,off" default:"auto" help:"Run the agent in a Landlock sandbox (Linux): auto where the system can, on or refuse to start, off never (ralph.sandbox; default ${default})." placeholder:"MODE"`

	// The runner side of a run on GitHub Actions (the workflow 'ci init' writes).
	Adopt    bool          `hidden:"" help:"With no run record, rebuild it from the branch's commits and trailers (a fresh clone on a runner)."`
	RunID    int64         `name:"run-id" hidden:"" help:"The Actions run this loop works for: recorded, and a Ralph-Run trailer on each checkpoint." placeholder:"ID"`
	Deadline time.Duration `hidden:"" help:"Stop cleanly this long after starting, saving the attempt under way; exit code 75." placeholder:"D"`
}

// Help is the long help of start.
func (c *startCmd) Help() string {
	return `Makes the branch ralph/<change> with an "initial state" commit holding your uncommitted
work, then runs the agent once per incomplete story of tasks.md (a spec-kit feature's
tasks.md, a markdown plan or a prd.json are run the same way). A story whose agent ends
with <promise>COMPLETE</promise> (and whose tasks are all checked off) becomes a commit
"checkpoint: <story>". A failed attempt is kept under refs/ralph/<change>/attempts/ and
retried from the last checkpoint. Run it again to resume after an interrupt.

Every flag can be set in git config (e.g. git config ralph.maxRetries 5); a flag wins.
ralph.agentArgs adds arguments to the agent command; ralph.promptTemplate names a Go
text/template file that replaces the built-in prompt.

With --worktree the loop runs in a linked worktree of its own (default
../<repo>.ralph/<change>) and your checkout is not touched; "git ralph start
--worktree -j N a b c" runs several changes at once, each in its own worktree.`
}

func (c *startCmd) Run(e *env) error {
	if c.MaxRetries < 0 {
		return &usageError{msg: fmt.Sprintf("--max-retries must be 0 or more, not %d", c.MaxRetries), hint: "it counts retries after the first attempt; 0 means one attempt per story"}
	}
	for name, d := range map[string]time.Duration{"--timeout": c.Timeout, "--idle-timeout": c.IdleTimeout, "--verify-timeout": c.VerifyTimeout, "--wait-on-limit": c.WaitOnLimit, "--deadline": c.Deadline} {
		if d < 0 {
			return &usageError{msg: fmt.Sprintf("%s must not be negative", name), hint: "give a Go duration such as 30m or 1h30m"}
		}
	}
	if c.StoryLevel != 0 && c.StoryLevel != 2 && c.StoryLevel != 3 {
		return &usageError{msg: fmt.Sprintf("--story-level must be 2 or 3, not %d", c.StoryLevel), hint: "3 makes every '###' section of a plan a story; 2 is the default"}
	}
	if c.MaxCost < 0 {
		return &usageError{msg: "--max-cost must not be negative", hint: "give an amount in US dollars, e.g. 5 or 12.50"}
	}
	for _, name := range c.AgentEnvKeep {
		if !agent.IsSecretEnv(name) {
			return &usageError{msg: fmt.Sprintf("--agent-env-keep %q: only %s are taken from the agent's environment", name, strings.Join(agent.SecretEnv, ", ")), hint: "every other variable reaches the agent already; name one of those to keep it"}
		}
	}
	if c.MaxTokens < 0 {
		return &usageError{msg: "--max-tokens must not be negative", hint: "give a number of tokens, e.g. 2000000"}
	}
	if slices.Contains(c.Changes, "") {
		return &usageError{msg: "an empty change name", hint: "name what to run, or leave the name out to run what is current ('git ralph start')"}
	}
	if c.Label != "" && len(c.Changes) > 0 {
		return &usageError{msg: "--label takes the issues to run from GitHub; name no change beside it", hint: "git ralph start --label " + c.Label}
	}
	if err := c.checkParallel(); err != nil {
		return err
	}
	if (c.Adopt || c.RunID != 0 || c.Deadline != 0) && (len(c.Changes) > 1 || c.Worktree.On) {
		return &usageError{msg: "--adopt, --run-id and --deadline are for one change in a runner's checkout", hint: "run them without --worktree, one change at a time"}
	}
	l, err := e.loop()
	if err != nil {
		return err
	}
	l.TrustCurrent = c.TrustCurrent
	e.issues.Fetch, e.issues.Trust = true, c.TrustIssueAuthor // start reads the issue it names from GitHub
	sb, err := sandboxSettings(e, l.Repo, c.Sandbox)
	if err != nil {
		return err
	}
	if c.Label != "" {
		return c.runQueue(e, l)
	}
	if len(c.Changes) > 1 {
		return c.runParallel(e, l)
	}
	if !c.DryRun && !e.tune.InProcess {
		// This process runs one loop, one thing at a time: what an agent leaves
		// running becomes its child, and is killed after the attempt.
		_ = sandbox.BecomeReaper()
	}
	change := "" // none given: what is current (source.Resolve's bare rule)
	if len(c.Changes) == 1 {
		change = c.Changes[0]
	}
	args, tmpl, subject, err := startConfig(e, l.Repo)
	if err != nil {
		return err
	}
	if c.Adopt && !c.DryRun {
		if err := runnerIdentity(e, l.Repo); err != nil {
			return err
		}
	}
	drv, err := startDriver(e, l.Repo, c.Agent)
	if err != nil {
		return err
	}
	cwd, err := os.Getwd()
	if err != nil {
		return err
	}
	sum, err := l.Start(e.ctx, loop.Options{
		Driver: drv,
		Change: change, Arg: change, Cwd: cwd, StoryLevel: c.StoryLevel, Agent: c.Agent, Model: c.Model, AgentArgs: args, AgentEnvKeep: c.AgentEnvKeep, AllowRefChanges: c.AllowRefChanges,
		NoSkip:     !c.AllowSkip,
		MaxRetries: c.MaxRetries, Timeout: c.Timeout, IdleTimeout: c.IdleTimeout, MaxCost: c.MaxCost, MaxTokens: c.MaxTokens,
		VerifyTimeout: c.VerifyTimeout, WaitOnLimit: c.WaitOnLimit,
		Fresh: c.Fresh, DryRun: c.DryRun, PromptTemplate: tmpl, CheckpointMessage: subject, Kill: e.kill,
		Adopt: c.Adopt, RunID: c.RunID, Deadline: c.Deadline,
		Worktree: c.Worktree.On, WorktreePath: c.Worktree.Path,
		Sandbox: sb,
	})
	if sum != nil && sum.Change != "" {
		change = sum.Change // the run name of a plan or a prd.json
	}
	if err != nil {
		if sum != nil {
			printSummary(e.s, sum, false)
			printReport(e, l, change)
		}
		if errors.Is(err, loop.ErrDeadline) {
			return deadlineError(change, err)
		}
		if errors.Is(err, loop.ErrInterrupted) {
			return &loop.Error{Msg: "interrupted", Code: 130, Hint: fmt.Sprintf("resume with 'git ralph start %s'; 'git ralph status %s' shows where it stands", change, change)}
		}
		return err
	}
	if sum.DryRun != nil {
		return printDryRun(e.s, sum)
	}
	printSummary(e.s, sum, true)
	printReport(e, l, change)
	return offerFinish(e, l, sum)
}

// startDriver builds the drivers that need more than a name: the demo's scripted agent
// (for experiments; never a default) and a custom agent from ralph.agentCommand and
// ralph.agentFormat. nil means "look the name up".
func startDriver(e *env, repo *git.Repo, name string) (agent.Driver, error) {
	switch name {
	case "demo":
		exe, err := os.Executable()
		if err != nil {
			return nil, err
		}
		return demo.Driver(exe, 0), nil
	case "custom":
		cmd, ok, err := repo.Config(e.ctx, "ralph.agentCommand")
		if err != nil {
			return nil, err
		}
		if !ok || cmd == "" {
			return nil, &loop.Error{Msg: "agent \"custom\" needs a command",
				Hint: "set it with: git config ralph.agentCommand \"/path/to/agent --its-flags\" (the prompt arrives on stdin)"}
		}
		argv, err := hooks.SplitWords(cmd)
		if err != nil {
			return nil, &usageError{msg: "ralph.agentCommand: " + err.Error(), hint: "quote arguments as a shell would"}
		}
		if len(argv) > 0 && strings.Contains(argv[0], "/") && !filepath.IsAbs(argv[0]) {
			argv[0] = filepath.Join(repo.Root, argv[0]) // relative to the repository root, where the agent runs
		}
		format, _, err := repo.Config(e.ctx, "ralph.agentFormat")
		if err != nil {
			return nil, err
		}
		d, err := custom.New(argv, format)
		if err != nil {
			var pe *agent.PreflightError
			if errors.As(err, &pe) {
				return nil, &loop.Error{Msg: pe.Error(), Hint: pe.Hint(), Err: err}
			}
			return nil, err
		}
		return d, nil
	}
	return nil, nil
}

// startConfig reads the config-only settings: ralph.agentArgs (split like a shell
// would, but never run through one) and ralph.promptTemplate.
func startConfig(e *env, repo *git.Repo) (args []string, tmpl, subject string, err error) {
	if v, ok, err := repo.Config(e.ctx, "ralph.agentArgs"); err != nil {
		return nil, "", "", err
	} else if ok {
		if args, err = hooks.SplitWords(v); err != nil {
			return nil, "", "", &usageError{msg: "ralph.agentArgs: " + err.Error(), hint: "quote arguments as a shell would, e.g. --append-system-prompt 'be brief'"}
		}
	}
	if v, ok, err := repo.ConfigPath(e.ctx, "ralph.promptTemplate"); err != nil {
		return nil, "", "", err
	} else if ok {
		tmpl = v
	}
	if subject, _, err = repo.Config(e.ctx, "ralph.checkpointMessage"); err != nil {
		return nil, "", "", err
	}
	return args, tmpl, subject, nil
}

func printDryRun(s *term.Streams, sum *loop.Summary) error {
	d := sum.DryRun
	if d.Done {
		fmt.Fprintf(s.Out, "every story of %s is complete; nothing to run\n", sum.Change)
		return nil
	}
	for _, n := range d.Notes {
		fmt.Fprintf(s.Out, "# note: %s\n", n)
	}
	fmt.Fprintf(s.Out, "# story %s %q: the agent command\n%s\n\n", d.Story, d.Title, quoteArgv(d.Argv))
	if len(d.Sandbox) > 0 {
		for _, line := range d.Sandbox {
			fmt.Fprintf(s.Out, "# %s\n", line)
		}
		fmt.Fprintln(s.Out)
	}
	fmt.Fprintf(s.Out, "# the prompt, sent on stdin\n%s", d.Prompt)
	return nil
}

func printSummary(s *term.Streams, sum *loop.Summary, done bool) {
	p := s.Palette()
	cost := "n/a"
	if sum.CostKnown {
		cost = fmt.Sprintf("$%.4f", sum.CostUSD)
	}
	head := "stopped"
	if done {
		head = p.Success("done")
	}
	tokens := ""
	if sum.TokensKnown {
		tokens = " · " + loop.Thousands(sum.Tokens) + " tokens"
	}
	fmt.Fprintf(s.Err, "%s: %d of %d stories completed this run · %d attempt(s) · %s · cost %s%s\n",
		head, sum.Stories, sum.Total, sum.Attempts, sum.Duration.Round(time.Second), cost, tokens)
}

// offerFinish asks, in an interactive terminal, how to finish; otherwise it prints the
// commands.
func offerFinish(e *env, l *loop.Loop, sum *loop.Summary) error {
	s := e.s
	if s.CanPrompt() {
		keepText := "keep: stay on " + sum.Branch + " with its checkpoint commits"
		if sum.Worktree != "" {
			keepText = "keep: keep " + sum.Branch + " with its checkpoint commits, remove the worktree"
		}
		opts := []string{
			"squash: bring the work back onto " + sum.Original + " as uncommitted changes",
			keepText,
		}
		// A pull request is offered when finish --pr would know its GitHub repository
		// (no network call is made to tell).
		pr := &finishCmd{Change: sum.Change, PR: true}
		if o, err := pr.prOptions(e, l); err == nil {
			if repo, ok, _ := githubflow.On(l).PRRepo(e.ctx, sum.Change, o); ok {
				opts = append(opts, "pull request: push "+sum.Branch+" and open a pull request in "+repo.String())
			}
		}
		opts = append(opts, "decide later")
		later := len(opts) - 1
		i, err := s.Prompter.Select("Every story is done. What now?", opts[later], opts)
		if err == nil && i == 2 && later == 3 {
			return pr.runPR(e, l)
		}
		if err == nil && i < 2 {
			mode := loop.Squash
			if i == 1 {
				mode = loop.Keep
			}
			res, err := l.Finish(e.ctx, sum.Change, mode)
			if err != nil {
				return err
			}
			printFinish(s, res, mode)
			return nil
		}
	}
	keep := "stay on " + sum.Branch
	if sum.Worktree != "" {
		keep = "keep " + sum.Branch + ", remove the worktree"
	}
	fmt.Fprintf(s.Err, "next: git ralph finish %s --squash   (the work onto %s, uncommitted)\n", sum.Change, sum.Original)
	fmt.Fprintf(s.Err, "  or: git ralph finish %s --keep     (%s)\n", sum.Change, keep)
	fmt.Fprintf(s.Err, "  or: git ralph finish %s --pr       (push %s and open a pull request)\n", sum.Change, sum.Branch)
	return nil
}

func quoteArgv(argv []string) string {
	out := make([]string, len(argv))
	for i, a := range argv {
		if a == "" || strings.ContainsAny(a, " \t\n'\"\\$`!*?[]{}()<>|&;#~") {
			a = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
		out[i] = a
	}
	return strings.Join(out, " ")
}
