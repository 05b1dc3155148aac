package fakeagent

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// agent prints one dialect's events.
type agent interface {
	start()
	say(text string)
	flood(total, lineBytes int64)
	event(raw json.RawMessage)
	// toolBegin prints the tool call before the fake acts; toolEnd its result.
	toolBegin(t *toolCall)
	toolEnd(t *toolCall)
	// finish prints the terminal event and returns the exit code.
	finish() int
	// early reports whether the CLI reports fs before printing anything
	// (then start is never called); fail prints the failure ending and
	// returns the exit code (see fail.go).
	early(fs *failSpec) bool
	fail(fs *failSpec) int
}

type toolKind int

const (
	toolWrite toolKind = iota
	toolEdit
	toolBash
)

// toolCall is one tool use and its outcome.
type toolCall struct {
	kind toolKind
	id   string

	// toolWrite, toolEdit
	path     string // absolute
	content  string // toolWrite: the new content
	existed  bool
	orig     string // content before the change
	old, new string // toolEdit: the replaced lines

	// toolBash
	command     string
	description string
	exitCode    int
	stdout      string
	stderr      string
	combined    string

	err error // write and edit failures

	// refused is set by toolBegin when the emulated CLI would not run the
	// tool (gemini without --yolo, cursor without --force, amp without
	// --dangerously-allow-all): the fake then does not act, and toolEnd
	// reports the refusal.
	refused string
}

// claudeTools is the tool list of the real init line.
var claudeTools = []string{"Task", "Bash", "CronCreate", "CronDelete", "CronList", "Edit",
	"EnterWorktree", "ExitWorktree", "NotebookEdit", "Read", "ReportFindings", "ScheduleWakeup",
	"SendMessage", "Skill", "TaskCreate", "TaskGet", "TaskList", "TaskOutput", "TaskStop",
	"TaskUpdate", "WebFetch", "WebSearch", "Workflow", "Write"}

var (
	claudeSlashCommands = []string{"verify", "debug", "code-review", "clear", "compact", "config", "context", "init", "review", "usage"}
	claudeSkills        = []string{"verify", "debug", "code-review"}
)

// claudeAgent prints Claude Code's stream-json events (or, for the json and
// text output formats, only the end).
type claudeAgent struct {
	f              *fake
	sid            string
	model          string
	permissionMode string
	format         string // text | json | stream-json
	msgN           int    // current assistant message; a tool result starts the next
	toolN          int
}

func (c *claudeAgent) stream() bool { return c.format == "stream-json" }

func (c *claudeAgent) line(v obj) {
	if c.stream() {
		c.f.out.json(v)
	}
}

func (c *claudeAgent) start() {
	home := c.f.env("HOME")
	c.line(obj{
		{"type", "system"}, {"subtype", "init"}, {"cwd", c.f.cwd}, {"session_id", c.sid},
		{"tools", claudeTools}, {"mcp_servers", []any{}}, {"model", c.model},
		{"permissionMode", c.permissionMode}, {"slash_commands", claudeSlashCommands},
		{"apiKeySource", "none"}, {"claude_code_version", "fake"}, {"output_style", "default"},
		{"agents", []string{"claude", "Explore", "general-purpose", "Plan", "statusline-setup"}},
		{"skills", claudeSkills}, {"plugins", []any{}},
		{"analytics_disabled", true}, {"product_feedback_disabled", true},
		{"uuid", c.f.ids.next()},
		{"memory_paths", obj{{"auto", filepath.Join(home, ".claude", "projects",
			strings.ReplaceAll(c.f.cwd, "/", "-"), "memory") + "/"}}},
		{"fast_mode_state", "off"},
	})
}

func (c *claudeAgent) message(content obj) obj {
	return obj{
		{"id", "msg_fake" + strconv.Itoa(c.msgN)}, {"type", "message"}, {"role", "assistant"},
		{"model", c.model}, {"content", []any{content}},
		{"stop_reason", nil}, {"stop_sequence", nil},
		{"usage", obj{{"input_tokens", 1200 + c.msgN}, {"output_tokens", 1},
			{"cache_creation_input_tokens", 0}, {"cache_read_input_tokens", 0}}},
		{"context_management", nil},
	}
}

