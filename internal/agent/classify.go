package agent

import (
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"
)

// FailureClass says what kind of trouble an agent's final error reports, so that the loop
// reacts to it instead of spending a story retry: a transient API error is retried after a
// pause, a usage or rate limit stops the loop resumably (or waits), an authentication
// problem stops it at once. Drivers decide it from the terminal or error event only, never
// from the transcript (docs/AGENTS.md, "Common to every agent").
type FailureClass int

// The failure classes.
const (
	// ClassNone: no failure, or one git-ralph has no special handling for
	// (max turns, a bad request, a crash): judged as usual.
	ClassNone FailureClass = iota
	// ClassTransient: the provider failed for a while (HTTP 5xx, 529
	// overloaded, a dropped connection). Worth retrying after a pause, without
	// counting against the story's retries.
	ClassTransient
	// ClassLimit: a usage, rate or quota limit (HTTP 429, "usage limit
	// reached"). Retrying at once is pointless; Result.RetryAfter and
	// Result.RetryAt say when it lifts, if the agent said so.
	ClassLimit
	// ClassAuth: the agent cannot authenticate, or the account cannot be used
	// (not logged in, a rejected key, billing). Result.Fatal then holds a
	// sentence for the user saying how to fix it.
	ClassAuth
)

// String returns "none", "transient", "limit" or "auth".
func (c FailureClass) String() string {
	switch c {
	case ClassTransient:
		return "transient"
	case ClassLimit:
		return "limit"
	case ClassAuth:
		return "auth"
	}
	return "none"
}

// Failure is what ClassifyError found in one error.
type Failure struct {
	Class FailureClass
	After time.Duration // "try again in 2 hours"; 0 when not said
	At    time.Time     // "limit reached|1767225600"; zero when not said
}

// Apply records f on res, unless res already has a class.
func (f Failure) Apply(res *Result) {
	if res.Class != ClassNone || f.Class == ClassNone {
		return
	}
	res.Class = f.Class
	if f.Class == ClassLimit || f.Class == ClassTransient {
		res.RetryAfter, res.RetryAt = f.After, f.At
	}
}

// Phrases that classify an error message, matched on its lower-cased text.
// Authentication is checked first, then limits, then transient failures: a
// message that names a status code is classified by that code instead.
var (
	authPhrases = []string{
		"authentication_failed", "authentication failed", "authentication_error", "authentication error",
		"authentication required",
		"invalid api key", "invalid x-api-key", "invalid_api_key", "api key not valid", "incorrect api key",
		"api_key_invalid", "no api key", "unauthorized", "unauthenticated", "not logged in",
		"please run /login", "please log in", "login required", "oauth token has expired",
		"token has expired", "token expired", "invalid authentication", "invalid bearer token",
		"billing_error", "billing error", "credit balance is too low", "providerautherror",
	}
	limitPhrases = []string{
		"rate limit", "rate_limit", "ratelimit", "rate-limit", "usage limit", "usage_limit",
		"too many requests", "quota", "resource_exhausted", "resource has been exhausted",
		"limit reached", "hit your limit", "reached your limit",
	}
	transientPhrases = []string{
		"overloaded", "internal server error", "internal error", "server_error", "server error",
		`"api_error"`, "service unavailable", "service_unavailable", `"unavailable"`, "bad gateway",
		"gateway timeout", "upstream", "timed out", "timeout", "econnreset", "econnrefused",
		"etimedout", "connection reset", "connection refused", "connection error", "socket hang up",
		"stream disconnected", "network error", "fetch failed", "reconnecting", "temporarily unavailable",
		"try again later", "capacity", "could not connect", "couldn't connect",
	}

	// statusRe finds an HTTP status code named as such: "API Error: 500",
	// "status 503", "HTTP 429", `"code":500`, `"statusCode":529`,
	// "last status: 429 Too Many Requests".
	statusRe = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?i)(?:api error|status(?:[ _]?code)?|http(?:/[0-9.]+)?|"code")["'\s:=]{0,4}([1-5][0-9]{2})\b`)
	})
	// retryInRe finds "try again in 2 hours 5 minutes", "retry in 47.5s",
	// "retry after 30 seconds", "resets in 3h".
	retryInRe = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?i)(?:try again|retry|resets?|available again)\s+(?:in|after)\s+((?:[0-9]+(?:\.[0-9]+)?\s*(?:days?|d|hours?|hrs?|h|minutes?|mins?|m|seconds?|secs?|s)\b[\s,]*(?:and\s+)?)+)`)
	})
	// durationPartRe splits what retryInRe found.
	durationPartRe = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?i)([0-9]+(?:\.[0-9]+)?)\s*(days?|d|hours?|hrs?|h|minutes?|mins?|m|seconds?|secs?|s)\b`)
	})
	// retryHeaderRe finds a Retry-After header and Google's RetryInfo.
	retryHeaderRe = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?i)(?:retry-after["']?\s*[:=]\s*["']?([0-9]+)|"retryDelay"\s*:\s*"([0-9]+(?:\.[0-9]+)?)s")`)
	})
	// resetAtRe finds Claude Code's "Claude AI usage limit reached|1767225600"
	// and an RFC 3339 "resets at …".
	resetUnixRe    = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?i)limit reached\|([0-9]{9,11})\b`) })
	resetRFC3339Re = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?i)(?:resets?|try again|available again)\s+(?:at|after)\s+([0-9]{4}-[0-9]{2}-[0-9]{2}[T ][0-9:.]+(?:Z|[+-][0-9]{2}:?[0-9]{2}))`)
	})
)

