package githubflow

import (
	"context"
	"errors"
	"fmt"

	"github.com/git-ralph/git-ralph/internal/github"
	"github.com/git-ralph/git-ralph/internal/issue"
	"github.com/git-ralph/git-ralph/internal/loop"
)

// GitHub issues as a task source: what start reads of an issue and of a label queue,
// and the errors that say what went wrong. Nothing here changes anything local: a
// failure can be retried as it is.

// issueOf turns what the API says of an issue into what a run keeps of it.
func issueOf(is *github.Issue) issue.Issue {
	out := issue.Issue{Number: is.Number, Title: is.Title, Body: is.Body, URL: is.HTMLURL, State: is.State,
		Author: is.User.Login, Association: is.AuthorAssociation}
	for _, l := range is.Labels {
		out.Labels = append(out.Labels, l.Name)
	}
	return out
}

// ReadIssue reads an issue and its sub-issues (2 requests), as start records them. A
// pull request's number is refused; so is a closed issue, unless closedOK (a resume
// that re-reads it). again is the command to run again after a failure.
func ReadIssue(ctx context.Context, client *github.Client, ref github.IssueRef, closedOK bool, again string) (*issue.Snapshot, error) {
	parent, err := client.Issue(ctx, ref.Repo, ref.Number)
	if err != nil {
		return nil, issueErr(err, ref, again)
	}
	if parent.PullRequest != nil {
		return nil, loop.UserErr("name an issue; a pull request's own work is its branch", "%s is a pull request, not an issue", ref)
	}
	if !parent.Open() && !closedOK {
		return nil, loop.UserErr("reopen it on GitHub to run it again ("+parent.HTMLURL+")", "issue %s is closed", ref)
	}
	subs, err := client.SubIssues(ctx, ref.Repo, ref.Number)
	if err != nil {
		return nil, issueErr(err, ref, again)
	}
	s := &issue.Snapshot{Repo: ref.Repo.String(), Parent: issueOf(parent)}
	for i := range subs {
		s.Subs = append(s.Subs, issueOf(&subs[i]))
	}
	return s, nil
}

// ReadQueue reads the open issues of repo that carry label, oldest first, with what
// each is blocked by, and decides which run (issue.Queue): one request for the list,
// and one per unclaimed issue for its dependencies.
func ReadQueue(ctx context.Context, client *github.Client, repo github.Repo, label, claim, again string) ([]issue.Decision, error) {
	open, err := client.OpenIssuesWithLabel(ctx, repo, label)
	if err != nil {
		return nil, issueErr(err, github.IssueRef{Repo: repo}, again)
	}
	var cands []issue.Candidate
	for i := range open {
		c := issue.Candidate{Issue: issueOf(&open[i])}
		if !open[i].HasLabel(claim) {
			ref := github.IssueRef{Repo: repo, Number: open[i].Number}
			blockers, err := client.BlockedBy(ctx, repo, ref.Number)
			if err != nil {
				return nil, issueErr(err, ref, again)
			}
			for j := range blockers {
				c.BlockedBy = append(c.BlockedBy, issueOf(&blockers[j]))
			}
		}
		cands = append(cands, c)
	}
	return issue.Queue(cands, claim), nil
}

// issueErr explains a failed issue request made before anything changed: what GitHub
// said, what to do, and that running again is safe. ref.Number is 0 for a request about
// the repository's issues as a whole.
func issueErr(err error, ref github.IssueRef, again string) error {
	var ge *github.Error
	if !errors.As(err, &ge) {
		return githubErr(err, ref.Repo, again, "nothing was changed; ")
	}
	what := "the issues of " + ref.Repo.String()
	if ref.Number > 0 {
		what = "issue " + ref.String()
	}
	retry := "nothing was changed; run '" + again + "' again"
	e := func(msg, hint string) error { return &loop.Error{Msg: msg, Hint: hint + "\n" + retry, Err: err} }
	switch {
	case ge.RateLimited():
	case ge.StatusCode == 403:
		return e(fmt.Sprintf("the token for %s may not read or change %s (403 %s)", ref.Repo.Host, what, ge.Text()),
			"a classic token needs the repo scope (public_repo for a public repository), a fine-grained one Issues: read and write\n"+
				"add it with 'gh auth refresh --hostname "+ref.Repo.Host+" --scopes repo', or use another token")
	case ge.StatusCode == 404:
		return e(fmt.Sprintf("%s not found, or the token for %s cannot see it (404)", what, ref.Repo.Host),
			"check the number and the repository (the remote's URL, git config ralph.repo, GH_REPO) and the token's access")
	case ge.StatusCode == 410:
		return e(fmt.Sprintf("%s is gone: it was deleted, or the repository's issues are turned off (410)", what),
			"look at "+ref.Repo.String()+" on GitHub")
	}
	return githubErr(err, ref.Repo, again, "nothing was changed; ")
}
