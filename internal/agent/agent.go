package agent

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/git-ralph/git-ralph/internal/sandbox"
)

// Sink receives what the agent does, live. Implementations must be cheap: they
// are called from the goroutine that reads the agent's output, and a slow Sink
// slows the agent down once the pipe buffer is full. Calls come from one
// goroutine. The strings are the agent's own words: they may contain terminal
// control sequences, so a Sink that prints them should sanitise them.
type Sink interface {
	// Text receives assistant text as it arrives: once per complete text
	// block or message (Claude Code's partial-message deltas are not
	// forwarded, Gemini's chunks are gathered), or per line of a plain-text
	// custom agent.
	Text(text string)
	// Tool receives a tool call: its name and a one-line summary of at most
	// about 120 characters (the Bash command, the file path, the pattern, …;
	// "" when there is nothing short to say).
	Tool(name, summary string)
}

// Events is what Driver.Decode reports to. Run implements it: it forwards Text
// and Tool to Request.Sink and notices Terminal.
type Events interface {
	Sink
	// Terminal is called when the terminal event (claude: the result line;
	// codex: turn.completed or turn.failed; opencode: the final step_finish or
	// an error) has been decoded. It may be called more than once; the first
	// call counts. A plain-text custom agent has none.
	Terminal()
}

// Request describes one run of an agent.
type Request struct {
	// Prompt is sent on stdin, never as an argument (one argv string is capped
	// at 128 KiB, docs/AGENTS.md, "Common to every agent"); stdin is closed after it.
	Prompt string
	// Dir is the working directory: the repository root. Required.
	Dir string
	// Env holds extra KEY=VALUE entries added to os.Environ() (the loop passes
	// RALPH_AGENT=1, RALPH_CHANGE, RALPH_STORY, RALPH_ATTEMPT). The variables
	// that pin git to a repository (pinningEnv) are removed from os.Environ()
	// first; an entry here overrides an inherited one.
	Env []string
	// KeepEnv names the secrets (see SecretEnv) the agent keeps
	// (--agent-env-keep, ralph.agentEnvKeep); every other one is removed from
	// its environment.
	KeepEnv []string
	// Model is passed to the agent's model flag; "" means the agent's default.
	Model string
	// Args are extra arguments (ralph.agentArgs), appended to the argv.
	Args []string
	// Log receives the agent's raw stdout byte for byte. Once the process has ended, Run
	// appends a trailer of "--- git-ralph: …" lines (never JSON, so the log still decodes):
	// the agent's stderr (its last 64 KiB) between "--- git-ralph: agent stderr ---" and
	// "--- git-ralph: end of agent stderr ---", then how it ended ("--- git-ralph: agent
	// exited with status 0 ---"). Nil means no log; a write error stops the log, never the agent.
	Log io.Writer
	// Sink receives the live text and tool calls; may be nil.
	Sink Sink
	// Timeout kills the attempt after this long (Result.TimedOut); 0 means none.
	Timeout time.Duration
	// IdleTimeout kills the attempt when the agent writes no byte, on stdout
	// or stderr, for this long (Result.Idle); 0 means none.
	IdleTimeout time.Duration
	// Grace is how long the process may take to exit after its terminal event
	// before its group is killed (agents are known to hang there; it is not a
	// failure, see Result.Lingered). 0 means 5s.
	Grace time.Duration
	// KillGrace is the time between the polite signal (SIGINT on
	// cancellation, SIGTERM on a timeout) and SIGKILL. Once the process has
	// exited and its group has been killed, it is also how long stdout and
	// stderr may stay open and silent before Run closes them (a descendant
	// that left the group can hold them open). 0 means 5s.
	KillGrace time.Duration
	// Kill, when closed (a second Ctrl-C), makes Run SIGKILL the group at once.
	Kill <-chan struct{}
	// Clock measures Timeout and IdleTimeout; nil is the wall clock. The test
	// binary passes one that moves only when a test says so, so that whether an
	// attempt timed out never depends on how fast the machine is. The graces,
	// which wait for processes to exit, are always wall-clock time.
	Clock Clock
	// OnStart, if set, is called right after the spawn with the pid (which is
	// also the process group id) and its start time (see ProcStart; 0 when
	// unknown), so the caller can record the process's identity (docs/LOOP.md, "Process identity").
	OnStart func(pid int, start uint64)
	// Note, if set, is told when Run waits long for what the agent left running to
	// end (sandbox.KillLeftovers).
	Note func(string)

	// OutputFile is the file the CLI writes what its stream lacks to (codex
	// --output-last-message: the final answer; copilot --usage-output-file:
	// the token counts); Run sets it to a file in the attempt's temporary directory
	// (see OutputFiler); callers leave it empty.
	OutputFile string

	// Sandbox, when set, is what the agent may do (internal/sandbox): Run starts it
	// with sandbox.Start under this policy plus the attempt's directory and the
	// driver's State. nil runs it unrestricted.
	Sandbox *sandbox.Policy
}

