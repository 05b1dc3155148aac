package githubflow

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/git-ralph/git-ralph/internal/github"
	"github.com/git-ralph/git-ralph/internal/issue"
	"github.com/git-ralph/git-ralph/internal/tell"
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
		return nil, tell.UserErr("name an issue; a pull request's own work is its branch", "%s is a pull request, not an issue", ref)
	}
	if !parent.Open() && !closedOK {
		return nil, tell.UserErr("reopen it on GitHub to run it again ("+parent.HTMLURL+")", "issue %s is closed", ref)
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
	return issueErrDone(err, ref, again, "nothing was changed; ")
}

// issueErrDone is issueErr after something was done, which done says ("the boxes are
// ticked; ").
func issueErrDone(err error, ref github.IssueRef, again, done string) error {
	var ge *github.Error
	if !errors.As(err, &ge) {
		return githubErr(err, ref.Repo, again, done)
	}
	what := "the issues of " + ref.Repo.String()
	if ref.Number > 0 {
		what = "issue " + ref.String()
	}
	retry := done + "run '" + again + "' again"
	e := func(msg, hint string) error { return &tell.Error{Msg: msg, Hint: hint + "\n" + retry, Err: err} }
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
	return githubErr(err, ref.Repo, again, done)
}

// Progress is what git-ralph tells a story's issue after a checkpoint (or a failed
// attempt): the story, where its work is, how many attempts it took, and the last
// failure's reason.
type Progress struct {
	Run, Branch string // the run's name and branch
	Story       string
	Checkpoint  string // the checkpoint commit, "" while the story is not done
	Attempts    int
	LastFailure string // the last failed attempt's reason, "" if none
}

// ProgressKey is the key of a story's progress comment (github.CommentMarker).
func ProgressKey(story string) string { return "progress:" + story }

// progressBody is a story's progress comment, below its marker. What the agent wrote
// (a failure reason) is code: nothing in it renders, links, mentions or closes.
func progressBody(p Progress, tickedHere []string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "**git-ralph**, run %s on %s: story %s ", code(p.Run), code(p.Branch), code(p.Story))
	if p.Checkpoint != "" {
		fmt.Fprintf(&b, "is done in checkpoint %s", code(p.Checkpoint))
	} else {
		b.WriteString("is not done yet")
	}
	fmt.Fprintf(&b, " (%d attempt%s).\n", p.Attempts, map[bool]string{true: "", false: "s"}[p.Attempts == 1])
	if p.LastFailure != "" {
		fmt.Fprintf(&b, "\nLast failure: %s\n", code(clip(firstLineOf(p.LastFailure), maxReason)))
	}
	if len(tickedHere) > 0 {
		b.WriteString("\nThe issue's text changed on GitHub since git-ralph read it, so it was left as it is; these of its tasks are done:\n\n")
		for _, t := range tickedHere {
			fmt.Fprintf(&b, "- %s\n", code(t))
		}
	}
	return b.String()
}

// SyncResult is what SyncProgress did.
type SyncResult struct {
	Body      string // the body now on GitHub, as the next sync must find it
	CommentID int64  // the progress comment, for the run's record
	Ticked    int    // boxes ticked in the body
	// BodyChanged: the body had changed on GitHub; the done tasks are listed in the
	// comment instead.
	BodyChanged bool
	Closed      bool // the issue was closed: nothing was written
}

// SyncProgress tells story's issue (is, as last read) about progress after a checkpoint:
// it ticks the boxes on lines of its body (unless the body changed on GitHub since: then
// the comment lists the tasks) and keeps one progress comment for the story (comment, its
// id, or 0). A closed issue gets nothing. A failure leaves the run as it was; the next sync
// does it all again.
func SyncProgress(ctx context.Context, client *github.Client, repo github.Repo, is issue.Issue, lines []int, comment int64, p Progress, again string) (*SyncResult, error) {
	ref := github.IssueRef{Repo: repo, Number: is.Number}
	res := &SyncResult{Body: is.Body, CommentID: comment}
	var tickedHere []string
	var cur *github.Issue
	var err error
	if len(lines) > 0 {
		body, terr := issue.Tick(is.Body, lines)
		if terr != nil {
			return nil, terr
		}
		cur, err = client.UpdateIssueBody(ctx, repo, is.Number, is.Body, body)
		var changed *github.BodyChangedError
		switch {
		case errors.As(err, &changed):
			res.BodyChanged = true
			for _, t := range issue.Tasks(is.Body) {
				if slices.Contains(lines, t.Line) {
					tickedHere = append(tickedHere, t.Text)
				}
			}
			cur, err = &github.Issue{Number: is.Number, State: "open", Body: changed.Current}, nil
		case errors.Is(err, github.ErrIssueClosed):
			res.Closed = true
			return res, nil
		case err == nil:
			res.Ticked = len(lines)
		}
	} else {
		cur, err = client.Issue(ctx, repo, is.Number)
	}
	if err != nil {
		return nil, issueErr(err, ref, again)
	}
	if !cur.Open() {
		res.Closed = true
		return res, nil
	}
	res.Body = cur.Body
	c, err := client.UpsertComment(ctx, repo, cur, ProgressKey(p.Story), comment, progressBody(p, tickedHere))
	if err != nil {
		done := "nothing was changed on GitHub; "
		if res.Ticked > 0 {
			done = "the boxes are ticked, the comment is not; "
		}
		return nil, issueErrDone(err, ref, again, done)
	}
	res.CommentID = c.ID
	return res, nil
}

// ClaimLabel is the label that claims a queue's issue for a run, unless
// ralph.issueClaimLabel says another.
const ClaimLabel = "ralph:running"

// Claim adds the claim label to an issue before its run starts.
func Claim(ctx context.Context, client *github.Client, ref github.IssueRef, label, again string) error {
	if err := client.AddLabel(ctx, ref.Repo, ref.Number, label); err != nil {
		return issueErr(err, ref, again)
	}
	return nil
}

// Unclaim removes the claim label when the run ends, whatever its outcome.
func Unclaim(ctx context.Context, client *github.Client, ref github.IssueRef, label, again string) error {
	if err := client.RemoveLabel(ctx, ref.Repo, ref.Number, label); err != nil {
		return issueErr(err, ref, again)
	}
	return nil
}