func (c *claudeAgent) assistant(content obj) {
	if !c.stream() {
		return
	}
	c.line(obj{
		{"type", "assistant"}, {"message", c.message(content)},
		{"parent_tool_use_id", nil}, {"session_id", c.sid}, {"uuid", c.f.ids.next()},
		{"request_id", "req_fake" + strconv.Itoa(c.msgN)},
	})
}

func (c *claudeAgent) say(text string) {
	c.assistant(obj{{"type", "text"}, {"text", text}})
}

// flood prints text events of about lineBytes bytes each, reusing one buffer.
func (c *claudeAgent) flood(total, lineBytes int64) {
	if !c.stream() {
		return
	}
	// Render one event with a marker text and a marker uuid, then cut it
	// into the parts around them.
	const textMark, idMark = "\x00TEXT\x00", "\x00UUID\x00"
	tmpl := appendJSON(nil, obj{
		{"type", "assistant"}, {"message", c.message(obj{{"type", "text"}, {"text", textMark}})},
		{"parent_tool_use_id", nil}, {"session_id", c.sid}, {"uuid", idMark},
		{"request_id", "req_fake" + strconv.Itoa(c.msgN)},
	})
	quotedText, quotedID := appendString(nil, textMark), appendString(nil, idMark)
	ti, ui := bytes.Index(tmpl, quotedText), bytes.Index(tmpl, quotedID)
	prefix := tmpl[:ti+1]
	middle := tmpl[ti+len(quotedText)-1 : ui+1]
	suffix := append(tmpl[ui+len(quotedID)-1:], '\n')
	floodLines(c.f.out, total, lineBytes, func(buf []byte, textLen int64) []byte {
		buf = append(buf, prefix...)
		buf = appendFiller(buf, textLen)
		buf = append(buf, middle...)
		buf = append(buf, c.f.ids.next()...)
		return append(buf, suffix...)
	}, int64(len(prefix)+len(middle)+36+len(suffix)))
}

// floodLines writes lines built by build (which appends a line whose text
// has textLen bytes) until about total bytes are out. overhead is a line's
// size without its text.
func floodLines(out *lineWriter, total, lineBytes int64, build func(buf []byte, textLen int64) []byte, overhead int64) {
	if lineBytes <= 0 {
		lineBytes = 4096
	}
	textLen := max(lineBytes-overhead, 1)
	buf := make([]byte, 0, overhead+textLen+64)
	for written := int64(0); written < total && out.err == nil; {
		n := min(textLen, max(total-written-overhead, 1))
		buf = build(buf[:0], n)
		out.write(buf)
		written += int64(len(buf))
	}
}

// appendFiller appends n bytes of readable text that needs no JSON escaping.
func appendFiller(b []byte, n int64) []byte {
	const pattern = "flood text for the stream decoder. "
	for n > 0 {
		k := min(n, int64(len(pattern)))
		b = append(b, pattern[:k]...)
		n -= k
	}
	return b
}

func (c *claudeAgent) event(raw json.RawMessage) {
	if !c.stream() {
		return
	}
	var buf bytes.Buffer
	_ = json.Compact(&buf, raw)
	b := buf.Bytes()
	var m map[string]json.RawMessage
	if json.Unmarshal(b, &m) == nil && len(b) >= 2 {
		var extra []byte
		if _, ok := m["session_id"]; !ok {
			extra = append(append(extra, `,"session_id":`...), appendString(nil, c.sid)...)
		}
		if _, ok := m["uuid"]; !ok {
			extra = append(append(extra, `,"uuid":`...), appendString(nil, c.f.ids.next())...)
		}
		if len(extra) > 0 {
			if len(m) == 0 {
				extra = extra[1:]
			}
			b = append(append(b[:len(b)-1:len(b)-1], extra...), '}')
		}
	}
	c.f.out.write(append(b, '\n'))
}

