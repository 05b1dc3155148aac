package fakeagent

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// copilotAgent prints `copilot --output-format json` events, shaped like
// the recordings of GitHub Copilot CLI 1.0.102 in
// internal/agent/testdata/copilot-json-*.ndjson: session.tools_updated,
// user.message, assistant.turn_start, assistant.message (whole messages;
// a tool call is a message with toolRequests), tool.execution_start and
// tool.execution_complete, assistant.turn_end, and the result line. The
// text format prints the final message only. --usage-output-file receives
// the usage JSON when the session ends.
type copilotAgent struct {
	f      *fake
	sid    string
	model  string
	format string // text | json
	turn   int
	iid    string // interactionId
	umid   string // the user message's id
	toolN  int
	last   string   // the last assistant message
	files  []string // files the tools changed
	added  int      // lines the tools added
}

func (c *copilotAgent) json() bool { return c.format == "json" }

func (c *copilotAgent) ts() string { return c.f.now().UTC().Format("2006-01-02T15:04:05.000Z") }

// event prints one event with the envelope every copilot event has.
func (c *copilotAgent) emit(typ string, data obj, ephemeral bool) {
	if !c.json() {
		return
	}
	e := obj{{"type", typ}, {"data", data}}
	if ephemeral {
		e = append(e, kv{"ephemeral", true})
	}
	e = append(e, kv{"id", c.f.ids.next()}, kv{"timestamp", c.ts()}, kv{"parentId", c.f.ids.next()})
	c.f.out.json(e)
}

func (c *copilotAgent) turnID() string { return strconv.Itoa(c.turn) }

func (c *copilotAgent) start() {
	c.iid = c.f.ids.next()
	c.umid = c.f.ids.next()
	c.emit("session.tools_updated", obj{{"model", c.model}}, true)
	c.emit("user.message", obj{{"content", c.f.prompt}, {"transformedContent", c.f.prompt},
		{"messageId", c.umid}, {"supportedNativeDocumentMimeTypes", []any{}}, {"delivery", "idle"},
		{"interactionId", c.iid}, {"turnId", "0"}, {"parentAgentTaskId", c.f.ids.next()}}, false)
	c.emit("assistant.turn_start", obj{{"turnId", c.turnID()}, {"interactionId", c.iid}}, false)
}

func (c *copilotAgent) message(content string, requests []any) {
	if requests == nil {
		requests = []any{}
	}
	c.last = content
	c.emit("assistant.message", obj{{"messageId", c.f.ids.next()}, {"originatingMessageId", c.umid}, {"model", c.model},
		{"content", content}, {"toolRequests", requests}, {"interactionId", c.iid}, {"turnId", c.turnID()}, {"rte", false},
		{"apiCallId", "chatcmpl-fake-" + c.turnID()}}, false)
}

func (c *copilotAgent) say(text string) { c.message(text, nil) }

func (c *copilotAgent) flood(total, lineBytes int64) {
	if !c.json() {
		return
	}
	head := `{"type":"assistant.message","data":{"messageId":"flood","model":"` + c.model + `","content":"`
	const tail = "\",\"toolRequests\":[]},\"id\":\"flood\"}\n"
	floodLines(c.f.out, total, lineBytes, func(buf []byte, textLen int64) []byte {
		buf = append(buf, head...)
		buf = appendFiller(buf, textLen)
		return append(buf, tail...)
	}, int64(len(head)+len(tail)))
}

func (c *copilotAgent) event(raw json.RawMessage) { writeCompact(c.f, raw) }

// call returns the tool's name and arguments: create for a new file, edit
// for a change (a whole-file rewrite is an edit of the old content), bash.
func (c *copilotAgent) call(t *toolCall) (string, obj) {
	switch {
	case t.kind == toolBash:
		return "bash", obj{{"command", t.command}, {"description", t.description}}
	case t.kind == toolWrite && !t.existed:
		return "create", obj{{"path", t.path}, {"file_text", t.content}}
	case t.kind == toolWrite:
		return "edit", obj{{"path", t.path}, {"old_str", t.orig}, {"new_str", t.content}}
	}
	return "edit", obj{{"path", t.path}, {"old_str", t.old}, {"new_str", t.new}}
}

