// Package gemini drives Google's Gemini CLI (`gemini`), as
// docs/AGENTS.md, "Gemini CLI" describes it; the gemini-* transcripts in
// internal/agent/testdata are the reference's.
//
// It builds the argv and reads the stream-json; agent.Run starts the process.
// The outcome comes from the result line and, for a run that printed none, the
// documented exit codes; never from text elsewhere in the transcript. It
// imports nothing of this module but internal/agent.
package gemini

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/git-ralph/git-ralph/internal/agent"
)

// Gemini drives Google's Gemini CLI (`gemini`) headlessly (docs/AGENTS.md, "Gemini CLI"):
//
//	gemini --output-format stream-json --yolo --skip-trust [-m M] [args…] < prompt
//
// Headless because stdin is not a terminal. Without --yolo the write and shell tools are not
// registered and the run still "succeeds"; without --skip-trust gemini exits 55 in an
// untrusted folder. One result line ends the stream; Gemini reports no cost.
type Gemini struct{}

var _ agent.Diagnoser = Gemini{}

// Name returns "gemini".
func (Gemini) Name() string { return "gemini" }

// Binary returns "gemini".
func (Gemini) Binary() string { return "gemini" }

// State is what Gemini CLI writes outside the working tree (docs/SANDBOX.md, "Each agent's state"; tried with
// 0.61.0): ~/.gemini.
func (Gemini) State(env []string) agent.State {
	return agent.State{Dirs: []string{agent.InHome(env, ".gemini")}}
}

// Guarded are Gemini CLI's files in ~/.gemini that its next session reads: its settings
// (MCP servers, hooks), its memory, its .env and its trusted folders; Run puts back
// what the agent changed of them.
func (Gemini) Guarded(env []string) []string {
	return inDir(agent.InHome(env, ".gemini"), "settings.json", "GEMINI.md", ".env", "trustedFolders.json")
}

// inDir is each of names in dir; none without a dir.
func inDir(dir string, names ...string) []string {
	if dir == "" {
		return nil
	}
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = filepath.Join(dir, n)
	}
	return out
}

// InstallHint tells how to install the Gemini CLI.
func (Gemini) InstallHint() string {
	return "install the Gemini CLI with 'npm install -g @google/gemini-cli' (0.61 or later), then set GEMINI_API_KEY or run 'gemini' once to log in"
}

// Argv returns gemini's headless argv; the prompt goes on stdin.
func (Gemini) Argv(req agent.Request) []string {
	argv := []string{"gemini", "--output-format", "stream-json", "--yolo", "--skip-trust"}
	if req.Model != "" {
		argv = append(argv, "-m", req.Model)
	}
	return append(argv, req.Args...)
}

// Fatal messages of the gemini driver.
const (
	authFatal   = "gemini could not authenticate; set GEMINI_API_KEY (or log in by running 'gemini' once), and check ~/.gemini/settings.json's security.auth.selectedType"
	trustFatal  = "gemini does not trust this repository; make sure the installed gemini supports --skip-trust (0.61 or later), or set GEMINI_CLI_TRUST_WORKSPACE=true"
	configFatal = "gemini reported a configuration error"
	argsFatal   = "gemini rejected its command line; update gemini (--skip-trust needs 0.61 or later) or check ralph.agentArgs"
)

// Diagnose reads gemini's documented exit codes (docs/AGENTS.md, "Gemini CLI": 41 authentication, 52
// configuration, 55 untrusted folder) and a rejected command line, for runs
// that printed no result.
func (Gemini) Diagnose(res *agent.Result) {
	if res.Fatal != "" || res.SawResult || res.Signal != "" {
		return
	}
	switch {
	case res.ExitCode == 41:
		res.Class, res.Fatal = agent.ClassAuth, authFatal
	case res.ExitCode == 55 || strings.Contains(res.Stderr, "not running in a trusted directory"):
		res.Fatal = trustFatal
	case res.ExitCode == 52:
		res.Fatal = configFatal + ": " + agent.OneLine(agent.LastLines(res.Stderr, 1), 200)
	case strings.Contains(res.Stderr, "Unknown argument"):
		res.Fatal = argsFatal + ": " + agent.OneLine(agent.LastLines(res.Stderr, 1), 200)
	default:
		agent.DiagnoseStderr(res, authFatal)
	}
}

// event is one line of gemini's stream-json output.
type event struct {
	Type       string      `json:"type"`
	SessionID  string      `json:"session_id"`
	Model      string      `json:"model"`
	Role       string      `json:"role"`    // message
	Content    string      `json:"content"` // message
	Delta      bool        `json:"delta"`
	ToolName   string      `json:"tool_name"` // tool_use
	Parameters *toolInput  `json:"parameters"`
	Status     string      `json:"status"` // tool_result, result
	Error      *eventError `json:"error"`
	Message    string      `json:"message"` // error (a warning)
	Stats      *stats      `json:"stats"`
}

