package loop

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/git-ralph/git-ralph/internal/agent"
	"github.com/git-ralph/git-ralph/internal/agents"
	"github.com/git-ralph/git-ralph/internal/git"
	"github.com/git-ralph/git-ralph/internal/prompt"
	"github.com/git-ralph/git-ralph/internal/run"
	"github.com/git-ralph/git-ralph/internal/sandbox"
	"github.com/git-ralph/git-ralph/internal/source"
	"github.com/git-ralph/git-ralph/internal/tasklist"
)

// Options are the inputs of `git ralph start`.
type Options struct {
	// Change is the run name. Start sets it from Arg when Arg is given: the change, the
	// spec-kit feature, or the path of a plan or a prd.json, as SPEC §2b resolves it.
	Change     string
	Arg        string
	Cwd        string // where a relative path in Arg starts from; "" for the top level
	StoryLevel int    // a plan's --story-level (ralph.storyLevel); 0 for the default
	Agent      string // driver name; "" means claude
	Model      string
	AgentArgs  []string
	// AgentEnvKeep names the secrets (agent.SecretEnv) the agent keeps in its
	// environment; the others are removed from it.
	AgentEnvKeep   []string
	MaxRetries     int
	Timeout        time.Duration
	IdleTimeout    time.Duration
	MaxCost        float64 // 0: no limit
	MaxTokens      int64   // 0: no limit
	Fresh          bool
	DryRun         bool
	PromptTemplate string // path of a text/template file; "" for the embedded one
	// CheckpointMessage is a text/template of a checkpoint's subject over .ID, .Title and
	// .Change (ralph.checkpointMessage: snarktank's "feat: {{.ID}} - {{.Title}}"); "" for
	// SPEC's "checkpoint: <id>". The body and the trailers are the same either way.
	CheckpointMessage string
	Kill              <-chan struct{} // closed on a second Ctrl-C: kill the agent at once
	Grace             time.Duration   // after the agent's result, before its group is killed; 0: agent default

	// AllowRefChanges turns off the ref part of the trust surface (--allow-ref-changes):
	// the agent may manage branches and tags. Config and hooks stay watched.
	AllowRefChanges bool

	// NoSkip (ralph.allowSkip=false) fails an attempt that ticks a task as skipped
	// ("(skipped - not automatable: …)") instead of counting it done, and the prompt
	// does not offer the way out.
	NoSkip bool

	VerifyTimeout time.Duration // bounds the ralph-verify hook (RALPH_VERIFY_TIMEOUT); 0: none
	WaitOnLimit   time.Duration // on a usage or rate limit, wait up to this long and go on; 0: stop

	// Worktree runs the loop in a linked worktree of its own (start --worktree), at
	// WorktreePath, or where ralph.worktreeDir or the default puts it when that is "".
	// A run that already has a worktree always resumes in it.
	Worktree     bool
	WorktreePath string

	// Sandbox is the agent's sandbox, resolved once by the CLI (--sandbox,
	// ralph.sandbox*); the zero value runs the agent unrestricted and says nothing.
	Sandbox sandbox.Settings

	// Driver, when set, runs the stories instead of the driver named by Agent (the demo
	// agent). It is never chosen from a file in the repository.
	Driver agent.Driver

	// The runner side of a run on GitHub Actions (REMOTE.md §5.5).
	Adopt    bool          // no record: rebuild it from the branch's commits and trailers
	RunID    int64         // the Actions run: recorded, and a Ralph-Run trailer on checkpoints
	Deadline time.Duration // stop cleanly this long after start; 0: no deadline

	deadlineAt time.Time
	src        source.Ref // the source Start resolved: what the record keeps, and the worktree's loop opens
}

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
	// Sandbox describes the policy the agent would run under, a line each (none
	// when the run's sandbox was not decided).
	Sandbox []string
	Done    bool // no incomplete story is left
}

// ErrInterrupted is returned when Ctrl-C or SIGTERM stopped the loop.
var ErrInterrupted = &Error{
	Msg:  "interrupted",
	Code: 130,
}

// ExitDeadline is the exit code of a loop stopped by its --deadline: the run is saved
// and resumable, not failed.
const ExitDeadline = 75

// ErrDeadline is returned when the loop stopped at its deadline.
var ErrDeadline = &Error{
	Msg:  "stopped at the deadline",
	Code: ExitDeadline,
}

