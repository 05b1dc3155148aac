// Package copilot drives GitHub Copilot CLI (`copilot`, npm @github/copilot).
// docs/AGENTS.md ("GitHub Copilot CLI") sums it up: the driver follows Copilot CLI
// 1.0.102's own output, recorded here against a scripted model on loopback
// (internal/agent/testdata/copilot-*, made with testdata/record).
//
// It builds the argv and reads the JSON events; agent.Run starts the process
// and hands it the --usage-output-file (agent.OutputFiler). The outcome comes
// from the result line and the session.error before it only. It must not keep
// git-ralph's GitHub tokens for the agent (agent.SecretEnv): its hints ask for
// COPILOT_GITHUB_TOKEN instead. It imports nothing of this module but
// internal/agent.
package copilot

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"path/filepath"
	"strings"

	"github.com/git-ralph/git-ralph/internal/agent"
)

// Copilot drives GitHub Copilot CLI (`copilot`, npm @github/copilot) headlessly
// (docs/AGENTS.md, "GitHub Copilot CLI"):
//
//	copilot --output-format json --allow-all-tools [--model M] --usage-output-file FILE [args…] < prompt
//
// The last event is a "result" with the exit code and the premium requests; ephemeral
// events are skipped. The tokens come from FILE, written when the session ends. The user's
// own provider (COPILOT_PROVIDER_BASE_URL) passes through.
type Copilot struct{}

var (
	_ agent.Diagnoser   = Copilot{}
	_ agent.Preflighter = Copilot{}
	_ agent.OutputFiler = Copilot{}
)

// Preflight refuses a custom provider (COPILOT_PROVIDER_BASE_URL) without a
// model: copilot would refuse every attempt ("BYOK providers require an
// explicit model"). The model may come from --model, COPILOT_MODEL,
// COPILOT_PROVIDER_MODEL_ID or ralph.agentArgs.
func (Copilot) Preflight(req agent.Request, env []string) error {
	if agent.EnvValue(env, "COPILOT_PROVIDER_BASE_URL") == "" || req.Model != "" ||
		agent.EnvValue(env, "COPILOT_MODEL") != "" || agent.EnvValue(env, "COPILOT_PROVIDER_MODEL_ID") != "" {
		return nil
	}
	for _, a := range req.Args {
		if a == "--model" || strings.HasPrefix(a, "--model=") {
			return nil
		}
	}
	return &agent.PreflightError{Agent: "copilot", Msg: "a custom provider (COPILOT_PROVIDER_BASE_URL) needs a model, and none is set",
		Fix: "give one with --model M (or 'git config ralph.model M', or COPILOT_MODEL)"}
}

// Name returns "copilot".
func (Copilot) Name() string { return "copilot" }

// Binary returns "copilot".
func (Copilot) Binary() string { return "copilot" }

// State is what GitHub Copilot CLI writes outside the working tree (docs/SANDBOX.md, "Each agent's state"; tried
// with 1.0.102): ~/.copilot, and the cache where it unpacks a bundled package
// ("EACCES: mkdir ~/.cache" without it). Its --usage-output-file, which it replaces by
// a rename, is in the attempt's own directory.
func (Copilot) State(env []string) agent.State {
	return agent.State{Dirs: []string{agent.InHome(env, ".copilot"), agent.XDG(env, "XDG_CACHE_HOME")}}
}

// Guarded are Copilot CLI's files in ~/.copilot that its next session reads: its
// config and its MCP servers; Run puts back what the agent changed of them.
func (Copilot) Guarded(env []string) []string {
	dir := agent.InHome(env, ".copilot")
	if dir == "" {
		return nil
	}
	return []string{filepath.Join(dir, "config.json"), filepath.Join(dir, "mcp-config.json")}
}

// InstallHint tells how to install Copilot CLI.
func (Copilot) InstallHint() string {
	return "install GitHub Copilot CLI with 'npm install -g @github/copilot', then set COPILOT_GITHUB_TOKEN " +
		"(or run 'copilot login'), or point COPILOT_PROVIDER_BASE_URL at your own model provider"
}

// Argv returns copilot's headless argv; the prompt goes on stdin.
func (Copilot) Argv(req agent.Request) []string {
	argv := []string{"copilot", "--output-format", "json", "--allow-all-tools"}
	if req.Model != "" {
		argv = append(argv, "--model", req.Model)
	}
	argv = append(argv, "--usage-output-file", req.OutputFileArg())
	return append(argv, req.Args...)
}

