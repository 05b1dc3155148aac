// Package codex drives the OpenAI Codex CLI (`codex exec`), as
// docs/AGENTS.md, "Codex" describes it; the codex-* transcripts in
// internal/agent/testdata are the reference's.
//
// It builds the argv and reads the JSONL stream; agent.Run starts the process
// and hands it the --output-last-message file (agent.OutputFiler). The outcome
// comes from turn.completed or turn.failed, or a last error event, never from
// text elsewhere in the transcript. It imports nothing of this module but
// internal/agent.
package codex

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"path/filepath"
	"strings"

	"github.com/git-ralph/git-ralph/internal/agent"
)

// Codex drives the OpenAI Codex CLI (`codex exec`) headlessly (docs/AGENTS.md, "Codex"):
//
//	codex exec --json --dangerously-bypass-approvals-and-sandbox [-m M] --output-last-message FILE [args…] - < prompt
//
// "-" reads the prompt from stdin, which Run closes (codex blocks on a pipe left open). Run
// passes a temporary FILE and reads the final message from it. The outcome comes from
// turn.completed or turn.failed; on SIGTERM codex dies without a terminal event.
type Codex struct{}

var (
	_ agent.Diagnoser   = Codex{}
	_ agent.OutputFiler = Codex{}
)

// Name returns "codex".
func (Codex) Name() string { return "codex" }

// Binary returns "codex".
func (Codex) Binary() string { return "codex" }

// State is what Codex writes outside the working tree (docs/SANDBOX.md, "Each agent's state"; tried with 0.169.0):
// CODEX_HOME, ~/.codex by default, and the pseudo-terminal its exec_command tool opens
// when the model asks for one ("tty": true; without /dev/ptmx the command fails with
// "failed to openpty: Permission denied", testdata/record/README.md). Its
// --output-last-message file is in the attempt's own directory.
func (Codex) State(env []string) agent.State {
	return agent.State{Dirs: []string{agent.EnvDir(env, "CODEX_HOME", ".codex")}, PTY: true}
}

// OwnState is Codex's configuration of its own for a sandboxed attempt (CODEX_HOME):
// the user's login (auth.json), config.toml and its instructions file, from CODEX_HOME or ~/.codex.
func (Codex) OwnState(env []string) agent.OwnState {
	dir := agent.EnvDir(env, "CODEX_HOME", ".codex")
	var files []agent.OwnFile
	for _, name := range []string{"auth.json", "config.toml", "AGENTS.md"} {
		if dir != "" {
			files = append(files, agent.OwnFile{From: filepath.Join(dir, name), Name: name})
		}
	}
	return agent.OwnState{Var: "CODEX_HOME", Files: files}
}

// InstallHint tells how to install the Codex CLI.
func (Codex) InstallHint() string {
	return "install the Codex CLI with 'npm install -g @openai/codex', then run 'codex login' (or set OPENAI_API_KEY)"
}

// Argv returns codex's headless argv; the prompt goes on stdin ("-").
func (Codex) Argv(req agent.Request) []string {
	argv := []string{"codex", "exec", "--json", "--dangerously-bypass-approvals-and-sandbox"}
	if req.Model != "" {
		argv = append(argv, "-m", req.Model)
	}
	argv = append(argv, "--output-last-message", req.OutputFileArg())
	argv = append(argv, req.Args...)
	return append(argv, "-")
}

// Fatal messages of the codex driver.
const (
	authFatal = "codex is not logged in or its credentials were rejected; run 'codex login' (or set OPENAI_API_KEY)"
	argsFatal = "codex rejected its command line; check ralph.agentArgs"
)

// Diagnose recognises a rejected command line (exit 2, clap's message) and
// failures that codex reports on stderr alone.
func (Codex) Diagnose(res *agent.Result) {
	if res.Fatal != "" || res.SawResult {
		return
	}
	if res.ExitCode == 2 && strings.Contains(res.Stderr, "error: ") {
		res.Fatal = argsFatal + ": " + agent.OneLine(agent.FirstErrorLine(res.Stderr), 200)
		return
	}
	agent.DiagnoseStderr(res, authFatal)
}

// ReadOutputFile makes the --output-last-message file's content (its last
// 64 KiB) the final text, unless codex left it empty.
func (Codex) ReadOutputFile(res *agent.Result, path string) {
	text, err := agent.ReadTail(path, agent.MaxText)
	if err == nil && strings.TrimSpace(text) != "" {
		res.Text = text
	}
}

// event is one line of `codex exec --json`.
type event struct {
	Type     string          `json:"type"`
	ThreadID string          `json:"thread_id"`
	Message  string          `json:"message"` // error
	Item     *item           `json:"item"`
	Usage    *usage          `json:"usage"` // turn.completed
	Error    json.RawMessage `json:"error"` // turn.failed: {message}
}

type item struct {
	ID      string   `json:"id"`
	Type    string   `json:"type"`
	Text    string   `json:"text"`    // agent_message
	Command string   `json:"command"` // command_execution
	Changes []change `json:"changes"` // file_change
	Server  string   `json:"server"`  // mcp_tool_call
	Tool    string   `json:"tool"`
	Query   string   `json:"query"` // web_search
	Message string   `json:"message"`
}

type change struct {
	Path string `json:"path"`
	Kind string `json:"kind"`
}

type usage struct {
	InputTokens  int64 `json:"input_tokens"`
	OutputTokens int64 `json:"output_tokens"`
}

