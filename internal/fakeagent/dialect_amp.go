package fakeagent

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// ampAgent prints `amp -x --stream-json` events: the Claude-Code-compatible
// subset of docs/AGENTS.md, "Amp" (documented, not captured: Amp cannot be
// run without its servers). Without --stream-json it prints only the last
// assistant message, as execute mode does. Amp's own tools are used: Bash
// {cmd}, create_file {path, content}, edit_file {path, old_str, new_str}.
// Without --dangerously-allow-all a Bash call is refused (execute mode
// cannot ask for the confirmation) and not run.
type ampAgent struct {
	f       *fake
	sid     string // "T-…"
	stream  bool
	msgN    int
	toolN   int
	usageIn bool // the first assistant message carried the result's usage
}

func (a *ampAgent) line(v obj) {
	if a.stream {
		a.f.out.json(v)
	}
}

func (a *ampAgent) start() {
	a.line(obj{{"type", "system"}, {"subtype", "init"}, {"cwd", a.f.cwd}, {"session_id", a.sid},
		{"tools", []string{"Bash", "create_file", "edit_file", "Read", "Grep", "glob", "finder", "oracle"}},
		{"mcp_servers", []any{}}})
	a.line(obj{{"type", "user"}, {"message", obj{{"role", "user"}, {"content", []any{obj{{"type", "text"}, {"text", a.f.prompt}}}}}},
		{"parent_tool_use_id", nil}, {"session_id", a.sid}})
}

// usage is the usage of the next assistant message: the scenario's tokens
// on the first one, none on the others, so that their sum is the
// scenario's.
func (a *ampAgent) usage() obj {
	var in, out int64
	if !a.usageIn {
		a.usageIn = true
		if r := a.f.script.Result; r != nil {
			in, out = r.InputTokens, r.OutputTokens
		}
	}
	return obj{{"input_tokens", in}, {"cache_creation_input_tokens", 0}, {"cache_read_input_tokens", 0},
		{"output_tokens", out}, {"max_tokens", 32000}, {"service_tier", "standard"}}
}

func (a *ampAgent) assistant(content obj, stop string) {
	a.msgN++
	a.line(obj{{"type", "assistant"}, {"message", obj{{"type", "message"}, {"role", "assistant"},
		{"content", []any{content}}, {"stop_reason", stop}, {"usage", a.usage()}}},
		{"parent_tool_use_id", nil}, {"session_id", a.sid}})
}

func (a *ampAgent) say(text string) {
	a.assistant(obj{{"type", "text"}, {"text", text}}, "end_turn")
}

func (a *ampAgent) flood(total, lineBytes int64) {
	if !a.stream {
		return
	}
	head := `{"type":"assistant","message":{"type":"message","role":"assistant","content":[{"type":"text","text":"`
	tail := `"}],"stop_reason":"end_turn"},"parent_tool_use_id":null,"session_id":"` + a.sid + "\"}\n"
	floodLines(a.f.out, total, lineBytes, func(buf []byte, textLen int64) []byte {
		buf = append(buf, head...)
		buf = appendFiller(buf, textLen)
		return append(buf, tail...)
	}, int64(len(head)+len(tail)))
}

func (a *ampAgent) event(raw json.RawMessage) { writeCompact(a.f, raw) }

func (a *ampAgent) toolBegin(t *toolCall) {
	a.toolN++
	t.id = "toolu_amp" + strconv.Itoa(a.toolN)
	var name string
	var input obj
	switch t.kind {
	case toolWrite:
		name, input = "create_file", obj{{"path", t.path}, {"content", t.content}}
	case toolEdit:
		name, input = "edit_file", obj{{"path", t.path}, {"old_str", t.old}, {"new_str", t.new}}
	case toolBash:
		name, input = "Bash", obj{{"cmd", t.command}}
		if !a.f.cli.yolo {
			t.refused = "Command requires confirmation, which execute mode cannot ask for: " + t.command
		}
	}
	a.assistant(obj{{"type", "tool_use"}, {"id", t.id}, {"name", name}, {"input", input}}, "tool_use")
}

func (a *ampAgent) toolEnd(t *toolCall) {
	content, isError := "", false
	switch {
	case t.refused != "":
		content, isError = t.refused, true
	case t.err != nil:
		content, isError = t.err.Error(), true
	case t.kind == toolBash:
		content = joinNonEmpty(strings.TrimRight(t.combined, "\n"), "exit code: "+strconv.Itoa(t.exitCode))
		isError = t.exitCode != 0
	case t.kind == toolWrite:
		content = "Created " + relTitle(a.f.cwd, t.path)
	default:
		content = "Edited " + relTitle(a.f.cwd, t.path)
	}
	a.line(obj{{"type", "user"}, {"message", obj{{"role", "user"}, {"content", []any{obj{
		{"type", "tool_result"}, {"tool_use_id", t.id}, {"content", content}, {"is_error", isError}}}}}},
		{"parent_tool_use_id", nil}, {"session_id", a.sid}})
}

func (a *ampAgent) durationMS() int {
	if a.f.fixed.IsZero() {
		return int(time.Since(a.f.started).Milliseconds())
	}
	return 0
}

func (a *ampAgent) finish() int {
	r := resultSpec{}
	if a.f.script.Result != nil {
		r = *a.f.script.Result
	}
	text := a.f.lastSay
	if r.Text != nil {
		text = *r.Text
	}
	if !a.stream {
		a.f.out.write([]byte(text + "\n"))
	} else {
		turns := a.f.toolSteps + 1
		if r.NumTurns != nil {
			turns = *r.NumTurns
		}
		a.line(obj{{"type", "result"}, {"subtype", "success"}, {"duration_ms", a.durationMS()}, {"is_error", false},
			{"num_turns", turns}, {"result", text}, {"session_id", a.sid}})
	}
	if r.ExitCode != nil {
		return *r.ExitCode
	}
	return 0
}

// amp rejects a bad key before it starts (a missing one starts the login
// flow, see fakeagent.go); other failures end in an error result whose
// "error" string replaces "result" (docs/AGENTS.md, "Amp"), exit 1.

func (a *ampAgent) early(fs *failSpec) bool { return fs.Kind == failAuth }

func (a *ampAgent) fail(fs *failSpec) int {
	var msg string
	switch fs.Kind {
	case failAuth:
		fmt.Fprintln(a.f.stderr, "Error: "+fs.text("Invalid API key. Check AMP_API_KEY (https://ampcode.com/settings)."))
		return 1
	case failAPIError:
		msg = fmt.Sprintf("API Error: %d Internal server error", fs.status(500))
	case failOverloaded:
		msg = fmt.Sprintf(`API Error: %d {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`, fs.status(529))
	case failRateLimit:
		msg = "Rate limit exceeded." + fs.inSeconds(" Please try again in %d seconds.")
	case failUsageLimit:
		msg = "Usage limit reached for your Amp plan." + fs.inSeconds(" Try again in %d seconds.")
	}
	msg = fs.text(msg)
	if !a.stream {
		fmt.Fprintln(a.f.stderr, "Error: "+msg)
		return 1
	}
	a.line(obj{{"type", "result"}, {"subtype", "error_during_execution"}, {"duration_ms", a.durationMS()},
		{"is_error", true}, {"num_turns", a.f.toolSteps + 1}, {"error", msg}, {"session_id", a.sid}})
	return 1
}
