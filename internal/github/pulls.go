package github

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
)

// Repository is the part of GET /repos/{owner}/{repo} that git-ralph reads.
type Repository struct {
	FullName      string      `json:"full_name"`
	Name          string      `json:"name"`
	Owner         Account     `json:"owner"`
	DefaultBranch string      `json:"default_branch"`
	HTMLURL       string      `json:"html_url"`
	Fork          bool        `json:"fork"`
	Parent        *Repository `json:"parent,omitempty"`
	Private       bool        `json:"private"`
}

// Account is a user or organisation.
type Account struct {
	Login string `json:"login"`
}

// Branch is a branch as GET /repos/{o}/{r}/branches/{b} returns it.
type Branch struct {
	Name   string `json:"name"`
	Commit struct {
		SHA string `json:"sha"`
	} `json:"commit"`
}

// PullRequest is the part of a pull request that git-ralph reads.
type PullRequest struct {
	Number  int    `json:"number"`
	HTMLURL string `json:"html_url"`
	State   string `json:"state"`
	Title   string `json:"title"`
	Body    string `json:"body"`
	Draft   bool   `json:"draft"`
	Head    struct {
		Ref   string `json:"ref"`
		Label string `json:"label"` // owner:branch
		SHA   string `json:"sha"`
	} `json:"head"`
	Base struct {
		Ref string `json:"ref"`
	} `json:"base"`
}

// NewPullRequest is the body of POST /repos/{o}/{r}/pulls.
type NewPullRequest struct {
	Title string `json:"title"`
	Head  string `json:"head"` // branch, or owner:branch for a head in another repository
	Base  string `json:"base"`
	Body  string `json:"body"`
	Draft bool   `json:"draft,omitempty"`
}

// PullRequestUpdate is the body of PATCH /repos/{o}/{r}/pulls/{n}; empty fields are
// left as they are.
type PullRequestUpdate struct {
	Title string `json:"title,omitempty"`
	Body  string `json:"body,omitempty"`
	Base  string `json:"base,omitempty"`
}

// Repository returns the repository; an *Error with status 404 when it does not exist
// or the token cannot see it.
func (c *Client) Repository(ctx context.Context, r Repo) (*Repository, error) {
	var out Repository
	if err := c.Do(ctx, http.MethodGet, r.path(), nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Branch returns a branch of the repository; an *Error with status 404 when it does
// not exist.
func (c *Client) Branch(ctx context.Context, r Repo, name string) (*Branch, error) {
	var out Branch
	if err := c.Do(ctx, http.MethodGet, r.path()+"/branches/"+url.PathEscape(name), nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// OpenPullRequest returns the open pull request of head (owner:branch) into r, or nil
// when there is none.
func (c *Client) OpenPullRequest(ctx context.Context, r Repo, head string) (*PullRequest, error) {
	q := url.Values{"state": {"open"}, "head": {head}, "per_page": {"100"}}
	var out []PullRequest
	if err := c.Do(ctx, http.MethodGet, r.path()+"/pulls?"+q.Encode(), nil, &out); err != nil {
		return nil, err
	}
	for i := range out {
		if out[i].Head.Label == head || out[i].Head.Label == "" {
			return &out[i], nil
		}
	}
	return nil, nil
}

// CreatePullRequest opens a pull request in r.
func (c *Client) CreatePullRequest(ctx context.Context, r Repo, pr NewPullRequest) (*PullRequest, error) {
	var out PullRequest
	if err := c.Do(ctx, http.MethodPost, r.path()+"/pulls", pr, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// UpdatePullRequest changes pull request number of r.
func (c *Client) UpdatePullRequest(ctx context.Context, r Repo, number int, u PullRequestUpdate) (*PullRequest, error) {
	var out PullRequest
	if err := c.Do(ctx, http.MethodPatch, r.path()+"/pulls/"+strconv.Itoa(number), u, &out); err != nil {
		return nil, err
	}
	return &out, nil
}