// OutputFilePlaceholder stands for the temporary file in an argv that Run
// did not make (git ralph start --dry-run).
const OutputFilePlaceholder = "<temporary file>"

// OutputFileArg is the output file for the argv: the one Run made, else the
// placeholder.
func (r Request) OutputFileArg() string {
	if r.OutputFile == "" {
		return OutputFilePlaceholder
	}
	return r.OutputFile
}

// Result is what one run of an agent came to. Decode fills in the fields that
// come from the agent's output; Run adds those about the process.
type Result struct {
	// Restored are the CLI's settings outside the working tree (Guarder) that the
	// agent changed and Run put back; NotRestored says why one could not be.
	Restored    []string
	NotRestored []string
	// Text is the final answer, as each driver's doc says (claude: result.result
	// when present, else the text of the last assistant message; codex: the
	// --output-last-message file; a custom text agent: its last 64 KiB of
	// stdout). It is bounded to its last 64 KiB.
	// Only a Text with SawResult set and IsError unset is a verdict; see Promise.
	Text string
	// SawResult reports that the terminal event was seen. Without it the run
	// crashed or was killed, whatever the exit code (docs/AGENTS.md, "Common to every agent").
	SawResult bool
	// IsError reports that the agent itself reported an error (claude:
	// is_error, which is set even when subtype is "success", or an error_*
	// subtype).
	IsError bool
	// Subtype is the terminal event's subtype (claude, amp, cursor: "success",
	// "error_max_turns", …; codex: "turn.failed" on failure; gemini: the
	// result's status; opencode: the last step's reason or the error's name).
	Subtype string
	// Errors holds what the agent said went wrong: claude's result.errors, the
	// result text of an is_error result, the API error text of a run that
	// ended without a result. At most 16 entries of at most 1 KiB.
	Errors []string
	// Denials lists tool calls the agent was refused permission for (claude
	// permission_denials), as "Tool: summary"; the agent may still claim
	// success (docs/AGENTS.md, "Common to every agent"). At most 16 entries.
	Denials []string
	// Turns is the agent's count of turns (claude and amp num_turns, opencode
	// its steps); 0 when the agent reports none (codex, gemini, cursor).
	Turns int
	// InputTokens counts input tokens, cache reads and cache writes included;
	// OutputTokens counts output tokens.
	InputTokens, OutputTokens int64
	// CostUSD is the cost the agent reports; nil when it reports none.
	CostUSD *float64
	// PremiumRequests is what GitHub Copilot CLI counts against the
	// account's premium-request allowance (result.usage.premiumRequests; 0
	// with a custom provider); 0 for the other agents.
	PremiumRequests float64
	// SessionID is the agent's session id; Model the model it used.
	SessionID, Model string
	// ExitCode is the process's exit code, -1 when it was killed by a signal.
	ExitCode int
	// Signal names the signal that killed the process ("killed",
	// "terminated", "interrupt"), "" when it exited.
	Signal string
	// TimedOut reports that Request.Timeout expired, Idle that
	// Request.IdleTimeout did, Interrupted that the context was cancelled or
	// Request.Kill closed. The timeouts only count before the terminal event.
	TimedOut, Idle, Interrupted bool
	// KilledAtOnce reports that Request.Kill closed (a second Ctrl-C): the
	// group was killed without waiting out KillGrace.
	KilledAtOnce bool
	// Lingered reports that the process had not exited Request.Grace after its
	// terminal event and its group was killed (with SIGKILL, so ExitCode is -1).
	// That is not a failure: the result had been seen.
	Lingered bool
	// Stderr is the last ~4 KiB of the agent's stderr.
	Stderr string
	// Fatal is non-empty when retrying is pointless and the loop must stop,
	// e.g. Claude Code refusing --dangerously-skip-permissions as root, or not
	// logged in. It is a complete sentence for the user. It is always set
	// when Class is ClassAuth.
	Fatal string
	// Class is the kind of failure the agent's final error reports (see
	// FailureClass); ClassNone when it reported none or one without special
	// handling. Drivers decide it from the terminal or error event only.
	Class FailureClass
	// RetryAfter is how long the agent said to wait before trying again ("try
	// again in 2 hours", "retry in 47s", a Retry-After), counted from the end
	// of the run; 0 when it did not say. Set for ClassLimit and
	// ClassTransient only.
	RetryAfter time.Duration
	// RetryAt is when the agent said its limit resets (Claude Code's "usage
	// limit reached|<unix time>"); zero when it did not say. Set for
	// ClassLimit and ClassTransient only.
	RetryAt time.Time
}