func (c *claudeAgent) toolBegin(t *toolCall) {
	c.toolN++
	t.id = "toolu_fake" + strconv.Itoa(c.toolN)
	var name string
	var input obj
	switch t.kind {
	case toolWrite:
		name, input = "Write", obj{{"file_path", t.path}, {"content", t.content}}
	case toolEdit:
		name, input = "Edit", obj{{"file_path", t.path}, {"old_string", t.old}, {"new_string", t.new}, {"replace_all", false}}
	case toolBash:
		name, input = "Bash", obj{{"command", t.command}, {"description", t.description}}
	}
	c.assistant(obj{{"type", "tool_use"}, {"id", t.id}, {"name", name}, {"input", input}})
}

func (c *claudeAgent) toolEnd(t *toolCall) {
	var content string
	var isError any // nil: key left out
	var result any
	switch {
	case t.kind == toolBash:
		out := joinNonEmpty(strings.TrimRight(t.stdout, "\n"), strings.TrimRight(t.stderr, "\n"))
		if t.exitCode == 0 {
			content, isError = out, false
			if content == "" {
				content = "(Bash completed with no output)"
			}
			result = obj{{"stdout", strings.TrimRight(t.stdout, "\n")}, {"stderr", strings.TrimRight(t.stderr, "\n")},
				{"interrupted", false}, {"isImage", false}, {"noOutputExpected", false}}
		} else {
			content, isError = joinNonEmpty("Exit code "+strconv.Itoa(t.exitCode), out), true
			result = "Error: " + content
		}
	case t.err != nil:
		content, isError, result = t.err.Error(), true, "Error: "+t.err.Error()
	case t.kind == toolWrite && !t.existed:
		content = "File created successfully at: " + t.path
		result = obj{{"type", "create"}, {"filePath", t.path}, {"content", t.content},
			{"structuredPatch", []any{}}, {"originalFile", nil}, {"userModified", false}}
	case t.kind == toolWrite:
		content = "The file " + t.path + " has been updated successfully."
		result = obj{{"type", "update"}, {"filePath", t.path}, {"content", t.content},
			{"structuredPatch", []any{}}, {"originalFile", t.orig}, {"userModified", false}}
	default: // toolEdit
		content = "The file " + t.path + " has been updated successfully."
		result = obj{{"filePath", t.path}, {"oldString", t.old}, {"newString", t.new},
			{"originalFile", t.orig}, {"structuredPatch", []any{}}, {"userModified", false}, {"replaceAll", false}}
	}
	block := obj{{"tool_use_id", t.id}, {"type", "tool_result"}, {"content", content}}
	if isError != nil {
		block = append(block, kv{"is_error", isError})
	}
	c.line(obj{
		{"type", "user"}, {"message", obj{{"role", "user"}, {"content", []any{block}}}},
		{"parent_tool_use_id", nil}, {"session_id", c.sid}, {"uuid", c.f.ids.next()},
		{"timestamp", c.f.now().UTC().Format("2006-01-02T15:04:05.000Z")},
		{"tool_use_result", result},
	})
	c.msgN++
}

func joinNonEmpty(parts ...string) string {
	var keep []string
	for _, p := range parts {
		if p != "" {
			keep = append(keep, p)
		}
	}
	return strings.Join(keep, "\n")
}

