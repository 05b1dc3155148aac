// Package qwen drives Qwen Code (`qwen`, npm @qwen-code/qwen-code).
// docs/AGENTS.md ("Qwen Code") sums it up: the driver follows Qwen Code 0.24.4's
// own output, recorded here against a scripted model on loopback
// (internal/agent/testdata/qwen-*, made with testdata/record).
//
// Qwen prints Claude Code's stream-json, so it decodes with package claude's
// DecodeStream (a Flavor whose input tokens already count the cache reads)
// rather than a copy of it; the outcome comes from the result line only. It
// imports nothing of this module but internal/agent and internal/agent/claude.
package qwen

import (
	"io"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/git-ralph/git-ralph/internal/agent"
	"github.com/git-ralph/git-ralph/internal/agent/claude"
)

// Qwen drives Qwen Code (`qwen`, npm @qwen-code/qwen-code) headlessly
// (docs/AGENTS.md, "Qwen Code"):
//
//	qwen -o stream-json --yolo [-m M] [args…] < prompt
//
// Its stream is Claude Code's stream-json, read by claude.DecodeStream with two
// differences: usage.input_tokens already counts the cache reads, and an error result
// carries error.message. The result's usage includes the call of Qwen's background memory
// helper: the same process and attempt. Without authentication it prints an error result
// ("No auth type is selected") and exits 1: Result.Fatal.
type Qwen struct{}

var _ agent.Diagnoser = Qwen{}

// Name returns "qwen".
func (Qwen) Name() string { return "qwen" }

// Binary returns "qwen".
func (Qwen) Binary() string { return "qwen" }

// State is what Qwen Code writes outside the working tree (docs/SANDBOX.md, "Each agent's state"; tried with
// 0.24.4): ~/.qwen, and the pseudo-terminal of its shell tool (node-pty's forkpty
// fails without /dev/ptmx's ioctl, and every story then fails).
func (Qwen) State(env []string) agent.State {
	return agent.State{Dirs: []string{agent.InHome(env, ".qwen")}, PTY: true}
}

// Guarded are Qwen Code's files in ~/.qwen that its next session reads: its settings
// (MCP servers, hooks), its memory, its .env and its trusted folders; Run puts back
// what the agent changed of them.
func (Qwen) Guarded(env []string) []string {
	dir := agent.InHome(env, ".qwen")
	if dir == "" {
		return nil
	}
	var out []string
	for _, n := range []string{"settings.json", "QWEN.md", ".env", "trustedFolders.json"} {
		out = append(out, filepath.Join(dir, n))
	}
	return out
}

// InstallHint tells how to install Qwen Code.
func (Qwen) InstallHint() string {
	return "install Qwen Code with 'npm install -g @qwen-code/qwen-code' (it asks for node 22 or later), " +
		"then set OPENAI_API_KEY, OPENAI_BASE_URL and OPENAI_MODEL for an OpenAI-compatible endpoint (or configure ~/.qwen/settings.json)"
}

// Argv returns qwen's headless argv; the prompt goes on stdin.
func (Qwen) Argv(req agent.Request) []string {
	argv := []string{"qwen", "-o", "stream-json", "--yolo"}
	if req.Model != "" {
		argv = append(argv, "-m", req.Model)
	}
	return append(argv, req.Args...)
}

// Fatal messages of the qwen driver.
const (
	noAuthFatal = "qwen has no authentication configured; set OPENAI_API_KEY, OPENAI_BASE_URL and OPENAI_MODEL " +
		"(any OpenAI-compatible endpoint), or select an auth type in ~/.qwen/settings.json"
	authFatal    = "qwen's model provider rejected its credentials; check OPENAI_API_KEY (or ~/.qwen/settings.json)"
	billingFatal = "qwen's model provider reported a billing problem; check the account's balance"
	modelFatal   = "qwen's model provider does not know the requested model; check ralph.model (or OPENAI_MODEL)"
	argsFatal    = "qwen rejected its command line; check ralph.agentArgs"
)

// Diagnose recognises the failures qwen reports on stderr alone: no
// authentication configured, a rejected command line.
func (Qwen) Diagnose(res *agent.Result) {
	if res.Fatal != "" || res.SawResult || res.Signal != "" {
		return
	}
	switch {
	case strings.Contains(res.Stderr, noAuth):
		res.Class, res.Fatal = agent.ClassAuth, noAuthFatal
	case strings.Contains(res.Stderr, "Unknown argument"):
		res.Fatal = argsFatal + ": " + agent.OneLine(lineWith(res.Stderr, "Unknown argument"), 200)
	case strings.Contains(res.Stderr, "Invalid values:"):
		res.Fatal = argsFatal + ": " + agent.OneLine(lineWith(res.Stderr, "Argument:"), 200)
	default:
		agent.DiagnoseStderr(res, authFatal)
	}
}

// Decode reads qwen's stream-json to the end, as claude.Claude.Decode does (the
// outcome from the result line only), counting input tokens as qwen does.
func (Qwen) Decode(r io.Reader, ev agent.Events) (agent.Result, error) {
	res, err := claude.DecodeStream(r, ev, claude.Flavor{
		AuthFatal: authFatal, BillingFatal: billingFatal, ModelFatal: modelFatal, InputHasCache: true,
	})
	if res.IsError && slices.ContainsFunc(res.Errors, func(e string) bool { return strings.Contains(e, noAuth) }) {
		res.Class, res.Fatal, res.RetryAfter, res.RetryAt = agent.ClassAuth, noAuthFatal, 0, time.Time{}
	}
	return res, err
}

// noAuth is how qwen says no authentication is configured (its result's
// error.message, or stderr in the text format).
const noAuth = "No auth type is selected"

// lineWith returns the first line of s that contains sub, trimmed; "" when
// none does. (yargs prints its usage around the error line.)
func lineWith(s, sub string) string {
	for line := range strings.Lines(s) {
		if strings.Contains(line, sub) {
			return strings.TrimSpace(line)
		}
	}
	return ""
}

// Reports: qwen reports tokens only (result.usage).
func (Qwen) Reports() (cost, tokens bool) { return false, true }