// RetryTime returns when the agent said it can be tried again: the later of
// RetryAt and now+RetryAfter, where now is the end of the run. It is the zero
// time when the agent did not say.
func (r Result) RetryTime(now time.Time) time.Time {
	var t time.Time
	if r.RetryAfter > 0 {
		t = now.Add(r.RetryAfter)
	}
	if r.RetryAt.After(t) {
		t = r.RetryAt
	}
	return t
}

// Promise returns the promise in the final answer, or a PromiseNone Promise
// when there is no trustworthy final answer: no terminal event was seen or the
// agent reported an error (docs/LOOP.md, "Each attempt" step 3).
func (r Result) Promise() Promise {
	if !r.SawResult || r.IsError {
		return Promise{}
	}
	return ParsePromise(r.Text)
}

// Driver knows one agent CLI: how to invoke it headlessly and how to decode
// its event stream. Drivers are stateless values; one package per driver
// (internal/agent/claude, …).
type Driver interface {
	// Name is the name users pick the agent by ("claude").
	Name() string
	// Binary is the executable looked up on PATH ("claude").
	Binary() string
	// Argv is the full argv for req, argv[0] == Binary(). The prompt is never
	// part of it: Run sends it on stdin.
	Argv(req Request) []string
	// Decode reads the whole stream (to EOF) and reports live events to ev
	// (nil means nobody listens). It must never panic, must tolerate lines
	// that are not JSON or are cut short, and must use bounded memory on any
	// input. The error is only a read error of r; the Result is valid anyway.
	Decode(r io.Reader, ev Events) (Result, error)
	// InstallHint tells how to install the agent, for the "not found on PATH"
	// error.
	InstallHint() string
}

// Diagnoser is implemented by drivers that recognise failures visible only once the
// process has ended (a refusal on stderr, an exit code that means something). Run calls
// Diagnose after it filled in ExitCode, Signal, Stderr and the timeout flags; Diagnose may
// set Fatal and Class and add to Errors, and the custom driver's text format sets SawResult
// there (a clean exit is its only terminal event).
type Diagnoser interface {
	Diagnose(res *Result)
}

// Preflighter is implemented by drivers that can tell, before the agent is
// started, that it cannot work: amp without an API key (it would start an
// interactive login and wait forever), a custom agent without a command.
// env is the environment the agent would get.
type Preflighter interface {
	Preflight(req Request, env []string) error
}

// Preflight runs the driver's own checks (see Preflighter) with the
// environment Run would give the agent: os.Environ() plus req.Env. The error
// is a *PreflightError. Run calls it too, before starting anything; the loop
// calls it in its preflight so that nothing changes when it fails.
func Preflight(d Driver, req Request) error {
	if p, ok := d.(Preflighter); ok {
		return p.Preflight(req, childEnv(WithoutSecrets(os.Environ(), req.KeepEnv), req.Env))
	}
	return nil
}

