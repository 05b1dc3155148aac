package github

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
)

// Issues: what git-ralph reads of an issue and its sub-issues, and the few things it
// writes back (a claim label, ticked boxes, one progress comment per story).

// Issue is the part of an issue that git-ralph reads.
type Issue struct {
	ID     int64  `json:"id"`
	Number int    `json:"number"`
	Title  string `json:"title"`
	Body   string `json:"body"`
	State  string `json:"state"` // open or closed
	// StateReason is why it is closed: completed, not_planned, duplicate; "" if open.
	StateReason string  `json:"state_reason"`
	HTMLURL     string  `json:"html_url"`
	User        Account `json:"user"`
	// AuthorAssociation is the author's association with the repository: OWNER,
	// MEMBER, COLLABORATOR, CONTRIBUTOR, FIRST_TIME_CONTRIBUTOR, FIRST_TIMER, MANNEQUIN
	// or NONE.
	AuthorAssociation string  `json:"author_association"`
	Labels            []Label `json:"labels"`
	// PullRequest is set when the "issue" is a pull request (the issues listing
	// includes them).
	PullRequest *struct{} `json:"pull_request,omitempty"`
	UpdatedAt   string    `json:"updated_at"`
}

// Open reports whether the issue is open.
func (is *Issue) Open() bool { return is.State == "open" }

// HasLabel reports whether the issue carries the label (GitHub's labels are
// case-insensitive).
func (is *Issue) HasLabel(name string) bool {
	for _, l := range is.Labels {
		if strings.EqualFold(l.Name, name) {
			return true
		}
	}
	return false
}

// Label is a label of an issue. GitHub's description allows an issue's labels to be
// names or objects; both decode.
type Label struct {
	Name string `json:"name"`
}

// UnmarshalJSON reads a label object or a bare name.
func (l *Label) UnmarshalJSON(b []byte) error {
	if len(b) > 0 && b[0] == '"' {
		return json.Unmarshal(b, &l.Name)
	}
	var o struct {
		Name string `json:"name"`
	}
	if err := json.Unmarshal(b, &o); err != nil {
		return err
	}
	l.Name = o.Name
	return nil
}

// Comment is an issue comment.
type Comment struct {
	ID      int64   `json:"id"`
	Body    string  `json:"body"`
	HTMLURL string  `json:"html_url"`
	User    Account `json:"user"`
	// IssueURL is the API URL of the issue it is on.
	IssueURL string `json:"issue_url"`
}

// MaxSubIssues is how many sub-issues GitHub allows one issue.
const MaxSubIssues = 100

func (r Repo) issuePath(number int) string { return r.path() + "/issues/" + strconv.Itoa(number) }

