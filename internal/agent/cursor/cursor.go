// Package cursor drives the Cursor CLI (`cursor-agent -p`), as
// docs/AGENTS.md, "Cursor" describes it from Cursor's documentation: the binary
// could not be installed where the reference was written, and the
// synthetic-cursor-* transcripts in internal/agent/testdata follow the
// documented schema.
//
// It builds the argv and reads the stream-json; agent.Run starts the process.
// The outcome comes from the result line, or for a run without one from its
// exit and last lines of stderr (agent.DiagnoseStderr), never from text
// elsewhere in the transcript. It imports nothing of this module but
// internal/agent.
package cursor

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"path/filepath"
	"strings"

	"github.com/git-ralph/git-ralph/internal/agent"
)

// Cursor drives the Cursor CLI (`cursor-agent`) headlessly, from its documentation only
// (docs/AGENTS.md, "Cursor"):
//
//	cursor-agent -p --output-format stream-json --force --trust [--model M] [args…] < prompt
//
// The stream is Claude-like, and the result concatenates all assistant text. A failure is a
// non-zero exit with the message on stderr and possibly no result.
type Cursor struct{}

var _ agent.Diagnoser = Cursor{}

// Name returns "cursor".
func (Cursor) Name() string { return "cursor" }

// Binary returns "cursor-agent".
func (Cursor) Binary() string { return "cursor-agent" }

// State is what Cursor's agent CLI writes outside the working tree, from its
// documentation (it could not be run here): ~/.cursor (its cli-config.json and
// sessions) and its XDG config directory.
func (Cursor) State(env []string) agent.State {
	return agent.State{Dirs: []string{agent.InHome(env, ".cursor"), agent.XDG(env, "XDG_CONFIG_HOME", "cursor")}}
}

// Guarded are the Cursor CLI's files in ~/.cursor that its next session reads: its
// MCP servers and its configuration; Run puts back what the agent changed of them.
func (Cursor) Guarded(env []string) []string {
	dir := agent.InHome(env, ".cursor")
	if dir == "" {
		return nil
	}
	return []string{filepath.Join(dir, "mcp.json"), filepath.Join(dir, "cli-config.json")}
}

// InstallHint tells how to install the Cursor CLI.
func (Cursor) InstallHint() string {
	return "install the Cursor CLI with 'curl https://cursor.com/install -fsS | bash', then run 'cursor-agent login' (or set CURSOR_API_KEY)"
}

// Argv returns cursor-agent's headless argv; the prompt goes on stdin.
func (Cursor) Argv(req agent.Request) []string {
	argv := []string{"cursor-agent", "-p", "--output-format", "stream-json", "--force", "--trust"}
	if req.Model != "" {
		argv = append(argv, "--model", req.Model)
	}
	return append(argv, req.Args...)
}

// authFatal is the Fatal message of an authentication failure.
const authFatal = "cursor-agent is not logged in or its API key was rejected; run 'cursor-agent login' (or set CURSOR_API_KEY)"

// Diagnose classifies a failed run by the last lines of its stderr, the only
// place cursor-agent reports failures (docs/AGENTS.md, "Cursor").
func (Cursor) Diagnose(res *agent.Result) {
	if res.Fatal != "" {
		return
	}
	agent.DiagnoseStderr(res, authFatal)
}

// event is one line of cursor-agent's stream-json output.
type event struct {
	Type      string              `json:"type"`
	Subtype   string              `json:"subtype"`
	SessionID string              `json:"session_id"`
	Model     string              `json:"model"`
	Message   *message            `json:"message"`
	ToolCall  map[string]toolCall `json:"tool_call"`
	IsError   bool                `json:"is_error"`
	Result    *string             `json:"result"`
	Error     json.RawMessage     `json:"error"`
	Usage     *usage              `json:"usage"`
}

type message struct {
	Content []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	} `json:"content"`
}

type toolCall struct {
	Args *struct {
		Command     string `json:"command"`
		Path        string `json:"path"`
		Pattern     string `json:"pattern"`
		GlobPattern string `json:"globPattern"`
		Query       string `json:"query"`
		URL         string `json:"url"`
	} `json:"args"`
}

// usage is the token usage some versions reportedly add to the result
// (unverified, docs/AGENTS.md, "Cursor"); both spellings are read.
type usage struct {
	InputTokens      int64 `json:"inputTokens"`
	OutputTokens     int64 `json:"outputTokens"`
	InputTokensSnake int64 `json:"input_tokens"`
	OutputTokenSnake int64 `json:"output_tokens"`
}

