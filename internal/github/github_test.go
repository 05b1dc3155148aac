package github_test

import (
	"context"
	"crypto/x509"
	"errors"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/git-ralph/git-ralph/internal/github"
	"github.com/git-ralph/git-ralph/internal/github/githubtest"
)

func TestMain(m *testing.M) {
	// go-gh reads gh's config once per process: never the developer's.
	dir, err := os.MkdirTemp("", "gh-config")
	if err != nil {
		panic(err)
	}
	os.Setenv("GH_CONFIG_DIR", dir)
	os.Setenv("GH_PATH", "/nonexistent")
	os.Unsetenv("GH_HOST")
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

func TestParseRepo(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"acme/widgets", "acme/widgets"},
		{"ghe.example.com/acme/widgets", "ghe.example.com/acme/widgets"},
		{"https://github.com/acme/widgets.git", "acme/widgets"},
		{"https://github.com/acme/widgets", "acme/widgets"},
		{"git@github.com:acme/widgets.git", "acme/widgets"},
		{"ssh://git@ssh.github.com:443/acme/widgets.git", "acme/widgets"},
		{"git@ghe.example.com:acme/my.repo.git", "ghe.example.com/acme/my.repo"},
		{"https://user@GHE.Example.com/acme/widgets/", "ghe.example.com/acme/widgets"},
	} {
		r, err := github.ParseRepo(tc.in, "github.com")
		if err != nil || r.String() != tc.want {
			t.Errorf("ParseRepo(%q) = %v, %v; want %s", tc.in, r, err, tc.want)
		}
	}
	for _, bad := range []string{"", "acme", "/srv/git/widgets.git", "../widgets.git", "a/b/c/d", "-x/y", "https://github.com/acme", "file:///srv/acme/widgets", "acme/wid gets"} {
		if r, err := github.ParseRepo(bad, "github.com"); !errors.Is(err, github.ErrBadRepo) {
			t.Errorf("ParseRepo(%q) = %v, %v; want ErrBadRepo", bad, r, err)
		}
	}
	if _, ok := github.RepoFromURL("/srv/git/acme/widgets.git"); ok {
		t.Error("a local path is not a GitHub URL")
	}
}