func (c *claudeAgent) finish() int {
	f := c.f
	r := resultSpec{}
	if f.script.Result != nil {
		r = *f.script.Result
	}
	subtype := firstNonEmpty(r.Subtype, "success")
	success := subtype == "success"
	text := f.lastSay
	if r.Text != nil {
		text = *r.Text
	}
	numTurns := f.toolSteps + 1
	if r.NumTurns != nil {
		numTurns = *r.NumTurns
	}
	stopReason := "tool_use"
	switch {
	case success && !r.IsError:
		stopReason = "end_turn"
	case success:
		stopReason = "stop_sequence"
	}
	if r.StopReason != nil {
		stopReason = *r.StopReason
	}
	var terminalReason any
	switch subtype {
	case "success":
		terminalReason = "completed"
	case "error_max_turns":
		terminalReason = "max_turns"
	}
	if r.TerminalReason != nil {
		terminalReason = *r.TerminalReason
	}
	var apiErrorStatus any
	if len(r.APIErrorStatus) > 0 {
		apiErrorStatus = r.APIErrorStatus
	}
	durationMS := 0
	if f.fixed.IsZero() {
		durationMS = int(time.Since(f.started).Milliseconds())
	}
	usage := obj{
		{"input_tokens", r.InputTokens}, {"cache_creation_input_tokens", r.CacheCreationInputTokens},
		{"cache_read_input_tokens", r.CacheReadInputTokens}, {"output_tokens", r.OutputTokens},
		{"server_tool_use", obj{{"web_search_requests", 0}, {"web_fetch_requests", 0}}},
		{"service_tier", "standard"},
		{"cache_creation", obj{{"ephemeral_1h_input_tokens", 0}, {"ephemeral_5m_input_tokens", 0}}},
		{"inference_geo", ""}, {"iterations", []any{}}, {"speed", "standard"},
	}
	modelUsage := obj{} // an API error (as in the real transcript) reached no model
	if apiErrorStatus == nil {
		modelUsage = obj{{c.model, obj{
			{"inputTokens", r.InputTokens}, {"outputTokens", r.OutputTokens},
			{"cacheReadInputTokens", r.CacheReadInputTokens}, {"cacheCreationInputTokens", r.CacheCreationInputTokens},
			{"webSearchRequests", 0}, {"costUSD", r.CostUSD}, {"contextWindow", 200000}, {"maxOutputTokens", 32000},
		}}}
	}
	var permissionDenials any = []any{}
	res := obj{{"type", "result"}, {"subtype", subtype}}
	if success {
		res = append(res, kv{"is_error", r.IsError}, kv{"api_error_status", apiErrorStatus},
			kv{"duration_ms", durationMS}, kv{"duration_api_ms", 0})
		if !r.IsError {
			res = append(res, kv{"ttft_ms", 0}, kv{"ttft_stream_ms", 0}, kv{"time_to_request_ms", 0})
		}
	} else {
		res = append(res, kv{"duration_ms", durationMS}, kv{"duration_api_ms", 0}, kv{"is_error", r.IsError})
	}
	res = append(res, kv{"num_turns", numTurns})
	if !r.OmitResultText {
		res = append(res, kv{"result", text})
	}
	res = append(res, kv{"stop_reason", stopReason}, kv{"session_id", c.sid},
		kv{"total_cost_usd", r.CostUSD}, kv{"usage", usage}, kv{"modelUsage", modelUsage},
		kv{"permission_denials", permissionDenials})
	if terminalReason != nil {
		res = append(res, kv{"terminal_reason", terminalReason})
	}
	res = append(res, kv{"fast_mode_state", "off"}, kv{"uuid", f.ids.next()})
	if !success || r.Errors != nil {
		errs := r.Errors
		if errs == nil {
			errs = []string{}
		}
		res = append(res, kv{"errors", errs})
	}
	switch c.format {
	case "stream-json", "json":
		f.out.json(res)
	default:
		out := text
		if r.OmitResultText {
			out = strings.Join(r.Errors, "\n")
		}
		f.out.write([]byte(out + "\n"))
	}
	if r.ExitCode != nil {
		return *r.ExitCode
	}
	if r.IsError {
		return 1
	}
	return 0
}

// codexAgent prints `codex exec --json` events.
type codexAgent struct {
	f        *fake
	threadID string
	itemN    int
}

func (c *codexAgent) nextItem() string {
	id := "item_" + strconv.Itoa(c.itemN)
	c.itemN++
	return id
}

func (c *codexAgent) start() {
	c.f.out.json(obj{{"type", "thread.started"}, {"thread_id", c.threadID}})
	c.f.out.json(obj{{"type", "turn.started"}})
}

