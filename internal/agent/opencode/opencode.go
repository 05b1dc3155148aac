// Package opencode drives OpenCode (`opencode run`), as docs/AGENTS.md
// ("OpenCode") describes it; the opencode-* transcripts in internal/agent/testdata are the
// reference's.
//
// It builds the argv and reads the JSON events; agent.Run starts the process.
// The outcome comes from the last step_finish or an error event of the main
// session only, never from text elsewhere in the transcript or a subagent's
// events. It imports nothing of this module but internal/agent.
package opencode

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/git-ralph/git-ralph/internal/agent"
)

// OpenCode drives OpenCode (`opencode run`) headlessly (docs/AGENTS.md, "OpenCode"):
//
//	opencode run --format json --auto [-m provider/model] [args…] < prompt
//
// Without --auto an "ask" permission is rejected in run mode and the run still exits 0.
// There is no result event: the run is over at the step_finish whose reason is not
// "tool-calls", or at an error.
type OpenCode struct{}

var _ agent.Diagnoser = OpenCode{}

// Name returns "opencode".
func (OpenCode) Name() string { return "opencode" }

// Binary returns "opencode".
func (OpenCode) Binary() string { return "opencode" }

// State is what OpenCode writes outside the working tree (docs/SANDBOX.md, "Each agent's state"; tried with
// 1.18.33): its four XDG directories.
func (OpenCode) State(env []string) agent.State {
	return agent.State{Dirs: []string{
		agent.XDG(env, "XDG_DATA_HOME", "opencode"), agent.XDG(env, "XDG_STATE_HOME", "opencode"),
		agent.XDG(env, "XDG_CACHE_HOME", "opencode"), agent.XDG(env, "XDG_CONFIG_HOME", "opencode"),
	}}
}

// Guarded are OpenCode's files in its configuration directory that its next session
// reads: its configuration (MCP servers, plugins) and its rules; Run puts back what
// the agent changed of them.
func (OpenCode) Guarded(env []string) []string {
	dir := agent.XDG(env, "XDG_CONFIG_HOME", "opencode")
	if dir == "" {
		return nil
	}
	var out []string
	for _, n := range []string{"opencode.json", "opencode.jsonc", "config.json", "AGENTS.md"} {
		out = append(out, filepath.Join(dir, n))
	}
	return out
}

// InstallHint tells how to install OpenCode.
func (OpenCode) InstallHint() string {
	return "install OpenCode with 'npm install -g opencode-ai' (or 'curl -fsSL https://opencode.ai/install | bash'), then run 'opencode auth login'"
}

// Argv returns opencode's headless argv; the prompt goes on stdin.
func (OpenCode) Argv(req agent.Request) []string {
	argv := []string{"opencode", "run", "--format", "json", "--auto"}
	if req.Model != "" {
		argv = append(argv, "-m", req.Model)
	}
	return append(argv, req.Args...)
}

// authFatal is the Fatal message of an authentication failure.
const authFatal = "opencode could not authenticate with its model provider; run 'opencode auth login' (or set the provider's API key)"

// Diagnose classifies a run that failed before it printed any event.
func (OpenCode) Diagnose(res *agent.Result) {
	if res.Fatal != "" {
		return
	}
	agent.DiagnoseStderr(res, authFatal)
}

// event is one line of `opencode run --format json`.
type event struct {
	Type      string      `json:"type"`
	SessionID string      `json:"sessionID"`
	Part      *part       `json:"part"`
	Error     *eventError `json:"error"`
}

type part struct {
	Type   string         `json:"type"`
	Text   string         `json:"text"`   // text
	Tool   string         `json:"tool"`   // tool
	State  *toolState     `json:"state"`  // tool
	Reason string         `json:"reason"` // step-finish
	Cost   agent.OptFloat `json:"cost"`
	Tokens *tokens        `json:"tokens"`
}

type toolState struct {
	Status string     `json:"status"`
	Input  *toolInput `json:"input"`
	Title  string     `json:"title"`
}

type toolInput struct {
	Command     string `json:"command"`
	FilePath    string `json:"filePath"`
	Path        string `json:"path"`
	Pattern     string `json:"pattern"`
	URL         string `json:"url"`
	Query       string `json:"query"`
	Description string `json:"description"`
}

type tokens struct {
	Input     int64 `json:"input"`
	Output    int64 `json:"output"`
	Reasoning int64 `json:"reasoning"`
	Cache     struct {
		Read  int64 `json:"read"`
		Write int64 `json:"write"`
	} `json:"cache"`
}

type eventError struct {
	Name string `json:"name"`
	Data struct {
		Message         string            `json:"message"`
		StatusCode      int               `json:"statusCode"`
		IsRetryable     bool              `json:"isRetryable"`
		ResponseHeaders map[string]string `json:"responseHeaders"`
		ResponseBody    json.RawMessage   `json:"responseBody"`
	} `json:"data"`
}