// emptyConfig is an empty global git config in the test's temporary directory. Never
// /dev/null: a `git config --global` write there, run as root, replaces the device with
// a regular file (git renames its lock file over the target) for every process after.
func emptyConfig(t *testing.T) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "gitconfig")
	if err := os.WriteFile(p, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// fixture is a fake GitHub with acme/widgets backed by a bare repository holding main
// and a branch one commit ahead.
func fixture(t *testing.T) (*githubtest.Server, *github.Client, github.Repo) {
	t.Helper()
	bare := filepath.Join(t.TempDir(), "widgets.git")
	work := t.TempDir()
	global := emptyConfig(t)
	git := func(dir string, args ...string) {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL="+global,
			"GIT_AUTHOR_NAME=A", "GIT_AUTHOR_EMAIL=a@example.com", "GIT_COMMITTER_NAME=A", "GIT_COMMITTER_EMAIL=a@example.com")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	git(work, "init", "-q", "--bare", bare)
	git(work, "init", "-q", "-b", "main", ".")
	git(work, "commit", "-q", "--allow-empty", "-m", "base")
	git(work, "push", "-q", bare, "main")
	git(work, "commit", "-q", "--allow-empty", "-m", "work")
	git(work, "push", "-q", bare, "HEAD:refs/heads/ralph/x")
	srv := githubtest.New()
	t.Cleanup(srv.Close)
	conforms(t, srv)
	srv.AddRepo(githubtest.Repo{Owner: "acme", Name: "widgets", GitDir: bare})
	var slept []time.Duration
	c, err := github.New("github.com", github.Options{Token: "T1", Transport: srv.Transport(),
		Sleep: func(_ context.Context, d time.Duration) error { slept = append(slept, d); return nil }})
	if err != nil {
		t.Fatal(err)
	}
	return srv, c, github.Repo{Host: "github.com", Owner: "acme", Name: "widgets"}
}

func TestPullRequestLifecycle(t *testing.T) {
	srv, c, repo := fixture(t)
	ctx := t.Context()
	r, err := c.Repository(ctx, repo)
	if err != nil || r.DefaultBranch != "main" || r.Fork {
		t.Fatalf("Repository = %+v, %v", r, err)
	}
	if b, err := c.Branch(ctx, repo, "ralph/x"); err != nil || len(b.Commit.SHA) != 40 {
		t.Fatalf("Branch = %+v, %v", b, err)
	}
	if _, err := c.Branch(ctx, repo, "nope"); github.StatusOf(err) != 404 {
		t.Fatalf("missing branch: %v", err)
	}
	if pr, err := c.OpenPullRequest(ctx, repo, "acme:ralph/x"); pr != nil || err != nil {
		t.Fatalf("no PR yet: %v %v", pr, err)
	}
	pr, err := c.CreatePullRequest(ctx, repo, github.NewPullRequest{Title: "T", Head: "ralph/x", Base: "main", Body: "B", Draft: true})
	if err != nil || pr.Number != 1 || !pr.Draft || pr.HTMLURL == "" {
		t.Fatalf("Create = %+v, %v", pr, err)
	}
	_, err = c.CreatePullRequest(ctx, repo, github.NewPullRequest{Title: "T", Head: "ralph/x", Base: "main"})
	var ge *github.Error
	if !errors.As(err, &ge) || ge.StatusCode != 422 || !strings.Contains(ge.Text(), "already exists") {
		t.Fatalf("second create: %v", err)
	}
	found, err := c.OpenPullRequest(ctx, repo, "acme:ralph/x")
	if err != nil || found == nil || found.Number != 1 {
		t.Fatalf("Open = %+v, %v", found, err)
	}
	if _, err := c.UpdatePullRequest(ctx, repo, 1, github.PullRequestUpdate{Body: "B2"}); err != nil {
		t.Fatal(err)
	}
	if p := srv.Pulls("acme", "widgets"); len(p) != 1 || p[0].Body != "B2" || p[0].Title != "T" {
		t.Fatalf("pulls = %+v", p)
	}
	for _, r := range srv.Requests() {
		if !r.Auth || r.Token != "T1" || r.Host != "api.github.com" {
			t.Errorf("request %s %s: auth %v token %q host %q", r.Method, r.Path, r.Auth, r.Token, r.Host)
		}
	}
}

func TestNoCommitsBetween(t *testing.T) {
	_, c, repo := fixture(t)
	_, err := c.CreatePullRequest(t.Context(), repo, github.NewPullRequest{Title: "T", Head: "main", Base: "main"})
	var ge *github.Error
	if !errors.As(err, &ge) || ge.Text() != "No commits between main and main" {
		t.Fatalf("err = %v", err)
	}
}

func TestErrorsAndRateLimits(t *testing.T) {
	srv, _, repo := fixture(t)
	var slept []time.Duration
	c, err := github.New("github.com", github.Options{Token: "T1", Transport: srv.Transport(), MaxWait: 10 * time.Second,
		Sleep: func(_ context.Context, d time.Duration) error { slept = append(slept, d); return nil }})
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	srv.AddOverride(githubtest.Override{Method: "GET", Path: "/repos/acme/widgets", Status: 429,
		Header: http.Header{"Retry-After": {"3"}}, Times: 2})
	if _, err := c.Repository(ctx, repo); err != nil {
		t.Fatalf("after two 429s: %v", err)
	}
	if len(slept) != 2 || slept[0] != 3*time.Second {
		t.Fatalf("slept %v", slept)
	}
	srv.AddOverride(githubtest.Override{Path: "/repos/acme/widgets/branches/*", Status: 403,
		Header: http.Header{"Retry-After": {"3600"}}, Times: 1})
	_, err = c.Branch(ctx, repo, "main")
	var ge *github.Error
	if !errors.As(err, &ge) || !ge.RateLimited() || ge.RetryAfter != time.Hour {
		t.Fatalf("long rate limit: %v", err)
	}
	// the primary limit: 403, x-ratelimit-remaining 0, wait until x-ratelimit-reset
	slept = nil
	reset := time.Now().Add(5 * time.Second).Unix()
	srv.AddOverride(githubtest.Override{Path: "/repos/acme/widgets", Status: 403, Times: 1,
		Header: http.Header{"X-Ratelimit-Remaining": {"0"}, "X-Ratelimit-Reset": {strconv.FormatInt(reset, 10)}}})
	if _, err := c.Repository(ctx, repo); err != nil {
		t.Fatalf("after the reset: %v", err)
	}
	if len(slept) != 1 || slept[0] < 3*time.Second || slept[0] > 6*time.Second {
		t.Fatalf("slept %v, want about 5s", slept)
	}
	for _, st := range []int{401, 403, 404, 500, 502} {
		srv.AddOverride(githubtest.Override{Path: "/repos/acme/widgets/pulls", Status: st, Times: 1})
		_, err := c.OpenPullRequest(ctx, repo, "acme:x")
		if github.StatusOf(err) != st {
			t.Errorf("status %d: %v", st, err)
		}
		if errors.As(err, &ge) && ge.RateLimited() {
			t.Errorf("status %d taken for a rate limit", st)
		}
	}
}

func TestNetworkError(t *testing.T) {
	c, err := github.New("github.com", github.Options{Token: "T", Transport: &http.Transport{
		Proxy: http.ProxyURL(&url.URL{Scheme: "http", Host: "127.0.0.1:1"})}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Repository(t.Context(), github.Repo{Owner: "a", Name: "b"})
	var ne *github.NetworkError
	if !errors.As(err, &ne) || ne.Host != "github.com" {
		t.Fatalf("err = %v", err)
	}
}

func TestNoToken(t *testing.T) {
	for _, k := range []string{"GH_TOKEN", "GITHUB_TOKEN", "GH_ENTERPRISE_TOKEN", "GITHUB_ENTERPRISE_TOKEN"} {
		t.Setenv(k, "")
	}
	t.Setenv("GH_TOKEN", "only-for-github.com")
	if _, err := github.New("github.com", github.Options{}); err != nil {
		t.Fatalf("GH_TOKEN is github.com's token: %v", err)
	}
	_, err := github.New("ghe.example.com", github.Options{})
	var nt *github.NoTokenError
	if !errors.As(err, &nt) || nt.Host != "ghe.example.com" {
		t.Fatalf("err = %v", err)
	}
}

// An Enterprise host goes over HTTPS to /api/v3, through the fake as a CONNECT proxy,
// with the Enterprise token.
func TestEnterpriseOverTLS(t *testing.T) {
	srv, _, repo := fixture(t)
	ca, err := srv.EnableTLS()
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(ca)
	proxy, _ := url.Parse(srv.URL())
	t.Setenv("GH_ENTERPRISE_TOKEN", "E1")
	c, err := github.New("ghe.example.com", github.Options{Transport: &http.Transport{Proxy: http.ProxyURL(proxy),
		TLSClientConfig: newTLSConfig(pool)}})
	if err != nil {
		t.Fatal(err)
	}
	repo.Host = "ghe.example.com"
	if _, err := c.Repository(t.Context(), repo); err != nil {
		t.Fatal(err)
	}
	reqs := srv.Requests()
	if len(reqs) != 1 || reqs[0].Host != "ghe.example.com" || reqs[0].Path != "/repos/acme/widgets" || reqs[0].Token != "E1" {
		t.Fatalf("requests %+v", reqs)
	}
}

func TestParseIssueRef(t *testing.T) {
	def := &github.Repo{Host: "github.com", Owner: "acme", Name: "widgets"}
	ghe := &github.Repo{Host: "ghe.example.com", Owner: "acme", Name: "widgets"}
	for _, tc := range []struct {
		in   string
		def  *github.Repo
		want string
	}{
		{"#10", def, "acme/widgets#10"},
		{" #10 ", def, "acme/widgets#10"},
		{"#10", ghe, "ghe.example.com/acme/widgets#10"},
		{"other/repo#7", def, "other/repo#7"},
		{"other/repo#7", ghe, "ghe.example.com/other/repo#7"},
		{"ghe.example.com/other/repo#7", def, "ghe.example.com/other/repo#7"},
		{"https://github.com/acme/widgets/issues/10", nil, "acme/widgets#10"},
		{"https://github.com/acme/widgets/issues/10/", nil, "acme/widgets#10"},
		{"https://github.com/acme/widgets/issues/10#issuecomment-5", nil, "acme/widgets#10"},
		{"https://www.github.com/acme/widgets/issues/10?x=1", nil, "acme/widgets#10"},
		{"https://GHE.example.com/acme/widgets/issues/3", def, "ghe.example.com/acme/widgets#3"},
	} {
		ref, isRef, err := github.ParseIssueRef(tc.in, tc.def)
		if err != nil || !isRef || ref.String() != tc.want {
			t.Errorf("ParseIssueRef(%q) = %v, %v, %v; want %s", tc.in, ref, isRef, err, tc.want)
		}
	}
	// not issue references: they may be change names or files
	for _, s := range []string{"add-greeter", "specs/001-x", "notes#1", "docs/plans/x.md", "#", "#abc", "a/b/c/d#1", "10"} {
		if _, isRef, err := github.ParseIssueRef(s, def); isRef || err != nil {
			t.Errorf("ParseIssueRef(%q) = %v, %v; want not a reference", s, isRef, err)
		}
	}
	for _, tc := range []struct {
		in   string
		def  *github.Repo
		want error
	}{
		{"#10", nil, github.ErrNoIssueRepo},
		{"#0", def, github.ErrBadIssueRef},
		{"#99999999999", def, github.ErrBadIssueRef},
		{"-x/y#3", def, github.ErrBadIssueRef},
		{"https://github.com/acme/widgets/pull/10", def, github.ErrBadIssueRef},
		{"https://github.com/acme/widgets", def, github.ErrBadIssueRef},
		{"https://github.com/acme/widgets/issues/new", def, github.ErrBadIssueRef},
		{"https://github.com/acme/widgets/issues/0", def, github.ErrBadIssueRef},
	} {
		if _, isRef, err := github.ParseIssueRef(tc.in, tc.def); !isRef || !errors.Is(err, tc.want) {
			t.Errorf("ParseIssueRef(%q) = %v, %v; want %v", tc.in, isRef, err, tc.want)
		}
	}
}
