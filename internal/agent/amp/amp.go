// Package amp drives Sourcegraph's Amp CLI (`amp -x --stream-json`), as
// docs/AGENTS.md, "Amp" describes it. Amp could not be run end to end where
// the reference was written: the synthetic-amp-* transcripts in
// internal/agent/testdata follow its documented schema.
//
// Amp prints Claude Code's stream-json, so it decodes with package claude's
// DecodeStream (a Flavor that sums the assistant messages' usage) rather than a
// copy of it. It must never start amp without an API key (Preflight): amp
// would wait for an interactive login forever. It imports nothing of this
// module but internal/agent and internal/agent/claude.
package amp

import (
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/git-ralph/git-ralph/internal/agent"
	"github.com/git-ralph/git-ralph/internal/agent/claude"
)

// Amp drives Sourcegraph's Amp CLI (`amp`) headlessly (docs/AGENTS.md, "Amp"):
//
//	amp --dangerously-allow-all -x --stream-json [--mode M] [args…] < prompt
//
// Amp has no model flag: Request.Model is passed as --mode. Without AMP_API_KEY (or a
// key `amp login` stored) it would wait for an interactive login forever, so Preflight
// refuses to start it. Its stream is Claude Code's subset, decoded by claude.DecodeStream;
// tokens are summed from the assistant messages.
type Amp struct{}

var (
	_ agent.Diagnoser   = Amp{}
	_ agent.Preflighter = Amp{}
)

// Name returns "amp".
func (Amp) Name() string { return "amp" }

// Binary returns "amp".
func (Amp) Binary() string { return "amp" }

// State is what Amp writes outside the working tree, from its documentation (Amp
// could not be run here): its settings (~/.config/amp), its data, where `amp login`
// keeps the key (~/.local/share/amp), and its cache.
func (Amp) State(env []string) agent.State {
	return agent.State{Dirs: []string{
		agent.XDG(env, "XDG_CONFIG_HOME", "amp"), agent.XDG(env, "XDG_DATA_HOME", "amp"), agent.XDG(env, "XDG_CACHE_HOME", "amp"),
	}}
}

// Guarded are Amp's files in its configuration directory that its next session reads:
// its settings (MCP servers) and its rules; Run puts back what the agent changed of
// them.
func (Amp) Guarded(env []string) []string {
	dir := agent.XDG(env, "XDG_CONFIG_HOME", "amp")
	if dir == "" {
		return nil
	}
	return []string{filepath.Join(dir, "settings.json"), filepath.Join(dir, "AGENTS.md")}
}

// InstallHint tells how to install Amp.
func (Amp) InstallHint() string {
	return "install Amp with 'npm install -g @sourcegraph/amp' (or 'curl -fsSL https://ampcode.com/install.sh | bash'), " +
		"then set AMP_API_KEY to an access token from https://ampcode.com/settings"
}

// Argv returns amp's headless argv; the prompt goes on stdin.
func (Amp) Argv(req agent.Request) []string {
	argv := []string{"amp", "--dangerously-allow-all", "-x", "--stream-json"}
	if req.Model != "" {
		argv = append(argv, "--mode", req.Model)
	}
	return append(argv, req.Args...)
}

// Messages of the amp driver.
const (
	keyMissing = "needs AMP_API_KEY: without it amp starts an interactive login and waits forever"
	keyFix     = "create an access token at https://ampcode.com/settings and export AMP_API_KEY=<token> " +
		"(or run 'amp login' once), then run 'git ralph start' again"
	authFatal = "amp rejected its API key or is not logged in; set AMP_API_KEY to a valid access token from https://ampcode.com/settings"
	argsFatal = "amp rejected its command line; check ralph.agentArgs"
)

// Preflight refuses to start amp without an API key: AMP_API_KEY in env, or
// the key `amp login` stores in ~/.local/share/amp/secrets.json.
func (Amp) Preflight(_ agent.Request, env []string) error {
	if strings.TrimSpace(agent.EnvValue(env, "AMP_API_KEY")) != "" {
		return nil
	}
	var dirs []string
	if d := agent.EnvValue(env, "XDG_DATA_HOME"); d != "" {
		dirs = append(dirs, d)
	}
	if h := agent.EnvValue(env, "HOME"); h != "" {
		dirs = append(dirs, filepath.Join(h, ".local", "share"))
	}
	for _, d := range dirs {
		if fi, err := os.Stat(filepath.Join(d, "amp", "secrets.json")); err == nil && fi.Size() > 0 {
			return nil
		}
	}
	return &agent.PreflightError{Agent: "amp", Msg: keyMissing, Fix: keyFix}
}

// Diagnose recognises amp's start-up failures on stderr (docs/AGENTS.md,
// "Amp"): the login flow of a missing key (seen once a timeout killed
// it), an unreachable server, a rejected option.
func (Amp) Diagnose(res *agent.Result) {
	if res.Fatal != "" || res.SawResult {
		return
	}
	switch {
	case strings.Contains(res.Stderr, "No API key found"):
		res.Class, res.Fatal = agent.ClassAuth, "amp "+keyMissing+"; "+keyFix
	case strings.Contains(res.Stderr, "Couldn't connect to the Amp server"):
		if res.Class == agent.ClassNone {
			res.Class = agent.ClassTransient
		}
		agent.AddError(&res.Errors, agent.LastLines(res.Stderr, 1))
	case strings.Contains(res.Stderr, "error: unknown option"):
		res.Fatal = argsFatal + ": " + agent.OneLine(agent.FirstErrorLine(res.Stderr), 200)
	default:
		agent.DiagnoseStderr(res, authFatal)
	}
}

// Decode reads amp's Claude-Code-compatible stream-json to the end, as
// claude.Claude.Decode does (the outcome from the result line only), with the
// error string of error results as the error, and tokens summed from the
// assistant messages when the result has no usage.
func (Amp) Decode(r io.Reader, ev agent.Events) (agent.Result, error) {
	return claude.DecodeStream(r, ev, claude.Flavor{
		AuthFatal: authFatal, BillingFatal: billingFatal, ModelFatal: modelFatal, SumUsage: true,
	})
}

const (
	billingFatal = "amp reported a billing problem; check the account's credits at https://ampcode.com/settings"
	modelFatal   = "amp does not know the requested mode or model; check ralph.model"
)

// Reports: amp reports tokens only (the assistant messages' usage).
func (Amp) Reports() (cost, tokens bool) { return false, true }
