package loop

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"github.com/git-ralph/git-ralph/internal/tell"
	"os"
	"strconv"
	"time"

	"github.com/git-ralph/git-ralph/internal/agent"
	"github.com/git-ralph/git-ralph/internal/git"
	"github.com/git-ralph/git-ralph/internal/preflight"
	"github.com/git-ralph/git-ralph/internal/prompt"
	"github.com/git-ralph/git-ralph/internal/run"
	"github.com/git-ralph/git-ralph/internal/sandbox"
	"github.com/git-ralph/git-ralph/internal/source"
	"github.com/git-ralph/git-ralph/internal/start"
	"github.com/git-ralph/git-ralph/internal/tasklist"
)

// Resolved is what Start resolved of its Options, once, before anything changes: the
// run's name, its task source, the agent and its driver, the sandbox where the run
// works, the deadline. Start hands it on (to the run, to a worktree run's workflow, to
// a runner's adopt) instead of rewriting the Options, which it holds as given.
type Resolved struct {
	start.Options // as the user gave them

	Change string       // the run name: Arg's, or what is current
	Source source.Ref   // the task source: what the record keeps, and a worktree run's loop opens
	Agent  string       // Options.Agent, or claude when it was left empty
	Driver agent.Driver // the driver Agent names, or Loop.Driver
	// JudgeDriver is the judge's driver (Options.Judge, or Loop.JudgeDriver); nil: none.
	JudgeDriver agent.Driver
	// Sandbox is Options.Sandbox with its level for the working tree the run works in
	// (whether the git directory is inside it, or writable besides).
	Sandbox sandbox.Settings

	deadline time.Time // when --deadline stops the run, on the limits' clock; zero: never
}

// Start runs (or resumes) the loop of one change in the foreground.
func (l *Loop) Start(ctx context.Context, o start.Options) (*start.Summary, error) {
	r, src, err := l.preflight(ctx, o)
	if err != nil {
		return nil, err
	}
	wt, inWT, err := l.checkWhere(ctx, r)
	if err != nil {
		return nil, err
	}
	tree := l.Repo.Root
	if inWT {
		tree = wt
	}
	r.Sandbox.Level = preflight.SandboxLevel(r.Sandbox, tree, l.Repo.CommonDir)
	if lvl := r.Sandbox.Level; lvl.InPlace && lvl.Required {
		return nil, &tell.Error{Msg: "cannot make the git directory read-only to the agent: " + lvl.Stays,
			Hint: "run the change in a worktree of its own (--worktree), or let the git directory stay writable, checked after each attempt (--sandbox=auto)"}
	}
	if o.DryRun {
		return l.dryRun(r, src, tree)
	}
	lock, err := l.Store.Lock(r.Change)
	if errors.Is(err, run.ErrLocked) {
		return nil, tell.UserErr(
			"wait for it to end, or stop it with Ctrl-C in its terminal\n'git ralph status "+r.Change+"' shows where it stands",
			"a loop is already running for change %q", r.Change)
	}
	if err != nil {
		return nil, fmt.Errorf("lock change %q: %w", r.Change, err)
	}
	defer lock.Unlock()
	if inWT {
		return l.startWorktree(ctx, r, wt)
	}
	putBack, err := l.moveGitDir(r)
	if err != nil {
		return nil, err
	}
	defer putBack()
	if l.moved != nil && src != nil && src.IsOutside() {
		// Its tracked file lives in the git directory, now elsewhere.
		if src, err = l.openResolved(ctx, r); err != nil {
			return nil, err
		}
	}
	rec, err := l.prepare(ctx, r)
	if err != nil {
		return nil, err
	}
	if src == nil { // a crash left the source unreadable: prepare restored the checkpoint
		if src, err = l.openRun(ctx, rec); err != nil {
			return nil, err
		}
		if src.Warning != "" {
			l.Report.Warn(src.RelDir + ": " + src.Warning)
		}
		r.Source = src.Ref
	}
	return l.session(r, rec, src).work(ctx)
}

