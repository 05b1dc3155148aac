package fakeagent

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// geminiAgent prints `gemini --output-format stream-json` events, shaped
// like samples/gemini-stream-json-*.ndjson (docs/AGENTS.md, "Gemini CLI"), or for
// the text and json output formats only the end.
type geminiAgent struct {
	f      *fake
	sid    string
	model  string
	format string // text | json | stream-json
	toolN  int
	final  strings.Builder // assistant text since the last tool result
}

func (g *geminiAgent) stream() bool { return g.format == "stream-json" }

func (g *geminiAgent) ts() string { return g.f.now().UTC().Format("2006-01-02T15:04:05.000Z") }

func (g *geminiAgent) line(v obj) {
	if g.stream() {
		g.f.out.json(v)
	}
}

func (g *geminiAgent) start() {
	g.line(obj{{"type", "init"}, {"timestamp", g.ts()}, {"session_id", g.sid}, {"model", g.model}})
	g.line(obj{{"type", "message"}, {"timestamp", g.ts()}, {"role", "user"}, {"content", g.f.prompt}})
}

func (g *geminiAgent) say(text string) {
	g.final.WriteString(text)
	g.line(obj{{"type", "message"}, {"timestamp", g.ts()}, {"role", "assistant"}, {"content", text}, {"delta", true}})
}

func (g *geminiAgent) flood(total, lineBytes int64) {
	if !g.stream() {
		return
	}
	head := `{"type":"message","timestamp":"` + g.ts() + `","role":"assistant","content":"`
	const tail = "\",\"delta\":true}\n"
	floodLines(g.f.out, total, lineBytes, func(buf []byte, textLen int64) []byte {
		buf = append(buf, head...)
		buf = appendFiller(buf, textLen)
		return append(buf, tail...)
	}, int64(len(head)+len(tail)))
}

func (g *geminiAgent) event(raw json.RawMessage) { writeCompact(g.f, raw) }

// registered reports whether gemini registers the tool kind: without
// --yolo the headless run has no write or shell tool at all, and
// auto_edit adds the edit tools only (docs/AGENTS.md, "Gemini CLI").
func (g *geminiAgent) registered(k toolKind) bool {
	c := g.f.cli
	return c.yolo || c.approvalMode == "auto_edit" && k != toolBash
}

func (g *geminiAgent) toolBegin(t *toolCall) {
	g.toolN++
	var name string
	var params obj
	switch t.kind {
	case toolWrite:
		name, params = "write_file", obj{{"file_path", t.path}, {"content", t.content}}
	case toolEdit:
		name, params = "replace", obj{{"file_path", t.path}, {"old_string", t.old}, {"new_string", t.new}}
	case toolBash:
		name, params = "run_shell_command", obj{{"command", t.command}, {"description", t.description}}
	}
	ms := g.f.now().UnixMilli() + int64(g.toolN)
	t.id = name + "__" + name + "_" + strconv.FormatInt(ms, 10) + "_0"
	if !g.registered(t.kind) {
		t.refused = fmt.Sprintf("Tool %q not found. Did you mean one of: \"read_file\", \"update_topic\", \"grep_search\"?", name)
	}
	g.line(obj{{"type", "tool_use"}, {"timestamp", g.ts()}, {"tool_name", name}, {"tool_id", t.id}, {"parameters", params}})
}

func (g *geminiAgent) toolEnd(t *toolCall) {
	g.final.Reset()
	res := obj{{"type", "tool_result"}, {"timestamp", g.ts()}, {"tool_id", t.id}}
	switch {
	case t.refused != "":
		res = append(res, kv{"status", "error"}, kv{"output", t.refused},
			kv{"error", obj{{"type", "tool_not_registered"}, {"message", t.refused}}})
	case t.err != nil:
		res = append(res, kv{"status", "error"}, kv{"output", t.err.Error()},
			kv{"error", obj{{"type", "file_write_failure"}, {"message", t.err.Error()}}})
	case t.kind == toolBash:
		out := strings.TrimRight(t.combined, "\n")
		if t.exitCode != 0 {
			out = joinNonEmpty(out, "Exit Code: "+strconv.Itoa(t.exitCode))
		}
		res = append(res, kv{"status", "success"}, kv{"output", out})
	default:
		res = append(res, kv{"status", "success"})
	}
	g.line(res)
}

