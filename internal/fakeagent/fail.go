package fakeagent

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// The failure endings of a scenario's "fail" (see the package doc,
// "Failures"). Claude's API error and not-logged-in endings, codex's
// turn.failed, gemini's error result and opencode's error event copy the
// real transcripts' shapes (docs/AGENTS.md, "Claude Code" to "Gemini CLI"); the wording of the
// limit messages, Amp's and Cursor's failures follow the vendors' documented
// messages, since no real capture of them exists.

// failExit returns fs's exit code if it sets one, else code.
func (f *fake) failExit(fs *failSpec, code int) int {
	if fs.ExitCode != nil {
		return *fs.ExitCode
	}
	return code
}

// status returns fs.Status, or def.
func (fs *failSpec) status(def int) int {
	if fs.Status != 0 {
		return fs.Status
	}
	return def
}

// text returns fs.Message, or def.
func (fs *failSpec) text(def string) string {
	if fs.Message != nil {
		return *fs.Message
	}
	return def
}

// inSeconds is " Please try again in N seconds." style text for a retry
// hint, "" when fs gives none.
func (fs *failSpec) inSeconds(format string) string {
	if fs.RetryAfterS <= 0 {
		return ""
	}
	return fmt.Sprintf(format, fs.RetryAfterS)
}

// humanDuration writes seconds like codex does: "2 hours 5 minutes".
func humanDuration(seconds int) string {
	d := time.Duration(seconds) * time.Second
	var parts []string
	for _, u := range []struct {
		d    time.Duration
		name string
	}{{24 * time.Hour, "day"}, {time.Hour, "hour"}, {time.Minute, "minute"}, {time.Second, "second"}} {
		if n := int(d / u.d); n > 0 {
			name := u.name
			if n > 1 {
				name += "s"
			}
			parts = append(parts, strconv.Itoa(n)+" "+name)
			d -= time.Duration(n) * u.d
		}
	}
	return strings.Join(parts, " ")
}

// httpReason is the reason phrase of the statuses the fake uses.
func httpReason(status int) string {
	switch status {
	case 401:
		return "Unauthorized"
	case 403:
		return "Forbidden"
	case 429:
		return "Too Many Requests"
	case 500:
		return "Internal Server Error"
	case 502:
		return "Bad Gateway"
	case 503:
		return "Service Unavailable"
	case 529:
		return "Overloaded"
	}
	return "Error"
}

// claude: api_retry lines for a provider failure, the synthetic assistant
// message carrying the error, and an is_error result with subtype success
// and exit 1, as in samples/claude-stream-json-api-error.ndjson; not logged
// in is the same without api_error_status (docs/AGENTS.md, "Claude Code").

func (c *claudeAgent) early(*failSpec) bool { return false }

