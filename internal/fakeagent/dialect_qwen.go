package fakeagent

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// qwenAgent prints `qwen -o stream-json` events, shaped like the recordings
// of Qwen Code 0.24.4 in internal/agent/testdata/qwen-stream-json-*.ndjson:
// Claude Code's stream-json with Qwen's fields (permission_mode, message ids
// that are uuids, usage with total_tokens, no cost), its tool names
// (write_file, edit, run_shell_command) and tool result texts. The text
// format prints the final text only; json prints the result object.
type qwenAgent struct {
	f      *fake
	sid    string
	model  string
	format string // text | json | stream-json
	turns  int
}

func (q *qwenAgent) stream() bool { return q.format == "stream-json" }

func (q *qwenAgent) line(v obj) {
	if q.stream() {
		q.f.out.json(v)
	}
}

// qwenTools is the tool list of the recorded init line.
var qwenTools = []string{"web_fetch", "get_goal", "update_goal", "tool_search", "tool_call", "read_mcp_resource",
	"agent", "list_agents", "send_message", "skill", "read_file", "zoom_image", "write_file", "run_shell_command",
	"report_findings", "enter_worktree", "exit_worktree", "record_artifact", "cron_create", "cron_list",
	"cron_delete", "loop_wakeup", "monitor", "task_stop", "grep_search", "edit", "glob", "notebook_edit"}

func (q *qwenAgent) yolo() bool { return q.f.cli.yolo || q.f.cli.approvalMode == "yolo" }

func (q *qwenAgent) start() {
	pm := firstNonEmpty(q.f.cli.approvalMode, "default")
	if q.yolo() {
		pm = "yolo"
	}
	q.line(obj{{"type", "system"}, {"subtype", "init"}, {"uuid", q.sid}, {"session_id", q.sid}, {"cwd", q.f.cwd},
		{"tools", qwenTools}, {"mcp_servers", []any{}}, {"model", q.model}, {"permission_mode", pm},
		{"slash_commands", []string{"auth", "bug", "clear", "compress"}}, {"qwen_code_version", "0.24.4"}, {"agents", []string{"general-purpose"}}})
}

// assistant prints an assistant line; in == 0 gives the zero usage of a
// message that reached no model (an API error) or shared its reply.
func (q *qwenAgent) assistant(block obj, stop any, in, out int) {
	id := q.f.ids.next()
	usage := obj{{"input_tokens", in}, {"output_tokens", out}}
	if in != 0 {
		usage = append(usage, kv{"cache_read_input_tokens", 0}, kv{"total_tokens", in + out})
	}
	q.line(obj{{"type", "assistant"}, {"uuid", id}, {"session_id", q.sid}, {"parent_tool_use_id", nil},
		{"message", obj{{"id", id}, {"type", "message"}, {"role", "assistant"}, {"model", q.model},
			{"content", []any{block}}, {"stop_reason", stop}, {"usage", usage}}}})
}

func (q *qwenAgent) say(text string) {
	q.assistant(obj{{"type", "text"}, {"text", text}}, nil, 1000+10*q.turns, 20)
}

func (q *qwenAgent) flood(total, lineBytes int64) {
	if !q.stream() {
		return
	}
	head := `{"type":"assistant","session_id":"` + q.sid + `","parent_tool_use_id":null,"message":{"type":"message","role":"assistant","model":"` +
		q.model + `","content":[{"type":"text","text":"`
	const tail = "\"}]}}\n"
	floodLines(q.f.out, total, lineBytes, func(buf []byte, textLen int64) []byte {
		buf = append(buf, head...)
		buf = appendFiller(buf, textLen)
		return append(buf, tail...)
	}, int64(len(head)+len(tail)))
}

func (q *qwenAgent) event(raw json.RawMessage) { writeCompact(q.f, raw) }

func (q *qwenAgent) toolBegin(t *toolCall) {
	t.id = "call_" + strconv.Itoa(q.turns+1)
	var name string
	var input obj
	switch t.kind {
	case toolWrite:
		name, input = "write_file", obj{{"file_path", t.path}, {"content", t.content}}
	case toolEdit:
		name, input = "edit", obj{{"file_path", t.path}, {"old_string", t.old}, {"new_string", t.new}}
	case toolBash:
		name, input = "run_shell_command", obj{{"command", t.command}, {"description", t.description}, {"is_background", false}}
	}
	if !q.yolo() && !(q.f.cli.approvalMode == "auto-edit" && t.kind != toolBash) {
		t.refused = fmt.Sprintf("Qwen Code requires permission to use %s, but that permission was declined in non-interactive mode.", name)
	}
	q.assistant(obj{{"type", "tool_use"}, {"id", t.id}, {"name", name}, {"input", input}}, "tool_use", 1000+10*q.turns, 20)
}

