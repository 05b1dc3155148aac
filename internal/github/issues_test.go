package github_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/git-ralph/git-ralph/internal/github"
	"github.com/git-ralph/git-ralph/internal/github/githubtest"
)

// conforms fails the test when a request the client sent, or an answer of the fake,
// did not conform to GitHub's OpenAPI description.
func conforms(t *testing.T, srv *githubtest.Server) {
	t.Helper()
	t.Cleanup(func() {
		for _, v := range srv.Violations() {
			t.Errorf("not as GitHub's OpenAPI description says: %s", v)
		}
	})
}

// issues is the fixture with issue 10 (three sub-issues, the second closed, one
// blocker) and a few more.
func issues(t *testing.T) (*githubtest.Server, *github.Client, github.Repo) {
	t.Helper()
	srv, c, repo := fixture(t)
	for _, is := range []githubtest.Issue{
		{Number: 10, Title: "Parent", Body: "the whole change\r\n- [ ] top task\r\n", SubIssues: []int{13, 11, 12}, BlockedBy: []int{14}, Labels: []string{"ralph"}},
		{Number: 11, Title: "First", Body: "- [ ] a\n- [x] b\n", AuthorAssociation: "CONTRIBUTOR", Author: "outsider"},
		{Number: 12, Title: "Second", State: "closed", StateReason: "completed", Labels: []string{"ralph"}},
		{Number: 13, Title: "Zeroth"},
		{Number: 14, Title: "Blocker", Labels: []string{"Ralph", "bug"}},
		{Number: 15, Title: "A pull request", IsPull: true, Labels: []string{"ralph"}},
	} {
		if !srv.SetIssue("acme", "widgets", is) {
			t.Fatal("no repository")
		}
	}
	return srv, c, repo
}

func TestIssueRead(t *testing.T) {
	srv, c, repo := issues(t)
	ctx := t.Context()
	is, err := c.Issue(ctx, repo, 10)
	if err != nil {
		t.Fatal(err)
	}
	if is.Number != 10 || is.Title != "Parent" || is.Body != "the whole change\r\n- [ ] top task\r\n" || !is.Open() ||
		is.AuthorAssociation != "OWNER" || !is.HasLabel("RALPH") || is.HTMLURL != "https://github.localhost/acme/widgets/issues/10" || is.PullRequest != nil {
		t.Fatalf("Issue = %+v", is)
	}
	subs, err := c.SubIssues(ctx, repo, 10)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range subs {
		got = append(got, fmt.Sprintf("#%d %s %s %s", s.Number, s.State, s.AuthorAssociation, s.User.Login))
	}
	want := "#13 open OWNER octocat, #11 open CONTRIBUTOR outsider, #12 closed OWNER octocat"
	if strings.Join(got, ", ") != want {
		t.Fatalf("SubIssues = %s; want %s", strings.Join(got, ", "), want)
	}
	blockers, err := c.BlockedBy(ctx, repo, 10)
	if err != nil || len(blockers) != 1 || blockers[0].Number != 14 || !blockers[0].Open() {
		t.Fatalf("BlockedBy = %+v, %v", blockers, err)
	}
	if none, err := c.SubIssues(ctx, repo, 13); err != nil || len(none) != 0 {
		t.Fatalf("no sub-issues: %+v, %v", none, err)
	}
	queue, err := c.OpenIssuesWithLabel(ctx, repo, "ralph")
	if err != nil {
		t.Fatal(err)
	}
	got = nil
	for _, s := range queue {
		got = append(got, fmt.Sprint(s.Number))
	}
	if strings.Join(got, " ") != "10 14" { // not the closed 12, not the pull request 15
		t.Fatalf("OpenIssuesWithLabel = %v", got)
	}
	if _, err := c.Issue(ctx, repo, 99); github.StatusOf(err) != 404 {
		t.Fatalf("missing issue: %v", err)
	}
	srv.EditIssue("acme", "widgets", 13, func(is *githubtest.Issue) { is.Deleted = true })
	if _, err := c.Issue(ctx, repo, 13); github.StatusOf(err) != 410 {
		t.Fatalf("deleted issue: %v", err)
	}
	for _, r := range srv.Requests() {
		if r.Method != http.MethodGet {
			t.Errorf("a read wrote: %s %s", r.Method, r.Path)
		}
	}
}

