package github_test

import (
	"context"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/git-ralph/git-ralph/internal/github"
	"github.com/git-ralph/git-ralph/internal/github/githubtest"
)

// fakeClock is a clock that only Sleep moves.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fakeClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *fakeClock) Sleep(ctx context.Context, d time.Duration) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
	return ctx.Err()
}

// sent records, on the fake clock, each request as it leaves, and how many were in
// flight at once.
type sent struct {
	clock    *fakeClock
	rt       http.RoundTripper
	mu       sync.Mutex
	at       []time.Time
	methods  []string
	inFlight int
	most     int
}

func (s *sent) RoundTrip(r *http.Request) (*http.Response, error) {
	s.mu.Lock()
	s.at, s.methods = append(s.at, s.clock.Now()), append(s.methods, r.Method)
	s.inFlight++
	s.most = max(s.most, s.inFlight)
	s.mu.Unlock()
	time.Sleep(2 * time.Millisecond) // long enough for a concurrent request to overlap
	resp, err := s.rt.RoundTrip(r)
	s.mu.Lock()
	s.inFlight--
	s.mu.Unlock()
	return resp, err
}

func politeClient(t *testing.T) (*githubtest.Server, *github.Client, github.Repo, *sent, *fakeClock) {
	t.Helper()
	srv, _, repo := fixture(t)
	srv.AddWorkflow("acme", "widgets", "ralph.yml", "")
	clock := &fakeClock{now: time.Date(2026, 11, 26, 3, 0, 0, 0, time.UTC)}
	tr := &sent{clock: clock, rt: srv.Transport()}
	c, err := github.New("github.com", github.Options{Token: "T1", Transport: tr, Sleep: clock.Sleep, Now: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	return srv, c, repo, tr, clock
}

// TestSecondaryRateLimit is docs/REMOTE.md, "Failure modes": a secondary rate limit (403 with
// retry-after, or 429) is waited out exactly as told, requests go one at a time, and
// two requests that change something are at least a second apart, on a fake clock.
func TestSecondaryRateLimit(t *testing.T) {
	srv, c, repo, tr, clock := politeClient(t)
	ctx := t.Context()
	start := clock.Now()
	d := github.Dispatch{Ref: "main", Inputs: map[string]string{"change": "x", "nonce": "n1"}}
	if _, err := c.DispatchWorkflow(ctx, repo, "ralph.yml", d); err != nil {
		t.Fatal(err)
	}
	if got := clock.Now().Sub(start); got != 0 {
		t.Errorf("the first POST waited %v", got)
	}
	// the next POST: a 429 with retry-after 7, then a 403 secondary limit with 2
	srv.AddOverride(githubtest.Override{Method: "POST", Path: "/repos/acme/widgets/actions/workflows/ralph.yml/dispatches",
		Status: 429, Header: http.Header{"Retry-After": {"7"}}, Times: 1})
	srv.AddOverride(githubtest.Override{Method: "POST", Path: "/repos/acme/widgets/actions/workflows/ralph.yml/dispatches",
		Status: 403, Header: http.Header{"Retry-After": {"2"}}, Times: 1,
		Body: `{"message":"You have exceeded a secondary rate limit. Please wait a few minutes before you try again."}`})
	d.Inputs["nonce"] = "n2"
	if _, err := c.DispatchWorkflow(ctx, repo, "ralph.yml", d); err != nil {
		t.Fatalf("after a 429 and a 403 with retry-after: %v", err)
	}
	var posts []time.Time
	for i, m := range tr.methods {
		if m == "POST" {
			posts = append(posts, tr.at[i])
		}
	}
	if len(posts) != 4 {
		t.Fatalf("%d POSTs, want 4 (two refused)", len(posts))
	}
	want := []time.Duration{0, time.Second, 8 * time.Second, 10 * time.Second} // gap, then retry-after 7, then 2
	for i, p := range posts {
		if got := p.Sub(start); got != want[i] {
			t.Errorf("POST %d sent at +%v, want +%v", i+1, got, want[i])
		}
	}
	if n := len(srv.Runs()); n != 2 {
		t.Errorf("%d runs, want 2", n)
	}
	// GETs are not spaced; concurrent callers are served one at a time
	before := clock.Now()
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := c.DispatchedRuns(ctx, repo, "ralph.yml"); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if tr.most != 1 {
		t.Errorf("%d requests in flight at once, want 1", tr.most)
	}
	if clock.Now() != before {
		t.Errorf("GETs waited %v", clock.Now().Sub(before))
	}
}

// TestConditionalListing: the runs listing answers an ETag; sent back, an unchanged
// listing is a 304 (nothing decoded, not counted against the rate limit) until a run
// changes; x-poll-interval is passed on.
func TestConditionalListing(t *testing.T) {
	srv, c, repo, _, _ := politeClient(t)
	ctx := t.Context()
	if _, err := c.DispatchWorkflow(ctx, repo, "ralph.yml", github.Dispatch{Ref: "main", Inputs: map[string]string{"change": "x", "nonce": "n1"}}); err != nil {
		t.Fatal(err)
	}
	srv.State(func(st *githubtest.State) { st.Actions.PollInterval = 30 })
	runs, p, err := c.DispatchedRunsIfChanged(ctx, repo, "ralph.yml", "")
	if err != nil || len(runs) != 1 || p.NotModified || p.ETag == "" || p.Interval != 30*time.Second {
		t.Fatalf("first listing: %v %+v %v", runs, p, err)
	}
	runs, p2, err := c.DispatchedRunsIfChanged(ctx, repo, "ralph.yml", p.ETag)
	if err != nil || runs != nil || !p2.NotModified || p2.ETag != p.ETag || p2.Interval != 30*time.Second {
		t.Fatalf("unchanged listing: %v %+v %v", runs, p2, err)
	}
	reqs := srv.Requests()
	if last := reqs[len(reqs)-1]; last.Status != http.StatusNotModified {
		t.Fatalf("the fake answered %d, want 304", last.Status)
	}
	srv.SetRun(1001, "completed", "success")
	runs, p3, err := c.DispatchedRunsIfChanged(ctx, repo, "ralph.yml", p.ETag)
	if err != nil || p3.NotModified || len(runs) != 1 || runs[0].Conclusion != "success" || p3.ETag == p.ETag {
		t.Fatalf("changed listing: %v %+v %v", runs, p3, err)
	}
}

// TestRunJobs: the jobs of a run and the step in progress, as the fake's SetStep moves
// them (earlier jobs and steps completed, later steps queued).
func TestRunJobs(t *testing.T) {
	srv, c, repo, _, _ := politeClient(t)
	ctx := t.Context()
	res, err := c.DispatchWorkflow(ctx, repo, "ralph.yml", github.Dispatch{Ref: "main", Inputs: map[string]string{"change": "x", "nonce": "n1"}, ReturnRunDetails: true})
	if err != nil {
		t.Fatal(err)
	}
	jobs, err := c.RunJobs(ctx, repo, res.RunID)
	if err != nil || len(jobs) != 0 {
		t.Fatalf("a queued run's jobs: %v %v", jobs, err)
	}
	if j, s := github.CurrentStep(jobs); j != "" || s != "" {
		t.Fatalf("CurrentStep of no jobs = %q %q", j, s)
	}
	srv.SetStep(res.RunID, "loop", "Check out")
	srv.SetStep(res.RunID, "loop", "Run the loop")
	if jobs, err = c.RunJobs(ctx, repo, res.RunID); err != nil || len(jobs) != 1 || len(jobs[0].Steps) != 2 {
		t.Fatalf("jobs = %+v, %v", jobs, err)
	}
	if st := jobs[0].Steps[0]; st.Status != "completed" || st.Conclusion != "success" || st.Number != 1 {
		t.Errorf("first step = %+v", st)
	}
	if j, s := github.CurrentStep(jobs); j != "loop" || s != "Run the loop" {
		t.Errorf("CurrentStep = %q %q", j, s)
	}
	srv.SetStep(res.RunID, "publish", "Push")
	jobs, _ = c.RunJobs(ctx, repo, res.RunID)
	if j, s := github.CurrentStep(jobs); j != "publish" || s != "Push" || jobs[0].Conclusion != "success" {
		t.Errorf("CurrentStep = %q %q; jobs %+v", j, s, jobs)
	}
	if _, err := c.RunJobs(ctx, repo, 99); github.StatusOf(err) != 404 {
		t.Errorf("jobs of an unknown run: %v", err)
	}
}
