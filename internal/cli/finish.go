package cli

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/git-ralph/git-ralph/internal/finish"
	"github.com/git-ralph/git-ralph/internal/github"
	"github.com/git-ralph/git-ralph/internal/githubflow"
	"github.com/git-ralph/git-ralph/internal/loop"
	"github.com/git-ralph/git-ralph/internal/run"
	"github.com/git-ralph/git-ralph/internal/source"
	"github.com/git-ralph/git-ralph/internal/status"
	"github.com/git-ralph/git-ralph/internal/tell"
	"github.com/git-ralph/git-ralph/internal/term"
)

type finishCmd struct {
	Change    string `arg:"" optional:"" help:"The change; may be left out when exactly one run exists."`
	Squash    bool   `xor:"mode" required:"" help:"Back to the original branch with all the work uncommitted; delete ralph/<change>."`
	Keep      bool   `xor:"mode" required:"" help:"Stay on ralph/<change> with its checkpoint commits."`
	PR        bool   `name:"pr" xor:"mode" required:"" help:"Push ralph/<change> and open (or update) its GitHub pull request; back to the original branch."`
	Wait      bool   `help:"For a run on GitHub Actions: wait until it has completed (polling as status --watch does), then finish."`
	Cancel    bool   `help:"For a run on GitHub Actions: cancel it, wait until it has completed, then bring home what it published."`
	OntoMoved bool   `name:"onto-moved" help:"With --squash or --pr: go on although the original branch moved since the run started (finish lists the commits and refuses without it)."`
	Prune     bool   `name:"prune-remote" help:"For a run on GitHub Actions: once finished, delete ralph/<change> and the run's refs on the git remote (with a lease: never a tip pushed there since)."`

	Draft  *bool  `name:"draft" negatable:"" help:"With --pr: open the pull request as a draft (default: git config ralph.prDraft)."`
	Base   string `name:"base" placeholder:"BRANCH" help:"With --pr: the branch to merge into (default: the branch the run started from)."`
	Remote string `name:"remote" placeholder:"NAME" help:"With --pr: the git remote to push to (default: git config ralph.remote, the branch's pushRemote, remote.pushDefault, origin)."`
	Repo   string `name:"repo" placeholder:"[HOST/]OWNER/REPO" help:"With --pr: the GitHub repository of the pull request (default: git config ralph.repo, GH_REPO, the push remote's, or its parent for a fork)."`
}

// Help is the long help of finish.
func (c *finishCmd) Help() string {
	return `--squash switches back to the branch the run started from, squash-merges ralph/<change>
onto it, unstages everything (so the whole change is uncommitted work, as before the
run, plus what the agent did) and deletes the branch. The branch tip stays reachable
under refs/ralph/<change>/backup/. It refuses, changing nothing, while a loop runs, when
the working tree has uncommitted changes, when the original branch is gone, or when it
moved since the run started (it names both commits and lists those in between; if they
are yours, --onto-moved goes on; --keep only warns); if the squash conflicts, the
original branch is put back as it was and ralph/<change> intact (if git cannot put it
back, the error says so).

--keep stays on (or switches to) ralph/<change> and forgets the run; the branch keeps
its checkpoint commits.

--pr pushes ralph/<change> (with --force-with-lease against the tip it last pushed;
git-ralph's own pre-push guard lets this one push through; your pre-push hook runs in
the verify gate's sandbox, ralph.verifySandbox, before a push that runs no hook) and
opens its pull request on GitHub, or updates the description of the one already open.
The token is gh's: GH_TOKEN, GITHUB_TOKEN, GH_ENTERPRISE_TOKEN, or 'gh auth login'.
Every check runs before anything changes; if the pull request call fails after the
push, run it again: it only makes the call. Then it switches back to the branch the
run started from, keeps ralph/<change> (the pull request's head), forgets the run and
prints the pull request's URL.

For a run on GitHub Actions, finish refuses until the run has published; --wait waits
for it, and --cancel cancels it first (the loop saves its attempt, the run publishes
what it has) and waits. --prune-remote (with --squash or --keep) then deletes
ralph/<change> and refs/ralph/<change>/runs/<run-id>/ on the git remote, all or none,
each only if it is still where the run left it; the run's refs stay here.`
}