// resolveSource resolves what start names (o.Arg) once, where its run works (the checkout,
// or a worktree run's worktree, whose tracked file the agent ticks); from there on the source
// is opened, never resolved again. It returns the run's name even when the source cannot be
// read, and inWT says the run is a worktree run.
func (l *Loop) resolveSource(ctx context.Context, o start.Options) (name string, s *source.Source, inWT bool, err error) {
	r := l.where(ctx, o.Cwd)
	r.StoryLevel = o.StoryLevel
	if o.Arg == "" { // a bare start: the run of this branch, spec-kit's current feature, the only run
		if r.Branch, err = l.Repo.Branch(ctx); err != nil {
			return "", nil, false, err
		}
	}
	if o.Adopt && l.Remote != nil {
		r.Initial = l.Remote.Initial(ctx, l) // the runner: the branch's initial state commit says which file it runs
	}
	s, err = l.resolve(ctx, r, o.Arg)
	if err != nil {
		name = o.Arg
		var re *source.RunError
		if errors.As(err, &re) {
			name = re.Run
		}
		_, inWT := l.worktreeRunRepo(ctx, name)
		return name, nil, inWT, err
	}
	wtRepo, inWT := l.worktreeRunRepo(ctx, s.Name)
	if err := preflight.Runnable(s); err != nil {
		return s.Name, nil, inWT, err
	}
	if err := preflight.Tracked(ctx, wtRepo, s); err != nil {
		return s.Name, nil, inWT, err
	}
	return s.Name, s, inWT, nil
}

// openResolved opens the source Start resolved (r.Source) where this Loop works: a
// worktree run's loop reads it in its worktree.
func (l *Loop) openResolved(ctx context.Context, r *Resolved) (*source.Source, error) {
	s, err := l.Sources.Open(l.where(ctx, ""), r.Source)
	if err != nil {
		return nil, preflight.SourceErr(err)
	}
	if rec, err := l.Store.LoadListed(r.Change); err != nil {
		return nil, err
	} else if rec != nil {
		s.Name = rec.Change
		s.KeepIDs(source.RecordedIDs(rec))
	}
	return s, preflight.Runnable(s)
}

// openRun opens the source rec records, where its run works.
func (l *Loop) openRun(ctx context.Context, rec *run.Record) (*source.Source, error) {
	s, err := l.Sources.OpenRun(l.where(ctx, ""), rec)
	if err != nil {
		return nil, preflight.SourceErr(err)
	}
	if err := preflight.RunName(ctx, l.Repo, s, BranchName(s.Name)); err != nil {
		return nil, err
	}
	return s, preflight.Runnable(s)
}

// preflight resolves o (the run's name and source, the agent's driver) and checks
// everything that can be checked before anything changes. The source is nil when a
// crash left it unreadable: the resume restores the checkpoint, then it is read.
func (l *Loop) preflight(ctx context.Context, o start.Options) (*Resolved, *source.Source, error) {
	r := &Resolved{Options: o, Agent: cmp.Or(o.Agent, "claude"), Sandbox: o.Sandbox}
	if o.Deadline > 0 {
		// Wall-clock time, like the job's own limit (l.Now is the records' clock, a
		// fixed one in tests; l.Waits.Clock the limits', one a test moves).
		r.deadline = agent.ClockOr(l.Waits.Clock).Now().Add(o.Deadline)
	}
	// A worktree run's change is read in its worktree, and the state of this checkout
	// does not concern it.
	name, src, inWT, err := l.resolveSource(ctx, o)
	r.Change = name
	if err != nil && !o.DryRun && l.Store.Crashed(name) {
		// A git (or an agent) killed half-way may have left the change's files missing
		// from the worktree: the resume restores the checkpoint, then the change is read.
		err = nil
	}
	if err != nil {
		return nil, nil, err
	}
	if src != nil {
		r.Source = src.Ref
	}
	if !inWT {
		if err := preflight.Checkout(ctx, l.Repo, r.Change); err != nil {
			return nil, nil, err
		}
	}
	if _, err := l.Repo.Head(ctx); errors.Is(err, git.ErrNoCommits) {
		return nil, nil, tell.UserErr("make a first commit (git commit --allow-empty -m init), then run 'git ralph start "+r.Change+"' again",
			"the repository has no commits yet")
	} else if err != nil {
		return nil, nil, err
	}
	if r.Driver, err = preflight.Driver(r.Agent, l.Driver); err != nil {
		return nil, nil, err
	}
	preflight.Filters(ctx, l.Repo, l.Report.Warn)
	if err := preflight.Agent(r.Driver, l.request(r, "", nil), budget(r), r.DryRun, l.Report.Warn); err != nil {
		return nil, nil, err
	}
	if err := l.checkJudge(r); err != nil {
		return nil, nil, err
	}
	if _, err := checkpointSubject(o.CheckpointMessage, r.Change, tasklist.Story{ID: "1", Title: "Title"}); err != nil {
		return nil, nil, err // refused before anything changes, not at the first checkpoint
	}
	if o.PromptTemplate != "" {
		if _, err := os.Stat(o.PromptTemplate); err != nil {
			return nil, nil, &tell.Error{Msg: fmt.Sprintf("prompt template %s: %v", o.PromptTemplate, errors.Unwrap(err)),
				Hint: "point 'git config ralph.promptTemplate' at a readable Go text/template file, or unset it", Err: err}
		}
	}
	if src != nil && src.Warning != "" {
		l.Report.Warn(src.RelDir + ": " + src.Warning)
	}
	return r, src, nil
}

