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
	"github.com/git-ralph/git-ralph/internal/loop"
	"github.com/git-ralph/git-ralph/internal/run"
	"github.com/git-ralph/git-ralph/internal/sandbox"
	"github.com/git-ralph/git-ralph/internal/start"
	"github.com/git-ralph/git-ralph/internal/tell"
	"github.com/git-ralph/git-ralph/internal/term"
)

type startCmd struct {
	Changes []string `arg:"" optional:"" name:"change" help:"What to run: an OpenSpec change (openspec/changes/<change>), a spec-kit feature (specs/<feature>, or its number), a markdown plan (a .md path), a prd.json (a .json path, or the name list shows) or a GitHub issue ('#N', OWNER/REPO#N or its URL). Left out: the run of the branch you are on, spec-kit's current feature, the only run, or the only source there is. Several need --worktree; they run in parallel."`
	// The loop's options, filled in by kong (their flags and config keys are declared
	// with them); Arg, Cwd and what only git config says are set by Run.
	start.Options
	Jobs             int    `short:"j" config:"ralph.jobs" help:"With --worktree and several changes: run at most N loops at a time (ralph.jobs; default: all)." placeholder:"N"`
	Label            string `name:"label" help:"Work a queue: every open GitHub issue with this label that no open issue blocks, each as its own run in a worktree of its own (-j N), claimed with the label ralph:running (ralph.issueClaimLabel) until its run ends; --dry-run lists what it would take and why it skips the rest." placeholder:"LABEL"`
	TrustIssueAuthor bool   `name:"trust-issue-author" config:"ralph.trustIssueAuthors" help:"Run a GitHub issue (and its sub-issues) whoever wrote it; by default only those of the repository's owners, members and collaborators run (ralph.trustIssueAuthors)."`
	SandboxMode      string `name:"sandbox" config:"ralph.sandbox" enum:"auto,on,off" default:"auto" help:"Run the agent in a Landlock sandbox (Linux): auto where the system can, on or refuse to start, off never (ralph.sandbox; default ${default})." placeholder:"MODE"`
}

// Help is the long help of start.
func (c *startCmd) Help() string {
	return `Makes the branch ralph/<change> with an "initial state" commit holding your uncommitted
work, then runs the agent once per incomplete story of tasks.md (a spec-kit feature's
tasks.md, a markdown plan or a prd.json are run the same way). A story whose agent ends
with <promise>COMPLETE</promise> (and whose tasks are all checked off) becomes a commit
"checkpoint: <story>" (or what ralph.checkpointMessage makes). A failed attempt is kept under refs/ralph/<change>/attempts/ and
retried from the last checkpoint. Run it again to resume after an interrupt.

Most flags can be set in git config (e.g. git config ralph.maxRetries 5); a flag wins.
ralph.agentArgs adds arguments to the agent command; ralph.promptTemplate names a Go
text/template file that replaces the built-in prompt.

With --worktree the loop runs in a linked worktree of its own (default
../<repo>.ralph/<change>) and your checkout is not touched; "git ralph start
--worktree -j N a b c" runs several changes at once, each in its own worktree.`
}