// ClassifyError classifies one error of an agent: status is the HTTP status
// the agent reported in a field of its own (0 when none), msg the error text
// (the result text, the error message, the API error body).
func ClassifyError(status int, msg string) Failure {
	var f Failure
	if status == 0 {
		if m := statusRe().FindStringSubmatch(msg); m != nil {
			status, _ = strconv.Atoi(m[1])
		}
	}
	f.Class = ClassOfStatus(status)
	if f.Class == ClassNone {
		f.Class = classOfText(msg)
	}
	if f.Class == ClassLimit || f.Class == ClassTransient {
		f.After, f.At = RetryHint(msg)
	}
	return f
}

// ClassOfStatus classifies an HTTP status code.
func ClassOfStatus(status int) FailureClass {
	switch {
	case status == 401 || status == 403:
		return ClassAuth
	case status == 429:
		return ClassLimit
	case status == 408 || status >= 500 && status <= 599:
		return ClassTransient
	}
	return ClassNone
}

// classOfText classifies an error message by its wording.
func classOfText(msg string) FailureClass {
	if msg == "" {
		return ClassNone
	}
	low := strings.ToLower(msg)
	for _, list := range []struct {
		class   FailureClass
		phrases []string
	}{{ClassAuth, authPhrases}, {ClassLimit, limitPhrases}, {ClassTransient, transientPhrases}} {
		for _, p := range list.phrases {
			if strings.Contains(low, p) {
				return list.class
			}
		}
	}
	return ClassNone
}

// RetryHint finds when the agent says to try again.
func RetryHint(msg string) (after time.Duration, at time.Time) {
	if m := resetUnixRe().FindStringSubmatch(msg); m != nil {
		if sec, err := strconv.ParseInt(m[1], 10, 64); err == nil {
			at = time.Unix(sec, 0).UTC()
		}
	} else if m := resetRFC3339Re().FindStringSubmatch(msg); m != nil {
		if t, err := time.Parse(time.RFC3339Nano, strings.Replace(m[1], " ", "T", 1)); err == nil {
			at = t.UTC()
		}
	}
	if m := retryInRe().FindStringSubmatch(msg); m != nil {
		for _, part := range durationPartRe().FindAllStringSubmatch(m[1], -1) {
			n, err := strconv.ParseFloat(part[1], 64)
			if err != nil {
				continue
			}
			after += time.Duration(n * float64(unitOf(part[2])))
		}
	} else if m := retryHeaderRe().FindStringSubmatch(msg); m != nil {
		s := m[1] + m[2]
		if n, err := strconv.ParseFloat(s, 64); err == nil {
			after = time.Duration(n * float64(time.Second))
		}
	}
	if after < 0 || after > 30*24*time.Hour {
		after = 0
	}
	return after, at
}

// unitOf returns the duration of one unit named u ("h", "hours", …).
func unitOf(u string) time.Duration {
	switch u = strings.ToLower(u); {
	case strings.HasPrefix(u, "d"):
		return 24 * time.Hour
	case strings.HasPrefix(u, "h"):
		return time.Hour
	case strings.HasPrefix(u, "m"):
		return time.Minute
	}
	return time.Second
}

// DiagnoseStderr classifies a run that exited non-zero without a terminal
// event by the last lines of its stderr, the only error report such a run
// leaves (cursor reports every failure that way; the others their start-up
// failures). authFatal becomes Result.Fatal for ClassAuth. Timeouts,
// interrupts and deaths by a signal are left alone: the kill explains them.
func DiagnoseStderr(res *Result, authFatal string) {
	if res.SawResult || res.Class != ClassNone || res.ExitCode <= 0 || res.Interrupted || res.TimedOut || res.Idle {
		return
	}
	msg := LastLines(res.Stderr, 5)
	f := ClassifyError(0, msg)
	if f.Class == ClassNone {
		return
	}
	f.Apply(res)
	AddError(&res.Errors, LastLines(res.Stderr, 1))
	if res.Class == ClassAuth && res.Fatal == "" {
		res.Fatal = authFatal
	}
}

// LastLines returns the last n non-empty lines of s, joined by newlines.
func LastLines(s string, n int) string {
	var keep []string
	for len(s) > 0 && len(keep) < n {
		i := strings.LastIndexByte(strings.TrimRight(s, "\n"), '\n')
		line := strings.TrimSpace(s[i+1:])
		s = s[:max(i, 0)]
		if line != "" {
			keep = append(keep, line)
		}
		if i < 0 {
			break
		}
	}
	for i, j := 0, len(keep)-1; i < j; i, j = i+1, j-1 {
		keep[i], keep[j] = keep[j], keep[i]
	}
	return strings.Join(keep, "\n")
}