func (c *claudeAgent) fail(fs *failSpec) int {
	var status int
	var code, text string
	switch fs.Kind {
	case failAPIError:
		status, code = fs.status(500), "server_error"
		text = fs.text(fmt.Sprintf("API Error: %d Internal server error. This is a server-side issue, usually temporary — try again in a moment.", status))
	case failOverloaded:
		status, code = fs.status(529), "overloaded"
		text = fs.text(fmt.Sprintf(`API Error: %d {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`, status))
	case failRateLimit:
		status, code = fs.status(429), "rate_limit"
		text = fs.text(fmt.Sprintf(`API Error: %d {"type":"error","error":{"type":"rate_limit_error","message":"This request would exceed the rate limit for your organization.%s"}}`,
			status, fs.inSeconds(" Please try again in %d seconds.")))
	case failUsageLimit:
		status, code = fs.status(429), "rate_limit"
		after := fs.RetryAfterS
		if after <= 0 {
			after = 3600
		}
		text = fs.text(fmt.Sprintf("Claude AI usage limit reached|%d", c.f.now().Add(time.Duration(after)*time.Second).Unix()))
	case failAuth:
		code = "authentication_failed"
		text = fs.text("Not logged in · Please run /login")
	}
	if status >= 500 {
		for i := 1; i <= 2; i++ {
			c.line(obj{{"type", "system"}, {"subtype", "api_retry"}, {"attempt", i}, {"max_retries", 2},
				{"retry_delay_ms", 500 * i}, {"error_status", status}, {"error", code},
				{"session_id", c.sid}, {"uuid", c.f.ids.next()}})
		}
	}
	zeroUsage := obj{{"input_tokens", 0}, {"output_tokens", 0}, {"cache_creation_input_tokens", 0}, {"cache_read_input_tokens", 0},
		{"server_tool_use", obj{{"web_search_requests", 0}, {"web_fetch_requests", 0}}}, {"service_tier", nil},
		{"cache_creation", obj{{"ephemeral_1h_input_tokens", 0}, {"ephemeral_5m_input_tokens", 0}}},
		{"inference_geo", nil}, {"iterations", nil}, {"speed", nil}}
	c.line(obj{
		{"type", "assistant"}, {"message", obj{
			{"id", c.f.ids.next()}, {"container", nil}, {"model", "<synthetic>"}, {"role", "assistant"},
			{"stop_details", nil}, {"stop_reason", "stop_sequence"}, {"stop_sequence", ""}, {"type", "message"},
			{"usage", zeroUsage}, {"content", []any{obj{{"type", "text"}, {"text", text}}}}, {"context_management", nil},
		}},
		{"parent_tool_use_id", nil}, {"session_id", c.sid}, {"uuid", c.f.ids.next()}, {"error", code},
	})
	r := resultSpec{Subtype: "success", IsError: true, Text: &text}
	if status != 0 {
		r.APIErrorStatus = json.RawMessage(strconv.Itoa(status))
	}
	one := 1
	r.NumTurns = &one
	c.f.script.Result = &r
	return c.finish()
}

// codex: error events, then turn.failed, exit 1 (docs/AGENTS.md,
// "Codex"). A provider failure shows the reconnect attempts first.

func (c *codexAgent) early(*failSpec) bool { return false }

func (c *codexAgent) fail(fs *failSpec) int {
	var msg string
	switch fs.Kind {
	case failAPIError:
		s := fs.status(500)
		msg = fs.text(fmt.Sprintf("exceeded retry limit, last status: %d %s", s, httpReason(s)))
	case failOverloaded:
		s := fs.status(503)
		msg = fs.text(fmt.Sprintf("exceeded retry limit, last status: %d %s (the server is overloaded)", s, httpReason(s)))
	case failRateLimit:
		s := fs.status(429)
		msg = fs.text(fmt.Sprintf("exceeded retry limit, last status: %d %s%s", s, httpReason(s), fs.inSeconds(", retry after %d seconds")))
	case failUsageLimit:
		retry := "try again later."
		if fs.RetryAfterS > 0 {
			retry = "try again in " + humanDuration(fs.RetryAfterS) + "."
		}
		msg = fs.text("You've hit your usage limit. Upgrade to Pro (https://chatgpt.com/explore/pro), visit https://chatgpt.com/codex/settings/usage to purchase more credits or " + retry)
	case failAuth:
		s := fs.status(401)
		msg = fs.text(fmt.Sprintf(`unexpected status %d %s: {"error":{"message":"Incorrect API key provided.","type":"invalid_request_error","code":"invalid_api_key"}}`, s, httpReason(s)))
	}
	if fs.Kind == failAPIError || fs.Kind == failOverloaded {
		reason := httpReason(fs.status(map[bool]int{true: 500, false: 503}[fs.Kind == failAPIError]))
		for i := 1; i <= 2; i++ {
			c.f.out.json(obj{{"type", "error"}, {"message", fmt.Sprintf("Reconnecting... %d/5 (stream disconnected before completion: %s)", i, reason)}})
		}
	}
	c.f.out.json(obj{{"type", "error"}, {"message", msg}})
	c.f.out.json(obj{{"type", "turn.failed"}, {"error", obj{{"message", msg}}}})
	return 1
}
