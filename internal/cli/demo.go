package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/git-ralph/git-ralph/internal/demo"
	"github.com/git-ralph/git-ralph/internal/git"
	"github.com/git-ralph/git-ralph/internal/loop"
	"github.com/git-ralph/git-ralph/internal/run"
	"github.com/git-ralph/git-ralph/internal/start"
	"github.com/git-ralph/git-ralph/internal/tell"
)

type demoCmd struct {
	Dir  string `help:"Make the demo repository in DIR (absent or empty); default: a new temporary directory." placeholder:"DIR" type:"path"`
	Keep bool   `help:"Finish with --keep instead of --squash, so ralph/add-greeter keeps its checkpoint commits."`
	Fast bool   `help:"No pauses (for tests and CI)."`
}

// Help is the long help of demo.
func (c *demoCmd) Help() string {
	return `Creates a throwaway git repository holding a small OpenSpec change (three stories of a
tiny program) and runs the real loop on it with a scripted agent built into git-ralph: no
API key, no network, no OpenSpec install. One story fails once and succeeds on the retry,
with the reason in its prompt. Then it shows 'git ralph status' and runs
'git ralph finish --squash'. Nothing outside the demo directory is touched.`
}

func (c *demoCmd) Run(e *env) error {
	s := e.s
	p := s.Palette()
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("find git-ralph's own binary: %w", err)
	}
	dir, repo, err := c.setUp(e)
	if err != nil {
		return err
	}
	say := func(format string, a ...any) { fmt.Fprintf(s.Err, p.Bold("demo: ")+format+"\n", a...) }
	say("a throwaway repository in %s", dir)
	say("its change %q has 3 stories in openspec/changes/%s/tasks.md", demo.Change, demo.Change)
	say("the agent is a scripted stand-in that speaks Claude Code's stream-json; the loop is the real one")
	c.pause(time.Second)
	fmt.Fprintf(s.Err, "\n%s git ralph start %s\n", p.Dim("$"), demo.Change)
	l := loop.New(repo, newReporter(s))
	delay := 250 * time.Millisecond
	if c.Fast {
		delay = 0
	}
	l.Driver, l.Kill = demo.Driver(exe, delay), e.kill
	sum, err := l.Start(e.ctx, start.Options{Arg: demo.Change, Agent: "demo", MaxRetries: 3, AllowSkip: true})
	if err != nil {
		if errors.Is(err, tell.ErrInterrupted) {
			return &tell.Error{Msg: "interrupted", Code: 130, Hint: "the demo repository is in " + dir}
		}
		return err
	}
	printSummary(s, sum, true)
	printReport(e, l, demo.Change) // as start does: the demo shows the real end of a run
	c.pause(time.Second)
	fmt.Fprintf(s.Err, "\n%s git ralph status\n", p.Dim("$"))
	r, err := reader(l).Status(e.ctx, demo.Change)
	if err != nil {
		return err
	}
	narrate := *s
	narrate.Out = s.Err // the whole demo is one narrative on stderr
	renderStatus(&narrate, r)
	c.pause(2 * time.Second)
	mode, flag := run.Squash, "--squash"
	if c.Keep {
		mode, flag = run.Keep, "--keep"
	}
	fmt.Fprintf(s.Err, "\n%s git ralph finish %s\n", p.Dim("$"), flag)
	res, err := runFinish(e, l, demo.Change, mode)
	if err != nil {
		return err
	}
	printFinish(s, res, mode)
	fmt.Fprintf(s.Err, "\n%s git ralph report\n", p.Dim("$"))
	reportFile := reportPath(l, demo.Change)
	if err := writeReport(context.WithoutCancel(e.ctx), l, demo.Change, reportFile); err != nil {
		return err
	}
	fmt.Fprintln(s.Err, reportFile)
	fmt.Fprintln(s.Err)
	c.sayWhatHappened(e, say, dir, res, reportFile)
	return nil
}

// pause waits d between the demo's steps, for a reader to follow; not with --fast.
func (c *demoCmd) pause(d time.Duration) {
	if !c.Fast {
		time.Sleep(d)
	}
}

// setUp makes the demo's repository in --dir (absolute), or in a new temporary
// directory.
func (c *demoCmd) setUp(e *env) (string, *git.Repo, error) {
	dir := c.Dir
	if dir == "" {
		d, err := os.MkdirTemp("", "git-ralph-demo-")
		if err != nil {
			return "", nil, err
		}
		dir = d
	}
	dir, err := filepath.Abs(dir)
	if err != nil {
		return "", nil, err
	}
	repo, err := demo.Setup(e.ctx, dir)
	if errors.Is(err, demo.ErrNotEmpty) {
		return "", nil, &tell.Error{Msg: fmt.Sprintf("%s is not empty", dir), Hint: "give --dir a new or empty directory, or leave it out to use a temporary one"}
	}
	if err != nil {
		return "", nil, fmt.Errorf("set up the demo repository: %w", err)
	}
	if e.verbose {
		repo.Trace = e.s.Err
	}
	return dir, repo, nil
}

// sayWhatHappened ends the demo: what the loop did, where it is kept, and what to try.
func (c *demoCmd) sayWhatHappened(e *env, say func(string, ...any), dir string, res *run.FinishResult, reportFile string) {
	branch := loop.BranchName(demo.Change)
	logRef := branch
	if !c.Keep {
		logRef = res.Backup
	}
	say("story 1 and story 3 passed at once. Story 2 said FAILED: its attempt was kept as")
	say("refs/ralph/%s/attempts/2-1, the branch went back to the checkpoint, and the retry,", demo.Change)
	say("with the reason in its prompt, passed.")
	if c.Keep {
		say("the branch %s keeps its checkpoint commits.", branch)
	} else {
		say("the work is now uncommitted on %s, as if you had written it.", res.Target)
	}
	say("the repository stays in %s. Try:", dir)
	w := e.s.Err
	fmt.Fprintf(w, "  git -C %s log --oneline %s\n", dir, logRef)
	fmt.Fprintf(w, "  git -C %s show --stat refs/ralph/%s/attempts/2-1\n", dir, demo.Change)
	fmt.Fprintf(w, "  open %s in a browser: the run's morning report, made from git after the finish\n", reportFile)
	fmt.Fprintf(w, "  git ralph status           (in your own repository, while a run is on)\n")
	fmt.Fprintf(w, "  git ralph start <change>   (in your own OpenSpec repository, with a real agent: Claude Code by default)\n")
}

type demoAgentCmd struct {
	Args []string `arg:"" optional:"" passthrough:"all" help:"Claude Code's headless arguments."`
}

// Run is the scripted agent of the demo; git-ralph runs its own binary with it.
func (c *demoAgentCmd) Run(e *env) error {
	if code := demo.AgentMain(c.Args, e.s.In, e.s.Out, e.s.Err, os.Getenv); code != 0 {
		panic(exitRequest(code))
	}
	return nil
}