// Decode reads cursor-agent's stream-json output to the end. Assistant text
// goes to ev.Text, tool calls to ev.Tool when they start. The outcome comes
// from the result line. Its result concatenates every assistant message, so
// the final text is the assistant text after the last tool call when the
// result ends with it (an instruction the agent echoed earlier then does not
// count), else the whole result.
func (Cursor) Decode(r io.Reader, ev agent.Events) (agent.Result, error) {
	if ev == nil {
		ev = agent.NopEvents{}
	}
	d := decoder{ev: ev, seg: agent.TextTail{Max: agent.MaxText}}
	err := agent.EachLine(r, d.line)
	return d.finish(), err
}

// decoder is the state of one Cursor.Decode.
type decoder struct {
	ev      agent.Events
	res     agent.Result
	seg     agent.TextTail // assistant text since the last tool call
	lastMsg string         // the last assistant message since the last tool call
	result  *string        // the result line's result
}

func (d *decoder) line(line []byte) {
	line = bytes.TrimSpace(line)
	if len(line) == 0 || line[0] != '{' {
		return
	}
	var e event
	if err := json.Unmarshal(line, &e); err != nil {
		var typeErr *json.UnmarshalTypeError
		if !errors.As(err, &typeErr) {
			return
		}
	}
	if e.SessionID != "" {
		d.res.SessionID = e.SessionID
	}
	switch e.Type {
	case "system":
		if e.Model != "" {
			d.res.Model = e.Model
		}
	case "assistant":
		if e.Message == nil {
			return
		}
		var msg strings.Builder
		for _, c := range e.Message.Content {
			if c.Type == "text" && c.Text != "" {
				d.ev.Text(c.Text)
				d.seg.Add(c.Text)
				if msg.Len() < agent.MaxText {
					msg.WriteString(c.Text)
				}
			}
		}
		if msg.Len() > 0 {
			d.lastMsg = agent.Tail(msg.String(), agent.MaxText)
		}
	case "tool_call":
		if e.Subtype != "started" {
			return
		}
		d.seg.Reset()
		d.lastMsg = ""
		for kind, tc := range e.ToolCall {
			name := strings.TrimSuffix(kind, "ToolCall")
			sum := ""
			if a := tc.Args; a != nil {
				sum = agent.FirstNonEmpty(a.Command, a.Path, a.Pattern, a.GlobPattern, a.Query, a.URL)
			}
			d.ev.Tool(name, agent.OneLine(sum, agent.MaxSummary))
			break // one kind per call
		}
	case "result":
		d.resultLine(&e)
		d.ev.Terminal()
	}
}

func (d *decoder) resultLine(e *event) {
	r := &d.res
	r.SawResult = true
	r.Subtype = e.Subtype
	r.IsError = e.IsError || (e.Subtype != "" && e.Subtype != "success")
	d.result = nil
	if e.Result != nil {
		s := agent.Tail(*e.Result, agent.MaxText)
		d.result = &s
	}
	if u := e.Usage; u != nil {
		r.InputTokens = max(u.InputTokens, u.InputTokensSnake)
		r.OutputTokens = max(u.OutputTokens, u.OutputTokenSnake)
	}
	r.Errors, r.Class = nil, agent.ClassNone
	if !r.IsError {
		return
	}
	msg := agent.RawString(e.Error)
	if msg == "" && e.Result != nil {
		msg = *e.Result
	}
	if msg == "" {
		msg = "cursor-agent reported an error (" + agent.FirstNonEmpty(e.Subtype, "is_error") + ")"
	}
	agent.AddError(&r.Errors, msg)
	agent.ClassifyError(0, msg).Apply(r)
	if r.Class == agent.ClassAuth {
		r.Fatal = authFatal
	}
}

func (d *decoder) finish() agent.Result {
	r := d.res
	seg := d.seg.String()
	endsWith := func(s string) bool {
		s = strings.TrimSpace(s)
		return s != "" && strings.HasSuffix(strings.TrimSpace(*d.result), s)
	}
	switch {
	case d.result == nil:
		r.Text = seg
	case endsWith(seg):
		r.Text = seg
	case endsWith(d.lastMsg):
		r.Text = d.lastMsg
	default:
		r.Text = *d.result
	}
	return r
}

// Reports: cursor reports neither.
func (Cursor) Reports() (cost, tokens bool) { return false, false }