// The listings follow GitHub's Link header past the first page of 100.
func TestIssueListingsPaginate(t *testing.T) {
	srv, c, repo := issues(t)
	var nums []int
	for n := 100; n < 100+github.MaxSubIssues+30; n++ {
		srv.SetIssue("acme", "widgets", githubtest.Issue{Number: n, Title: fmt.Sprint(n), Labels: []string{"many"}})
		nums = append(nums, n)
	}
	srv.EditIssue("acme", "widgets", 10, func(is *githubtest.Issue) { is.SubIssues = nums })
	subs, err := c.SubIssues(t.Context(), repo, 10)
	if err != nil || len(subs) != len(nums) || subs[0].Number != 100 || subs[len(subs)-1].Number != nums[len(nums)-1] {
		t.Fatalf("SubIssues: %d, %v", len(subs), err)
	}
	queue, err := c.OpenIssuesWithLabel(t.Context(), repo, "many")
	if err != nil || len(queue) != len(nums) || queue[0].Number != 100 {
		t.Fatalf("OpenIssuesWithLabel: %d, %v", len(queue), err)
	}
	pages := 0
	for _, r := range srv.Requests() {
		if strings.HasSuffix(r.Path, "/sub_issues") {
			pages++
		}
	}
	if pages != 2 {
		t.Fatalf("%d pages of sub-issues, want 2", pages)
	}
}

func TestLabels(t *testing.T) {
	srv, c, repo := issues(t)
	ctx := t.Context()
	if err := c.AddLabel(ctx, repo, 11, "ralph:running"); err != nil {
		t.Fatal(err)
	}
	if is, _ := srv.GetIssue("acme", "widgets", 11); strings.Join(is.Labels, ",") != "ralph:running" {
		t.Fatalf("labels %v", is.Labels)
	}
	if err := c.RemoveLabel(ctx, repo, 11, "ralph:running"); err != nil {
		t.Fatal(err)
	}
	if err := c.RemoveLabel(ctx, repo, 11, "ralph:running"); err != nil {
		t.Fatalf("removing a label the issue does not carry: %v", err)
	}
	if is, _ := srv.GetIssue("acme", "widgets", 11); len(is.Labels) != 0 {
		t.Fatalf("labels %v", is.Labels)
	}
	if err := c.RemoveLabel(ctx, repo, 99, "ralph:running"); github.StatusOf(err) != 404 {
		t.Fatalf("missing issue: %v", err)
	}
	// a label name with a slash and a space is one path segment
	if err := c.AddLabel(ctx, repo, 11, "ralph/odd name"); err != nil {
		t.Fatal(err)
	}
	if err := c.RemoveLabel(ctx, repo, 11, "ralph/odd name"); err != nil {
		t.Fatal(err)
	}
}

func TestUpdateIssueBody(t *testing.T) {
	srv, c, repo := issues(t)
	ctx := t.Context()
	read := "the whole change\r\n- [ ] top task\r\n"
	ticked := "the whole change\r\n- [x] top task\r\n"
	if _, err := c.UpdateIssueBody(ctx, repo, 10, read, ticked); err != nil {
		t.Fatal(err)
	}
	is, _ := srv.GetIssue("acme", "widgets", 10)
	if is.Body != ticked || is.Edits != 1 {
		t.Fatalf("body %q after %d edits", is.Body, is.Edits)
	}
	// edited on GitHub since it was read: left alone
	_, err := c.UpdateIssueBody(ctx, repo, 10, read, ticked)
	var changed *github.BodyChangedError
	if !errors.As(err, &changed) || changed.Current != ticked || changed.Number != 10 {
		t.Fatalf("changed body: %v", err)
	}
	// closed: nothing written
	_, err = c.UpdateIssueBody(ctx, repo, 12, "", "- [x] x")
	if !errors.Is(err, github.ErrIssueClosed) {
		t.Fatalf("closed issue: %v", err)
	}
	if is, _ := srv.GetIssue("acme", "widgets", 10); is.Edits != 1 {
		t.Fatalf("%d edits, want 1", is.Edits)
	}
	if is, _ := srv.GetIssue("acme", "widgets", 12); is.Patches != 0 {
		t.Fatal("a closed issue was written to")
	}
}

