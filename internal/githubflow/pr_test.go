package githubflow

import (
	"errors"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/git-ralph/git-ralph/internal/github"
	"github.com/git-ralph/git-ralph/internal/github/githubtest"
	"github.com/git-ralph/git-ralph/internal/run"
	"github.com/git-ralph/git-ralph/internal/start"
)

// finish --pr in-process, against the fake GitHub through a transport (github.com, an
// SSH remote): a first pull request costs 4 API calls and a bounded number of git
// processes, and leaves HEAD on main with a finished record.
func TestFinishPRCosts(t *testing.T) {
	dir := newRepo(t)
	t.Setenv("GH_CONFIG_DIR", t.TempDir())
	t.Setenv("GH_PATH", "/nonexistent")
	bare := filepath.Join(t.TempDir(), "widgets.git")
	git := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	git("init", "-q", "--bare", bare)
	git("remote", "add", "origin", "git@github.com:acme/widgets.git")
	git("config", "url."+bare+".insteadOf", "git@github.com:acme/widgets.git")
	git("push", "-q", "origin", "main")
	l, _ := newLoop(t, dir, &fakeClock{At: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)})
	l.Driver = scriptAgent(t, resultComplete)
	if _, err := l.Start(t.Context(), start.Options{Arg: "c", AllowSkip: true}); err != nil {
		t.Fatal(err)
	}
	srv := githubtest.New()
	t.Cleanup(srv.Close)
	srv.AddRepo(githubtest.Repo{Owner: "acme", Name: "widgets", GitDir: bare})
	opts := PROptions{Client: func(host string) (*github.Client, error) {
		if host != "github.com" {
			t.Errorf("client for %q", host)
		}
		return github.New(host, github.Options{Token: "T", Transport: srv.Transport()})
	}}
	before := l.Repo.Calls.Load()
	res, err := l.FinishPR(t.Context(), "c", opts)
	if err != nil {
		t.Fatal(err)
	}
	calls := l.Repo.Calls.Load() - before
	if res.Number != 1 || res.Updated || !res.Pushed || res.Back != "main" || res.Base != "main" {
		t.Fatalf("result %+v", res)
	}
	if n := len(srv.Requests()); n != 4 {
		t.Errorf("%d API requests, want 4:\n%s", n, githubtest.Dump(srv.Requests()))
	}
	// status, branch, remote, URLs, ls-remote, ancestry, push, checkout, the check that
	// the branch holds the record's initial state (issue 29) …: keep it bounded.
	if calls > 17 {
		t.Errorf("finish --pr ran %d git processes", calls)
	}
	t.Logf("finish --pr: %d git processes, %d API requests", calls, len(srv.Requests()))
	if l.Store.LoadFinished("c") == nil {
		t.Error("no finished record")
	}
}

// '#10' means an issue of the repository finish --pr would open the pull request in:
// the current branch's push remote, else origin; --repo, ralph.repo and GH_REPO win.
func TestIssueRepo(t *testing.T) {
	dir := newRepo(t)
	git := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	ctx := t.Context()
	clock := &fakeClock{At: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	flow := func() *flowLoop { l, _ := newLoop(t, dir, clock); return l } // a process reads the config once
	l := flow()
	if _, ok, err := l.IssueRepo(ctx, PROptions{}); ok || err != nil {
		t.Fatalf("no remote: %v, %v", ok, err)
	}
	git("remote", "add", "origin", "git@github.com:acme/widgets.git")
	l = flow()
	if r, ok, err := l.IssueRepo(ctx, PROptions{}); !ok || err != nil || r.String() != "acme/widgets" {
		t.Fatalf("origin: %v, %v, %v", r, ok, err)
	}
	git("remote", "add", "fork", "https://ghe.example.com/me/widgets.git")
	git("config", "branch.main.pushRemote", "fork")
	l = flow()
	if r, ok, err := l.IssueRepo(ctx, PROptions{}); !ok || err != nil || r.String() != "ghe.example.com/me/widgets" {
		t.Fatalf("push remote: %v, %v, %v", r, ok, err)
	}
	if r, ok, err := l.IssueRepo(ctx, PROptions{EnvRepo: "acme/widgets"}); !ok || err != nil || r.String() != "ghe.example.com/acme/widgets" {
		t.Fatalf("GH_REPO: %v, %v, %v", r, ok, err)
	}
	git("remote", "add", "local", "/srv/git/widgets.git")
	l = flow()
	if _, ok, err := l.IssueRepo(ctx, PROptions{Remote: "local"}); ok || err != nil {
		t.Fatalf("a remote that is not GitHub: %v, %v", ok, err)
	}
}

// A run is remote for every finish by one test (the record's status): one marked
// dispatched whose remote part is lost is refused by --pr as by --squash, before
// anything is pushed or moved.
func TestFinishOfABrokenDispatchRecordRefusedAlike(t *testing.T) {
	dir := newRepo(t)
	l, _ := newLoop(t, dir, &fakeClock{At: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)})
	l.Driver = scriptAgent(t, resultComplete)
	if _, err := l.Start(t.Context(), start.Options{Arg: "c", AllowSkip: true}); err != nil {
		t.Fatal(err)
	}
	rec, err := l.Store.Load("c")
	if err != nil {
		t.Fatal(err)
	}
	rec.Status, rec.Remote = run.Dispatched, nil
	if err := l.Loop.Save(rec); err != nil {
		t.Fatal(err)
	}
	state := func() string {
		return gitOut(t, dir, "rev-parse", "HEAD", "ralph/c", "main") + gitOut(t, dir, "branch", "--show-current") + gitOut(t, dir, "status", "--porcelain")
	}
	before := state()
	const want = `the dispatch of "c" did not complete`
	opts := PROptions{Client: func(host string) (*github.Client, error) {
		t.Errorf("finish --pr asked for a client for %s", host)
		return nil, errors.New("no")
	}}
	if _, err := l.FinishPR(t.Context(), "c", opts); err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("finish --pr = %v, want %q", err, want)
	}
	if _, err := l.Finish(t.Context(), "c", run.Squash); err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("finish --squash = %v, want %q", err, want)
	}
	if after := state(); after != before {
		t.Errorf("the repository changed:\n%s\nwas\n%s", after, before)
	}
	if _, err := l.Store.Load("c"); err != nil {
		t.Errorf("the record is gone: %v", err)
	}
}