func (g *geminiAgent) stats(r resultSpec) obj {
	durationMS := 0
	if g.f.fixed.IsZero() {
		durationMS = int(time.Since(g.f.started).Milliseconds())
	}
	return obj{{"total_tokens", r.InputTokens + r.OutputTokens}, {"input_tokens", r.InputTokens},
		{"output_tokens", r.OutputTokens}, {"cached", r.CachedInputTokens}, {"input", r.InputTokens - r.CachedInputTokens},
		{"duration_ms", durationMS}, {"tool_calls", g.f.toolSteps},
		{"models", obj{{g.model, obj{{"total_tokens", r.InputTokens + r.OutputTokens}, {"input_tokens", r.InputTokens},
			{"output_tokens", r.OutputTokens}, {"cached", r.CachedInputTokens}, {"input", r.InputTokens - r.CachedInputTokens}}}}},
	}
}

func (g *geminiAgent) finish() int {
	r := resultSpec{}
	if g.f.script.Result != nil {
		r = *g.f.script.Result
	}
	text := g.final.String()
	if r.Text != nil {
		text = *r.Text
	}
	switch g.format {
	case "stream-json":
		g.line(obj{{"type", "result"}, {"timestamp", g.ts()}, {"status", "success"}, {"stats", g.stats(r)}})
	case "json":
		g.f.out.json(obj{{"session_id", g.sid}, {"response", text}, {"stats", obj{
			{"models", obj{{g.model, obj{{"tokens", obj{{"input", r.InputTokens}, {"prompt", r.InputTokens},
				{"candidates", r.OutputTokens}, {"total", r.InputTokens + r.OutputTokens}, {"cached", r.CachedInputTokens},
				{"thoughts", 0}, {"tool", 0}}}}}}},
			{"tools", obj{{"totalCalls", g.f.toolSteps}}},
		}}})
	default:
		g.f.out.write([]byte(text + "\n"))
	}
	if r.ExitCode != nil {
		return *r.ExitCode
	}
	return 0
}

// gemini reports an authentication failure before it starts (exit 41) and
// an API failure, after its retries, as an error result (exit 1;
// samples/gemini-stream-json-api-error.ndjson).

func (g *geminiAgent) early(fs *failSpec) bool { return fs.Kind == failAuth }

func (g *geminiAgent) fail(fs *failSpec) int {
	if fs.Kind == failAuth {
		fmt.Fprintln(g.f.stderr, fs.text("Error authenticating: API key not valid. Please pass a valid API key."))
		return 41
	}
	var code int
	var msg, status string
	switch fs.Kind {
	case failAPIError:
		code, msg, status = fs.status(500), "Internal error encountered.", "INTERNAL"
	case failOverloaded:
		code, msg, status = fs.status(503), "The model is overloaded. Please try again later.", "UNAVAILABLE"
	case failRateLimit:
		code, msg, status = fs.status(429), "Resource has been exhausted (e.g. check quota)."+fs.inSeconds(" Please retry in %ds."), "RESOURCE_EXHAUSTED"
	case failUsageLimit:
		code, status = fs.status(429), "RESOURCE_EXHAUSTED"
		msg = "Quota exceeded for quota metric 'Gemini 2.5 Pro Requests' and limit 'Gemini 2.5 Pro Requests per day per user per tier'." +
			fs.inSeconds(" Please retry in %ds.")
	}
	body := appendJSON(nil, obj{{"error", obj{{"code", code}, {"message", msg}, {"status", status}}}})
	text := fs.text("[API Error: " + string(body) + "]")
	if g.stream() {
		g.line(obj{{"type", "result"}, {"timestamp", g.ts()}, {"status", "error"},
			{"error", obj{{"type", "unknown"}, {"message", text}}}, {"stats", g.stats(resultSpec{})}})
	} else {
		fmt.Fprintln(g.f.stderr, "Error when talking to Gemini API "+text)
	}
	return 1
}

// writeCompact writes a scenario's verbatim event as one line.
func writeCompact(f *fake, raw json.RawMessage) {
	f.out.write(append(appendJSON(nil, raw), '\n'))
}