// Start runs (or resumes) the loop of one change in the foreground.
func (l *Loop) Start(ctx context.Context, o Options) (*Summary, error) {
	if o.Agent == "" {
		o.Agent = "claude"
	}
	wctx := ctx
	if o.Deadline > 0 {
		// Wall-clock time, like the job's own limit (l.Now is the records' clock, a
		// fixed one in tests; l.Clock the limits', one a test moves).
		clock := agent.ClockOr(l.Clock)
		o.deadlineAt = clock.Now().Add(o.Deadline)
		var cancel context.CancelFunc
		wctx, cancel = context.WithCancel(ctx)
		defer cancel()
		go func() {
			select {
			case <-clock.After(o.Deadline):
				cancel()
			case <-wctx.Done():
			}
		}()
	}
	ch, drv, err := l.preflight(ctx, &o)
	if err != nil {
		return nil, err
	}
	wt, inWT, err := l.checkWhere(ctx, o)
	if err != nil {
		return nil, err
	}
	tree := l.Repo.Root
	if inWT {
		tree = wt
	}
	if o.DryRun {
		return l.dryRun(ctx, o, ch, drv, tree)
	}
	o.Sandbox.Level = l.sandboxLevel(o, tree)
	lock, err := l.Store.Lock(o.Change)
	if errors.Is(err, run.ErrLocked) {
		return nil, UserErr(
			"wait for it to end, or stop it with Ctrl-C in its terminal\n'git ralph status "+o.Change+"' shows where it stands",
			"a loop is already running for change %q", o.Change)
	}
	if err != nil {
		return nil, fmt.Errorf("lock change %q: %w", o.Change, err)
	}
	defer lock.Unlock()
	if inWT {
		return l.startWorktree(ctx, o, drv, wt)
	}

	rec, err := l.prepare(ctx, o)
	if err != nil {
		return nil, err
	}
	if ch == nil { // a crash left the source unreadable: prepare restored the checkpoint
		if ch, err = l.openRun(ctx, rec); err != nil {
			return nil, err
		}
		if ch.Warning != "" {
			l.Report.Warn(ch.RelDir + ": " + ch.Warning)
		}
		o.src = ch.Ref
	}
	sum, err := l.work(wctx, o, ch, drv, rec)
	if err == ErrInterrupted && ctx.Err() == nil && wctx.Err() != nil {
		// The deadline, not the user, stopped the attempt under way; it is saved.
		return sum, l.stop(rec, run.Interrupted, "deadline reached", ErrDeadline)
	}
	return sum, err
}

// startSource resolves what start names (o.Arg, else o.Change), once (source.Resolve:
// a run's name, a path, a change, a feature, …), where its run works: the checkout, or
// a worktree run's worktree, whose copy of the tracked file is the one the agent ticks.
// It sets o.Change to the run name and o.src to the source; from there on the source is
// opened (openRun, openSrc), never resolved again. inWT says the run is a worktree run.
func (l *Loop) startSource(ctx context.Context, o *Options) (s *source.Source, inWT bool, err error) {
	arg := o.Arg
	if arg == "" {
		arg = o.Change
	}
	r := l.where(ctx, o.Cwd)
	r.StoryLevel = o.StoryLevel
	if arg == "" { // a bare start: the run of this branch, spec-kit's current feature, the only run
		if r.Branch, err = l.Repo.Branch(ctx); err != nil {
			return nil, false, err
		}
	}
	if o.Adopt {
		r.Initial = l.initialTrailers(ctx) // the runner: the branch's initial state commit says which file it runs
	}
	s, err = l.resolve(ctx, r, arg)
	if err != nil {
		var re *source.RunError
		if errors.As(err, &re) {
			o.Change = re.Run
		}
		_, inWT := l.worktreeRunRepo(ctx, o.Change)
		return nil, inWT, err
	}
	o.Change = s.Name
	wtRepo, inWT := l.worktreeRunRepo(ctx, s.Name)
	if err := runnable(s); err != nil {
		return nil, inWT, err
	}
	if err := checkTracked(ctx, wtRepo, s); err != nil {
		return nil, inWT, err
	}
	o.src = s.Ref
	return s, inWT, nil
}

// openSrc opens the source Start resolved (o.src) where this Loop works: a worktree
// run's loop reads it in its worktree.
func (l *Loop) openSrc(ctx context.Context, o Options) (*source.Source, error) {
	s, err := l.Sources.Open(l.where(ctx, ""), o.src)
	if err != nil {
		return nil, sourceErr(err)
	}
	if rec := l.runRecord(o.Change); rec != nil {
		s.Name = rec.Change
		s.KeepIDs(source.RecordedIDs(rec))
	}
	return s, runnable(s)
}

// openRun opens the source rec records, where its run works.
func (l *Loop) openRun(ctx context.Context, rec *run.Record) (*source.Source, error) {
	s, err := l.Sources.OpenRun(l.where(ctx, ""), rec)
	if err != nil {
		return nil, sourceErr(err)
	}
	if err := checkRunName(ctx, l.Repo, s); err != nil {
		return nil, err
	}
	return s, runnable(s)
}

