package agent

import (
	"testing"
	"time"
)

func TestClassifyError(t *testing.T) {
	at := time.Date(2026, 11, 25, 22, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		status int
		msg    string
		class  FailureClass
		after  time.Duration
		at     time.Time
	}{
		{0, "API Error: 500 Internal server error (mock).", ClassTransient, 0, time.Time{}},
		{0, `API Error: 529 {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`, ClassTransient, 0, time.Time{}},
		{0, "exceeded retry limit, last status: 502 Bad Gateway", ClassTransient, 0, time.Time{}},
		{0, "stream disconnected before completion: connection reset by peer", ClassTransient, 0, time.Time{}},
		{503, "whatever", ClassTransient, 0, time.Time{}},
		{0, "API Error: 429 rate_limit_error: retry after 20 seconds", ClassLimit, 20 * time.Second, time.Time{}},
		{0, "Claude AI usage limit reached|1795644000", ClassLimit, 0, time.Unix(1795644000, 0).UTC()},
		{0, "You've hit your usage limit. Try again in 1 day 3h 2 min.", ClassLimit, 27*time.Hour + 2*time.Minute, time.Time{}},
		{0, `quota exceeded, "retryDelay": "12s"`, ClassLimit, 12 * time.Second, time.Time{}},
		{0, "usage limit reached, resets at 2026-11-25T22:00:00Z", ClassLimit, 0, at},
		{0, "Retry-After: 90\nToo Many Requests", ClassLimit, 90 * time.Second, time.Time{}},
		{429, "slow down", ClassLimit, 0, time.Time{}},
		{0, "Invalid API key · Please run /login", ClassAuth, 0, time.Time{}},
		{0, "unexpected status 401 Unauthorized: try again in 5 minutes", ClassAuth, 0, time.Time{}},
		{403, "", ClassAuth, 0, time.Time{}},
		{0, "Credit balance is too low", ClassAuth, 0, time.Time{}},
		{0, "Reached maximum number of turns (3)", ClassNone, 0, time.Time{}},
		{0, "Reached maximum budget ($0.001)", ClassNone, 0, time.Time{}},
		{400, `{"error":{"message":"mock: invalid request","type":"invalid_request_error"}}`, ClassNone, 0, time.Time{}},
		{0, "wrote 500 lines", ClassNone, 0, time.Time{}},
		{0, "", ClassNone, 0, time.Time{}},
	} {
		f := ClassifyError(tc.status, tc.msg)
		if f.Class != tc.class || f.After != tc.after || !f.At.Equal(tc.at) {
			t.Errorf("classifyError(%d, %q) = %v %v %v; want %v %v %v", tc.status, tc.msg, f.Class, f.After, f.At, tc.class, tc.after, tc.at)
		}
	}
}

func TestResultRetryTime(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		r    Result
		want time.Time
	}{
		{Result{}, time.Time{}},
		{Result{RetryAfter: time.Hour}, now.Add(time.Hour)},
		{Result{RetryAt: now.Add(2 * time.Hour)}, now.Add(2 * time.Hour)},
		{Result{RetryAfter: 3 * time.Hour, RetryAt: now.Add(2 * time.Hour)}, now.Add(3 * time.Hour)},
	} {
		if got := tc.r.RetryTime(now); !got.Equal(tc.want) {
			t.Errorf("RetryTime(%+v) = %v, want %v", tc.r, got, tc.want)
		}
	}
	if ClassLimit.String() != "limit" || ClassNone.String() != "none" || ClassTransient.String() != "transient" || ClassAuth.String() != "auth" {
		t.Error("FailureClass.String")
	}
}