// Fatal messages of the copilot driver.
const (
	loginFatal = "copilot found no credentials; set COPILOT_GITHUB_TOKEN to a token with the Copilot Requests permission " +
		"(git-ralph passes GH_TOKEN and GITHUB_TOKEN to no agent), run 'copilot login' once, " +
		"or use your own model provider with COPILOT_PROVIDER_BASE_URL"
	authFatal = "copilot's credentials were rejected; check COPILOT_GITHUB_TOKEN (or 'copilot login'), " +
		"or for your own model provider COPILOT_PROVIDER_API_KEY"
	modelFatal = "copilot needs a model with a custom provider; set --model or ralph.model (or COPILOT_MODEL)"
	argsFatal  = "copilot rejected its command line; check ralph.agentArgs"
)

// Diagnose recognises the failures copilot reports on stderr alone: no
// credentials, a custom provider without a model, a rejected command line.
func (Copilot) Diagnose(res *agent.Result) {
	if res.Fatal != "" || res.SawResult || res.Signal != "" {
		return
	}
	switch {
	case strings.Contains(res.Stderr, "No authentication information found"):
		res.Class, res.Fatal = agent.ClassAuth, loginFatal
	case strings.Contains(res.Stderr, "require an explicit model"):
		res.Fatal = modelFatal
	case strings.Contains(res.Stderr, "error: unexpected argument"), strings.Contains(res.Stderr, "error: invalid value"):
		res.Fatal = argsFatal + ": " + agent.OneLine(agent.FirstErrorLine(res.Stderr), 200)
	default:
		agent.DiagnoseStderr(res, authFatal)
	}
}

// maxUsageFile bounds what is read of the usage file.
const maxUsageFile = 1 << 20

// usageFile is the part of --usage-output-file that git-ralph reads.
type usageFile struct {
	ModelMetrics map[string]struct {
		Usage struct {
			InputTokens  int64 `json:"inputTokens"`
			OutputTokens int64 `json:"outputTokens"`
		} `json:"usage"`
	} `json:"modelMetrics"`
	CurrentModel string `json:"currentModel"`
}

// ReadOutputFile reads the tokens from the usage file, summed over the
// models (the session's own requests and its helpers'). A missing, empty,
// oversized or garbled file leaves the tokens at 0.
func (Copilot) ReadOutputFile(res *agent.Result, path string) {
	f, err := agent.OpenOutput(path) // a regular file, never through a symlink
	if err != nil {
		return
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxUsageFile+1))
	if err != nil || len(data) > maxUsageFile {
		return
	}
	var u usageFile
	if json.Unmarshal(data, &u) != nil {
		return
	}
	var in, out int64
	for _, m := range u.ModelMetrics {
		in += max(m.Usage.InputTokens, 0)
		out += max(m.Usage.OutputTokens, 0)
	}
	res.InputTokens, res.OutputTokens = in, out
	if res.Model == "" {
		res.Model = u.CurrentModel
	}
}

// event is one line of `copilot --output-format json`.
type event struct {
	Type      string     `json:"type"`
	Data      *eventData `json:"data"`
	SessionID string     `json:"sessionId"` // result
	ExitCode  *int       `json:"exitCode"`  // result
	Usage     *struct {
		PremiumRequests agent.OptFloat `json:"premiumRequests"`
	} `json:"usage"` // result
}

type eventData struct {
	// assistant.message
	Content          string `json:"content"`
	Model            string `json:"model"`
	ParentToolCallID string `json:"parentToolCallId"`
	// tool.execution_start
	ToolName  string     `json:"toolName"`
	Arguments *toolInput `json:"arguments"`
	// session.error, model.call_failure
	ErrorType    string         `json:"errorType"`
	Message      string         `json:"message"`
	ErrorMessage string         `json:"errorMessage"`
	StatusCode   agent.OptFloat `json:"statusCode"`
}

// toolInput holds the tool arguments a summary can be made of.
type toolInput struct {
	Command     string `json:"command"`
	Path        string `json:"path"`
	Pattern     string `json:"pattern"`
	URL         string `json:"url"`
	Query       string `json:"query"`
	Description string `json:"description"`
	Prompt      string `json:"prompt"`
}