type toolInput struct {
	Command      string `json:"command"`
	FilePath     string `json:"file_path"`
	AbsolutePath string `json:"absolute_path"`
	Path         string `json:"path"`
	DirPath      string `json:"dir_path"`
	Pattern      string `json:"pattern"`
	URL          string `json:"url"`
	Query        string `json:"query"`
	Prompt       string `json:"prompt"`
}

type eventError struct {
	Type    string `json:"type"`
	Message string `json:"message"`
}

type stats struct {
	InputTokens  int64 `json:"input_tokens"`
	OutputTokens int64 `json:"output_tokens"`
}

// Decode reads gemini's stream-json output to the end. Assistant chunks are
// gathered into blocks that go to ev.Text when a tool call or the result
// ends them; tool_use goes to ev.Tool. The final text is the assistant text
// after the last tool result; the outcome comes from the result line only.
func (Gemini) Decode(r io.Reader, ev agent.Events) (agent.Result, error) {
	if ev == nil {
		ev = agent.NopEvents{}
	}
	d := decoder{ev: ev, final: agent.TextTail{Max: agent.MaxText}}
	err := agent.EachLine(r, d.line)
	d.flush()
	return d.finish(), err
}

// decoder is the state of one Gemini.Decode.
type decoder struct {
	ev      agent.Events
	res     agent.Result
	block   strings.Builder // assistant text not yet shown
	final   agent.TextTail  // assistant text since the last tool result
	lastErr string          // the last error event (a warning)
}

// flush shows the pending assistant block.
func (d *decoder) flush() {
	if d.block.Len() > 0 {
		d.ev.Text(d.block.String())
		d.block.Reset()
	}
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
	if e.Type != "message" {
		d.flush()
	}
	switch e.Type {
	case "init":
		d.res.SessionID = agent.FirstNonEmpty(e.SessionID, d.res.SessionID)
		d.res.Model = agent.FirstNonEmpty(e.Model, d.res.Model)
	case "message":
		if e.Role != "assistant" || e.Content == "" {
			return // the echoed prompt
		}
		if !e.Delta && d.block.Len() > 0 {
			d.flush()
		}
		if d.block.Len()+len(e.Content) > agent.MaxText {
			d.flush()
		}
		d.block.WriteString(e.Content)
		d.final.Append(e.Content, e.Delta)
	case "tool_use":
		d.ev.Tool(e.ToolName, toolSummary(e.Parameters))
	case "tool_result":
		d.final.Reset()
	case "error":
		d.lastErr = agent.Head(strings.TrimSpace(agent.FirstNonEmpty(e.Message, errMessage(e.Error))), agent.MaxErrorLen)
	case "result":
		d.result(&e)
		d.ev.Terminal()
	}
}

func (d *decoder) result(e *event) {
	r := &d.res
	r.SawResult = true
	r.Subtype = e.Status
	r.IsError = e.Status != "success"
	r.Errors = nil
	r.Class, r.RetryAfter, r.RetryAt = agent.ClassNone, 0, time.Time{}
	if s := e.Stats; s != nil {
		r.InputTokens, r.OutputTokens = s.InputTokens, s.OutputTokens
	}
	if !r.IsError {
		return
	}
	msg := errMessage(e.Error)
	if msg == "" {
		msg = "gemini reported status " + e.Status
	}
	agent.AddError(&r.Errors, msg)
	kind := ""
	if e.Error != nil {
		kind = e.Error.Type
	}
	agent.ClassifyError(0, kind+": "+msg).Apply(r)
	if r.Class == agent.ClassAuth {
		r.Fatal = authFatal
	}
}

func (d *decoder) finish() agent.Result {
	r := d.res
	r.Text = d.final.String()
	if !r.SawResult && d.lastErr != "" {
		agent.AddError(&r.Errors, d.lastErr)
	}
	return r
}

// errMessage returns e's message, "" for nil.
func errMessage(e *eventError) string {
	if e == nil {
		return ""
	}
	return e.Message
}

// toolSummary describes a gemini tool call in one short line.
func toolSummary(in *toolInput) string {
	if in == nil {
		return ""
	}
	return agent.OneLine(agent.FirstNonEmpty(in.Command, in.FilePath, in.AbsolutePath, in.Path, in.DirPath, in.Pattern, in.URL, in.Query, in.Prompt), agent.MaxSummary)
}

// Reports: gemini reports tokens only (result.stats).
func (Gemini) Reports() (cost, tokens bool) { return false, true }