func (q *qwenAgent) toolEnd(t *toolCall) {
	q.turns++
	var content string
	isError := false
	switch {
	case t.refused != "":
		content, isError = t.refused, true
	case t.err != nil:
		content, isError = t.err.Error(), true
	case t.kind == toolBash:
		out := strings.TrimRight(t.stdout, "\n")
		errText := strings.TrimRight(t.stderr, "\n")
		content = "Command: " + t.command + "\nDirectory: (root)\nOutput: " + orText(out, "(empty)") +
			"\nError: " + orText(errText, "(none)") + "\nExit Code: " + strconv.Itoa(t.exitCode) +
			"\nSignal: (none)\nProcess Group PGID: (none)"
	case t.kind == toolWrite && !t.existed:
		content = "Successfully created and wrote to new file: " + t.path + "."
	default:
		content = "The file: " + t.path + " has been updated."
	}
	q.line(obj{{"type", "user"}, {"uuid", q.f.ids.next()}, {"session_id", q.sid}, {"parent_tool_use_id", nil},
		{"message", obj{{"role", "user"}, {"content", []any{obj{{"type", "tool_result"}, {"tool_use_id", t.id},
			{"is_error", isError}, {"content", content}}}}}}})
}

// orText returns s, or def when s is empty.
func orText(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

func (q *qwenAgent) durationMS() int {
	if q.f.fixed.IsZero() {
		return int(time.Since(q.f.started).Milliseconds())
	}
	return 0
}

// result prints the result line (or, for the text format, the text).
func (q *qwenAgent) result(res obj, text string) {
	switch q.format {
	case "stream-json", "json":
		q.f.out.json(res)
	default:
		q.f.out.write([]byte(text + "\n"))
	}
}

func (q *qwenAgent) finish() int {
	f := q.f
	r := resultSpec{}
	if f.script.Result != nil {
		r = *f.script.Result
	}
	text := f.lastSay
	if r.Text != nil {
		text = *r.Text
	}
	turns := q.turns + 1
	if r.NumTurns != nil {
		turns = *r.NumTurns
	}
	q.result(obj{{"type", "result"}, {"subtype", "success"}, {"uuid", f.ids.next()}, {"session_id", q.sid},
		{"is_error", false}, {"duration_ms", q.durationMS()}, {"duration_api_ms", 0}, {"num_turns", turns},
		{"result", text}, {"usage", obj{{"input_tokens", r.InputTokens}, {"output_tokens", r.OutputTokens},
			{"cache_read_input_tokens", r.CacheReadInputTokens}, {"total_tokens", r.InputTokens + r.OutputTokens}}},
		{"permission_denials", []any{}}}, text)
	if r.ExitCode != nil {
		return *r.ExitCode
	}
	return 0
}

// qwen without any authentication prints at once an error result whose
// error.message says so (qwen-stream-json-no-auth.ndjson; the text format:
// stderr); a provider
// failure, after its retries, is an assistant message with the API error as
// its text and an error_during_execution result carrying error.message, exit
// 1 (qwen-stream-json-provider-401.ndjson). The limit wordings are OpenAI's.

func (q *qwenAgent) early(fs *failSpec) bool { return fs.Kind == failAuth && fs.Status == 0 }

func (q *qwenAgent) fail(fs *failSpec) int {
	if fs.Kind == failAuth && fs.Status == 0 {
		msg := fs.text(qwenNoAuth)
		if q.format == "stream-json" || q.format == "json" {
			q.f.out.json(obj{{"type", "result"}, {"subtype", "error_during_execution"}, {"uuid", q.f.ids.next()},
				{"session_id", q.sid}, {"is_error", true}, {"duration_ms", 0}, {"duration_api_ms", 0}, {"num_turns", 0},
				{"usage", obj{{"input_tokens", 0}, {"output_tokens", 0}}}, {"permission_denials", []any{}},
				{"error", obj{{"message", msg}}}})
		} else {
			fmt.Fprintln(q.f.stderr, msg)
		}
		return 1
	}
	var status int
	var msg string
	switch fs.Kind {
	case failAuth:
		status, msg = fs.status(401), "Incorrect API key provided: sk-***."
	case failAPIError:
		status, msg = fs.status(500), "The server had an error while processing your request."
	case failOverloaded:
		status, msg = fs.status(503), "The engine is currently overloaded, please try again later."
	case failRateLimit:
		status, msg = fs.status(429), "Rate limit reached for requests."+fs.inSeconds(" Please try again in %ds.")
	case failUsageLimit:
		status, msg = fs.status(429), "You exceeded your current quota, please check your plan and billing details."+
			fs.inSeconds(" Please try again in %d seconds.")
	}
	text := fs.text(fmt.Sprintf("[API Error: %d %s]", status, msg))
	q.assistant(obj{{"type", "text"}, {"text", text}}, nil, 0, 0)
	q.result(obj{{"type", "result"}, {"subtype", "error_during_execution"}, {"uuid", q.f.ids.next()}, {"session_id", q.sid},
		{"is_error", true}, {"duration_ms", q.durationMS()}, {"duration_api_ms", 0}, {"num_turns", q.turns + 1},
		{"usage", obj{{"input_tokens", 0}, {"output_tokens", 0}, {"cache_read_input_tokens", 0}}},
		{"permission_denials", []any{}}, {"error", obj{{"message", text}}}}, text)
	return 1
}

// qwenNoAuth is what qwen 0.24.4 says on stderr with no authentication
// configured.
const qwenNoAuth = "No auth type is selected. Please configure an auth type (e.g. via settings or `--auth-type`) before running in non-interactive mode."

// qwenChecks emulates the refusal without any authentication: no
// OPENAI_API_KEY (the fake knows no other) ends the run as an auth failure
// without a status does.
func (f *fake) qwenChecks() {
	if f.env("OPENAI_API_KEY") == "" && f.cli.authType == "" {
		f.script.Fail = &failSpec{Kind: failAuth}
	}
}

// parseQwenArgs understands qwen's headless mode. yargs refuses an unknown
// option with exit 1 ("Unknown argument: x").
func parseQwenArgs(argv []string) cliArgs {
	var c cliArgs
	opts, pos, missing := splitArgs(argv, qwenOptions)
	if missing != "" {
		c.errCode, c.errMsg = 1, fmt.Sprintf("Not enough arguments following: %s\n", strings.TrimLeft(missing, "-"))
		return c
	}
	if u := unknownOption(opts, qwenOptions); u != "" {
		c.errCode, c.errMsg = 1, fmt.Sprintf("Unknown argument: %s\n", strings.TrimLeft(u, "-"))
		return c
	}
	for _, o := range opts {
		switch o.name {
		case "-m", "--model":
			c.model = o.val()
		case "-p", "--prompt":
			v := o.val()
			c.prompt = &v
		case "-i", "--prompt-interactive", "--acp":
			c.usage = "qwen's interactive and ACP modes are not emulated"
			return c
		case "-y", "--yolo":
			c.yolo = true
		case "--approval-mode":
			c.approvalMode = o.val()
		case "-o", "--output-format":
			c.outputFormat = o.val()
		case "--session-id", "-r", "--resume":
			c.sessionID = o.val()
		case "--auth-type":
			c.authType = o.val()
		}
	}
	switch c.outputFormat {
	case "", "text", "json", "stream-json":
	default:
		c.errCode, c.errMsg = 1, fmt.Sprintf("Invalid values:\n  Argument: output-format, Given: %q, Choices: \"text\", \"json\", \"stream-json\"\n", c.outputFormat)
		return c
	}
	if c.prompt == nil && len(pos) > 0 {
		q := strings.Join(pos, " ")
		c.prompt = &q
	}
	return c
}

// qwenOptions are qwen 0.24.4's (its --help).
var qwenOptions = map[string]byte{
	"--telemetry": argFlag, "--telemetry-target": argValue, "--telemetry-otlp-endpoint": argValue,
	"--telemetry-otlp-protocol": argValue, "--telemetry-log-prompts": argFlag, "--telemetry-outfile": argValue,
	"-d": argFlag, "--debug": argFlag, "--bare": argFlag, "--safe-mode": argFlag, "--proxy": argValue,
	"--insecure": argFlag, "--chat-recording": argFlag, "-m": argValue, "--model": argValue,
	"--fallback-model": argVariadic, "-p": argValue, "--prompt": argValue, "-i": argValue, "--prompt-interactive": argValue,
	"--system-prompt": argValue, "--append-system-prompt": argValue, "--output-style": argValue,
	"-s": argFlag, "--sandbox": argFlag, "--sandbox-image": argValue, "-y": argFlag, "--yolo": argFlag,
	"--approval-mode": argValue, "--acp": argFlag, "--experimental-lsp": argFlag, "--channel": argValue,
	"--allowed-mcp-server-names": argVariadic, "--mcp-config": argValue, "--allowed-tools": argVariadic,
	"-e": argVariadic, "--extensions": argVariadic, "-l": argFlag, "--list-extensions": argFlag,
	"--include-directories": argVariadic, "--add-dir": argVariadic, "--openai-logging": argFlag,
	"--openai-logging-dir": argValue, "--openai-api-key": argValue, "--openai-base-url": argValue,
	"--screen-reader": argFlag, "--input-format": argValue, "-o": argValue, "--output-format": argValue,
	"--include-partial-messages": argFlag, "--json-schema": argValue, "-c": argFlag, "--continue": argFlag,
	"-r": argOptional, "--resume": argOptional, "--session-id": argValue, "--fork-session": argFlag,
	"--worktree": argOptional, "--max-session-turns": argValue, "--max-wall-time": argValue,
	"--max-tool-calls": argValue, "--max-subagent-depth": argValue, "--core-tools": argVariadic,
	"--exclude-tools": argVariadic, "--disabled-slash-commands": argVariadic, "--auth-type": argValue,
	"-v": argFlag, "--version": argFlag, "-h": argFlag, "--help": argFlag,
}
