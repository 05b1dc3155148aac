// Package claude drives Claude Code (`claude`), as docs/AGENTS.md, "Claude Code"
// describes it, and holds the one decoder of its stream-json: Claude is the
// driver, and DecodeStream, given a Flavor, reads the same stream for the agents
// that print it (package amp, package qwen, and package custom's
// claude-stream-json format), so that format is decoded in one place.
//
// Like every driver it builds an argv and reads output; it never starts a
// process (agent.Run does) and keeps no state between runs. The outcome comes
// from the result line and the error-carrying assistant message before it only,
// never from text elsewhere in the transcript: tool results hold file contents
// that can say anything. It imports nothing of this module but internal/agent.
package claude

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

// Claude drives Claude Code (`claude`) headlessly (docs/AGENTS.md, "Claude Code"):
//
//	claude -p --output-format stream-json --verbose --dangerously-skip-permissions [--model M] [args…] < prompt
//
// Only the result line decides the outcome; claude prints none when it is killed or
// interrupted. As root it refuses the skip flag unless IS_SANDBOX=1, which Diagnose turns
// into Result.Fatal.
type Claude struct{}

var _ agent.Diagnoser = Claude{}

// Name returns "claude".
func (Claude) Name() string { return "claude" }

// Binary returns "claude".
func (Claude) Binary() string { return "claude" }

// State is what Claude Code writes outside the working tree (docs/SANDBOX.md, "Each agent's state"; tried with
// 2.1.328): its directory (~/.claude, or CLAUDE_CONFIG_DIR, which then also holds
// .claude.json) and ~/.claude.json, created as {} when missing.
func (Claude) State(env []string) agent.State {
	if dir := agent.EnvValue(env, "CLAUDE_CONFIG_DIR"); filepath.IsAbs(dir) {
		return agent.State{Dirs: []string{dir}}
	}
	return agent.State{
		Dirs:  []string{agent.InHome(env, ".claude")},
		Files: []agent.StateFile{{Path: agent.InHome(env, ".claude.json"), Initial: "{}"}},
	}
}

// OwnState is Claude Code's configuration of its own for a sandboxed attempt
// (CLAUDE_CONFIG_DIR): the user's login (.credentials.json), settings, memory
// file and .claude.json, from CLAUDE_CONFIG_DIR when set, else ~/.claude and
// ~/.claude.json.
func (Claude) OwnState(env []string) agent.OwnState {
	dir, top := agent.InHome(env, ".claude"), agent.InHome(env, ".claude.json")
	if d := agent.EnvValue(env, "CLAUDE_CONFIG_DIR"); filepath.IsAbs(d) {
		dir, top = d, filepath.Join(d, ".claude.json")
	}
	var files []agent.OwnFile
	for _, name := range []string{".credentials.json", "settings.json", "CLAUDE.md"} {
		if dir != "" {
			files = append(files, agent.OwnFile{From: filepath.Join(dir, name), Name: name})
		}
	}
	return agent.OwnState{Var: "CLAUDE_CONFIG_DIR", Files: append(files, agent.OwnFile{From: top, Name: ".claude.json"})}
}

// InstallHint tells how to install Claude Code.
func (Claude) InstallHint() string {
	return "install Claude Code with 'npm install -g @anthropic-ai/claude-code' " +
		"(or 'curl -fsSL https://claude.ai/install.sh | bash'), then run 'claude' once to log in"
}

// Argv returns claude's headless argv; the prompt goes on stdin.
func (Claude) Argv(req agent.Request) []string {
	argv := []string{"claude", "-p", "--output-format", "stream-json", "--verbose", "--dangerously-skip-permissions"}
	if req.Model != "" {
		argv = append(argv, "--model", req.Model)
	}
	return append(argv, req.Args...)
}

// Fatal messages of the claude driver.
const (
	rootFatal = "claude refuses --dangerously-skip-permissions when run as root; " +
		"set IS_SANDBOX=1 in the environment if this is a throwaway sandbox or container, or run git-ralph as a non-root user"
	authFatal    = "claude is not logged in or its credentials were rejected; run 'claude' once and log in (or set ANTHROPIC_API_KEY)"
	billingFatal = "claude reported a billing error; check the account's plan or credit balance"
	modelFatal   = "claude does not know the requested model; check the model setting"
	argsFatal    = "claude rejected its command line; check ralph.agentArgs"
)