func TestUpsertComment(t *testing.T) {
	srv, c, repo := issues(t)
	ctx := t.Context()
	is, err := c.Issue(ctx, repo, 11)
	if err != nil {
		t.Fatal(err)
	}
	srv.EditIssue("acme", "widgets", 11, func(is *githubtest.Issue) {
		is.Comments = append(is.Comments, &githubtest.Comment{ID: 1, Body: "a human's comment mentioning <!-- git-ralph:story:11 -->", Author: "someone"})
	})
	first, err := c.UpsertComment(ctx, repo, is, "story:11", 0, "attempt 1 failed")
	if err != nil {
		t.Fatal(err)
	}
	before := len(srv.Requests())
	second, err := c.UpsertComment(ctx, repo, is, "story:11", first.ID, "checkpoint abc1234")
	if err != nil || second.ID != first.ID {
		t.Fatalf("update: %+v, %v", second, err)
	}
	if n := len(srv.Requests()) - before; n != 2 { // the comment by its id, and its update
		t.Fatalf("%d requests to update a known comment, want 2:\n%s", n, githubtest.Dump(srv.Requests()[before:]))
	}
	// a known id that is gone, or on another issue, falls back to the listing
	if again, err := c.UpsertComment(ctx, repo, is, "story:11", 1, "checkpoint abc1234"); err != nil || again.ID != first.ID {
		t.Fatalf("known id of another comment: %+v, %v", again, err)
	}
	if again, err := c.UpsertComment(ctx, repo, is, "story:11", 424242, "checkpoint abc1234"); err != nil || again.ID != first.ID {
		t.Fatalf("known id that is gone: %+v, %v", again, err)
	}
	before = len(srv.Requests())
	if _, err := c.UpsertComment(ctx, repo, is, "story:11", first.ID, "checkpoint abc1234"); err != nil {
		t.Fatal(err)
	}
	for _, r := range srv.Requests()[before:] {
		if r.Method != http.MethodGet {
			t.Errorf("an unchanged comment was written: %s %s", r.Method, r.Path)
		}
	}
	got, _ := srv.GetIssue("acme", "widgets", 11)
	if len(got.Comments) != 2 || got.Comments[0].Edits != 0 || got.Comments[1].Edits != 1 ||
		got.Comments[1].Body != "<!-- git-ralph:story:11 -->\ncheckpoint abc1234" {
		t.Fatalf("comments %+v %+v", got.Comments[0], got.Comments[len(got.Comments)-1])
	}
	closed, _ := c.Issue(ctx, repo, 12)
	before = len(srv.Requests())
	if _, err := c.UpsertComment(ctx, repo, closed, "story:12", 0, "x"); !errors.Is(err, github.ErrIssueClosed) {
		t.Fatalf("closed issue: %v", err)
	}
	if len(srv.Requests()) != before {
		t.Fatal("a request about a closed issue")
	}
	if m := github.CommentMarker("story:a--b -->x"); m != "<!-- git-ralph:story:a-b-x -->" {
		t.Fatalf("marker %q", m)
	}
}