// crashedRun reports whether change has a run that a killed git-ralph left: its record
// says it was at work and nobody holds its lock. The name is only looked up among the
// runs listed, never joined into a path.
func (l *Loop) crashedRun(change string) bool {
	names, err := l.Store.Changes()
	if err != nil || !slices.Contains(names, change) || l.Store.Held(change) {
		return false
	}
	rec, err := l.Store.Load(change)
	return err == nil && (rec.Status == run.Running || rec.Status == run.Starting || rec.Busy != "")
}

// preflight checks everything that can be checked before anything changes.
func (l *Loop) preflight(ctx context.Context, o *Options) (*source.Source, agent.Driver, error) {
	// A worktree run's change is read in its worktree, and the state of this checkout
	// does not concern it.
	ch, inWT, err := l.startSource(ctx, o)
	if err != nil && !o.DryRun && l.crashedRun(o.Change) {
		// A git (or an agent) killed half-way may have left the change's files missing
		// from the worktree: the resume restores the checkpoint, then the change is read.
		ch, err = nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	if !inWT {
		if err := l.checkCheckout(ctx, *o); err != nil {
			return nil, nil, err
		}
	}
	if _, err := l.Repo.Head(ctx); errors.Is(err, git.ErrNoCommits) {
		return nil, nil, UserErr("make a first commit (git commit --allow-empty -m init), then run 'git ralph start "+o.Change+"' again",
			"the repository has no commits yet")
	} else if err != nil {
		return nil, nil, err
	}
	drv := o.Driver
	if drv == nil {
		drv, err = agents.Lookup(o.Agent)
	}
	if err != nil {
		return nil, nil, UserErr("known agents: "+strings.Join(agents.Names(), ", ")+"; choose one with --agent or 'git config ralph.agent'",
			"unknown agent %q", o.Agent)
	}
	if err := agent.Preflight(drv, l.request(*o, "", nil)); err != nil {
		var pe *agent.PreflightError
		if errors.As(err, &pe) {
			return nil, nil, &Error{Msg: pe.Error(), Hint: pe.Hint(), Err: err}
		}
		return nil, nil, err
	}
	if err := checkBudget(*o, drv, l.request(*o, "", nil)); err != nil {
		return nil, nil, err
	}
	if _, err := agent.LookPath(drv); err != nil {
		hint := ""
		var nf *agent.NotFoundError
		if errors.As(err, &nf) {
			hint = nf.Hint()
		}
		msg := fmt.Sprintf("agent %q: %s not found on PATH", drv.Name(), drv.Binary())
		if !o.DryRun {
			return nil, nil, &Error{Msg: msg, Hint: hint, Err: err}
		}
		// A preview of the prompt needs no agent: say that it is missing, and go on.
		l.Report.Warn(msg + "; a real run needs it")
	}
	if _, err := checkpointSubject(o.CheckpointMessage, o.Change, tasklist.Story{ID: "1", Title: "Title"}); err != nil {
		return nil, nil, err // refused before anything changes, not at the first checkpoint
	}
	if o.PromptTemplate != "" {
		if _, err := os.Stat(o.PromptTemplate); err != nil {
			return nil, nil, UserErr("point 'git config ralph.promptTemplate' at a readable Go text/template file, or unset it",
				"prompt template %s: %v", o.PromptTemplate, errors.Unwrap(err))
		}
	}
	if ch != nil && ch.Warning != "" {
		l.Report.Warn(ch.RelDir + ": " + ch.Warning)
	}
	return ch, drv, nil
}

// checkBudget refuses a budget the agent could not be held to: --max-cost for an
// agent that reports no cost, --max-tokens for one that reports no tokens. Not
// capping while the user believes it caps would be worse than not starting.
func checkBudget(o Options, drv agent.Driver, req agent.Request) error {
	cost, tokens := agent.Reports(drv, req)
	switch {
	case o.MaxCost > 0 && !cost && tokens:
		return UserErr("cap it with --max-tokens N (or 'git config ralph.maxTokens N') instead, or drop --max-cost",
			"agent %q reports no cost, so --max-cost could not stop it", drv.Name())
	case o.MaxCost > 0 && !cost:
		return UserErr("drop --max-cost (and 'git config ralph.maxCost'), or use an agent that reports its cost",
			"agent %q reports neither cost nor tokens, so --max-cost could not stop it", drv.Name())
	case o.MaxTokens > 0 && !tokens:
		return UserErr("drop --max-tokens (and 'git config ralph.maxTokens'), or use an agent that reports its tokens",
			"agent %q reports no tokens, so --max-tokens could not stop it", drv.Name())
	}
	return nil
}

// checkCheckout refuses a checkout in the middle of an operation, or with unmerged paths:
// its work is what a new run starts from.
func (l *Loop) checkCheckout(ctx context.Context, o Options) error {
	if op, err := l.Repo.InProgress(ctx); err != nil {
		return err
	} else if op != "" {
		return UserErr(inProgressHint(op)+", then run 'git ralph start "+o.Change+"' again",
			"a %s is in progress", op)
	}
	if paths, err := l.Repo.UnmergedPaths(ctx); err != nil {
		return err
	} else if len(paths) > 0 {
		return UserErr("resolve them and commit, then run 'git ralph start "+o.Change+"' again",
			"%d unmerged path(s): %s", len(paths), strings.Join(paths, ", "))
	}
	return nil
}

// checkBranchFree refuses a run whose branch is checked out in a worktree other than
// the one the loop works in (the user's checkout, or the run's own worktree): git
// before 2.44 would reset it under whatever works there.
func (l *Loop) checkBranchFree(ctx context.Context, change, wt string, inWT bool) error {
	branch := BranchName(change)
	wts, err := l.Repo.WorktreeBranches(ctx)
	if err != nil {
		return err
	}
	here := l.Repo.Root
	if inWT {
		here = wt
	}
	if p, ok := wts[branch]; ok && !git.SamePath(p, here) {
		return UserErr("finish or remove that worktree first (git worktree remove "+p+")",
			"branch %s is checked out in another worktree: %s", branch, p)
	}
	return nil
}

// openOutsideStories is the error for a change whose stories are all complete while
// OpenSpec still counts an open task in it: git-ralph never calls such a change complete.
func openOutsideStories(ch *source.Source) error {
	n := ch.OpenOutsideStories()
	if n == 0 {
		return nil
	}
	return UserErr("put them under a '## ' heading in "+ch.TasksRel+", then run 'git ralph start "+ch.Name+"' again",
		"%s has %d open task(s) that belong to no story; the change is not complete", ch.TasksRel, n)
}

func (l *Loop) dryRun(ctx context.Context, o Options, ch *source.Source, drv agent.Driver, tree string) (*Summary, error) {
	s := &Summary{Change: o.Change, Branch: BranchName(o.Change), Total: len(ch.Stories), DryRun: &DryRun{}}
	story, ok := ch.NextStory()
	if !ok {
		if err := openOutsideStories(ch); err != nil {
			return nil, err
		}
		s.DryRun.Done = true
		return s, nil
	}
	reason := ""
	n := 1
	if rec, err := l.Store.Load(o.Change); err == nil {
		reason = rec.LastReason(story.ID)
		n = len(rec.AttemptsOf(story.ID)) + 1
	}
	learnings := ""
	learnings = prompt.ReadLearnings(l.Repo.Root, ch, l.Store.LearningsPath(ch.Name))
	text, err := l.render(o, ch, story, learnings, reason, n)
	if err != nil {
		return nil, err
	}
	s.DryRun.Story, s.DryRun.Title, s.DryRun.Prompt, s.DryRun.Notes = story.ID, story.Title, text, ch.Notes
	s.DryRun.Argv = drv.Argv(l.request(o, "", nil))
	s.DryRun.Sandbox = l.describeSandbox(o, drv, tree, agentFiles(ch, l.Store.LearningsPath(ch.Name)))
	return s, nil
}

func (l *Loop) request(o Options, text string, env []string) agent.Request {
	return agent.Request{
		Prompt:      text,
		Dir:         l.Repo.Root,
		Env:         append(env, l.worktreeEnv()...),
		Model:       o.Model,
		Args:        o.AgentArgs,
		KeepEnv:     o.AgentEnvKeep,
		Timeout:     o.Timeout,
		IdleTimeout: o.IdleTimeout,
		Grace:       o.Grace,
		Kill:        o.Kill,
		Clock:       l.Clock,
	}
}

func (l *Loop) render(o Options, ch *source.Source, s tasklist.Story, learnings, reason string, n int) (string, error) {
	d := prompt.ForSource(ch, s, l.Store.LearningsPath(ch.Name), learnings, n, o.MaxRetries+1, reason)
	d.NoSkip = o.NoSkip
	text, err := prompt.Render(o.PromptTemplate, d)
	if err != nil {
		return "", &Error{Msg: err.Error(), Hint: "fix the template named by 'git config ralph.promptTemplate', or unset it", Err: err}
	}
	return text, nil
}

// storyIndex is the 1-based position of a story among the change's stories.
func storyIndex(ch *source.Source, id string) int {
	for i, s := range ch.Stories {
		if s.ID == id {
			return i + 1
		}
	}
	return 0
}

func itoa(i int) string { return strconv.Itoa(i) }

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