// Issue returns issue number of r: an *Error with status 404 when there is none (or
// the token cannot see it), 410 when it was deleted (or the repository's issues are
// turned off). A pull request's number gives the pull request as an issue.
func (c *Client) Issue(ctx context.Context, r Repo, number int) (*Issue, error) {
	var out Issue
	if err := c.Do(ctx, http.MethodGet, r.issuePath(number), nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// listIssues GETs every page of an issues listing.
func (c *Client) listIssues(ctx context.Context, path string) ([]Issue, error) {
	var all []Issue
	err := c.GetPages(ctx, path, func(dec func(any) error) error {
		var page []Issue
		if err := dec(&page); err != nil {
			return fmt.Errorf("GET %s: read GitHub's answer: %w", strings.SplitN(path, "?", 2)[0], err)
		}
		all = append(all, page...)
		return nil
	})
	return all, err
}

// SubIssues returns the sub-issues of issue number, open and closed, in GitHub's
// order (the priority order the issue's page shows).
func (c *Client) SubIssues(ctx context.Context, r Repo, number int) ([]Issue, error) {
	return c.listIssues(ctx, r.issuePath(number)+"/sub_issues?per_page=100")
}

// BlockedBy returns the issues issue number is blocked by (its dependencies), open
// and closed.
func (c *Client) BlockedBy(ctx context.Context, r Repo, number int) ([]Issue, error) {
	return c.listIssues(ctx, r.issuePath(number)+"/dependencies/blocked_by?per_page=100")
}

// OpenIssuesWithLabel returns the open issues of r that carry label, oldest first;
// pull requests are left out.
func (c *Client) OpenIssuesWithLabel(ctx context.Context, r Repo, label string) ([]Issue, error) {
	q := url.Values{"state": {"open"}, "labels": {label}, "sort": {"created"}, "direction": {"asc"}, "per_page": {"100"}}
	all, err := c.listIssues(ctx, r.path()+"/issues?"+q.Encode())
	if err != nil {
		return nil, err
	}
	out := all[:0]
	for _, is := range all {
		if is.PullRequest == nil {
			out = append(out, is)
		}
	}
	return out, nil
}

// AddLabel adds label to issue number (GitHub creates a label the repository lacks).
func (c *Client) AddLabel(ctx context.Context, r Repo, number int, label string) error {
	in := struct {
		Labels []string `json:"labels"`
	}{[]string{label}}
	return c.Do(ctx, http.MethodPost, r.issuePath(number)+"/labels", in, nil)
}

// RemoveLabel removes label from issue number. An issue that does not carry it is
// not an error; a missing issue is (404 or 410).
func (c *Client) RemoveLabel(ctx context.Context, r Repo, number int, label string) error {
	err := c.Do(ctx, http.MethodDelete, r.issuePath(number)+"/labels/"+url.PathEscape(label), nil, nil)
	var ge *Error
	if errors.As(err, &ge) && ge.StatusCode == http.StatusNotFound && ge.Message == "Label does not exist" {
		return nil
	}
	return err
}

// ErrIssueClosed is returned by the writes that git-ralph never makes to a closed
// issue.
var ErrIssueClosed = errors.New("the issue is closed")

// BodyChangedError is returned by UpdateIssueBody when the body on GitHub is no longer
// the one read: someone edited it meanwhile, and it was left alone.
type BodyChangedError struct {
	Number  int
	Current string // the body now on GitHub
}

func (e *BodyChangedError) Error() string {
	return fmt.Sprintf("the body of issue #%d changed on GitHub since it was read", e.Number)
}

// UpdateIssueBody replaces the body of issue number with body, provided the body on
// GitHub is still read (byte for byte) and the issue is open: it reads the issue first
// and returns a *BodyChangedError, or ErrIssueClosed, without writing otherwise.
// GitHub has no conditional update of an issue, so an edit in the moment between the
// read and the write is still overwritten; the window is one request wide.
func (c *Client) UpdateIssueBody(ctx context.Context, r Repo, number int, read, body string) (*Issue, error) {
	cur, err := c.Issue(ctx, r, number)
	if err != nil {
		return nil, err
	}
	if !cur.Open() {
		return nil, fmt.Errorf("issue #%d: %w", number, ErrIssueClosed)
	}
	if cur.Body != read {
		return nil, &BodyChangedError{Number: number, Current: cur.Body}
	}
	if body == read {
		return cur, nil
	}
	in := struct {
		Body string `json:"body"`
	}{body}
	var out Issue
	if err := c.Do(ctx, http.MethodPatch, r.issuePath(number), in, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Comments returns the comments of issue number, oldest first.
func (c *Client) Comments(ctx context.Context, r Repo, number int) ([]Comment, error) {
	path := r.issuePath(number) + "/comments?per_page=100"
	var all []Comment
	err := c.GetPages(ctx, path, func(dec func(any) error) error {
		var page []Comment
		if err := dec(&page); err != nil {
			return fmt.Errorf("GET %s: read GitHub's answer: %w", r.issuePath(number)+"/comments", err)
		}
		all = append(all, page...)
		return nil
	})
	return all, err
}

// CreateComment comments on issue number.
func (c *Client) CreateComment(ctx context.Context, r Repo, number int, body string) (*Comment, error) {
	in := struct {
		Body string `json:"body"`
	}{body}
	var out Comment
	if err := c.Do(ctx, http.MethodPost, r.issuePath(number)+"/comments", in, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// UpdateComment replaces the body of comment id of r.
func (c *Client) UpdateComment(ctx context.Context, r Repo, id int64, body string) (*Comment, error) {
	in := struct {
		Body string `json:"body"`
	}{body}
	var out Comment
	if err := c.Do(ctx, http.MethodPatch, r.path()+"/issues/comments/"+strconv.FormatInt(id, 10), in, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// CommentMarker is the hidden first line that finds a comment of git-ralph's again:
// "<!-- git-ralph:KEY -->", with what in key is not a letter, a digit or one of
// "._:/#" turned into "-", and no "--" (which would end the HTML comment).
func CommentMarker(key string) string {
	b := []byte(key)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("._:/#", c) >= 0) {
			b[i] = '-'
		}
	}
	k := string(b)
	for strings.Contains(k, "--") {
		k = strings.ReplaceAll(k, "--", "-")
	}
	return "<!-- git-ralph:" + k + " -->"
}

// Comment returns comment id of r: an *Error with status 404 when it is gone.
func (c *Client) Comment(ctx context.Context, r Repo, id int64) (*Comment, error) {
	var out Comment
	if err := c.Do(ctx, http.MethodGet, r.path()+"/issues/comments/"+strconv.FormatInt(id, 10), nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// UpsertComment keeps one comment on issue number for key: the one whose body starts with
// CommentMarker(key), updated when it differs, else a new one. known is its id when the
// caller kept it, 0 to list the comments. body follows the marker line. A closed issue (as
// read: no request) gets nothing: ErrIssueClosed.
func (c *Client) UpsertComment(ctx context.Context, r Repo, issue *Issue, key string, known int64, body string) (*Comment, error) {
	if !issue.Open() {
		return nil, fmt.Errorf("issue #%d: %w", issue.Number, ErrIssueClosed)
	}
	marker := CommentMarker(key)
	full := marker + "\n" + body
	var found *Comment
	if known != 0 {
		cm, err := c.Comment(ctx, r, known)
		if err != nil && StatusOf(err) != http.StatusNotFound {
			return nil, err
		}
		if err == nil && firstLine(cm.Body) == marker && strings.HasSuffix(cm.IssueURL, "/issues/"+strconv.Itoa(issue.Number)) {
			found = cm
		}
	}
	if found == nil {
		comments, err := c.Comments(ctx, r, issue.Number)
		if err != nil {
			return nil, err
		}
		for i := range comments {
			if firstLine(comments[i].Body) == marker {
				found = &comments[i]
				break
			}
		}
	}
	switch {
	case found == nil:
		return c.CreateComment(ctx, r, issue.Number, full)
	case found.Body == full:
		return found, nil
	}
	return c.UpdateComment(ctx, r, found.ID, full)
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return strings.TrimSuffix(line, "\r")
}
