// Package start holds what `git ralph start` is given and what it gives back: the
// Options as the user gave them (the CLI's start command embeds them, kong filling in
// the flags), and the Summary of a run, a dry run's included. internal/loop resolves
// the Options once (loop.Resolved) and never changes them.
package start

import (
	"time"

	"github.com/git-ralph/git-ralph/internal/sandbox"
)

// Options are the inputs of `git ralph start` as the user gave them: its flags, which
// kong fills in directly (the CLI's start command embeds this struct, as git-spice
// embeds a handler's options in its command; `config` names the git config key a flag
// defaults from), and what only git config or the command line's place say. Nothing in
// the loop changes them: what a run resolves from them is a loop.Resolved.
type Options struct {
	// Arg is what start names: a change, a spec-kit feature, the path of a plan or a
	// prd.json, a run's name (docs/TASKS.md, "The kinds"); "" for what is current.
	Arg string `kong:"-"`
	Cwd string `kong:"-"` // where a relative path in Arg starts from; "" for the top level

	StoryLevel  int           `config:"ralph.storyLevel" help:"For a markdown plan: 3 makes every '###' section a story (ralph.storyLevel; default: '##' sections, or ralphex's '### Task N' ones)." placeholder:"N"`
	MaxRetries  int           `config:"ralph.maxRetries" default:"3" help:"Retries after a story's first attempt: at most N+1 attempts per story (ralph.maxRetries; default ${default})." placeholder:"N"`
	Timeout     time.Duration `config:"ralph.timeout" help:"Kill an attempt after this long and count it failed, e.g. 30m (ralph.timeout)." placeholder:"D"`
	IdleTimeout time.Duration `config:"ralph.idleTimeout" help:"Kill an attempt that printed nothing for this long (ralph.idleTimeout)." placeholder:"D"`
	// Agent is the driver's name; "" means claude.
	Agent string `config:"ralph.agent" default:"claude" help:"The agent that runs the stories: claude, codex, gemini, opencode, amp, cursor, copilot, qwen or custom (ralph.agent; default ${default})." placeholder:"NAME"`
	// AgentEnvKeep names the secrets (agent.SecretEnv) the agent keeps in its
	// environment; the others are removed from it.
	AgentEnvKeep []string `name:"agent-env-keep" config:"ralph.agentEnvKeep" help:"Leave this variable in the agent's environment, which loses it otherwise: a GitHub token (GH_TOKEN, GITHUB_TOKEN, GH_ENTERPRISE_TOKEN, GITHUB_ENTERPRISE_TOKEN) or one that leads to a service of yours (SSH_AUTH_SOCK, DOCKER_HOST, DBUS_SESSION_BUS_ADDRESS…: see SECURITY MODEL); repeatable (ralph.agentEnvKeep, comma-separated)." placeholder:"NAME"`
	Model        string   `config:"ralph.model" help:"Model passed to the agent; default: the agent's own (ralph.model)." placeholder:"M"`
	// Judge names the agent that reviews each attempt's diff before its checkpoint
	// (internal/judge); "": no judge.
	Judge      string `config:"ralph.judge" help:"Have this agent judge each attempt that says COMPLETE, from its diff, before the checkpoint: FAIL sends it back with the judge's reason (ralph.judge; custom runs ralph.judgeCommand; default: no judge)." placeholder:"AGENT"`
	JudgeModel string `name:"judge-model" config:"ralph.judgeModel" help:"Model passed to the judge; default: its own (ralph.judgeModel)." placeholder:"M"`
	// MaxCost and MaxTokens are the run's budget; 0: no limit.
	MaxCost   float64 `config:"ralph.maxCost" help:"Stop once the agent-reported cost of this run passes USD, resumes included (ralph.maxCost)." placeholder:"USD"`
	MaxTokens int64   `config:"ralph.maxTokens" help:"Stop before an attempt once the agent-reported tokens of this run (input, cache reads as the agent counts them, and output; resumes included) reach N (ralph.maxTokens)." placeholder:"N"`
	// VerifyTimeout bounds the ralph-verify hook (RALPH_VERIFY_TIMEOUT); 0: none.
	VerifyTimeout time.Duration `config:"ralph.verifyTimeout" help:"Stop the ralph-verify hook after this long and fail the attempt, e.g. 10m (ralph.verifyTimeout)." placeholder:"D"`
	// WaitOnLimit: on a usage or rate limit, wait up to this long and go on; 0: stop.
	WaitOnLimit time.Duration `config:"ralph.waitOnLimit" help:"On a usage or rate limit, wait up to this long for it to reset and go on, instead of stopping (ralph.waitOnLimit)." placeholder:"D"`
	// AllowRefChanges turns off the ref part of the trust surface: the agent may manage
	// branches and tags. Config and hooks stay watched.
	AllowRefChanges bool `name:"allow-ref-changes" config:"ralph.allowRefChanges" help:"Let the agent create, move and delete refs outside its own branch (ralph.allowRefChanges); git config and hooks stay protected."`
	// AllowSkip lets a story's attempt tick a task as skipped ("(skipped - not
	// automatable: …)") and count it done; false (ralph.allowSkip=false) fails such an
	// attempt, and the prompt does not offer the way out. The flag's default is true; a
	// zero Options has it false.
	AllowSkip bool `name:"allow-skip" negatable:"" default:"true" config:"ralph.allowSkip" help:"Let the agent tick a task it cannot do here with \"(skipped - not automatable: why)\"; the checkpoint, status, the report and the PR say so. --no-allow-skip fails such an attempt (ralph.allowSkip; default true)."`
	// TrustCurrent lets a crash-resume go on when the trust surface saved before the
	// attempt it cut short is missing or not valid, taking refs, config and hooks as
	// they are.
	TrustCurrent bool `name:"trust-current" help:"After a crash, go on although the record of what the agent may not change (.git/ralph/<change>/surface.json) is missing or not valid: refs, git config and hooks are taken as they are now. Look at them first."`
	Fresh        bool `help:"Discard an earlier run of this change and start over (its branch tip is kept under refs/ralph/<change>/backup/)."`
	DryRun       bool `help:"Print the next story's prompt and the agent command; run nothing, change nothing."`
	// Worktree runs the loop in a linked worktree of its own. A run that already has a
	// worktree always resumes in it.
	Worktree WorktreeOption `help:"Run in a linked worktree of its own, --worktree=PATH or under ralph.worktreeDir (default ../<repo>.ralph/<change>); your checkout is not touched."`

	// The runner side of a run on GitHub Actions (docs/REMOTE.md, "The runner's side"; the workflow 'ci init'
	// writes). Deadline: 0 is none.
	Adopt    bool          `hidden:"" help:"With no run record, rebuild it from the branch's commits and trailers (a fresh clone on a runner)."`
	RunID    int64         `name:"run-id" hidden:"" help:"The Actions run this loop works for: recorded, and a Ralph-Run trailer on each checkpoint." placeholder:"ID"`
	Deadline time.Duration `hidden:"" help:"Stop cleanly this long after starting, saving the attempt under way; exit code 75." placeholder:"D"`

	// What only git config says.
	AgentArgs      []string `kong:"-"` // ralph.agentArgs, split into words
	PromptTemplate string   `kong:"-"` // ralph.promptTemplate: a text/template file; "" for the embedded one
	// CheckpointMessage is a text/template of a checkpoint's subject over .ID, .Title and
	// .Change (ralph.checkpointMessage: snarktank's "feat: {{.ID}} - {{.Title}}"); "" for
	// docs/LOOP.md's "checkpoint: <id>". The body and the trailers are the same either way.
	CheckpointMessage string `kong:"-"`
	// Sandbox is the agent's sandbox as the CLI resolved it (--sandbox, ralph.sandbox*,
	// what the kernel offers); the zero value runs the agent unrestricted and says
	// nothing.
	Sandbox sandbox.Settings `kong:"-"`
}