func (c *copilotAgent) toolBegin(t *toolCall) {
	c.toolN++
	t.id = "call_fake" + strconv.Itoa(c.toolN)
	if !c.f.cli.yolo && !truthy(c.f.env("COPILOT_ALLOW_ALL")) {
		t.refused = "Permission denied and could not request permission from user"
	}
	name, args := c.call(t)
	title := "Running command"
	if t.kind != toolBash {
		title = "Editing file"
		if name == "create" {
			title = "Creating file"
		}
	}
	c.message("", []any{obj{{"toolCallId", t.id}, {"name", name}, {"arguments", args}, {"type", "function"},
		{"intentionSummary", oneLineOf(t.description, name+" "+t.path)}, {"toolTitle", title}}})
	c.emit("tool.execution_start", obj{{"toolCallId", t.id}, {"toolName", name}, {"arguments", args},
		{"turnId", c.turnID()}, {"model", c.model}, {"toolTitle", title}}, false)
}

func (c *copilotAgent) toolEnd(t *toolCall) {
	success := t.refused == "" && t.err == nil && t.exitCode == 0
	var content string
	var extra obj
	switch {
	case t.refused != "":
		content = t.refused
	case t.err != nil:
		content = t.err.Error()
	case t.kind == toolBash:
		content = strings.TrimRight(t.combined, "\n") + "\n<shellId: " + strconv.Itoa(c.toolN-1) +
			" completed with exit code " + strconv.Itoa(t.exitCode) + ">"
		extra = obj{{"shellExecution", obj{{"exitCode", t.exitCode}}}}
	default:
		name, _ := c.call(t)
		if name == "create" {
			content = fmt.Sprintf("Created file %s with %d characters", t.path, len(t.content))
		} else {
			content = "File " + t.path + " updated with changes."
		}
		extra = obj{{"fileEdits", []any{obj{{"path", t.path}, {"kind", name}}}}}
		c.files = append(c.files, t.path)
		c.added += strings.Count(t.content+t.new, "\n")
	}
	data := obj{{"toolCallId", t.id}, {"model", c.model}, {"interactionId", c.iid}, {"turnId", c.turnID()}, {"rte", false}}
	data = append(data, extra...)
	data = append(data, kv{"success", success}, kv{"result", obj{{"content", content}, {"detailedContent", content}}})
	c.emit("tool.execution_complete", data, false)
	c.emit("assistant.turn_end", obj{{"turnId", c.turnID()}}, false)
	c.turn++
	c.emit("assistant.turn_start", obj{{"turnId", c.turnID()}, {"interactionId", c.iid}}, false)
}

func (c *copilotAgent) durationMS() int {
	if c.f.fixed.IsZero() {
		return int(time.Since(c.f.started).Milliseconds())
	}
	return 0
}

// end prints the result line, writes the usage file and returns exitCode.
func (c *copilotAgent) end(exitCode int, r resultSpec) int {
	files := c.files
	if files == nil {
		files = []string{}
	}
	if c.json() {
		c.f.out.json(obj{{"type", "result"}, {"timestamp", c.ts()}, {"sessionId", c.sid}, {"exitCode", exitCode},
			{"usage", obj{{"premiumRequests", r.PremiumRequests}, {"totalApiDurationMs", 0}, {"sessionDurationMs", c.durationMS()},
				{"codeChanges", obj{{"linesAdded", c.added}, {"linesRemoved", 0}, {"filesModified", files}}}}}})
	}
	if p := c.f.cli.usageFile; p != "" {
		usage := obj{{"inputTokens", r.InputTokens}, {"outputTokens", r.OutputTokens},
			{"cacheReadTokens", r.CacheReadInputTokens}, {"cacheWriteTokens", 0}}
		doc := obj{{"totalPremiumRequestCost", r.PremiumRequests}, {"totalUserRequests", 1},
			{"modelMetrics", obj{{c.model, obj{{"requests", obj{{"count", c.turn + 1}, {"cost", r.PremiumRequests}}}, {"usage", usage}}}}},
			{"currentModel", c.model}, {"lastCallInputTokens", 0}, {"lastCallOutputTokens", 0}}
		if err := writeFileAtomic(c.f.abs(c.f.procCwd, p), append(appendJSON(nil, doc), '\n')); err != nil {
			fmt.Fprintf(c.f.stderr, "Error writing usage output file: %v\n", err)
		}
	}
	return exitCode
}