// Decode reads codex's JSONL output to the end. agent_message items go to
// ev.Text, tool items to ev.Tool when they start. The final text is the last
// agent_message (Run replaces it with the --output-last-message file when
// codex wrote one); tokens are summed over turn.completed. turn.failed, and
// an error event that was the last word of a run without a terminal event,
// are errors, classified from their message.
func (Codex) Decode(r io.Reader, ev agent.Events) (agent.Result, error) {
	if ev == nil {
		ev = agent.NopEvents{}
	}
	d := decoder{ev: ev, started: map[string]bool{}}
	err := agent.EachLine(r, d.line)
	return d.finish(), err
}

// decoder is the state of one Codex.Decode.
type decoder struct {
	ev      agent.Events
	res     agent.Result
	last    string          // the last agent_message
	lastErr string          // the last error event's message, while nothing followed it
	started map[string]bool // tool items shown on item.started
}

func (d *decoder) line(line []byte) {
	line = bytes.TrimSpace(line)
	if len(line) == 0 || line[0] != '{' {
		return // "Reading additional input from stdin...", a warning: logged only
	}
	var e event
	if err := json.Unmarshal(line, &e); err != nil {
		var typeErr *json.UnmarshalTypeError
		if !errors.As(err, &typeErr) {
			return
		}
	}
	if e.Type != "error" && e.Type != "" {
		d.lastErr = ""
	}
	switch e.Type {
	case "thread.started":
		if e.ThreadID != "" {
			d.res.SessionID = e.ThreadID
		}
	case "item.started":
		if e.Item != nil && d.tool(e.Item) {
			if len(d.started) > 1024 {
				clear(d.started)
			}
			d.started[e.Item.ID] = true
		}
	case "item.completed":
		d.completed(e.Item)
	case "error":
		d.lastErr = agent.Head(strings.TrimSpace(e.Message), agent.MaxErrorLen)
	case "turn.completed":
		d.res.SawResult = true
		if u := e.Usage; u != nil {
			// input_tokens includes the cached ones, output_tokens the
			// reasoning ones (OpenAI's usage accounting).
			d.res.InputTokens += u.InputTokens
			d.res.OutputTokens += u.OutputTokens
		}
		d.ev.Terminal()
	case "turn.failed":
		d.res.SawResult, d.res.IsError = true, true
		d.res.Subtype = "turn.failed"
		msg := errorMessage(e.Error)
		agent.AddError(&d.res.Errors, msg)
		agent.ClassifyError(0, msg).Apply(&d.res)
		d.ev.Terminal()
	}
}

// completed handles item.completed.
func (d *decoder) completed(it *item) {
	if it == nil {
		return
	}
	switch it.Type {
	case "agent_message":
		if it.Text == "" {
			return
		}
		d.ev.Text(it.Text)
		d.last = it.Text
	default:
		if d.started[it.ID] {
			delete(d.started, it.ID)
			return
		}
		d.tool(it) // a tool item that never said it started
	}
}

// tool reports a tool item to ev.Tool; it returns false for items that are
// not tools (messages, reasoning, warnings).
func (d *decoder) tool(it *item) bool {
	switch it.Type {
	case "command_execution":
		d.ev.Tool("shell", agent.OneLine(unwrapShell(it.Command), agent.MaxSummary))
	case "file_change":
		var paths []string
		for _, c := range it.Changes {
			paths = append(paths, c.Path)
		}
		d.ev.Tool("edit", agent.OneLine(strings.Join(paths, " "), agent.MaxSummary))
	case "mcp_tool_call":
		d.ev.Tool("mcp", agent.OneLine(it.Server+"/"+it.Tool, agent.MaxSummary))
	case "web_search":
		d.ev.Tool("web_search", agent.OneLine(it.Query, agent.MaxSummary))
	default:
		return false
	}
	return true
}

func (d *decoder) finish() agent.Result {
	r := d.res
	r.Text = agent.Tail(d.last, agent.MaxText)
	if !r.SawResult && d.lastErr != "" {
		agent.AddError(&r.Errors, d.lastErr)
		agent.ClassifyError(0, d.lastErr).Apply(&r)
	}
	if r.Class == agent.ClassAuth && r.Fatal == "" {
		r.Fatal = authFatal
	}
	return r
}

// errorMessage returns turn.failed's error.message (or the raw error).
func errorMessage(raw json.RawMessage) string {
	var e struct {
		Message string `json:"message"`
	}
	if json.Unmarshal(raw, &e) == nil && e.Message != "" {
		return e.Message
	}
	if s := agent.RawString(raw); s != "" {
		return s
	}
	if len(raw) > 0 && string(raw) != "null" {
		return agent.Head(string(raw), agent.MaxErrorLen)
	}
	return "turn failed"
}

// unwrapShell returns the script of codex's `/bin/bash -lc '…'` wrapper, or
// command as it is.
func unwrapShell(command string) string {
	for _, prefix := range []string{"/bin/bash -lc ", "bash -lc ", "/bin/sh -c ", "sh -c ", "/bin/zsh -lc ", "zsh -lc "} {
		rest, ok := strings.CutPrefix(command, prefix)
		if !ok || len(rest) < 2 {
			continue
		}
		switch q := rest[0]; {
		case q == '\'' && rest[len(rest)-1] == '\'':
			return strings.ReplaceAll(rest[1:len(rest)-1], `'\''`, "'")
		case q == '"' && rest[len(rest)-1] == '"':
			return unescapeDouble(rest[1 : len(rest)-1])
		}
		return rest
	}
	return command
}

// unescapeDouble undoes a shell's double-quote escapes (\\, \", \$, \`).
func unescapeDouble(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) && strings.IndexByte("\\\"$`", s[i+1]) >= 0 {
			i++
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// Reports: codex reports tokens only (turn.completed.usage).
func (Codex) Reports() (cost, tokens bool) { return false, true }