// PreflightError says why an agent cannot be started, and how to fix it.
type PreflightError struct {
	Agent string // driver name
	Msg   string // what is wrong, a lower-case phrase
	Fix   string // what to do about it
}

// Error returns "agent NAME: MSG".
func (e *PreflightError) Error() string { return fmt.Sprintf("agent %q: %s", e.Agent, e.Msg) }

// Hint says how to fix it.
func (e *PreflightError) Hint() string { return e.Fix }

// EnvValue returns the last value of key in env, "" when unset.
func EnvValue(env []string, key string) string {
	v := ""
	for _, kv := range env {
		if k, val, ok := strings.Cut(kv, "="); ok && k == key {
			v = val
		}
	}
	return v
}

// LookPath finds the driver's binary on PATH (a name with a slash is taken as
// a path). When it is missing, the error is a *NotFoundError; for a custom
// driver without a command, one with an empty Binary.
func LookPath(d Driver) (string, error) {
	if d.Binary() == "" {
		return "", &NotFoundError{Agent: d.Name(), Install: d.InstallHint(), Err: errNoCommand}
	}
	path, err := exec.LookPath(d.Binary())
	if err != nil {
		return "", &NotFoundError{Agent: d.Name(), Binary: d.Binary(), Install: d.InstallHint(), Err: err, NotExecutable: notExecutable(d.Binary(), err)}
	}
	return path, nil
}

// notExecutable is the file that bin names (on PATH, or its path) when it is there but
// cannot be run (no execute permission), "" otherwise: LookPath skips such a file on
// PATH and says "not found".
func notExecutable(bin string, err error) string {
	if strings.ContainsRune(bin, os.PathSeparator) {
		if errors.Is(err, fs.ErrPermission) {
			return bin
		}
		return ""
	}
	for _, dir := range filepath.SplitList(os.Getenv("PATH")) {
		if dir == "" {
			dir = "."
		}
		p := filepath.Join(dir, bin)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() {
			return p
		}
	}
	return ""
}

// NotFoundError reports that an agent's executable is not on PATH (or could
// not be run from it).
type NotFoundError struct {
	Agent   string // driver name
	Binary  string // executable looked for
	Install string // the driver's InstallHint
	Err     error  // what exec.LookPath said
	// NotExecutable is the file found under that name that cannot be run (no execute
	// permission), "" when there is none.
	NotExecutable string
}

// errNoCommand is the NotFoundError.Err of a custom agent without a command.
var errNoCommand = errors.New("no command configured")

// Error says which executable is missing.
func (e *NotFoundError) Error() string {
	if e.Binary == "" {
		return fmt.Sprintf("agent %q has no command", e.Agent)
	}
	if e.NotExecutable != "" {
		return fmt.Sprintf("agent %q: %s is not executable", e.Agent, e.NotExecutable)
	}
	if e.Agent == e.Binary {
		return fmt.Sprintf("%q not found on PATH", e.Binary)
	}
	return fmt.Sprintf("agent %q: %q not found on PATH", e.Agent, e.Binary)
}

// Hint tells how to install the agent, or to make the file found executable.
func (e *NotFoundError) Hint() string {
	if e.NotExecutable != "" {
		return "make it executable (chmod +x " + e.NotExecutable + "), or point the agent at another command"
	}
	return e.Install
}

// Unwrap returns the underlying lookup error (usually exec.ErrNotFound).
func (e *NotFoundError) Unwrap() error { return e.Err }

// Clock is the time that the user's limits (--timeout, --idle-timeout, --deadline)
// are measured in.
type Clock interface {
	Now() time.Time
	// After sends the time once d has passed on this clock.
	After(d time.Duration) <-chan time.Time
}

// WallClock is the real time.
type WallClock struct{}

func (WallClock) Now() time.Time                         { return time.Now() }
func (WallClock) After(d time.Duration) <-chan time.Time { return time.After(d) }

// ClockOr is c, or the wall clock when c is nil.
func ClockOr(c Clock) Clock {
	if c == nil {
		return WallClock{}
	}
	return c
}