func (c *codexAgent) say(text string) {
	c.f.out.json(obj{{"type", "item.completed"}, {"item", obj{
		{"id", c.nextItem()}, {"type", "agent_message"}, {"text", text}}}})
}

func (c *codexAgent) flood(total, lineBytes int64) {
	const head, tail = `{"type":"item.completed","item":{"id":"item_`, `","type":"agent_message","text":"`
	const end = "\"}}\n"
	overhead := int64(len(head) + len(tail) + len(end) + 6)
	floodLines(c.f.out, total, lineBytes, func(buf []byte, textLen int64) []byte {
		buf = append(buf, head...)
		buf = strconv.AppendInt(buf, int64(c.itemN), 10)
		c.itemN++
		buf = append(buf, tail...)
		buf = appendFiller(buf, textLen)
		return append(buf, end...)
	}, overhead)
}

func (c *codexAgent) event(raw json.RawMessage) {
	var buf bytes.Buffer
	_ = json.Compact(&buf, raw)
	c.f.out.write(append(buf.Bytes(), '\n'))
}

func (c *codexAgent) item(t *toolCall, done bool) obj {
	switch t.kind {
	case toolBash:
		var exitCode any
		output, status := "", "in_progress"
		if done {
			exitCode, output, status = t.exitCode, t.combined, "completed"
			if t.exitCode != 0 {
				status = "failed"
			}
		}
		return obj{{"id", t.id}, {"type", "command_execution"}, {"command", "/bin/bash -lc " + shQuote(t.command)},
			{"aggregated_output", output}, {"exit_code", exitCode}, {"status", status}}
	default:
		kind, status := "update", "in_progress"
		if t.kind == toolWrite && !t.existed {
			kind = "add"
		}
		if done {
			status = "completed"
			if t.err != nil {
				status = "failed"
			}
		}
		return obj{{"id", t.id}, {"type", "file_change"},
			{"changes", []any{obj{{"path", t.path}, {"kind", kind}}}}, {"status", status}}
	}
}

func (c *codexAgent) toolBegin(t *toolCall) {
	t.id = c.nextItem()
	c.f.out.json(obj{{"type", "item.started"}, {"item", c.item(t, false)}})
}

func (c *codexAgent) toolEnd(t *toolCall) {
	c.f.out.json(obj{{"type", "item.completed"}, {"item", c.item(t, true)}})
}

func (c *codexAgent) finish() int {
	f := c.f
	r := resultSpec{}
	if f.script.Result != nil {
		r = *f.script.Result
	}
	if f.script.TurnFailed != nil {
		msg := *f.script.TurnFailed
		f.out.json(obj{{"type", "error"}, {"message", msg}})
		f.out.json(obj{{"type", "turn.failed"}, {"error", obj{{"message", msg}}}})
		if r.ExitCode != nil {
			return *r.ExitCode
		}
		return 1
	}
	f.out.json(obj{{"type", "turn.completed"}, {"usage", obj{
		{"input_tokens", r.InputTokens}, {"cached_input_tokens", r.CachedInputTokens},
		{"cache_write_input_tokens", r.CacheWriteInputTokens}, {"output_tokens", r.OutputTokens},
		{"reasoning_output_tokens", r.ReasoningOutputTokens},
	}}})
	if p := f.cli.lastMessageFile; p != "" {
		if err := os.WriteFile(f.abs(f.procCwd, p), []byte(f.lastSay), 0o644); err != nil {
			fmt.Fprintf(f.stderr, "Failed to write last message file %q: %v\n", p, err)
		}
	}
	if r.ExitCode != nil {
		return *r.ExitCode
	}
	return 0
}

// shQuote quotes s for a POSIX shell the way codex shows its commands:
// single quotes, or double quotes when s has single quotes but nothing a
// double-quoted string would expand.
func shQuote(s string) string {
	if !strings.Contains(s, "'") {
		return "'" + s + "'"
	}
	if !strings.ContainsAny(s, "\"$`\\!") {
		return `"` + s + `"`
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