// Every kind of failure comes back typed, whichever issue call meets it: the caller
// tells the user what happened from the type.
func TestIssueErrors(t *testing.T) {
	srv, _, repo := issues(t)
	var slept []time.Duration
	c, err := github.New("github.com", github.Options{Token: "T1", Transport: srv.Transport(), MaxWait: 10 * time.Second,
		Sleep: func(_ context.Context, d time.Duration) error { slept = append(slept, d); return nil }})
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	type call struct {
		method, path string // what the failure answers: the call's first request, or its write
		do           func() error
	}
	calls := map[string]call{
		"issue":     {"GET", "/repos/acme/widgets/issues/10", func() error { _, err := c.Issue(ctx, repo, 10); return err }},
		"subissues": {"GET", "/repos/acme/widgets/issues/10/sub_issues", func() error { _, err := c.SubIssues(ctx, repo, 10); return err }},
		"blockedby": {"GET", "/repos/acme/widgets/issues/10/dependencies/blocked_by", func() error { _, err := c.BlockedBy(ctx, repo, 10); return err }},
		"queue":     {"GET", "/repos/acme/widgets/issues", func() error { _, err := c.OpenIssuesWithLabel(ctx, repo, "ralph"); return err }},
		"addlabel":  {"POST", "/repos/acme/widgets/issues/11/labels", func() error { return c.AddLabel(ctx, repo, 11, "ralph:running") }},
		"rmlabel":   {"DELETE", "/repos/acme/widgets/issues/11/labels/*", func() error { return c.RemoveLabel(ctx, repo, 11, "ralph:running") }},
		"body": {"PATCH", "/repos/acme/widgets/issues/11", func() error {
			srv.EditIssue("acme", "widgets", 11, func(is *githubtest.Issue) { is.Body = "- [ ] a\n- [x] b\n" })
			_, err := c.UpdateIssueBody(ctx, repo, 11, "- [ ] a\n- [x] b\n", "- [x] a\n- [x] b\n")
			return err
		}},
		"comment": {"POST", "/repos/acme/widgets/issues/11/comments", func() error {
			_, err := c.UpsertComment(ctx, repo, &github.Issue{Number: 11, State: "open"}, fmt.Sprint("k", time.Now().UnixNano()), 0, "x") // a new one each time
			return err
		}},
	}
	for name, cl := range calls {
		fail := func(o githubtest.Override) {
			o.Method, o.Path, o.Times = cl.method, cl.path, max(o.Times, 1)
			srv.AddOverride(o)
		}
		for _, st := range []int{401, 403, 404, 410, 500} {
			fail(githubtest.Override{Status: st})
			if err := cl.do(); github.StatusOf(err) != st {
				t.Errorf("%s, status %d: %v", name, st, err)
			}
		}
		// a secondary rate limit (403 with retry-after) is waited out when short…
		slept = nil
		fail(githubtest.Override{Status: 403, Header: http.Header{"Retry-After": {"2"}},
			Body: `{"message":"You have exceeded a secondary rate limit."}`})
		if err := cl.do(); err != nil || !slices.Contains(slept, 2*time.Second) {
			t.Errorf("%s after a short secondary limit: %v, slept %v", name, err, slept)
		}
		// …and a primary one (x-ratelimit-remaining 0) that resets in an hour is not
		fail(githubtest.Override{Status: 403,
			Header: http.Header{"X-Ratelimit-Remaining": {"0"}, "X-Ratelimit-Reset": {fmt.Sprint(time.Now().Add(time.Hour).Unix())}}})
		var ge *github.Error
		if err := cl.do(); !errors.As(err, &ge) || !ge.RateLimited() || ge.RetryAfter < 50*time.Minute {
			t.Errorf("%s, primary limit: %v", name, err)
		}
		fail(githubtest.Override{Status: 429, Times: 4})
		if err := cl.do(); !errors.As(err, &ge) || !ge.RateLimited() {
			t.Errorf("%s, 429: %v", name, err)
		}
	}
	// the network down
	dead, err := github.New("github.com", github.Options{Token: "T", Transport: deadTransport{}})
	if err != nil {
		t.Fatal(err)
	}
	var ne *github.NetworkError
	if _, err := dead.SubIssues(ctx, repo, 10); !errors.As(err, &ne) {
		t.Fatalf("network down: %v", err)
	}
}

type deadTransport struct{}

func (deadTransport) RoundTrip(*http.Request) (*http.Response, error) {
	return nil, errors.New("connect: network is unreachable")
}
