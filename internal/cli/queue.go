package cli

import (
	"context"
	"fmt"
	"sync"

	"github.com/git-ralph/git-ralph/internal/github"
	"github.com/git-ralph/git-ralph/internal/githubflow"
	"github.com/git-ralph/git-ralph/internal/issue"
	"github.com/git-ralph/git-ralph/internal/loop"
	"github.com/git-ralph/git-ralph/internal/tell"
)

// runQueue is start --label: the open issues with the label that are not claimed,
// blocked or by an author not trusted, claimed one after another and run in worktrees
// of their own (-j N); each claim goes when its run ends, whatever its outcome (those of
// runs a Ctrl-C kept from starting, when start ends).
func (c *startCmd) runQueue(e *env, l *loop.Loop) error {
	repo := e.issues.Default()
	if repo == nil {
		return &tell.Error{Msg: "no GitHub repository to take the issues labelled " + c.Label + " from",
			Hint: "run it where the push remote is a GitHub URL, or name the repository: git config ralph.repo OWNER/REPO"}
	}
	claim := githubflow.ClaimLabel
	if v, ok, err := l.Repo.Config(e.ctx, "ralph.issueClaimLabel"); err != nil {
		return err
	} else if ok && v != "" {
		claim = v
	}
	again := "git ralph start --label " + c.Label
	client, err := e.github(repo.Host)
	if err != nil {
		return err
	}
	ds, err := githubflow.ReadQueue(e.ctx, client, *repo, c.Label, claim, again)
	if err != nil {
		return err
	}
	var take []issue.Decision
	for i, d := range ds {
		if d.Take && !c.TrustIssueAuthor && !issue.Trusted(d.Issue.Association) {
			ds[i].Take, ds[i].Why = false, fmt.Sprintf("by @%s (%s), not an owner, member or collaborator (--trust-issue-author runs it)", d.Issue.Author, d.Issue.Association)
		}
		if ds[i].Take {
			take = append(take, ds[i])
		}
	}
	for _, d := range ds {
		ref := github.IssueRef{Repo: *repo, Number: d.Issue.Number}
		if d.Take {
			fmt.Fprintf(e.s.Out, "take  %s  %s\n", ref, d.Issue.Title)
		} else {
			fmt.Fprintf(e.s.Out, "skip  %s  %s: %s\n", ref, d.Issue.Title, d.Why)
		}
	}
	if len(ds) == 0 {
		fmt.Fprintf(e.s.Err, "no open issue of %s has the label %s\n", repo, c.Label)
	}
	if c.DryRun || len(take) == 0 {
		return nil
	}
	var (
		mu      sync.Mutex
		claimed []github.IssueRef
		left    = map[github.IssueRef]bool{} // claimed, not yet given back
	)
	unclaim := func(ref github.IssueRef) {
		mu.Lock()
		defer mu.Unlock() // one request at a time: GitHub asks for serial requests
		if !left[ref] {
			return
		}
		delete(left, ref)
		if err := githubflow.Unclaim(context.WithoutCancel(e.ctx), client, ref, claim, again); err != nil {
			fmt.Fprintf(e.s.Err, "warning: the claim on %s stays: %v\n", ref, err)
		}
	}
	defer func() {
		for _, ref := range claimed { // whatever the runs' outcome, Ctrl-C included
			unclaim(ref)
		}
	}()
	c.Changes = nil
	for _, d := range take {
		ref := github.IssueRef{Repo: *repo, Number: d.Issue.Number}
		if err := githubflow.Claim(e.ctx, client, ref, claim, again); err != nil {
			return err
		}
		mu.Lock()
		claimed, left[ref] = append(claimed, ref), true
		mu.Unlock()
		c.Changes = append(c.Changes, ref.String())
	}
	c.Worktree.On = true
	return c.runParallelThen(e, l, func(i int) { unclaim(claimed[i]) })
}