func (c *finishCmd) Run(e *env) error {
	l, err := e.loop()
	if err != nil {
		return err
	}
	l.OntoMoved = c.OntoMoved
	rem, err := e.remote()
	if err != nil {
		return err
	}
	var prune *githubflow.PruneTarget
	if c.Prune || c.Cancel {
		if c.Prune && c.PR {
			return &usageError{msg: "--prune-remote does not go with --pr (ralph/<change> is the pull request's head)", hint: "see 'git ralph finish -h'"}
		}
		if prune, err = rem.RemotePruneTarget(c.Change); err != nil {
			return err
		}
		c.Change = prune.Change
	}
	if c.Cancel {
		if err := c.cancel(e, rem); err != nil {
			return err
		}
	}
	if c.Wait || c.Cancel {
		if err := c.wait(e, rem); err != nil {
			return err
		}
	} else {
		refreshRemote(e, rem, c.Change)
	}
	if c.PR {
		return c.runPR(e, l)
	}
	if c.Draft != nil || c.Base != "" || c.Remote != "" || c.Repo != "" {
		return &usageError{msg: "--draft, --base, --remote and --repo go with --pr", hint: "see 'git ralph finish -h'"}
	}
	mode := run.Keep
	if c.Squash {
		mode = run.Squash
	}
	closing := c.closingLines(l) // read before the run is forgotten
	res, err := runFinish(e, l, c.Change, mode)
	if err != nil {
		return err
	}
	printFinish(e.s, res, mode)
	if len(closing) > 0 {
		fmt.Fprintf(e.s.Err, "for your commit message or pull request, to close the issues when it lands:\n")
		fmt.Fprintln(e.s.Out, strings.Join(closing, "\n"))
	}
	if c.Prune {
		return c.prune(e, rem, prune)
	}
	return nil
}

// closingLines are the "Closes OWNER/REPO#N" lines of the run finish is about (a GitHub
// issue run's), none when it has none or cannot be read.
func (c *finishCmd) closingLines(l *loop.Loop) []string {
	name, err := l.ResolveRun(c.Change)
	if err != nil {
		return nil
	}
	rec, err := l.Store.Load(name)
	if err != nil {
		return nil
	}
	ch, err := l.Sources.OpenRun(source.Repo{Root: l.Repo.Root, Runs: l.Store}, rec)
	if err != nil {
		return nil
	}
	return githubflow.ClosingLines(rec, ch, "")
}

// cancel is finish --cancel: ask GitHub to cancel the run (a run already over is left
// as it is); wait then follows it to its end.
func (c *finishCmd) cancel(e *env, rem *githubflow.Remote) error {
	res, err := rem.CancelRemote(e.ctx, c.Change, false, e.github)
	if err != nil {
		return err
	}
	p := e.s.Palette()
	if res.AlreadyComplete {
		fmt.Fprintf(e.s.Err, "%s run %d of %s is already completed; nothing to cancel\n", p.Success("✓"), res.RunID, res.Change)
	} else {
		fmt.Fprintf(e.s.Err, "%s asked GitHub to cancel run %d of %s\n", p.Success("✓"), res.RunID, res.Change)
	}
	return nil
}

// prune is finish --prune-remote, once the finish is done.
func (c *finishCmd) prune(e *env, rem *githubflow.Remote, t *githubflow.PruneTarget) error {
	res, err := rem.PruneRemote(context.WithoutCancel(e.ctx), t)
	if err != nil {
		return err
	}
	p := e.s.Palette()
	if len(res.Deleted) == 0 {
		fmt.Fprintf(e.s.Err, "%s nothing of run %d of %s to delete on %s\n", p.Success("✓"), t.RunID, t.Change, res.Remote)
		return nil
	}
	fmt.Fprintf(e.s.Err, "%s deleted %d ref(s) on %s: %s and the run's refs (kept here under refs/ralph/%s/runs/%d/)\n",
		p.Success("✓"), len(res.Deleted), res.Remote, t.Branch, t.Change, t.RunID)
	return nil
}