// Diagnose recognises failures that only show on stderr: the root refusal and
// a rejected command line (docs/AGENTS.md, "Claude Code").
func (Claude) Diagnose(res *agent.Result) {
	if res.Fatal != "" || res.SawResult {
		return
	}
	switch {
	case strings.Contains(res.Stderr, "cannot be used with root/sudo privileges"):
		res.Fatal = rootFatal
	case strings.Contains(res.Stderr, "error: unknown option"),
		strings.Contains(res.Stderr, "requires --verbose"):
		res.Fatal = argsFatal + ": " + agent.OneLine(agent.FirstErrorLine(res.Stderr), 200)
	}
}

// event is one line of the stream. Only the fields git-ralph uses are
// decoded; everything else (tool results, stream_event deltas, modelUsage) is
// skipped by the JSON decoder without being stored.
type event struct {
	Type            string          `json:"type"`
	Subtype         string          `json:"subtype"`
	SessionID       string          `json:"session_id"`
	Model           string          `json:"model"` // system/init
	ParentToolUseID *string         `json:"parent_tool_use_id"`
	Message         *message        `json:"message"` // assistant
	Error           json.RawMessage `json:"error"`   // assistant: "authentication_failed", …

	// result
	IsError           bool           `json:"is_error"`
	APIErrorStatus    agent.OptFloat `json:"api_error_status"`
	Result            *string        `json:"result"` // absent on error_* subtypes
	Errors            []string       `json:"errors"`
	NumTurns          int            `json:"num_turns"`
	TotalCostUSD      agent.OptFloat `json:"total_cost_usd"`
	Usage             *usage         `json:"usage"`
	PermissionDenials []denial       `json:"permission_denials"`
}

type message struct {
	ID      string  `json:"id"`
	Model   string  `json:"model"`
	Content []block `json:"content"`
	Usage   *usage  `json:"usage"`
}

type block struct {
	Type  string     `json:"type"` // text, tool_use, thinking, tool_result
	Text  string     `json:"text"`
	Name  string     `json:"name"`
	Input *toolInput `json:"input"`
}

// toolInput holds the tool input fields a summary can be made of; the
// big ones (a Write's content) are not decoded.
type toolInput struct {
	Command      string `json:"command"`
	Cmd          string `json:"cmd"` // amp's Bash
	FilePath     string `json:"file_path"`
	NotebookPath string `json:"notebook_path"`
	Path         string `json:"path"`
	Pattern      string `json:"pattern"`
	URL          string `json:"url"`
	Query        string `json:"query"`
	Description  string `json:"description"`
	Skill        string `json:"skill"`
}