// WorktreeOption is --worktree or --worktree=PATH (the CLI decodes it): On runs the loop
// in a linked worktree of its own, at Path, or where ralph.worktreeDir or the default puts
// it when Path is "".
type WorktreeOption struct {
	On   bool
	Path string
}

// OptionalValue is the placeholder of the value --worktree may have: the man page writes
// the flag as --worktree[=PATH].
func (w *WorktreeOption) OptionalValue() string { return "PATH" }

// Summary is what a finished (or stopped) start reports.
type Summary struct {
	Change, Branch, Original string
	Stories                  int // stories completed by this invocation
	Total                    int // stories in the change
	Attempts                 int // attempts made by this invocation
	Duration                 time.Duration
	CostUSD                  float64
	CostKnown                bool
	Tokens                   int64 // the run's, resumes included
	TokensKnown              bool
	Checkpoint               string
	Worktree                 string // the worktree of a worktree run

	// Set by a dry run.
	DryRun *DryRun
}

// DryRun is what a dry run would do next.
type DryRun struct {
	Notes  []string // what to know before the story starts (spec-kit checklists with open items)
	Story  string
	Title  string
	Prompt string
	Argv   []string
	// JudgeArgv is the judge's command line (start --judge), nil without one.
	JudgeArgv []string
	// Sandbox describes the policy the agent would run under, a line each (none
	// when the run's sandbox was not decided).
	Sandbox []string
	Done    bool // no incomplete story is left
}