// Decode reads copilot's JSON events to the end. Whole assistant messages go
// to ev.Text and tool.execution_start to ev.Tool; the final text is the last
// main-agent assistant.message's content; the outcome comes from the result
// line (exitCode) and the session.error before it, classified by its status
// code and message. Tokens come from the usage file (readOutputFile).
func (Copilot) Decode(r io.Reader, ev agent.Events) (agent.Result, error) {
	if ev == nil {
		ev = agent.NopEvents{}
	}
	d := decoder{ev: ev}
	err := agent.EachLine(r, d.line)
	return d.finish(), err
}

// decoder is the state of one Copilot.Decode.
type decoder struct {
	ev       agent.Events
	res      agent.Result
	last     string // the last main-agent assistant message
	model    string
	errText  string // the last session.error's message
	errType  string
	errCode  int
	failText string // the last model.call_failure, while no message followed it
	failCode int
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
	data := e.Data
	if data == nil {
		data = &eventData{}
	}
	switch e.Type {
	case "session.tools_updated", "model.call_start":
		if d.model == "" {
			d.model = data.Model
		}
	case "assistant.message":
		d.failText, d.failCode = "", 0
		if d.model == "" {
			d.model = data.Model
		}
		if data.Content != "" {
			d.ev.Text(data.Content)
		}
		if data.ParentToolCallID == "" {
			d.last = data.Content
		}
	case "tool.execution_start":
		d.ev.Tool(data.ToolName, toolSummary(data.ToolName, data.Arguments))
	case "model.call_failure":
		d.failText = agent.Head(strings.TrimSpace(data.ErrorMessage), agent.MaxErrorLen)
		d.failCode = int(data.StatusCode.Value)
	case "session.error":
		d.errText = agent.Head(strings.TrimSpace(data.Message), agent.MaxErrorLen)
		d.errType = data.ErrorType
		d.errCode = int(data.StatusCode.Value)
	case "result":
		d.result(&e)
		d.ev.Terminal()
	}
}

func (d *decoder) result(e *event) {
	r := &d.res
	r.SawResult = true
	r.SessionID = agent.FirstNonEmpty(e.SessionID, r.SessionID)
	code := 0
	if e.ExitCode != nil {
		code = *e.ExitCode
	}
	if e.Usage != nil && e.Usage.PremiumRequests.Valid {
		r.PremiumRequests = e.Usage.PremiumRequests.Value
	}
	r.IsError = code != 0 || d.errText != ""
	r.Subtype = d.errType
	if r.IsError && r.Subtype == "" {
		r.Subtype = "error"
	}
}

func (d *decoder) finish() agent.Result {
	r := d.res
	r.Text = agent.Tail(d.last, agent.MaxText)
	r.Model = d.model
	msg, code := d.errText, d.errCode
	if msg == "" && (r.IsError || !r.SawResult) {
		msg, code = d.failText, d.failCode
	}
	if msg == "" {
		if r.IsError {
			agent.AddError(&r.Errors, "copilot exited with an error")
		}
		return r
	}
	if r.SawResult && !r.IsError {
		return r
	}
	agent.AddError(&r.Errors, msg)
	f := agent.Failure{Class: agent.ClassOfStatus(code)}
	if f.Class == agent.ClassNone {
		f = agent.ClassifyError(0, d.errType+": "+msg)
	} else {
		f.After, f.At = agent.RetryHint(msg)
	}
	if f.Class == agent.ClassNone {
		switch d.errType {
		case "authentication":
			f.Class = agent.ClassAuth
		case "rate_limit":
			f.Class = agent.ClassLimit
		}
	}
	f.Apply(&r)
	if r.Class == agent.ClassAuth && r.Fatal == "" {
		r.Fatal = authFatal
	}
	return r
}

// toolSummary describes a copilot tool call in one short line: the
// command for bash, the path for view/create/edit, the pattern for
// grep/glob, …
func toolSummary(name string, in *toolInput) string {
	if in == nil {
		return ""
	}
	var s string
	switch name {
	case "bash":
		s = in.Command
	case "view", "create", "edit":
		s = in.Path
	case "grep", "glob":
		s = in.Pattern
		if in.Path != "" {
			s += " in " + in.Path
		}
	}
	if s == "" {
		s = agent.FirstNonEmpty(in.Command, in.Path, in.Pattern, in.URL, in.Query, in.Description, in.Prompt)
	}
	return agent.OneLine(s, agent.MaxSummary)
}

// Reports: copilot reports tokens (its usage file) and premium requests, no
// dollars.
func (Copilot) Reports() (cost, tokens bool) { return false, true }
