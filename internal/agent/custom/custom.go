// Package custom drives an agent of the user's own: ralph.agentCommand, run as
// an argv, never through a shell, with the contract the manual's "Custom
// agents" section documents (internal/manual). Its output is plain text, or
// Claude Code's stream-json (docs/AGENTS.md, "Claude Code"), which it decodes with
// package claude's DecodeStream rather than a copy of it.
//
// The command comes only from flags and git config, through New or the
// Request (agents.Lookup("custom")); a plain-text agent's only terminal event
// is its clean exit. It imports nothing of this module but internal/agent and
// internal/agent/claude.
package custom

import (
	"bufio"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/git-ralph/git-ralph/internal/agent"
	"github.com/git-ralph/git-ralph/internal/agent/claude"
)

// The output formats of a custom agent (ralph.agentFormat).
const (
	// FormatText: plain text. The promise is looked for, on a line of its
	// own, in the last 64 KiB of stdout; a clean exit (status 0) is the
	// terminal event.
	FormatText = "text"
	// FormatClaudeStreamJSON: Claude Code's stream-json (docs/AGENTS.md,
	// "Claude Code"), decoded as for claude: the outcome comes from the
	// result line.
	FormatClaudeStreamJSON = "claude-stream-json"
)

// Custom drives an agent of the user's own: ralph.agentCommand, an argv run directly,
// never through a shell, under the contract of the manual's "Custom agents"
// (docs/AGENTS.md, "Custom agents"): with FormatText, a promise on a line of its own in the
// last 64 KiB counts only after exit status 0; with FormatClaudeStreamJSON the result line
// decides. New sets it up from git config; a Custom without Command (agents.Lookup("custom")) runs
// nothing: its Preflight says how to configure one.
type Custom struct {
	Command []string // argv: Command[0] is looked up on PATH unless it contains a slash
	Format  string   // FormatText ("" means the same) or FormatClaudeStreamJSON
}

var (
	_ agent.Diagnoser   = Custom{}
	_ agent.Preflighter = Custom{}
	_ agent.EnvAdder    = Custom{}
)

// New returns the custom driver for argv (ralph.agentCommand, split
// into words) and format (ralph.agentFormat; "" means FormatText). The error
// says what is wrong with them.
func New(argv []string, format string) (Custom, error) {
	c := Custom{Command: slices.Clone(argv), Format: format}
	if err := c.check(); err != nil {
		return Custom{}, err
	}
	return c, nil
}

// check validates the command and the format.
func (c Custom) check() error {
	switch c.Format {
	case "", FormatText, FormatClaudeStreamJSON:
	default:
		return &agent.PreflightError{Agent: "custom", Msg: fmt.Sprintf("unknown output format %q", c.Format),
			Fix: "set 'git config ralph.agentFormat' to " + FormatText + " or " + FormatClaudeStreamJSON}
	}
	if len(c.Command) == 0 || c.Command[0] == "" {
		return &agent.PreflightError{Agent: "custom", Msg: "no command configured", Fix: commandHint}
	}
	return nil
}

// commandHint tells how to configure a custom agent.
const commandHint = "set it with 'git config ralph.agentCommand \"path/to/agent --flag\"' " +
	"(split like a shell would, never run through one); see \"Custom agents\" in git ralph --help"

// Name returns "custom".
func (Custom) Name() string { return "custom" }

// Binary returns the command's first word, "" when there is no command.
func (c Custom) Binary() string {
	if len(c.Command) == 0 {
		return ""
	}
	return c.Command[0]
}

// InstallHint tells how to configure the command.
func (Custom) InstallHint() string { return commandHint }

// Argv returns the command with ralph.agentArgs appended.
func (c Custom) Argv(req agent.Request) []string {
	if len(c.Command) == 0 {
		return nil
	}
	return append(slices.Clone(c.Command), req.Args...)
}

// ExtraEnv passes the model, which a custom agent has no flag for.
func (Custom) ExtraEnv(req agent.Request) []string {
	if req.Model == "" {
		return nil
	}
	return []string{"RALPH_MODEL=" + req.Model}
}

// Preflight checks the command and the format.
func (c Custom) Preflight(agent.Request, []string) error { return c.check() }

// Fatal message of the custom driver.
const authFatal = "the custom agent reported an authentication failure; fix its credentials, then run 'git ralph start' again"

// Diagnose decides the outcome of a plain-text run: a clean exit is its
// terminal event. Failed runs of either format are classified by their last
// stderr lines.
func (c Custom) Diagnose(res *agent.Result) {
	if c.Format != FormatClaudeStreamJSON && res.ExitCode == 0 && res.Signal == "" &&
		!res.TimedOut && !res.Idle && !res.Interrupted {
		res.SawResult = true
	}
	if res.Fatal == "" {
		agent.DiagnoseStderr(res, authFatal)
	}
}

// Decode reads the agent's output: Claude Code's stream-json, or plain text
// whose lines go to ev.Text and whose last 64 KiB are the final text.
func (c Custom) Decode(r io.Reader, ev agent.Events) (agent.Result, error) {
	if c.Format == FormatClaudeStreamJSON {
		return claude.DecodeStream(r, ev, claude.Flavor{
			AuthFatal: authFatal, BillingFatal: billingFatal, ModelFatal: modelFatal,
		})
	}
	return decodeText(r, ev)
}

const (
	billingFatal = "the custom agent reported a billing error; check the account's plan or credit balance"
	modelFatal   = "the custom agent does not know the requested model; check ralph.model"
)

// maxShownLine bounds one line of plain text shown live.
const maxShownLine = 4 << 10

// decodeText reads plain text to the end: every non-empty line goes to
// ev.Text (cut at 4 KiB), the last 64 KiB are Result.Text. There is no
// terminal event in plain text: Diagnose decides SawResult from the exit.
func decodeText(r io.Reader, ev agent.Events) (agent.Result, error) {
	if ev == nil {
		ev = agent.NopEvents{}
	}
	br := bufio.NewReaderSize(r, agent.ReadBuf)
	out := agent.TailBuffer{Max: agent.MaxText}
	var line []byte
	long := false
	show := func() {
		if s := strings.TrimRight(strings.ToValidUTF8(string(line), "\uFFFD"), "\r\n"); strings.TrimSpace(s) != "" {
			if long {
				s += "…"
			}
			ev.Text(s)
		}
		line, long = line[:0], false
	}
	for {
		frag, err := br.ReadSlice('\n')
		_, _ = out.Write(frag)
		if room := maxShownLine - len(line); room > 0 {
			line = append(line, frag[:min(len(frag), room)]...)
			if len(frag) > room {
				long = true
			}
		} else if len(frag) > 0 {
			long = true
		}
		switch {
		case err == nil:
			show()
		case err == bufio.ErrBufferFull:
			continue
		default:
			show()
			if err == io.EOF {
				err = nil
			}
			return agent.Result{Text: agent.ValidTail(out.Bytes())}, err
		}
	}
}

// Reports: a custom agent speaking Claude Code's stream-json reports what
// its result lines carry (both, as far as git-ralph can know); a plain-text
// one reports neither.
func (c Custom) Reports() (cost, tokens bool) {
	if c.Format == FormatClaudeStreamJSON {
		return true, true
	}
	return false, false
}