// wait is finish --wait: for a run on GitHub Actions, poll until it has completed. A
// local run has nothing to wait for.
func (c *finishCmd) wait(e *env, rem *githubflow.Remote) error {
	change, rec, err := rem.LoadRun(c.Change)
	if err != nil {
		return err
	}
	if rec.Remote == nil || rec.Status != run.Dispatched {
		return nil
	}
	fmt.Fprintf(e.s.Err, "waiting for the run of %s on GitHub Actions (Ctrl-C stops waiting; the run goes on)\n", change)
	_, err = rem.WatchRemote(e.ctx, githubflow.WatchOptions{Changes: []string{change}, Client: e.github,
		Update: func(change string, v *status.RemoteView) {
			fmt.Fprintln(e.s.Err, term.Inert(githubflow.WatchText(change, v)))
		}})
	if err == tell.ErrInterrupted {
		return &tell.Error{Msg: "interrupted", Code: 130,
			Hint: "nothing was changed; the run goes on: 'git ralph finish " + change + " --wait' waits again"}
	}
	return err
}

// refreshRemote asks GitHub, when a dispatched run of change has not been seen
// completed, where it stands, so that finish can tell a run under way from one that
// ended without publishing. Best effort: finish itself needs only git.
func refreshRemote(e *env, rem *githubflow.Remote, change string) {
	name, rec, err := rem.LoadRun(change)
	if err != nil || rec.Remote == nil || rec.Status != run.Dispatched || rec.Remote.LastSeenStatus == "completed" {
		return
	}
	_, _ = rem.RemoteStatus(e.ctx, name, e.github)
}

func printFinish(s *term.Streams, res *run.FinishResult, mode run.FinishMode) {
	p := s.Palette()
	if res.Worktree != "" {
		printFinishWorktree(s, res, mode)
		return
	}
	if mode == run.Keep {
		fmt.Fprintf(s.Err, "%s on %s with its checkpoint commits; the run of %s is finished\n", p.Success("✓"), p.Branch(res.Branch), res.Change)
		return
	}
	fmt.Fprintf(s.Err, "%s the work of %s is on %s as %d uncommitted change(s); %s was deleted (its commits are kept as %s)\n",
		p.Success("✓"), res.Change, p.Branch(res.Target), res.Files, res.Branch, res.Backup)
}

// prOptions is where finish --pr goes: the flags, then git config and GH_REPO.
func (c *finishCmd) prOptions(e *env, l *loop.Loop) (githubflow.PROptions, error) {
	// The config keys are read here rather than as flag defaults, so that --draft,
	// --remote and --repo given without --pr are a usage error while the keys are not.
	draft, _, err := l.Repo.ConfigBool(e.ctx, "ralph.prDraft")
	if err != nil {
		return githubflow.PROptions{}, fmt.Errorf("git config ralph.prDraft: %w", err)
	}
	if c.Draft != nil {
		draft = *c.Draft
	}
	remote, repo := c.Remote, c.Repo
	for key, v := range map[string]*string{"ralph.remote": &remote, "ralph.repo": &repo} {
		if *v == "" {
			if *v, _, err = l.Repo.Config(e.ctx, key); err != nil {
				return githubflow.PROptions{}, err
			}
		}
	}
	return githubflow.PROptions{
		Draft: draft, Base: c.Base, Remote: remote, Repo: repo, EnvRepo: os.Getenv("GH_REPO"),
		Client: func(host string) (*github.Client, error) {
			return github.New(host, e.githubOptions())
		},
	}, nil
}