// Decode reads opencode's JSON events to the end: text parts go to ev.Text, tool parts to
// ev.Tool. The final text is the last step's (or the last text event's); the cost sums the
// step_finish costs (nil when none had one), the turns count the steps; an error event is
// classified from its status, name and message. A subagent's events are shown, not counted.
func (OpenCode) Decode(r io.Reader, ev agent.Events) (agent.Result, error) {
	if ev == nil {
		ev = agent.NopEvents{}
	}
	d := decoder{ev: ev, step: agent.TextTail{Max: agent.MaxText}}
	err := agent.EachLine(r, d.line)
	return d.finish(), err
}

// decoder is the state of one OpenCode.Decode.
type decoder struct {
	ev       agent.Events
	res      agent.Result
	cost     float64
	costSeen bool
	step     agent.TextTail // text of the current (or last) step
	lastText string         // the last text event
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
	if d.res.SessionID == "" && e.SessionID != "" {
		d.res.SessionID = e.SessionID
	}
	main := e.SessionID == "" || e.SessionID == d.res.SessionID
	p := e.Part
	switch e.Type {
	case "step_start":
		if main {
			d.step.Reset()
		}
	case "text":
		if p == nil || p.Text == "" {
			return
		}
		d.ev.Text(p.Text)
		if main {
			d.step.Add(p.Text)
			d.lastText = agent.Tail(p.Text, agent.MaxText)
		}
	case "tool_use":
		if p != nil {
			d.ev.Tool(p.Tool, toolSummary(p.State))
		}
	case "step_finish":
		if p == nil || !main {
			return
		}
		d.res.Turns++
		if p.Cost.Valid {
			d.cost += p.Cost.Value
			d.costSeen = true
		}
		if t := p.Tokens; t != nil {
			d.res.InputTokens += t.Input + t.Cache.Read + t.Cache.Write
			d.res.OutputTokens += t.Output + t.Reasoning
		}
		if p.Reason != "tool-calls" {
			d.res.SawResult = true
			d.res.Subtype = p.Reason
			d.ev.Terminal()
		}
	case "error":
		if !main {
			return
		}
		d.error(e.Error)
		d.ev.Terminal()
	}
}

// error records an error event: the run is over and failed.
func (d *decoder) error(oe *eventError) {
	r := &d.res
	r.SawResult, r.IsError = true, true
	if oe == nil {
		r.Subtype = "error"
		agent.AddError(&r.Errors, "opencode reported an error")
		return
	}
	r.Subtype = agent.FirstNonEmpty(oe.Name, "error")
	msg := oe.Data.Message
	if oe.Data.StatusCode != 0 {
		msg = "HTTP " + strconv.Itoa(oe.Data.StatusCode) + ": " + msg
	}
	agent.AddError(&r.Errors, agent.FirstNonEmpty(strings.TrimSpace(msg), oe.Name))
	body := agent.RawString(oe.Data.ResponseBody)
	if body == "" && len(oe.Data.ResponseBody) > 0 && string(oe.Data.ResponseBody) != "null" {
		body = string(oe.Data.ResponseBody)
	}
	f := agent.ClassifyError(oe.Data.StatusCode, oe.Name+": "+oe.Data.Message+"\n"+agent.Head(body, agent.MaxErrorLen))
	if f.Class == agent.ClassNone && oe.Data.IsRetryable {
		f.Class = agent.ClassTransient
	}
	if f.After == 0 {
		for k, v := range oe.Data.ResponseHeaders {
			if strings.EqualFold(k, "retry-after") {
				if n, err := strconv.Atoi(strings.TrimSpace(v)); err == nil && n > 0 && n <= 30*24*3600 {
					f.After = time.Duration(n) * time.Second
				}
			}
		}
	}
	f.Apply(r)
	if r.Class == agent.ClassAuth {
		r.Fatal = authFatal
	}
}

func (d *decoder) finish() agent.Result {
	r := d.res
	r.Text = agent.FirstNonEmpty(d.step.String(), d.lastText)
	if d.costSeen {
		c := d.cost
		r.CostUSD = &c
	}
	return r
}

// toolSummary describes an opencode tool call in one short line.
func toolSummary(st *toolState) string {
	if st == nil {
		return ""
	}
	s := st.Title
	if in := st.Input; in != nil {
		s = agent.FirstNonEmpty(in.Command, in.FilePath, in.Path, in.Pattern, in.URL, in.Query, in.Description, s)
	}
	return agent.OneLine(s, agent.MaxSummary)
}

// Reports: opencode reports both (step_finish cost and tokens).
func (OpenCode) Reports() (cost, tokens bool) { return true, true }