type usage struct {
	InputTokens              int64 `json:"input_tokens"`
	OutputTokens             int64 `json:"output_tokens"`
	CacheCreationInputTokens int64 `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     int64 `json:"cache_read_input_tokens"`
}

type denial struct {
	ToolName  string     `json:"tool_name"`
	ToolInput *toolInput `json:"tool_input"`
}

// Decode reads claude's stream-json output to the end. Assistant text blocks
// go to ev.Text and tool_use blocks to ev.Tool as they arrive (subagents'
// included); the outcome fields come from the last result line only, so text
// echoed in tool results or earlier messages never counts. Lines that are not
// JSON, are cut short, or are longer than 8 MiB are skipped.
func (Claude) Decode(r io.Reader, ev agent.Events) (agent.Result, error) {
	return DecodeStream(r, ev, Flavor{
		AuthFatal: authFatal, BillingFatal: billingFatal, ModelFatal: modelFatal,
	})
}

// Flavor is what differs between the agents that print Claude Code's
// stream-json: Claude Code itself, Amp (docs/AGENTS.md, "Amp") and a custom agent speaking it.
type Flavor struct {
	// AuthFatal, BillingFatal and ModelFatal are the Result.Fatal sentences.
	AuthFatal, BillingFatal, ModelFatal string
	// SumUsage: the result line carries no usage (amp), so the assistant
	// messages' usage is summed instead.
	SumUsage bool
	// InputHasCache: input_tokens already counts the cache reads and writes
	// (qwen reports OpenAI's prompt_tokens there), so they are not added.
	InputHasCache bool
}

// DecodeStream decodes a Claude-Code-shaped stream; see Claude.Decode. Amp, Qwen
// and a custom agent's claude-stream-json format decode with it, each with its own Flavor.
func DecodeStream(r io.Reader, ev agent.Events, fl Flavor) (agent.Result, error) {
	if ev == nil {
		ev = agent.NopEvents{}
	}
	d := decoder{ev: ev, fl: fl, last: agent.TextTail{Max: agent.MaxText}}
	err := agent.EachLine(r, d.line)
	return d.finish(), err
}

// decoder is the state of one Decode.
type decoder struct {
	ev  agent.Events
	fl  Flavor
	res agent.Result

	// the assistant messages' usage, summed (Flavor.SumUsage)
	usageID           string
	usageIn, usageOut int64
	resultUsage       bool

	initModel, firstModel, session string

	lastID string         // message.id of the last main-agent assistant message
	last   agent.TextTail // its text blocks

	apiErrCode, apiErrText string // the last assistant message carrying an error
}

func (d *decoder) line(line []byte) {
	line = bytes.TrimSpace(line)
	if len(line) == 0 || line[0] != '{' {
		return // a warning, a hook's chatter, …: it is in the log, that is all
	}
	var e event
	if err := json.Unmarshal(line, &e); err != nil {
		// A field of an unexpected type leaves the others decoded; anything
		// else (a truncated or garbled line) is skipped.
		var typeErr *json.UnmarshalTypeError
		if !errors.As(err, &typeErr) {
			return
		}
	}
	if d.session == "" && e.SessionID != "" {
		d.session = e.SessionID
	}
	switch e.Type {
	case "system":
		if e.Subtype == "init" && e.Model != "" {
			d.initModel = e.Model
		}
	case "assistant":
		d.assistant(&e)
	case "result":
		d.result(&e)
		d.ev.Terminal()
	}
}

func (d *decoder) assistant(e *event) {
	m := e.Message
	if m == nil {
		return
	}
	main := e.ParentToolUseID == nil || *e.ParentToolUseID == ""
	if main && (m.ID == "" || m.ID != d.lastID) {
		d.lastID = m.ID
		d.last.Reset()
	}
	if d.firstModel == "" && m.Model != "" && m.Model != "<synthetic>" {
		d.firstModel = m.Model
	}
	if d.fl.SumUsage && main && m.Usage != nil && (m.ID == "" || m.ID != d.usageID) {
		d.usageID = m.ID
		d.usageIn += d.inputTokens(m.Usage)
		d.usageOut += m.Usage.OutputTokens
	}
	var text strings.Builder
	for _, b := range m.Content {
		switch b.Type {
		case "text":
			if b.Text == "" {
				continue
			}
			d.ev.Text(b.Text)
			if main {
				d.last.Add(b.Text)
				if text.Len() < agent.MaxErrorLen {
					text.WriteString(b.Text)
				}
			}
		case "tool_use":
			d.ev.Tool(b.Name, toolSummary(b.Name, b.Input))
		}
	}
	if code := agent.RawString(e.Error); code != "" && main {
		d.apiErrCode = code
		d.apiErrText = agent.Head(strings.TrimSpace(text.String()), agent.MaxErrorLen)
		if d.apiErrText == "" {
			d.apiErrText = "API error: " + code
		}
	} else if main {
		// Only the last message counts: an error the agent got past is no
		// verdict on the run.
		d.apiErrCode, d.apiErrText = "", ""
	}
}

func (d *decoder) result(e *event) {
	r := &d.res
	r.SawResult = true
	r.Subtype = e.Subtype
	r.IsError = e.IsError || strings.HasPrefix(e.Subtype, "error")
	if e.Result != nil {
		r.Text = agent.Tail(*e.Result, agent.MaxText)
	} else {
		r.Text = d.last.String()
	}
	r.Errors = nil
	for _, s := range e.Errors {
		agent.AddError(&r.Errors, s)
	}
	if r.IsError && len(r.Errors) == 0 {
		switch {
		case errorText(e.Error) != "": // amp: an error string in place of result; qwen: error.message
			agent.AddError(&r.Errors, errorText(e.Error))
		case e.Result != nil && strings.TrimSpace(*e.Result) != "":
			agent.AddError(&r.Errors, *e.Result)
		case d.apiErrText != "":
			agent.AddError(&r.Errors, d.apiErrText)
		}
	}
	r.Turns = e.NumTurns
	r.CostUSD = nil
	if e.TotalCostUSD.Valid {
		c := e.TotalCostUSD.Value
		r.CostUSD = &c
	}
	r.InputTokens, r.OutputTokens = 0, 0
	d.resultUsage = e.Usage != nil
	if u := e.Usage; u != nil {
		r.InputTokens = d.inputTokens(u)
		r.OutputTokens = u.OutputTokens
	}
	if e.SessionID != "" {
		d.session = e.SessionID
	}
	r.Denials = nil
	for _, p := range e.PermissionDenials {
		if len(r.Denials) == agent.MaxErrors {
			break
		}
		s := agent.OneLine(p.ToolName, agent.MaxSummary)
		if sum := toolSummary(p.ToolName, p.ToolInput); sum != "" {
			s += ": " + sum
		}
		r.Denials = append(r.Denials, s)
	}
	r.Class, r.RetryAfter, r.RetryAt = agent.ClassNone, 0, time.Time{}
	if r.IsError {
		d.classify(e)
	}
}

// inputTokens counts u's input tokens, cache reads and writes included.
func (d *decoder) inputTokens(u *usage) int64 {
	if d.fl.InputHasCache {
		return u.InputTokens
	}
	return u.InputTokens + u.CacheCreationInputTokens + u.CacheReadInputTokens
}

// classify decides the failure class of an error result (e), or of a run
// that ended without one after an assistant message carrying an API error
// (e == nil). Only the result line and that message count: the HTTP status
// the result names, the assistant's error code, the error text.
func (d *decoder) classify(e *event) {
	r := &d.res
	status := 0
	var msg string
	if e != nil {
		if e.APIErrorStatus.Valid {
			status = int(e.APIErrorStatus.Value)
		}
		var parts []string
		if e.Result != nil {
			parts = append(parts, *e.Result)
		}
		parts = append(parts, errorText(e.Error))
		parts = append(parts, e.Errors...)
		msg = strings.Join(parts, "\n")
	}
	if d.apiErrText != "" {
		msg += "\n" + d.apiErrText
	}
	f := agent.Failure{Class: agent.ClassOfStatus(status)}
	if f.Class == agent.ClassNone {
		f.Class = classOfAPIErrorCode(d.apiErrCode)
	}
	if f.Class == agent.ClassNone {
		f = agent.ClassifyError(0, msg)
	} else {
		f.After, f.At = agent.RetryHint(msg)
	}
	f.Apply(r)
	if r.Fatal != "" {
		return
	}
	switch {
	case d.apiErrCode == "billing_error":
		r.Fatal = d.fl.BillingFatal
	case d.apiErrCode == "model_not_found":
		r.Fatal = d.fl.ModelFatal
	case r.Class == agent.ClassAuth:
		r.Fatal = d.fl.AuthFatal
	}
}

// classOfAPIErrorCode classifies the error code of a Claude Code assistant
// message (SDKAssistantMessageError, docs/AGENTS.md, "Claude Code").
func classOfAPIErrorCode(code string) agent.FailureClass {
	switch code {
	case "authentication_failed", "billing_error":
		return agent.ClassAuth
	case "rate_limit":
		return agent.ClassLimit
	case "overloaded", "server_error":
		return agent.ClassTransient
	}
	return agent.ClassNone
}

// finish completes the Result once the stream has ended.
func (d *decoder) finish() agent.Result {
	if !d.res.SawResult {
		d.res.Text = d.last.String()
		if d.apiErrText != "" {
			agent.AddError(&d.res.Errors, d.apiErrText)
		}
		if d.apiErrCode != "" {
			d.classify(nil)
		}
	}
	r := d.res
	if d.fl.SumUsage && !d.resultUsage {
		r.InputTokens, r.OutputTokens = d.usageIn, d.usageOut
	}
	r.SessionID = d.session
	r.Model = d.initModel
	if r.Model == "" {
		r.Model = d.firstModel
	}
	return r
}

// errorText returns a result's error: the JSON string in raw (amp), or the
// message of the object in raw (qwen: {"message": …}); "" otherwise.
func errorText(raw json.RawMessage) string {
	if s := agent.RawString(raw); s != "" {
		return s
	}
	var e struct {
		Message string `json:"message"`
	}
	if len(raw) > 0 && raw[0] == '{' && json.Unmarshal(raw, &e) == nil {
		return e.Message
	}
	return ""
}

// toolSummary describes a claude tool call in one short line: the command for
// Bash, the path for file tools, the pattern for searches, …
func toolSummary(name string, in *toolInput) string {
	if in == nil {
		return ""
	}
	var s string
	switch name {
	case "Bash":
		s = agent.FirstNonEmpty(in.Command, in.Cmd)
	case "Read", "Write", "Edit", "MultiEdit":
		s = in.FilePath
	case "NotebookEdit":
		s = agent.FirstNonEmpty(in.NotebookPath, in.FilePath)
	case "Glob", "Grep":
		s = in.Pattern
		if in.Path != "" {
			s += " in " + in.Path
		}
	case "WebFetch":
		s = in.URL
	case "WebSearch":
		s = in.Query
	case "Task", "Agent":
		s = in.Description
	case "Skill":
		s = in.Skill
	}
	if s == "" {
		s = agent.FirstNonEmpty(in.Command, in.Cmd, in.FilePath, in.NotebookPath, in.Path, in.Pattern, in.URL, in.Query, in.Description)
	}
	return agent.OneLine(s, agent.MaxSummary)
}

// Reports: claude reports both (result.total_cost_usd, result.usage).
func (Claude) Reports() (cost, tokens bool) { return true, true }