// runPR is finish --pr; start's finish offer calls it too.
func (c *finishCmd) runPR(e *env, l *loop.Loop) error {
	o, err := c.prOptions(e, l)
	if err != nil {
		return err
	}
	if err := finishHooks(e, l); err != nil {
		return err
	}
	res, err := e.flow(l).FinishPR(e.ctx, c.Change, o)
	if err != nil {
		return err
	}
	p := e.s.Palette()
	if res.Pushed {
		fmt.Fprintf(e.s.Err, "%s pushed %s to %s\n", p.Success("✓"), p.Branch(res.Branch), res.Remote)
	} else {
		fmt.Fprintf(e.s.Err, "%s %s on %s is already at its tip\n", p.Success("✓"), p.Branch(res.Branch), res.Remote)
	}
	if res.Updated {
		fmt.Fprintf(e.s.Err, "%s updated the description of pull request #%d in %s (it was already open)\n", p.Success("✓"), res.Number, res.Repo)
	} else {
		fmt.Fprintf(e.s.Err, "%s opened pull request #%d in %s: %s into %s\n", p.Success("✓"), res.Number, res.Repo, res.Branch, res.Base)
	}
	if res.Stopped != "" {
		fmt.Fprintf(e.s.Err, "%s the run had stopped (%s): the pull request holds the stories done so far\n", p.Warn("!"), res.Stopped)
	}
	if res.Back != "" {
		fmt.Fprintf(e.s.Err, "%s back on %s; %s is kept (it is the pull request's head); the run of %s is finished\n", p.Success("✓"), p.Branch(res.Back), res.Branch, res.Change)
	} else {
		fmt.Fprintf(e.s.Err, "%s %s is kept (it is the pull request's head); the run of %s is finished\n", p.Success("✓"), res.Branch, res.Change)
	}
	if res.RemovedWorktree {
		fmt.Fprintf(e.s.Err, "removed the worktree %s\n", res.Worktree)
	}
	fmt.Fprintln(e.s.Out, res.URL)
	return nil
}

// printFinishWorktree says what finish did with a worktree run, and where its worktree is.
func printFinishWorktree(s *term.Streams, res *run.FinishResult, mode run.FinishMode) {
	p := s.Palette()
	if mode == run.Keep {
		fmt.Fprintf(s.Err, "%s %s keeps its checkpoint commits; the run of %s is finished\n", p.Success("✓"), p.Branch(res.Branch), res.Change)
	} else {
		fmt.Fprintf(s.Err, "%s the work of %s is on %s as %d uncommitted change(s); %s was deleted (its commits are kept as %s)\n",
			p.Success("✓"), res.Change, p.Branch(res.Target), res.Files, res.Branch, res.Backup)
	}
	switch {
	case res.RemovedWorktree:
		fmt.Fprintf(s.Err, "removed the worktree %s\n", res.Worktree)
	case res.KeptWorktree:
		fmt.Fprintf(s.Err, "%s kept the worktree %s: it has %d uncommitted change(s); remove it yourself once you have looked (git worktree remove %s)\n",
			p.Warn("!"), res.Worktree, res.KeptChanges, res.Worktree)
	}
}

// runFinish is finish --squash or --keep (internal/finish) of change: for finish, the
// offer at the end of start, and the demo.
func runFinish(e *env, l *loop.Loop, change string, mode run.FinishMode) (*run.FinishResult, error) {
	if err := finishHooks(e, l); err != nil {
		return nil, err
	}
	return finish.Run(e.ctx, l, change, mode)
}

// finishHooks has the hooks of a finish's git run where the verify gate does
// (finish.Hooks): in the sandbox where the system has one, unless ralph.sandbox is off
// (on, which refuses an agent without one, does not stop a finish).
func finishHooks(e *env, l *loop.Loop) error {
	mode, _, err := l.Repo.Config(e.ctx, "ralph.sandbox")
	if err != nil {
		return err
	}
	if mode != "off" {
		mode = "auto"
	}
	set, err := sandboxSettings(e, l.Repo, mode)
	if err != nil {
		return err
	}
	show := func(s string) { fmt.Fprintln(e.s.Err, strings.TrimRight(s, "\n")) }
	hooks := finish.Hooks(set, show, l.Report.Warn)
	if hooks != nil {
		// What a hook leaves running is killed after it (sandbox.KillLeftovers): finish,
		// too, runs one thing at a time.
		becomeReaper(l)
	}
	l.Repo.RunHooksWith(hooks)
	return nil
}