func (c *copilotAgent) finish() int {
	r := resultSpec{}
	if c.f.script.Result != nil {
		r = *c.f.script.Result
	}
	if !c.json() {
		text := c.last
		if r.Text != nil {
			text = *r.Text
		}
		c.f.out.write([]byte(text + "\n"))
	}
	c.emit("assistant.turn_end", obj{{"turnId", c.turnID()}}, false)
	code := 0
	if r.ExitCode != nil {
		code = *r.ExitCode
	}
	return c.end(code, r)
}

// copilot without credentials stops before any event (the recording's
// copilot-no-auth.stderr); a provider failure, after its retries (the
// model.call_failure lines are left out), is a session.error and a result
// with exitCode 1 (copilot-json-rate-limit.ndjson, …-api-error-500,
// …-provider-401). The usage-limit wording is not from a recording.

func (c *copilotAgent) early(fs *failSpec) bool { return fs.Kind == failAuth }

func (c *copilotAgent) fail(fs *failSpec) int {
	if fs.Kind == failAuth {
		fmt.Fprint(c.f.stderr, fs.text(copilotNoAuth))
		return 1
	}
	var status int
	var errType, msg string
	retried := "Failed to get response from the AI model; retried 5 times (total retry wait time: 14.34 seconds) Last error: "
	switch fs.Kind {
	case failAPIError:
		status, errType = fs.status(500), "query"
		msg = retried + strconv.Itoa(status) + " The server had an error while processing your request."
	case failOverloaded:
		status, errType = fs.status(503), "query"
		msg = retried + strconv.Itoa(status) + " The model is overloaded. Please try again later."
	case failRateLimit:
		status, errType = fs.status(429), "rate_limit"
		msg = retried + strconv.Itoa(status) + " Rate limit reached for requests." + fs.inSeconds(" Please try again in %ds.")
	case failUsageLimit:
		status, errType = fs.status(429), "rate_limit"
		msg = "You have reached your monthly premium request allowance." + fs.inSeconds(" Please try again in %d seconds.")
	}
	c.emit("assistant.turn_end", obj{{"turnId", c.turnID()}}, false)
	c.emit("session.error", obj{{"errorType", errType}, {"message", fs.text(msg)}, {"statusCode", status},
		{"originatingMessageId", c.umid}}, false)
	return c.end(1, resultSpec{})
}

// copilotNoAuth is what copilot 1.0.102 prints on stderr without
// credentials.
const copilotNoAuth = "Error: No authentication information found.\n\n" +
	"Copilot can be authenticated with GitHub using an OAuth Token or a Fine-Grained Personal Access Token.\n\n" +
	"To authenticate, you can use any of the following methods:\n" +
	"  • Start 'copilot' and run the '/login' command\n" +
	"  • Set the COPILOT_GITHUB_TOKEN, GH_TOKEN, or GITHUB_TOKEN environment variable\n" +
	"  • Run 'gh auth login' to authenticate with the GitHub CLI\n"

// copilotChecks emulates what copilot refuses before it reads its prompt:
// no credentials at all, a custom provider without a model.
func (f *fake) copilotChecks() {
	c := &f.cli
	byok := f.env("COPILOT_PROVIDER_BASE_URL") != ""
	switch {
	case byok && c.model == "" && f.env("COPILOT_MODEL") == "" && f.script.Model == "":
		c.errCode, c.errMsg = 1, "BYOK providers require an explicit model. Run `copilot help providers` for configuration details.\n"
	case !byok && f.env("COPILOT_GITHUB_TOKEN") == "" && f.env("GH_TOKEN") == "" && f.env("GITHUB_TOKEN") == "":
		c.errCode, c.errMsg = 1, copilotNoAuth
	}
}

