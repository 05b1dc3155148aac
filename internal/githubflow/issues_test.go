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
	"github.com/git-ralph/git-ralph/internal/issue"
	"github.com/git-ralph/git-ralph/internal/tell"
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
	if ue := (*tell.Error)(nil); !errors.As(err, &ue) || !strings.Contains(err.Error(), "issue acme/widgets#12 is closed") {
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
		var le *tell.Error
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

func TestSyncProgress(t *testing.T) {
	srv, c, repo := issueFake(t)
	ctx := t.Context()
	read := "Parse names.\r\n- [ ] split\r\n- [ ] trim\r\n"
	srv.SetIssue("acme", "widgets", githubtest.Issue{Number: 11, Title: "Parse", Body: read})
	is := issue.Issue{Number: 11, Title: "Parse", Body: read, State: "open"}
	p := Progress{Run: "issue-10", Branch: "ralph/issue-10", Story: "issue-11", Attempts: 2, LastFailure: "tests failed: see `go test`\nmore lines\n@someone Fixes #3"}

	res, err := SyncProgress(ctx, c, repo, is, []int{2}, 0, p, "git ralph start '#10'")
	if err != nil {
		t.Fatal(err)
	}
	got, _ := srv.GetIssue("acme", "widgets", 11)
	if got.Body != "Parse names.\r\n- [x] split\r\n- [ ] trim\r\n" || res.Body != got.Body || res.Ticked != 1 || res.CommentID == 0 || len(got.Comments) != 1 {
		t.Fatalf("first sync: %+v; body %q, %d comments", res, got.Body, len(got.Comments))
	}
	first := got.Comments[0].Body
	for _, want := range []string{"<!-- git-ralph:progress:issue-11 -->\n", "story `issue-11` is not done yet (2 attempts)", "Last failure: ``tests failed: see `go test` …``"} {
		if !strings.Contains(first, want) {
			t.Errorf("comment %q lacks %q", first, want)
		}
	}
	// the checkpoint: the last box, the same comment updated
	is.Body = res.Body
	p.Checkpoint, p.Attempts, p.LastFailure = "abc1234", 3, ""
	res, err = SyncProgress(ctx, c, repo, is, []int{3}, res.CommentID, p, "again")
	if err != nil {
		t.Fatal(err)
	}
	got, _ = srv.GetIssue("acme", "widgets", 11)
	if got.Body != "Parse names.\r\n- [x] split\r\n- [x] trim\r\n" || len(got.Comments) != 1 || got.Comments[0].Edits != 1 ||
		!strings.Contains(got.Comments[0].Body, "is done in checkpoint `abc1234` (3 attempts)") {
		t.Fatalf("second sync: %+v; %q; %+v", res, got.Body, got.Comments[0])
	}

	// someone edits the body meanwhile: it is left alone, the comment says what is done
	edited := "Parse names, and more.\n- [ ] split\n- [ ] trim\n- [ ] new task\n"
	srv.SetIssue("acme", "widgets", githubtest.Issue{Number: 12, Title: "Other", Body: edited})
	is12 := issue.Issue{Number: 12, Body: "- [ ] split\n- [ ] trim\n", State: "open"}
	res, err = SyncProgress(ctx, c, repo, is12, []int{1}, 0, Progress{Run: "r", Branch: "b", Story: "issue-12", Attempts: 1}, "again")
	if err != nil {
		t.Fatal(err)
	}
	got, _ = srv.GetIssue("acme", "widgets", 12)
	if got.Body != edited || got.Edits != 0 || !res.BodyChanged || res.Body != edited ||
		!strings.Contains(got.Comments[0].Body, "changed on GitHub since git-ralph read it") || !strings.Contains(got.Comments[0].Body, "- `split`\n") {
		t.Fatalf("edited body: %+v; %q; %+v", res, got.Body, got.Comments)
	}

	// closed: nothing written, with or without boxes to tick
	srv.SetIssue("acme", "widgets", githubtest.Issue{Number: 16, Title: "Closed", Body: "- [ ] a\n", State: "closed"})
	before := len(srv.Requests())
	for _, lines := range [][]int{{1}, nil} {
		res, err := SyncProgress(ctx, c, repo, issue.Issue{Number: 16, Body: "- [ ] a\n", State: "open"}, lines, 0, p, "again")
		if err != nil || !res.Closed {
			t.Fatalf("closed: %+v, %v", res, err)
		}
	}
	for _, r := range srv.Requests()[before:] {
		if r.Method != http.MethodGet {
			t.Errorf("a closed issue was written to: %s %s", r.Method, r.Path)
		}
	}

	// a failure of the comment after the boxes are ticked says so; running again finishes
	srv.SetIssue("acme", "widgets", githubtest.Issue{Number: 17, Title: "T", Body: "- [ ] a\n"})
	srv.AddOverride(githubtest.Override{Method: "POST", Path: "/repos/acme/widgets/issues/17/comments", Status: 502, Times: 1})
	is17 := issue.Issue{Number: 17, Body: "- [ ] a\n", State: "open"}
	_, err = SyncProgress(ctx, c, repo, is17, []int{1}, 0, p, "again")
	var le *tell.Error
	if !errors.As(err, &le) || !strings.Contains(le.Hint, "the boxes are ticked, the comment is not; run 'again' again") {
		t.Fatalf("comment failure: %v", err)
	}
	is17.Body = "- [x] a\n"
	if res, err := SyncProgress(ctx, c, repo, is17, []int{1}, 0, p, "again"); err != nil || res.CommentID == 0 {
		t.Fatalf("again: %+v, %v", res, err)
	}
}

func TestClaim(t *testing.T) {
	srv, c, repo := issueFake(t)
	ref := github.IssueRef{Repo: repo, Number: 13}
	if err := Claim(t.Context(), c, ref, ClaimLabel, "again"); err != nil {
		t.Fatal(err)
	}
	if is, _ := srv.GetIssue("acme", "widgets", 13); strings.Join(is.Labels, ",") != "ralph,ralph:running" {
		t.Fatalf("claimed: %v", is.Labels)
	}
	for range 2 { // removing it twice is fine: the run may have ended twice
		if err := Unclaim(t.Context(), c, ref, ClaimLabel, "again"); err != nil {
			t.Fatal(err)
		}
	}
	if is, _ := srv.GetIssue("acme", "widgets", 13); strings.Join(is.Labels, ",") != "ralph" {
		t.Fatalf("unclaimed: %v", is.Labels)
	}
	srv.AddOverride(githubtest.Override{Method: "POST", Path: "/repos/acme/widgets/issues/13/labels", Status: 403, Times: 1})
	if err := Claim(t.Context(), c, ref, ClaimLabel, "git ralph start --label ralph"); err == nil || !strings.Contains(err.Error(), "may not read or change issue acme/widgets#13") {
		t.Fatalf("403: %v", err)
	}
}
