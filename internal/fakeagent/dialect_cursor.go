package fakeagent

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// cursorAgent prints `cursor-agent -p --output-format stream-json` events
// as Cursor documents them (docs/AGENTS.md, "Cursor"; no capture exists):
// system/init, the user message, one assistant line per message,
// tool_call started/completed, and a result whose text concatenates every
// assistant message. Without --force a shell command is rejected (print
// mode cannot ask) and not run. Failures are a message on stderr and a
// non-zero exit, with no result.
type cursorAgent struct {
	f      *fake
	sid    string
	model  string
	format string // text | json | stream-json
	toolN  int
	all    strings.Builder // every assistant text, for the result
}

func (c *cursorAgent) stream() bool { return c.format == "stream-json" }

func (c *cursorAgent) line(v obj) {
	if c.stream() {
		c.f.out.json(v)
	}
}

func (c *cursorAgent) start() {
	pm := "default"
	if c.f.cli.yolo {
		pm = "bypassPermissions"
	}
	c.line(obj{{"type", "system"}, {"subtype", "init"}, {"apiKeySource", "env"}, {"cwd", c.f.cwd},
		{"session_id", c.sid}, {"model", c.model}, {"permissionMode", pm}})
	c.line(obj{{"type", "user"}, {"message", obj{{"role", "user"}, {"content", []any{obj{{"type", "text"}, {"text", c.f.prompt}}}}}},
		{"session_id", c.sid}})
}

func (c *cursorAgent) say(text string) {
	if c.all.Len() < 1<<20 {
		c.all.WriteString(text)
	}
	c.line(obj{{"type", "assistant"}, {"message", obj{{"role", "assistant"}, {"content", []any{obj{{"type", "text"}, {"text", text}}}}}},
		{"session_id", c.sid}})
}

func (c *cursorAgent) flood(total, lineBytes int64) {
	if !c.stream() {
		return
	}
	head := `{"type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":"`
	tail := `"}]},"session_id":"` + c.sid + "\"}\n"
	floodLines(c.f.out, total, lineBytes, func(buf []byte, textLen int64) []byte {
		buf = append(buf, head...)
		buf = appendFiller(buf, textLen)
		return append(buf, tail...)
	}, int64(len(head)+len(tail)))
}

func (c *cursorAgent) event(raw json.RawMessage) { writeCompact(c.f, raw) }

func (c *cursorAgent) call(t *toolCall) (string, obj) {
	switch t.kind {
	case toolWrite:
		return "writeToolCall", obj{{"path", t.path}, {"fileText", t.content}, {"toolCallId", t.id}}
	case toolEdit:
		return "editToolCall", obj{{"path", t.path}, {"strReplace", obj{{"oldText", t.old}, {"newText", t.new}}}, {"toolCallId", t.id}}
	}
	return "shellToolCall", obj{{"command", t.command}, {"workingDirectory", ""}, {"timeout", 0}, {"toolCallId", t.id}}
}

func (c *cursorAgent) toolBegin(t *toolCall) {
	c.toolN++
	t.id = "toolu_cursor" + strconv.Itoa(c.toolN)
	if t.kind == toolBash && !c.f.cli.yolo {
		t.refused = "Command rejected: not in the allowlist, and print mode cannot ask for approval (use --force)"
	}
	kind, args := c.call(t)
	c.line(obj{{"type", "tool_call"}, {"subtype", "started"}, {"call_id", t.id},
		{"tool_call", obj{{kind, obj{{"args", args}}}}}, {"session_id", c.sid}})
}

func (c *cursorAgent) toolEnd(t *toolCall) {
	kind, args := c.call(t)
	var result obj
	switch {
	case t.refused != "":
		result = obj{{"rejected", obj{{"command", t.command}, {"reason", t.refused}}}}
	case t.err != nil:
		result = obj{{"error", obj{{"message", t.err.Error()}}}}
	case t.kind == toolBash:
		body := obj{{"command", t.command}, {"workingDirectory", ""}, {"exitCode", t.exitCode}, {"signal", ""},
			{"stdout", t.stdout}, {"stderr", t.stderr}, {"executionTime", 0}}
		if t.exitCode == 0 {
			result = obj{{"success", body}}
		} else {
			result = obj{{"failure", body}}
		}
	case t.kind == toolWrite:
		result = obj{{"success", obj{{"path", t.path}, {"linesCreated", strings.Count(t.content, "\n")}, {"fileSize", len(t.content)}}}}
	default:
		result = obj{{"success", obj{{"path", t.path}}}}
	}
	c.line(obj{{"type", "tool_call"}, {"subtype", "completed"}, {"call_id", t.id},
		{"tool_call", obj{{kind, obj{{"args", args}, {"result", result}}}}}, {"session_id", c.sid}})
}

func (c *cursorAgent) durationMS() int {
	if c.f.fixed.IsZero() {
		return int(time.Since(c.f.started).Milliseconds())
	}
	return 0
}

func (c *cursorAgent) finish() int {
	r := resultSpec{}
	if c.f.script.Result != nil {
		r = *c.f.script.Result
	}
	text := c.all.String()
	if r.Text != nil {
		text = *r.Text
	}
	res := obj{{"type", "result"}, {"subtype", "success"}, {"is_error", false}, {"duration_ms", c.durationMS()},
		{"duration_api_ms", c.durationMS()}, {"result", text}, {"session_id", c.sid},
		{"request_id", uuidFrom(c.sid + "#request")}}
	switch c.format {
	case "stream-json", "json":
		c.f.out.json(res)
	default:
		c.f.out.write([]byte(text + "\n"))
	}
	if r.ExitCode != nil {
		return *r.ExitCode
	}
	return 0
}

func (c *cursorAgent) early(fs *failSpec) bool { return fs.Kind == failAuth }

func (c *cursorAgent) fail(fs *failSpec) int {
	var msg string
	switch fs.Kind {
	case failAuth:
		msg = "Authentication required. Please run 'cursor-agent login' first, or set CURSOR_API_KEY environment variable."
	case failAPIError:
		msg = fmt.Sprintf("ConnectError: [internal] Internal server error (HTTP %d)", fs.status(500))
	case failOverloaded:
		msg = fmt.Sprintf("ConnectError: [unavailable] The model is overloaded (HTTP %d)", fs.status(503))
	case failRateLimit:
		msg = "ConnectError: [resource_exhausted] Rate limit exceeded." + fs.inSeconds(" Try again in %d seconds.")
	case failUsageLimit:
		msg = "You've hit your usage limit." + fs.inSeconds(" Try again in %d seconds.")
	}
	fmt.Fprintln(c.f.stderr, "Error: "+fs.text(msg))
	return 1
}