func (c *startCmd) Run(e *env) error {
	if err := c.checkFlags(); err != nil {
		return err
	}
	l, err := e.loop()
	if err != nil {
		return err
	}
	e.issues.Fetch, e.issues.Trust = true, c.TrustIssueAuthor // start reads the issue it names from GitHub
	if c.DryRun {
		// A dry run changes nothing: what an issue kind keeps of the issue it reads (its
		// snapshot, the agent's tasks file) goes to a directory of its own, removed after.
		tmp, err := os.MkdirTemp("", "git-ralph-dry-run-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(tmp)
		e.issues.Store = run.NewStore(tmp)
	}
	sb, err := sandboxSettings(e, l.Repo, c.SandboxMode)
	if err != nil {
		return err
	}
	if c.Label != "" {
		return c.runQueue(e, l)
	}
	if len(c.Changes) > 1 {
		return c.runParallel(e, l)
	}
	if !c.DryRun && !e.setup.InProcess {
		becomeReaper(l)
	}
	o, err := c.loopOptions(e, l)
	if err != nil {
		return err
	}
	o.Sandbox = sb
	return c.runOne(e, l, o)
}

// checkFlags refuses the flags kong lets through that start cannot take: a usage error.
func (c *startCmd) checkFlags() error {
	if c.MaxRetries < 0 {
		return &usageError{msg: fmt.Sprintf("--max-retries must be 0 or more, not %d", c.MaxRetries), hint: "it counts retries after the first attempt; 0 means one attempt per story"}
	}
	for name, d := range map[string]time.Duration{"--timeout": c.Timeout, "--idle-timeout": c.IdleTimeout, "--verify-timeout": c.VerifyTimeout, "--wait-on-limit": c.WaitOnLimit, "--deadline": c.Deadline} {
		if d < 0 {
			return &usageError{msg: fmt.Sprintf("%s must not be negative", name), hint: "give a Go duration such as 30m or 1h30m"}
		}
	}
	if c.StoryLevel != 0 && c.StoryLevel != 2 && c.StoryLevel != 3 {
		return &usageError{msg: fmt.Sprintf("--story-level must be 2 or 3, not %d", c.StoryLevel), hint: "3 makes every '###' section of a plan a story, 2 every '##' one; without it, '##' sections, or ralphex's '### Task N' ones"}
	}
	if c.MaxCost < 0 {
		return &usageError{msg: "--max-cost must not be negative", hint: "give an amount in US dollars, e.g. 5 or 12.50"}
	}
	for _, name := range c.AgentEnvKeep {
		if !agent.IsSecretEnv(name) {
			return &usageError{msg: fmt.Sprintf("--agent-env-keep %q: only %s (GitHub tokens) and %s (services of yours) are taken from the agent's environment", name, strings.Join(agent.SecretEnv, ", "), strings.Join(agent.SocketEnv, ", ")), hint: "every other variable reaches the agent already; name one of those to keep it"}
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
	return nil
}

// becomeReaper makes this process, which runs one loop, one thing at a time, the
// subreaper of what it starts: what an agent leaves running becomes its child, and is
// killed after the attempt. Where it cannot, it says what no longer holds.
func becomeReaper(l *loop.Loop) {
	if err := sandbox.BecomeReaper(); err != nil && !errors.Is(err, errors.ErrUnsupported) {
		l.Report.Warn(fmt.Sprintf("git-ralph could not become the subreaper of what it starts (%v): "+
			"only the agent's own process group is killed after an attempt, and a process that left it may outlive it", err))
	}
}

// loopOptions are the loop's options of one change's start: the flags as kong filled
// them in, what only git config says, the working directory, and l's drivers (a
// custom agent's or judge's, the demo's) and kill switch.
func (c *startCmd) loopOptions(e *env, l *loop.Loop) (start.Options, error) {
	o := c.Options
	if len(c.Changes) == 1 {
		o.Arg = c.Changes[0] // none given: what is current (source.Resolve's bare rule)
	}
	if err := startConfig(e, l.Repo, &o); err != nil {
		return o, err
	}
	if c.Adopt && !c.DryRun {
		if err := runnerIdentity(e, l.Repo); err != nil {
			return o, err
		}
	}
	var err error
	if l.Driver, err = startDriver(e, l.Repo, c.Agent); err != nil {
		return o, err
	}
	if c.Judge == "custom" {
		if l.JudgeDriver, err = customDriver(e, l.Repo, "ralph.judgeCommand", "ralph.judgeFormat"); err != nil {
			return o, err
		}
	}
	if o.Cwd, err = os.Getwd(); err != nil {
		return o, err
	}
	l.Kill = e.kill
	return o, nil
}

// runOne runs the loop of one change in place and says how it went: the summary and
// the report, and the offer to finish a run that completed.
func (c *startCmd) runOne(e *env, l *loop.Loop, o start.Options) error {
	change := o.Arg
	sum, err := l.Start(e.ctx, o)
	if sum != nil && sum.Change != "" {
		change = sum.Change // the run name of a plan or a prd.json
	}
	if err != nil {
		if sum != nil {
			printSummary(e.s, sum, false)
			printReport(e, l, change)
		}
		if errors.Is(err, tell.ErrDeadline) {
			return deadlineError(change, err)
		}
		if errors.Is(err, tell.ErrInterrupted) {
			return &tell.Error{Msg: "interrupted", Code: 130, Hint: fmt.Sprintf("resume with 'git ralph start %s'; 'git ralph status %s' shows where it stands", change, change)}
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
		return customDriver(e, repo, "ralph.agentCommand", "ralph.agentFormat")
	}
	return nil, nil
}

// customDriver is a custom agent from the git config keys cmdKey and formatKey
// (ralph.agentCommand and ralph.agentFormat; the judge's ralph.judgeCommand and
// ralph.judgeFormat).
func customDriver(e *env, repo *git.Repo, cmdKey, formatKey string) (agent.Driver, error) {
	cmd, ok, err := repo.Config(e.ctx, cmdKey)
	if err != nil {
		return nil, err
	}
	if !ok || cmd == "" {
		who := "agent"
		if cmdKey != "ralph.agentCommand" {
			who = "judge"
		}
		return nil, &tell.Error{Msg: who + " \"custom\" needs a command",
			Hint: "set it with: git config " + cmdKey + " \"/path/to/agent --its-flags\" (the prompt arrives on stdin)"}
	}
	argv, err := hooks.SplitWords(cmd)
	if err != nil {
		return nil, &usageError{msg: cmdKey + ": " + err.Error(), hint: "quote arguments as a shell would"}
	}
	if len(argv) > 0 && strings.Contains(argv[0], "/") && !filepath.IsAbs(argv[0]) {
		argv[0] = filepath.Join(repo.Root, argv[0]) // relative to the repository root, where the agent runs
	}
	format, _, err := repo.Config(e.ctx, formatKey)
	if err != nil {
		return nil, err
	}
	d, err := custom.New(argv, format)
	if err != nil {
		var pe *agent.PreflightError
		if errors.As(err, &pe) {
			return nil, &tell.Error{Msg: pe.Error(), Hint: pe.Hint(), Err: err}
		}
		return nil, err
	}
	return d, nil
}

// startConfig reads the settings only git config has into o: ralph.agentArgs (split like
// a shell would, but never run through one), ralph.promptTemplate and
// ralph.checkpointMessage.
func startConfig(e *env, repo *git.Repo, o *start.Options) error {
	if v, ok, err := repo.Config(e.ctx, "ralph.agentArgs"); err != nil {
		return err
	} else if ok {
		if o.AgentArgs, err = hooks.SplitWords(v); err != nil {
			return &usageError{msg: "ralph.agentArgs: " + err.Error(), hint: "quote arguments as a shell would, e.g. --append-system-prompt 'be brief'"}
		}
	}
	if v, ok, err := repo.ConfigPath(e.ctx, "ralph.promptTemplate"); err != nil {
		return err
	} else if ok {
		o.PromptTemplate = v
	}
	var err error
	o.CheckpointMessage, _, err = repo.Config(e.ctx, "ralph.checkpointMessage")
	return err
}

func printDryRun(s *term.Streams, sum *start.Summary) error {
	d := sum.DryRun
	if d.Done {
		fmt.Fprintf(s.Out, "every story of %s is complete; nothing to run\n", sum.Change)
		return nil
	}
	for _, n := range d.Notes {
		fmt.Fprintf(s.Out, "# note: %s\n", n)
	}
	fmt.Fprintf(s.Out, "# story %s %q: the agent command\n%s\n\n", d.Story, d.Title, quoteArgv(d.Argv))
	if d.JudgeArgv != nil {
		fmt.Fprintf(s.Out, "# the judge command, once the agent says COMPLETE (read-only in the sandbox)\n%s\n\n", quoteArgv(d.JudgeArgv))
	}
	if len(d.Sandbox) > 0 {
		for _, line := range d.Sandbox {
			fmt.Fprintf(s.Out, "# %s\n", line)
		}
		fmt.Fprintln(s.Out)
	}
	fmt.Fprintf(s.Out, "# the prompt, sent on stdin\n%s", d.Prompt)
	return nil
}

func printSummary(s *term.Streams, sum *start.Summary, done bool) {
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
func offerFinish(e *env, l *loop.Loop, sum *start.Summary) error {
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
			if repo, ok, _ := e.flow(l).PRRepo(e.ctx, sum.Change, o); ok {
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
			mode := run.Squash
			if i == 1 {
				mode = run.Keep
			}
			res, err := runFinish(e, l, sum.Change, mode)
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
