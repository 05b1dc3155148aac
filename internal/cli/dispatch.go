package cli

import (
	"fmt"
	"os"

	"github.com/git-ralph/git-ralph/internal/githubflow"
	"github.com/git-ralph/git-ralph/internal/status"
	"github.com/git-ralph/git-ralph/internal/tell"
	"github.com/git-ralph/git-ralph/internal/term"
)

type dispatchCmd struct {
	Changes    []string `arg:"" name:"change" help:"The changes to run on GitHub Actions, one run each (or spec-kit features, plans, prd.json files, as start takes them)."`
	Repo       string   `help:"The GitHub repository, [HOST/]OWNER/REPO (ralph.repo; default: GH_REPO, then the remote's URL)." placeholder:"REPO"`
	Remote     string   `help:"The git remote ralph/<change> is pushed to (ralph.remote; default: the branch's push remote, then origin)." placeholder:"NAME"`
	Workflow   string   `config:"ralph.workflow" default:"ralph.yml" help:"The workflow file 'ci init' wrote (ralph.workflow; default ${default})." placeholder:"FILE"`
	Ref        string   `help:"The branch whose copy of the workflow runs (default: the repository's default branch)." placeholder:"BRANCH"`
	IncludeWIP bool     `name:"include-wip" help:"Send your uncommitted work along in ralph/<change>'s first commit (your work tree is not touched)."`
	Wait       bool     `help:"Then wait until every run has completed (polling as status --watch does) and print the finish commands; Ctrl-C stops waiting, the runs go on."`
}

// Help is the long help of dispatch.
func (c *dispatchCmd) Help() string {
	return `Runs each change's loop on GitHub Actions, with the workflow 'git ralph ci init' wrote
(committed to the default branch). For each change it makes ralph/<change> (its first
commit is built without touching your work tree, index or HEAD), pushes it, and asks
GitHub to run the workflow. Nothing changes when a check fails: no token, no workflow,
a change with uncommitted files (unless --include-wip), a local run of the change.
A dispatch interrupted after its push finds its run when run again; it never starts a
second one. Finish a run with 'git ralph finish <change> --squash|--keep' once it is
over; 'git ralph start <change>' continues a run that stopped, here. --wait follows the
runs until each has completed, as 'git ralph status --watch' does, then prints those
commands; Ctrl-C stops waiting (exit 130) and leaves the runs going.`
}

func (c *dispatchCmd) Run(e *env) error {
	l, err := e.loop()
	if err != nil {
		return err
	}
	for key, v := range map[string]*string{"ralph.remote": &c.Remote, "ralph.repo": &c.Repo} {
		if *v == "" {
			if *v, _, err = l.Repo.Config(e.ctx, key); err != nil {
				return err
			}
		}
	}
	p := e.s.Palette()
	var dispatched []string
	for _, change := range c.Changes {
		// GitHub asks for a second between requests that change things: the client
		// (one per host, e.github) spaces its POSTs across the changes.
		res, err := e.flow(l).Dispatch(e.ctx, githubflow.DispatchRequest{
			Change: change, Remote: c.Remote, Repo: c.Repo, EnvRepo: os.Getenv("GH_REPO"),
			Workflow: c.Workflow, Ref: c.Ref, IncludeWIP: c.IncludeWIP,
			Client: e.github,
		})
		if err != nil {
			return err
		}
		change := res.Change // the run name: a plan's or a prd.json's is not the path given
		what := "dispatched"
		if res.Found {
			what = "found the run an interrupted dispatch started for"
		}
		run := "run id pending: GitHub does not list the run yet; 'git ralph status " + change + "' finds it"
		if res.RunID != 0 {
			run = fmt.Sprintf("run %d", res.RunID)
		}
		fmt.Fprintf(e.s.Err, "%s %s %s in %s (%s)\n", p.Success("✓"), what, change, res.Repo, run)
		if res.URL != "" {
			fmt.Fprintln(e.s.Out, res.URL)
		}
		dispatched = append(dispatched, change)
	}
	if c.Wait {
		return waitDispatched(e, dispatched)
	}
	fmt.Fprintf(e.s.Err, "next: once a run is over, git ralph finish <change> --squash (or --keep)\n")
	return nil
}

// waitDispatched is dispatch --wait: follow the runs just dispatched until each has
// completed, with status --watch's polling, then say how to finish each.
func waitDispatched(e *env, changes []string) error {
	rem, err := e.remote()
	if err != nil {
		return err
	}
	fmt.Fprintf(e.s.Err, "waiting for the runs on GitHub Actions (Ctrl-C stops waiting; the runs go on)\n")
	views, err := rem.WatchRemote(e.ctx, githubflow.WatchOptions{Changes: changes, Client: e.github,
		Update: func(change string, v *status.RemoteView) {
			fmt.Fprintln(e.s.Err, term.Inert(githubflow.WatchText(change, v)))
		}})
	if err == tell.ErrInterrupted {
		return &tell.Error{Msg: "interrupted", Code: 130,
			Hint: "the runs go on: 'git ralph status --watch' follows them again"}
	}
	if err != nil {
		return err
	}
	printWatchedNext(e, changes, views)
	return nil
}
