package fakeagent

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// opencodeAgent prints `opencode run --format json` events, shaped like
// samples/opencode-run-format-json-*.ndjson (docs/AGENTS.md, "OpenCode"): every
// model call is a step (step_start … step_finish), a tool call ends its
// step with reason "tool-calls", and the run ends with a step whose reason
// is "stop". The default format prints the text parts only.
type opencodeAgent struct {
	f      *fake
	sid    string
	format string // default | json
	msgN   int
	open   bool // a step is open
	msgID  string
}

func (o *opencodeAgent) json() bool { return o.format == "json" }

func (o *opencodeAgent) ts() int64 { return o.f.now().UnixMilli() }

func (o *opencodeAgent) id(prefix string) string {
	return prefix + strings.ReplaceAll(o.f.ids.next(), "-", "")[:26]
}

func (o *opencodeAgent) line(typ string, part obj) {
	if o.json() {
		o.f.out.json(obj{{"type", typ}, {"timestamp", o.ts()}, {"sessionID", o.sid}, {"part", part}})
	}
}

// step opens a step if none is open.
func (o *opencodeAgent) step() {
	if o.open {
		return
	}
	o.open = true
	o.msgN++
	o.msgID = o.id("msg_")
	o.line("step_start", obj{{"id", o.id("prt_")}, {"messageID", o.msgID}, {"sessionID", o.sid},
		{"snapshot", "7ea2e0af246385efc3f1c29553c8a09bb8d5b6c4"}, {"type", "step-start"}})
}

// finishStep closes the open step.
func (o *opencodeAgent) finishStep(reason string, cost float64, in, out int64) {
	o.step()
	o.open = false
	o.line("step_finish", obj{{"id", o.id("prt_")}, {"reason", reason},
		{"snapshot", "6c6472aae5db09ac9ca1351dd6128a084d55e6f5"}, {"messageID", o.msgID}, {"sessionID", o.sid},
		{"type", "step-finish"}, {"tokens", obj{{"total", in + out}, {"input", in}, {"output", out}, {"reasoning", 0},
			{"cache", obj{{"write", 0}, {"read", 0}}}}}, {"cost", cost}})
}

func (o *opencodeAgent) start() {}

func (o *opencodeAgent) say(text string) {
	o.step()
	if !o.json() {
		o.f.out.write([]byte(text + "\n"))
		return
	}
	now := o.ts()
	o.line("text", obj{{"id", o.id("prt_")}, {"messageID", o.msgID}, {"sessionID", o.sid}, {"type", "text"},
		{"text", text}, {"time", obj{{"start", now}, {"end", now}}}})
}

func (o *opencodeAgent) flood(total, lineBytes int64) {
	if !o.json() {
		return
	}
	o.step()
	head := `{"type":"text","timestamp":` + strconv.FormatInt(o.ts(), 10) + `,"sessionID":"` + o.sid +
		`","part":{"id":"prt_flood","messageID":"` + o.msgID + `","sessionID":"` + o.sid + `","type":"text","text":"`
	const tail = "\"}}\n"
	floodLines(o.f.out, total, lineBytes, func(buf []byte, textLen int64) []byte {
		buf = append(buf, head...)
		buf = appendFiller(buf, textLen)
		return append(buf, tail...)
	}, int64(len(head)+len(tail)))
}

func (o *opencodeAgent) event(raw json.RawMessage) { writeCompact(o.f, raw) }

func (o *opencodeAgent) toolBegin(t *toolCall) {
	o.step()
	t.id = "toolu_" + strconv.Itoa(o.msgN) + "_0"
}

