package githubflow

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/git-ralph/git-ralph/internal/github"
	"github.com/git-ralph/git-ralph/internal/github/githubtest"
	"github.com/git-ralph/git-ralph/internal/loop"
)

func issueFake(t *testing.T) (*githubtest.Server, *github.Client, github.Repo) {
	t.Helper()
	t.Setenv("GH_CONFIG_DIR", t.TempDir())
	srv := githubtest.New()
	t.Cleanup(srv.Close)
	t.Cleanup(func() {
		for _, v := range srv.Violations() {
			t.Errorf("not as GitHub's OpenAPI description says: %s", v)
		}
	})
	srv.AddRepo(githubtest.Repo{Owner: "acme", Name: "widgets", Branches: map[string]string{"main": "1111"}})
	for _, is := range []githubtest.Issue{
		{Number: 10, Title: "Greeter", Body: "why", SubIssues: []int{12, 11}, Labels: []string{"ralph"}},
		{Number: 11, Title: "Parse", Body: "- [ ] a\n"},
		{Number: 12, Title: "Done already", State: "closed"},
		{Number: 13, Title: "Blocked", Labels: []string{"ralph"}, BlockedBy: []int{10, 12}},
		{Number: 14, Title: "Claimed", Labels: []string{"ralph", "ralph:running"}, BlockedBy: []int{10}},
		{Number: 15, Title: "A pull request", Labels: []string{"ralph"}, IsPull: true},
	} {
		srv.SetIssue("acme", "widgets", is)
	}
	c, err := github.New("github.com", github.Options{Token: "T", Transport: srv.Transport(), MaxWait: time.Second,
		Sleep: func(context.Context, time.Duration) error { return nil }})
	if err != nil {
		t.Fatal(err)
	}
	return srv, c, github.Repo{Host: "github.com", Owner: "acme", Name: "widgets"}
}

func TestReadIssue(t *testing.T) {
	srv, c, repo := issueFake(t)
	ctx := t.Context()
	s, err := ReadIssue(ctx, c, github.IssueRef{Repo: repo, Number: 10}, false, "git ralph start '#10'")
	if err != nil {
		t.Fatal(err)
	}
	if s.Repo != "acme/widgets" || s.Parent.Title != "Greeter" || s.Parent.Body != "why" || s.Parent.Association != "OWNER" ||
		len(s.Subs) != 2 || s.Subs[0].Number != 12 || s.Subs[0].Open() || s.Subs[1].Number != 11 || !s.Subs[1].Open() {
		t.Fatalf("snapshot %+v", s)
	}
	if n := len(srv.Requests()); n != 2 {
		t.Fatalf("%d requests, want 2", n)
	}
	_, err = ReadIssue(ctx, c, github.IssueRef{Repo: repo, Number: 12}, false, "again")
	if ue := (*loop.Error)(nil); !errors.As(err, &ue) || !strings.Contains(err.Error(), "issue acme/widgets#12 is closed") {
		t.Fatalf("closed: %v", err)
	}
	if _, err := ReadIssue(ctx, c, github.IssueRef{Repo: repo, Number: 12}, true, "again"); err != nil {
		t.Fatalf("closed, re-read for a resume: %v", err)
	}
	if _, err := ReadIssue(ctx, c, github.IssueRef{Repo: repo, Number: 15}, false, "again"); err == nil || !strings.Contains(err.Error(), "is a pull request") {
		t.Fatalf("pull request: %v", err)
	}
}

func TestReadQueue(t *testing.T) {
	srv, c, repo := issueFake(t)
	ds, err := ReadQueue(t.Context(), c, repo, "ralph", "ralph:running", "git ralph start --label ralph")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, d := range ds {
		got = append(got, strings.TrimSpace(strings.Join([]string{"#" + strconv.Itoa(d.Issue.Number), map[bool]string{true: "take", false: "skip"}[d.Take], d.Why}, " ")))
	}
	want := "#10 take|#13 skip blocked by #10|#14 skip claimed: it has the label ralph:running (another run is working on it)"
	if strings.Join(got, "|") != want {
		t.Fatalf("queue %s\nwant  %s", strings.Join(got, "|"), want)
	}
	// the list, and the dependencies of the two unclaimed issues
	if n := len(srv.Requests()); n != 3 {
		t.Fatalf("%d requests, want 3:\n%s", n, githubtest.Dump(srv.Requests()))
	}
}

// Every failure of the API says what happened and that running again is safe.
func TestIssueErrors(t *testing.T) {
	srv, c, repo := issueFake(t)
	ref := github.IssueRef{Repo: repo, Number: 10}
	for _, tc := range []struct {
		status int
		header http.Header
		want   string
		times  int // how many answers the client reads before it gives up: 0 is 1
	}{
		{401, nil, "GitHub rejected the token for github.com (401", 0},
		{403, nil, "the token for github.com may not read or change issue acme/widgets#10 (403", 0},
		{404, nil, "issue acme/widgets#10 not found, or the token for github.com cannot see it (404)", 0},
		{410, nil, "issue acme/widgets#10 is gone: it was deleted, or the repository's issues are turned off (410)", 0},
		{403, http.Header{"Retry-After": {"60"}}, "GitHub's rate limit for github.com is used up for 1m0s", 0},
		{429, nil, "GitHub's rate limit for github.com is used up", 2},
		{502, nil, "GitHub answered 502", 0},
	} {
		srv.AddOverride(githubtest.Override{Path: "/repos/acme/widgets/issues/10/sub_issues", Status: tc.status, Header: tc.header, Times: max(tc.times, 1)})
		_, err := ReadIssue(t.Context(), c, ref, false, "git ralph start '#10'")
		var le *loop.Error
		if !errors.As(err, &le) || !strings.Contains(le.Msg, tc.want) || !strings.HasSuffix(le.Hint, "nothing was changed; run 'git ralph start '#10'' again") {
			t.Errorf("%d: %v (hint %q)", tc.status, err, le.Hint)
		}
		if _, err := ReadIssue(t.Context(), c, ref, false, "again"); err != nil {
			t.Fatalf("after %d, again: %v", tc.status, err)
		}
	}
	dead, err := github.New("github.com", github.Options{Token: "T", Transport: roundTripFunc(func(*http.Request) (*http.Response, error) {
		return nil, errors.New("network is unreachable")
	})})
	if err != nil {
		t.Fatal(err)
	}
	_, err = ReadQueue(t.Context(), dead, repo, "ralph", "ralph:running", "again")
	if err == nil || !strings.Contains(err.Error(), "cannot reach GitHub at github.com") {
		t.Fatalf("network: %v", err)
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