// dryRun is what the run r would do next, in tree: the next story's prompt, the agent's
// command line and its sandbox.
func (l *Loop) dryRun(r *Resolved, src *source.Source, tree string) (*start.Summary, error) {
	s := &start.Summary{Change: r.Change, Branch: BranchName(r.Change), Total: len(src.Stories), DryRun: &start.DryRun{}}
	story, ok := src.NextStory()
	if !ok {
		if err := preflight.OpenOutsideStories(src); err != nil {
			return nil, err
		}
		s.DryRun.Done = true
		return s, nil
	}
	reason := ""
	n := 1
	if rec, err := l.Store.Load(r.Change); err == nil {
		reason = rec.LastReason(story.ID)
		n = len(rec.AttemptsOf(story.ID)) + 1
	}
	learnings := prompt.ReadLearnings(l.Repo.Root, src, l.Store.LearningsPath(src.Name), l.Store.Open)
	text, err := l.render(r, src, story, learnings, reason, n)
	if err != nil {
		return nil, err
	}
	s.DryRun.Story, s.DryRun.Title, s.DryRun.Prompt, s.DryRun.Notes = story.ID, story.Title, text, src.Notes
	s.DryRun.Argv = r.Driver.Argv(l.request(r, "", nil))
	if r.JudgeDriver != nil {
		s.DryRun.JudgeArgv = r.JudgeDriver.Argv(l.judgeRequest(r, "", nil))
	}
	s.DryRun.Sandbox = preflight.DescribeSandbox(r.Sandbox, r.Driver, tree, l.Repo.CommonDir, agentFiles(src, l.Store.LearningsPath(src.Name)))
	return s, nil
}

// request is the agent request of r's run: the prompt text, env added to the agent's
// environment.
func (l *Loop) request(r *Resolved, text string, env []string) agent.Request {
	return agent.Request{
		Prompt:      text,
		Dir:         l.Repo.Root,
		Env:         append(env, l.worktreeEnv()...),
		Model:       r.Model,
		Args:        r.AgentArgs,
		KeepEnv:     r.AgentEnvKeep,
		Timeout:     r.Timeout,
		IdleTimeout: r.IdleTimeout,
		Kill:        l.Kill,
		Clock:       l.Waits.Clock,
	}
}

// render is the prompt of attempt n at story s of src.
func (l *Loop) render(r *Resolved, src *source.Source, s tasklist.Story, learnings, reason string, n int) (string, error) {
	d := prompt.ForSource(src, s, l.Store.LearningsPath(src.Name), learnings, n, r.MaxRetries+1, reason)
	d.NoSkip = !r.AllowSkip
	text, err := prompt.Render(r.PromptTemplate, d)
	if err != nil {
		return "", &tell.Error{Msg: err.Error(), Hint: "fix the template named by 'git config ralph.promptTemplate', or unset it", Err: err}
	}
	return text, nil
}

// storyIndex is the 1-based position of a story among the change's stories.
func storyIndex(src *source.Source, id string) int {
	for i, s := range src.Stories {
		if s.ID == id {
			return i + 1
		}
	}
	return 0
}

func itoa(i int) string { return strconv.Itoa(i) }