func (o *opencodeAgent) toolEnd(t *toolCall) {
	var tool string
	var input obj
	output, title := "", ""
	metadata := obj{}
	switch t.kind {
	case toolWrite:
		tool, input = "write", obj{{"filePath", t.path}, {"content", t.content}}
		output, title = "Wrote file successfully.", relTitle(o.f.cwd, t.path)
		metadata = obj{{"diagnostics", obj{}}, {"filepath", t.path}, {"exists", t.existed}, {"truncated", false}}
	case toolEdit:
		tool, input = "edit", obj{{"filePath", t.path}, {"oldString", t.old}, {"newString", t.new}}
		output, title = "Edit applied successfully.", relTitle(o.f.cwd, t.path)
		metadata = obj{{"diagnostics", obj{}}, {"filepath", t.path}, {"truncated", false}}
	case toolBash:
		tool, input = "bash", obj{{"command", t.command}, {"description", t.description}}
		output = strings.TrimRight(t.combined, "\n")
		if output == "" {
			output = "(no output)"
		}
		title = t.command
		metadata = obj{{"output", output}, {"exit", t.exitCode}, {"truncated", false}}
	}
	now := o.ts()
	state := obj{{"status", "completed"}, {"input", input}, {"output", output}, {"metadata", metadata},
		{"title", title}, {"time", obj{{"start", now}, {"end", now}}}}
	if t.err != nil {
		state = obj{{"status", "error"}, {"input", input}, {"error", t.err.Error()}, {"time", obj{{"start", now}, {"end", now}}}}
	}
	if o.json() {
		o.f.out.json(obj{{"type", "tool_use"}, {"timestamp", now}, {"sessionID", o.sid}, {"part", obj{
			{"type", "tool"}, {"tool", tool}, {"callID", t.id}, {"state", state},
			{"id", o.id("prt_")}, {"sessionID", o.sid}, {"messageID", o.msgID}}}})
	}
	o.finishStep("tool-calls", 0, 0, 0)
}

// relTitle is the path relative to the work dir, as opencode titles it.
func relTitle(cwd, path string) string {
	if rel, ok := strings.CutPrefix(path, cwd+"/"); ok {
		return rel
	}
	return path
}

// finish closes the last step with reason "stop"; it carries the whole
// cost and tokens of the scenario's result.
func (o *opencodeAgent) finish() int {
	r := resultSpec{}
	if o.f.script.Result != nil {
		r = *o.f.script.Result
	}
	o.finishStep("stop", r.CostUSD, r.InputTokens, r.OutputTokens)
	if r.ExitCode != nil {
		return *r.ExitCode
	}
	return 0
}

// opencode reports a failure, after its retries, as one error event and
// exits 1 (samples/opencode-run-format-json-api-error.ndjson); an
// authentication failure is a ProviderAuthError.

func (o *opencodeAgent) early(*failSpec) bool { return false }

func (o *opencodeAgent) fail(fs *failSpec) int {
	var e obj
	if fs.Kind == failAuth {
		e = obj{{"name", "ProviderAuthError"}, {"data", obj{{"providerID", "anthropic"},
			{"message", fs.text("invalid x-api-key")}}}}
	} else {
		var status int
		var typ, msg string
		switch fs.Kind {
		case failAPIError:
			status, typ, msg = fs.status(500), "api_error", "Internal server error"
		case failOverloaded:
			status, typ, msg = fs.status(529), "overloaded_error", "Overloaded"
		case failRateLimit:
			status, typ, msg = fs.status(429), "rate_limit_error", "This request would exceed the rate limit for your organization"+fs.inSeconds(", retry after %d seconds")
		case failUsageLimit:
			status, typ, msg = fs.status(429), "rate_limit_error", "You have reached your usage limit"+fs.inSeconds(", retry after %d seconds")
		}
		msg = fs.text(msg)
		headers := obj{{"connection", "keep-alive"}, {"content-type", "application/json"},
			{"date", o.f.now().UTC().Format(time.RFC1123)}, {"keep-alive", "timeout=5"}, {"transfer-encoding", "chunked"}}
		if fs.RetryAfterS > 0 {
			headers = append(headers, kv{"retry-after", strconv.Itoa(fs.RetryAfterS)})
		}
		body := appendJSON(nil, obj{{"type", "error"}, {"error", obj{{"type", typ}, {"message", msg}}}})
		e = obj{{"name", "APIError"}, {"data", obj{{"message", msg}, {"statusCode", status},
			{"isRetryable", status == 429 || status >= 500}, {"responseHeaders", headers},
			{"responseBody", string(body)}, {"metadata", obj{{"url", "https://api.anthropic.com/v1/messages"}}}}}}
	}
	if o.json() {
		o.f.out.json(obj{{"type", "error"}, {"timestamp", o.ts()}, {"sessionID", o.sid}, {"error", e}})
	} else {
		fmt.Fprintf(o.f.stderr, "Error: %s\n", fs.text("the provider returned an error"))
	}
	return 1
}
