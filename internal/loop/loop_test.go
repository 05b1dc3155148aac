package loop

import (
	"errors"
	"github.com/git-ralph/git-ralph/internal/tell"
	"strings"
	"testing"
	"time"

	"github.com/git-ralph/git-ralph/internal/git"
	"github.com/git-ralph/git-ralph/internal/looptest"
	"github.com/git-ralph/git-ralph/internal/run"
	"github.com/git-ralph/git-ralph/internal/start"
)

type (
	recorder  = looptest.Recorder
	fakeClock = looptest.Clock
)

var (
	newRepo     = looptest.NewRepo
	scriptAgent = looptest.ScriptAgent
)

const (
	resultComplete  = looptest.ResultComplete
	resultOverload  = `{"type":"result","subtype":"success","is_error":true,"api_error_status":529,"num_turns":1,"result":"API Error: 529 {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}"}`
	resultLimitHint = `{"type":"result","subtype":"success","is_error":true,"num_turns":1,"result":"Claude AI usage limit reached|1767229200"}`
)

func newLoop(t *testing.T, dir string, clock *fakeClock) (*Loop, *recorder) {
	t.Helper()
	repo, err := git.Open(t.Context(), dir)
	if err != nil {
		t.Fatal(err)
	}
	rep := &recorder{}
	l := New(repo, rep)
	l.Now, l.Waits.Sleep = clock.Now, clock.Sleep
	return l, rep
}

func TestTransientErrorsBackOffWithoutUsingRetries(t *testing.T) {
	dir := newRepo(t)
	clock := &fakeClock{At: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	l, rep := newLoop(t, dir, clock)
	l.Driver = scriptAgent(t, resultOverload, resultOverload, resultComplete)
	sum, err := l.Start(t.Context(), start.Options{Arg: "c", MaxRetries: 0, AllowSkip: true})
	if err != nil {
		t.Fatalf("Start: %v\n%s", err, rep.Text())
	}
	if want := []time.Duration{30 * time.Second, 2 * time.Minute}; !equalDurations(clock.Slept, want) {
		t.Errorf("slept %v, want %v", clock.Slept, want)
	}
	if sum.Stories != 1 || sum.Attempts != 3 {
		t.Errorf("summary: %d stories in %d attempts, want 1 in 3", sum.Stories, sum.Attempts)
	}
	rec, _ := l.Store.Load("c")
	if rec.Status != run.Complete || len(rec.Attempts) != 3 || rec.Attempts[0].Ref == "" {
		t.Errorf("record: status %s, %d attempts, first ref %q", rec.Status, len(rec.Attempts), rec.Attempts[0].Ref)
	}
}

func TestTransientErrorsCountOnceBackoffIsSpent(t *testing.T) {
	dir := newRepo(t)
	clock := &fakeClock{At: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	l, rep := newLoop(t, dir, clock)
	l.Driver = scriptAgent(t, resultOverload)
	_, err := l.Start(t.Context(), start.Options{Arg: "c", MaxRetries: 0, AllowSkip: true})
	var le *tell.Error
	if !errors.As(err, &le) || !strings.Contains(le.Msg, "failed 1 attempt") {
		t.Fatalf("Start = %v, want the story to fail after the backoff\n%s", err, rep.Text())
	}
	if len(clock.Slept) != 3 {
		t.Errorf("slept %v, want the three backoff steps", clock.Slept)
	}
}

func TestUsageLimitStopsResumably(t *testing.T) {
	dir := newRepo(t)
	clock := &fakeClock{At: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	l, rep := newLoop(t, dir, clock)
	l.Driver = scriptAgent(t, resultLimitHint, resultComplete)
	_, err := l.Start(t.Context(), start.Options{Arg: "c", AllowSkip: true})
	var le *tell.Error
	if !errors.As(err, &le) || le.ExitCode() != 1 || !strings.Contains(le.Msg, "usage or rate limit") || !strings.Contains(le.Msg, "resets at 01:00 UTC") {
		t.Fatalf("Start = %v, want a usage-limit stop naming the reset\n%s", err, rep.Text())
	}
	if len(clock.Slept) != 0 {
		t.Errorf("slept %v without --wait-on-limit", clock.Slept)
	}
	rec, _ := l.Store.Load("c")
	if rec.Status != run.Failed || !strings.Contains(rec.StopReason, "limit") {
		t.Errorf("record: %s %q", rec.Status, rec.StopReason)
	}
	// start again: it resumes and completes
	l.Driver = scriptAgent(t, resultComplete)
	if _, err := l.Start(t.Context(), start.Options{Arg: "c", AllowSkip: true}); err != nil {
		t.Fatalf("resume: %v", err)
	}
}

func TestWaitOnLimitWaitsUntilTheReset(t *testing.T) {
	dir := newRepo(t)
	clock := &fakeClock{At: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	l, rep := newLoop(t, dir, clock)
	l.Driver = scriptAgent(t, resultLimitHint, resultComplete)
	_, err := l.Start(t.Context(), start.Options{Arg: "c", MaxRetries: 0, WaitOnLimit: 5 * time.Hour, AllowSkip: true})
	if err != nil {
		t.Fatalf("Start: %v\n%s", err, rep.Text())
	}
	if want := []time.Duration{time.Hour}; !equalDurations(clock.Slept, want) {
		t.Errorf("slept %v, want %v (until the reset at 01:00)", clock.Slept, want)
	}
	if !strings.Contains(rep.Text(), "waiting until 01:00:00 UTC") {
		t.Errorf("no 'waiting until' line:\n%s", rep.Text())
	}
}

func TestWaitOnLimitIsCappedAndInterruptible(t *testing.T) {
	dir := newRepo(t)
	clock := &fakeClock{At: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), Cancel: true}
	l, _ := newLoop(t, dir, clock)
	l.Driver = scriptAgent(t, resultLimitHint, resultComplete)
	_, err := l.Start(t.Context(), start.Options{Arg: "c", WaitOnLimit: 10 * time.Minute, AllowSkip: true})
	if !errors.Is(err, tell.ErrInterrupted) {
		t.Fatalf("Start = %v, want interrupted", err)
	}
	if want := []time.Duration{10 * time.Minute}; !equalDurations(clock.Slept, want) {
		t.Errorf("slept %v, want %v (capped by --wait-on-limit)", clock.Slept, want)
	}
	rec, _ := l.Store.Load("c")
	if rec.Status != run.Interrupted {
		t.Errorf("status %s, want interrupted", rec.Status)
	}
}

func equalDurations(a, b []time.Duration) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