// parseCopilotArgs understands copilot's prompt mode. Like the real CLI it
// refuses an unknown option or an invalid value with exit 1 and clap's
// message.
func parseCopilotArgs(argv []string) cliArgs {
	var c cliArgs
	opts, pos, missing := splitArgs(argv, copilotOptions)
	if missing != "" {
		c.errCode, c.errMsg = 1, fmt.Sprintf("error: a value is required for '%s <value>' but none was supplied\n", missing)
		return c
	}
	if u := unknownOption(opts, copilotOptions); u != "" {
		c.errCode, c.errMsg = 1, fmt.Sprintf("error: unexpected argument '%s' found\n\nUsage: copilot [OPTIONS] [COMMAND]\n\nFor more information, try '--help'.\n", u)
		return c
	}
	if len(pos) > 0 {
		c.usage = fmt.Sprintf("copilot subcommand %q is not emulated; only prompt mode is", pos[0])
		return c
	}
	for _, o := range opts {
		switch o.name {
		case "-p", "--prompt":
			v := o.val()
			c.prompt = &v
		case "-i", "--interactive", "--acp":
			c.usage = "copilot's interactive and ACP modes are not emulated"
			return c
		case "--model":
			c.model = o.val()
		case "--output-format":
			c.outputFormat = o.val()
		case "--allow-all-tools", "--allow-all", "--yolo":
			c.yolo = true
		case "--usage-output-file":
			c.usageFile = o.val()
		case "-C":
			c.cd = o.val()
		case "--session-id", "-r", "--resume":
			c.sessionID = o.val()
		}
	}
	switch c.outputFormat {
	case "", "text", "json":
	default:
		c.errCode, c.errMsg = 1, fmt.Sprintf("error: invalid value '%s' for '--output-format <format>'\n  [possible values: text, json]\n", c.outputFormat)
	}
	return c
}

// copilotOptions are copilot 1.0.102's (its --help).
var copilotOptions = map[string]byte{
	"-v": argFlag, "--version": argFlag, "-i": argValue, "--interactive": argValue, "--fleet": argFlag,
	"-p": argValue, "--prompt": argValue, "--trust-folder": argFlag, "-s": argFlag, "--silent": argFlag,
	"--disable-client-telemetry": argFlag, "--enable-memory": argFlag, "--model": argValue,
	"--reasoning-effort": argValue, "--context": argValue, "--auto-tier": argValue, "--agent": argValue,
	"-r": argOptional, "--resume": argOptional, "--continue": argFlag, "-n": argValue, "--name": argValue,
	"--session-id": argValue, "--connect": argOptional, "--allow-all-tools": argFlag, "--allow-all-paths": argFlag,
	"--disallow-temp-dir": argFlag, "--banner": argFlag, "--screen-reader": argFlag, "--plain-diff": argFlag,
	"-C": argValue, "--log-dir": argValue, "--extension-sdk-path": argValue, "--log-level": argValue,
	"--stream": argValue, "--output-format": argValue, "--share": argOptional, "--share-gist": argFlag,
	"--add-dir": argValue, "--attachment": argValue, "--disable-mcp-server": argValue, "--disable-builtin-mcps": argFlag,
	"--enable-all-github-mcp-tools": argFlag, "--add-github-mcp-toolset": argValue, "--add-github-mcp-tool": argValue,
	"--plugin-dir": argValue, "--additional-mcp-config": argValue, "--mcp-github-auth": argValue,
	"--allow-all-mcp-server-instructions": argFlag, "--allow-tool": argVariadic, "--deny-tool": argVariadic,
	"--available-tools": argVariadic, "--excluded-tools": argVariadic, "--secret-env-vars": argVariadic,
	"--allow-url": argVariadic, "--deny-url": argVariadic, "--allow-all-urls": argFlag, "--allow-all": argFlag,
	"--yolo": argFlag, "--max-autopilot-continues": argValue, "--mode": argValue, "--autopilot": argFlag,
	"--plan": argFlag, "--experimental": argFlag, "--bash-env": argOptional, "--mouse": argOptional, "--acp": argFlag,
	"--remote": argFlag, "--remote-export": argFlag, "--max-ai-credits": argValue, "--assisted-approval": argFlag,
	"--usage-output-file": argValue, "--no-custom-instructions": argFlag, "--no-auto-update": argFlag,
	"--no-ask-user": argFlag, "--no-color": argFlag, "--no-experimental": argFlag, "--no-bash-env": argFlag,
	"--no-mouse": argFlag, "--no-remote": argFlag, "--no-remote-export": argFlag, "-h": argFlag, "--help": argFlag,
}

// truthy reports whether COPILOT_ALLOW_ALL turns the approvals off: "true",
// "1", "yes", "on" or "y", case-insensitively (copilot help environment).
func truthy(v string) bool {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "true", "1", "yes", "on", "y":
		return true
	}
	return false
}

// oneLineOf returns the first non-empty of s, on one line.
func oneLineOf(s ...string) string {
	for _, v := range s {
		if v = strings.TrimSpace(v); v != "" {
			return strings.ReplaceAll(v, "\n", " ")
		}
	}
	return ""
}
