package fakeagent

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

const (
	dialectClaude   = "claude"
	dialectCodex    = "codex"
	dialectGemini   = "gemini"
	dialectOpenCode = "opencode"
	dialectAmp      = "amp"
	dialectCursor   = "cursor"
	dialectCopilot  = "copilot"
	dialectQwen     = "qwen"

	// exitUsage is the exit code for every mistake in how the fake was set up
	// or called; it is never used to emulate an agent failure.
	exitUsage = 64
)

// dialects lists the dialect names a scenario may give.
var dialects = []string{dialectClaude, dialectCodex, dialectGemini, dialectOpenCode, dialectAmp, dialectCursor, dialectCopilot, dialectQwen}

// dialectOf picks the dialect from the program name: the real binaries'
// names (cursor's is cursor-agent), anything else speaks claude.
func dialectOf(argv0 string) string {
	switch base := filepath.Base(argv0); base {
	case dialectCodex, dialectGemini, dialectOpenCode, dialectAmp, dialectCopilot, dialectQwen:
		return base
	case "cursor-agent":
		return dialectCursor
	}
	return dialectClaude
}

// Main runs the fake agent with os.Args, os.Stdin, os.Stdout and os.Stderr
// and exits the process. It is meant to be registered as a testscript command
// under the names of the real agent binaries ("claude", "codex").
func Main() {
	if orders := os.Getenv(daemonEnv); orders != "" {
		os.Exit(daemon(orders))
	}
	// A broken stdout (git-ralph, its reader, was killed) ends the fake's output, not
	// its steps (see runSteps): no SIGPIPE on the first write after the kill.
	signal.Ignore(syscall.SIGPIPE)
	os.Exit(run(os.Args, os.Stdin, os.Stdout, os.Stderr, os.Getenv, true))
}

// Run is the testable core of Main: it plays the configured scenario and
// returns the exit code. args[0] is the program name. env looks up
// environment variables (nil means os.Getenv). Run cannot die by a signal:
// a crash step returns 128+signal and a hang step fails (see the package
// doc); use Main in a real process for those.
func Run(args []string, stdin io.Reader, stdout, stderr io.Writer, env func(string) string) int {
	return run(args, stdin, stdout, stderr, env, false)
}

// usageError is a mistake in the fake's configuration or invocation.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, a ...any) error {
	return &usageError{msg: fmt.Sprintf(format, a...)}
}

func run(args []string, stdin io.Reader, stdout, stderr io.Writer, env func(string) string, proc bool) int {
	if env == nil {
		env = os.Getenv
	}
	if len(args) == 0 {
		args = []string{dialectClaude}
	}
	if stdin == nil {
		stdin = strings.NewReader("")
	}
	f := &fake{args: args, stdin: stdin, stdout: stdout, stderr: stderr, env: env, proc: proc}
	if path := env("FAKE_AGENT_TIMES"); path != "" {
		defer appendTimes(path, time.Now())
	}
	code, err := f.main()
	if err != nil {
		fmt.Fprintf(stderr, "fake-agent: %v\n", err)
		var ue *usageError
		if errors.As(err, &ue) {
			return exitUsage
		}
		return 1
	}
	return code
}

// appendTimes appends to path when this invocation began and now, its end, in Unix
// nanoseconds of the wall clock (a benchmark lines them up with git's trace). Not
// FAKE_AGENT_FIXED_TIME's clock: these are when it really ran.
func appendTimes(path string, began time.Time) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return
	}
	fmt.Fprintf(f, "%d %d\n", began.UnixNano(), time.Now().UnixNano())
	f.Close()
}

// fake is one invocation.
type fake struct {
	args   []string
	stdin  io.Reader
	stdout io.Writer
	stderr io.Writer
	env    func(string) string
	proc   bool // a real process: signals and crashes are real

	fixed   time.Time // FAKE_AGENT_FIXED_TIME; zero when unset
	started time.Time
	procCwd string // the process's working directory
	cwd     string // where the steps act (codex -C changes it)

	scenarioPath string
	scenarioRaw  []byte
	sc           *scenario
	script       script
	runName      string
	invocation   int // 1-based; 0 when not counted
	dialect      string
	cli          cliArgs

	stdinData []byte
	prompt    string

	out       *lineWriter
	ag        agent
	ids       idGen
	lastSay   string
	toolSteps int
	sig       *signalState
}

func (f *fake) now() time.Time {
	if !f.fixed.IsZero() {
		return f.fixed
	}
	return time.Now()
}

func (f *fake) main() (int, error) {
	if err := f.loadScenario(); err != nil {
		return 0, err
	}
	if err := f.loadSettings(); err != nil {
		return 0, err
	}
	f.dialect = f.sc.Dialect
	if f.dialect == "" {
		f.dialect = dialectOf(f.args[0])
	}
	if err := f.count(); err != nil {
		return 0, err
	}
	story, attempt := f.env("RALPH_STORY"), atoiDefault(f.env("RALPH_ATTEMPT"), 1)
	var err error
	if f.env("RALPH_JUDGE") != "" {
		f.script, f.runName, err = f.sc.selectJudge(attempt)
	} else {
		f.script, f.runName, err = f.sc.selectRun(story, attempt, max(f.invocation-1, 0))
	}
	if err != nil {
		return 0, usagef("%v", err)
	}

	switch f.dialect {
	case dialectCodex:
		f.cli = parseCodexArgs(f.args[1:])
	case dialectGemini:
		f.cli = parseGeminiArgs(f.args[1:])
	case dialectOpenCode:
		f.cli = parseOpenCodeArgs(f.args[1:])
	case dialectAmp:
		f.cli = parseAmpArgs(f.args[1:])
	case dialectCursor:
		f.cli = parseCursorArgs(f.args[1:])
	case dialectCopilot:
		f.cli = parseCopilotArgs(f.args[1:])
	case dialectQwen:
		f.cli = parseQwenArgs(f.args[1:])
	default:
		f.cli = parseClaudeArgs(f.args[1:])
	}
	if f.cli.usage == "" && f.cli.errMsg == "" {
		switch f.dialect {
		case dialectClaude:
			f.claudeChecks()
		case dialectGemini:
			f.geminiChecks()
		case dialectCursor:
			f.cursorChecks()
		case dialectCopilot:
			f.copilotChecks()
		case dialectQwen:
			f.qwenChecks()
		}
	}
	if f.cli.usage != "" {
		f.record(false)
		return 0, usagef("%s", f.cli.usage)
	}
	if f.cli.errMsg != "" {
		f.record(false)
		fmt.Fprint(f.stderr, f.cli.errMsg)
		return f.cli.errCode, nil
	}
	f.cwd = f.procCwd
	if f.cli.cd != "" {
		f.cwd = f.abs(f.procCwd, f.cli.cd)
	}
	if f.dialect == dialectAmp && f.env("AMP_API_KEY") == "" {
		// The real amp starts an interactive login and waits for a pasted
		// code, even with stdin at /dev/null (docs/AGENTS.md, "Amp").
		f.record(false)
		fmt.Fprintln(f.stderr, "No API key found. Starting login flow...")
		return f.hang(&hangSpec{})
	}
	code, ok := f.readPrompt()
	f.record(true)
	if !ok {
		return code, nil
	}
	if missing := missingArgs(f.script.ExpectArgs, f.args[1:]); len(missing) > 0 {
		return 0, usagef("missing expected args %q in argv %q", missing, f.args[1:])
	}
	return f.play()
}

// loadScenario reads the scenario from FAKE_AGENT_SCENARIO_JSON or
// FAKE_AGENT_SCENARIO.
func (f *fake) loadScenario() error {
	if inline := f.env("FAKE_AGENT_SCENARIO_JSON"); inline != "" {
		f.scenarioRaw = []byte(inline)
	} else if path := f.env("FAKE_AGENT_SCENARIO"); path != "" {
		data, err := os.ReadFile(path)
		if err != nil {
			return usagef("read scenario: %v", err)
		}
		f.scenarioPath, f.scenarioRaw = path, data
	} else {
		return usagef("not configured: set FAKE_AGENT_SCENARIO (a scenario file) or FAKE_AGENT_SCENARIO_JSON (inline JSON); argv %q", f.args)
	}
	sc, err := parseScenario(f.scenarioRaw)
	if err != nil {
		return usagef("%v", err)
	}
	f.sc = sc
	return nil
}

func (f *fake) loadSettings() error {
	if s := f.env("FAKE_AGENT_FIXED_TIME"); s != "" {
		t, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			return usagef("FAKE_AGENT_FIXED_TIME: want RFC 3339 like 2026-01-02T15:04:05Z: %v", err)
		}
		f.fixed = t.UTC()
	}
	f.started = f.now()
	delay := 0
	if s := f.env("FAKE_AGENT_DELAY_MS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 0 {
			return usagef("FAKE_AGENT_DELAY_MS: want milliseconds, got %q", s)
		}
		delay = n
	}
	f.out = &lineWriter{w: f.stdout, delay: time.Duration(delay) * time.Millisecond}
	wd, err := os.Getwd()
	if err != nil {
		return fmt.Errorf("working directory: %w", err)
	}
	f.procCwd = wd
	return nil
}

// count takes the next invocation number from FAKE_AGENT_STATE_DIR or, for
// a scenario file with runs, from a file next to it.
func (f *fake) count() error {
	var path string
	switch dir := f.env("FAKE_AGENT_STATE_DIR"); {
	case dir != "":
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return usagef("FAKE_AGENT_STATE_DIR: %v", err)
		}
		path = filepath.Join(dir, "invocations")
	case !f.sc.usesRuns():
		return nil
	case f.scenarioPath != "":
		path = f.scenarioPath + ".invocations"
	default:
		return usagef("an inline scenario with runs needs FAKE_AGENT_STATE_DIR to count invocations")
	}
	n, err := bumpCounter(path)
	if err != nil {
		return usagef("invocation counter %s: %v", path, err)
	}
	f.invocation = n + 1
	return nil
}

// bumpCounter increments the number in path under an exclusive lock and
// returns the previous value.
func bumpCounter(path string) (int, error) {
	file, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return 0, err
	}
	defer file.Close()
	if err := syscall.Flock(int(file.Fd()), syscall.LOCK_EX); err != nil {
		return 0, err
	}
	data, err := io.ReadAll(file)
	if err != nil {
		return 0, err
	}
	n := 0
	if s := strings.TrimSpace(string(data)); s != "" {
		if n, err = strconv.Atoi(s); err != nil {
			return 0, fmt.Errorf("bad counter %q", s)
		}
	}
	if err := file.Truncate(0); err != nil {
		return 0, err
	}
	if _, err := file.WriteAt([]byte(strconv.Itoa(n+1)+"\n"), 0); err != nil {
		return 0, err
	}
	return n, nil
}

// claudeChecks emulates the refusals the real claude prints before it reads
// any input.
func (f *fake) claudeChecks() {
	c := &f.cli
	switch {
	case !c.print:
		c.usage = "claude was called without -p/--print; the interactive mode is not emulated"
	case c.outputFormat == "stream-json" && !c.verbose:
		c.errCode, c.errMsg = 1, "Error: When using --print, --output-format=stream-json requires --verbose\n"
	case f.sc.EmulateRootCheck && os.Geteuid() == 0 && f.env("IS_SANDBOX") == "" &&
		(c.skipPerms || c.permissionMode == "bypassPermissions"):
		c.errCode, c.errMsg = 1, "--dangerously-skip-permissions cannot be used with root/sudo privileges for security reasons\n"
	}
	if c.usage != "" {
		c.errMsg = ""
	}
}

// readPrompt reads stdin as the real CLI would and builds the prompt. ok is
// false when the CLI would give up for lack of input.
func (f *fake) readPrompt() (code int, ok bool) {
	arg := f.cli.prompt
	switch f.dialect {
	case dialectGemini, dialectOpenCode, dialectAmp, dialectCursor, dialectCopilot, dialectQwen:
		return f.readOtherPrompt()
	}
	switch {
	case f.dialect == dialectCodex && arg != nil && *arg != "-":
		if !isTerminal(f.stdin) {
			fmt.Fprintln(f.stderr, "Reading additional input from stdin...")
			f.stdinData, _ = io.ReadAll(f.stdin)
		}
		f.prompt = *arg
		if len(f.stdinData) > 0 {
			f.prompt += "\n\n<stdin>\n" + string(f.stdinData) + "\n</stdin>"
		}
	case f.dialect == dialectCodex:
		if !isTerminal(f.stdin) {
			f.stdinData, _ = io.ReadAll(f.stdin)
		}
		f.prompt = string(f.stdinData)
		if strings.TrimSpace(f.prompt) == "" {
			fmt.Fprintln(f.stderr, "No prompt provided via stdin.")
			return 1, false
		}
	case arg != nil:
		if !isTerminal(f.stdin) {
			data, done := readWithin(f.stdin, 3*time.Second)
			if !done {
				fmt.Fprintln(f.stderr, "Warning: no stdin data received in 3s, proceeding without it. If piping from a slow command, redirect stdin explicitly: < /dev/null to skip, or wait longer.")
			}
			f.stdinData = data
		}
		f.prompt = *arg
		if len(f.stdinData) > 0 {
			f.prompt += "\n" + string(f.stdinData)
		}
	default:
		if !isTerminal(f.stdin) {
			f.stdinData, _ = io.ReadAll(f.stdin)
		}
		f.prompt = string(f.stdinData)
		if strings.TrimSpace(f.prompt) == "" {
			fmt.Fprintln(f.stderr, "Error: Input must be provided either through stdin or as a prompt argument when using --print")
			return 1, false
		}
	}
	return 0, true
}

// readOtherPrompt reads the prompt of gemini, opencode, amp and cursor:
// stdin (read to EOF unless it is a terminal) and the prompt argument.
// gemini appends its -p text to the stdin input; the others put the
// argument first.
func (f *fake) readOtherPrompt() (code int, ok bool) {
	if !isTerminal(f.stdin) {
		f.stdinData, _ = io.ReadAll(f.stdin)
	}
	arg := ""
	if f.cli.prompt != nil {
		arg = *f.cli.prompt
	}
	if f.dialect == dialectGemini {
		f.prompt = joinSep("\n\n", string(f.stdinData), arg)
	} else {
		f.prompt = joinSep("\n", arg, string(f.stdinData))
	}
	if strings.TrimSpace(f.prompt) != "" {
		return 0, true
	}
	switch f.dialect {
	case dialectGemini:
		fmt.Fprintln(f.stderr, "No input provided via stdin. Input can be provided by piping data into gemini or using the --prompt option.")
	case dialectOpenCode:
		fmt.Fprintln(f.stderr, "Error: You must provide a message or a command")
	case dialectAmp:
		fmt.Fprintln(f.stderr, "Error: execute mode needs a message, as an argument or on stdin")
	default:
		fmt.Fprintln(f.stderr, "Error: No prompt provided for print mode")
	}
	return 1, false
}

// joinSep joins the non-empty parts with sep.
func joinSep(sep string, parts ...string) string {
	var keep []string
	for _, p := range parts {
		if p != "" {
			keep = append(keep, p)
		}
	}
	return strings.Join(keep, sep)
}

// readWithin reads r to EOF unless that takes longer than d.
func readWithin(r io.Reader, d time.Duration) ([]byte, bool) {
	type result struct{ data []byte }
	ch := make(chan result, 1)
	go func() {
		data, _ := io.ReadAll(r)
		ch <- result{data}
	}()
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case res := <-ch:
		return res.data, true
	case <-t.C:
		return nil, false
	}
}

// isTerminal reports whether r is a terminal (and so must not be read).
func isTerminal(r io.Reader) bool {
	file, ok := r.(*os.File)
	if !ok {
		return false
	}
	fi, err := file.Stat()
	if err != nil || fi.Mode()&os.ModeCharDevice == 0 {
		return false
	}
	null, err := os.Stat(os.DevNull)
	return err != nil || !os.SameFile(fi, null)
}

// recordEnvNames are recorded besides every RALPH_* variable.
var recordEnvNames = []string{"GIT_RALPH", "IS_SANDBOX", "GIT_DIR", "GIT_INDEX_FILE", "GIT_WORK_TREE"}

// knownRalphVars are looked up even when os.Environ does not list them (Run
// may get an env func that is not the process environment).
var knownRalphVars = []string{"RALPH_AGENT", "RALPH_CHANGE", "RALPH_STORY", "RALPH_ATTEMPT", "RALPH_JUDGE"}

// envNames lists the variables that are recorded and passed to children.
func envNames() []string {
	names := append(slices.Clone(knownRalphVars), recordEnvNames...)
	for _, kv := range os.Environ() {
		if name, _, _ := strings.Cut(kv, "="); strings.HasPrefix(name, "RALPH_") {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	return slices.Compact(names)
}

// record appends this invocation to FAKE_AGENT_RECORD.
func (f *fake) record(stdinRead bool) {
	path := f.env("FAKE_AGENT_RECORD")
	if path == "" {
		return
	}
	env := obj{}
	for _, name := range envNames() {
		if v := f.env(name); v != "" {
			env = append(env, kv{name, v})
		}
	}
	var prompt any
	if stdinRead {
		prompt = f.prompt
	}
	rec := obj{
		{"argv", f.args},
		{"cwd", f.procCwd},
		{"stdin", string(f.stdinData)},
		{"stdin_bytes", len(f.stdinData)},
		{"prompt", prompt},
		{"env", env},
		{"pid", os.Getpid()},
		{"started_at", f.started.Format(time.RFC3339Nano)},
		{"invocation", f.invocation},
		{"dialect", f.dialect},
		{"run", f.runName},
	}
	line := append(appendJSON(nil, rec), '\n')
	file, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err == nil {
		_, err = file.Write(line)
		if cerr := file.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		fmt.Fprintf(f.stderr, "fake-agent: FAKE_AGENT_RECORD: %v\n", err)
	}
}

// missingArgs returns the expected arguments that argv lacks; --k=v counts
// as both --k and v.
func missingArgs(expected, argv []string) []string {
	have := map[string]bool{}
	for _, a := range argv {
		have[a] = true
		if strings.HasPrefix(a, "-") {
			if k, v, ok := strings.Cut(a, "="); ok {
				have[k], have[v] = true, true
			}
		}
	}
	var missing []string
	for _, e := range expected {
		if !have[e] {
			missing = append(missing, e)
		}
	}
	return missing
}

// sessionID picks the session (thread) id: the scenario's, then the one the
// command line names, then one derived from what makes this invocation unique.
func (f *fake) sessionID() string {
	if f.script.SessionID != "" {
		return f.script.SessionID
	}
	if f.cli.sessionID != "" {
		return f.cli.sessionID
	}
	sum := sha256.Sum256(f.scenarioRaw)
	return uuidFrom(strings.Join([]string{"session", hex.EncodeToString(sum[:]), f.runName,
		f.env("RALPH_CHANGE"), f.env("RALPH_STORY"), f.env("RALPH_ATTEMPT"), strconv.Itoa(f.invocation)}, "|"))
}

// play runs the selected script and ends the turn.
func (f *fake) play() (int, error) {
	if h := f.script.hangOf(); h != nil && f.proc {
		f.sig = setupSignals(h)
	}
	sid := f.sessionID()
	f.ids = idGen{seed: sid}
	switch f.dialect {
	case dialectCodex:
		f.ag = &codexAgent{f: f, threadID: sid}
	case dialectGemini:
		f.ag = &geminiAgent{f: f, sid: sid, model: firstNonEmpty(f.cli.model, f.script.Model, "gemini-2.5-pro"),
			format: firstNonEmpty(f.cli.outputFormat, "text")}
	case dialectOpenCode:
		f.ag = &opencodeAgent{f: f, sid: "ses_" + strings.ReplaceAll(sid, "-", "")[:26], format: firstNonEmpty(f.cli.outputFormat, "default")}
	case dialectAmp:
		f.ag = &ampAgent{f: f, sid: "T-" + sid, stream: f.cli.streamJSON}
	case dialectCopilot:
		f.ag = &copilotAgent{f: f, sid: sid, model: firstNonEmpty(f.cli.model, f.env("COPILOT_MODEL"), f.script.Model, "gpt-4.1"),
			format: firstNonEmpty(f.cli.outputFormat, "text")}
	case dialectQwen:
		f.ag = &qwenAgent{f: f, sid: sid, model: firstNonEmpty(f.cli.model, f.env("OPENAI_MODEL"), f.script.Model, "qwen3-coder-plus"),
			format: firstNonEmpty(f.cli.outputFormat, "text")}
	case dialectCursor:
		f.ag = &cursorAgent{f: f, sid: sid, model: firstNonEmpty(f.cli.model, f.script.Model, "claude-4-sonnet"),
			format: firstNonEmpty(f.cli.outputFormat, "text")}
	default:
		model := firstNonEmpty(f.cli.model, f.script.Model, "claude-sonnet-4-5")
		pm := "default"
		if f.cli.permissionMode != "" {
			pm = f.cli.permissionMode
		} else if f.cli.skipPerms {
			pm = "bypassPermissions"
		}
		format := firstNonEmpty(f.cli.outputFormat, "text")
		f.ag = &claudeAgent{f: f, sid: sid, model: model, permissionMode: pm, format: format, msgN: 1}
	}
	if fs := f.script.Fail; fs != nil && f.ag.early(fs) {
		// A failure the CLI reports before it prints anything.
		return f.failExit(fs, f.ag.fail(fs)), nil
	}
	f.ag.start()
	if code, stop, err := f.runSteps(f.script.Steps); err != nil || stop {
		return code, err
	}
	var code int
	if fs := f.script.Fail; fs != nil {
		code = f.failExit(fs, f.ag.fail(fs))
	} else {
		code = f.ag.finish()
	}
	if f.out.err != nil && !errors.Is(f.out.err, syscall.EPIPE) {
		return 0, fmt.Errorf("stdout: %w", f.out.err)
	}
	if c, stop, err := f.runSteps(f.script.After); err != nil || stop {
		return c, err
	}
	return code, nil
}

// abs resolves p against base.
func (f *fake) abs(base, p string) string {
	if filepath.IsAbs(p) {
		return filepath.Clean(p)
	}
	return filepath.Join(base, p)
}

// childEnv is the environment of the processes the steps start.
func (f *fake) childEnv() []string {
	env := os.Environ()
	for _, name := range envNames() {
		if v := f.env(name); v != "" {
			env = append(env, name+"="+v)
		}
	}
	return env
}

func firstNonEmpty(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}

func atoiDefault(s string, def int) int {
	n, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil {
		return def
	}
	return n
}

// writeFileAtomic writes data to path through a temporary file, so a
// polling test never reads half of it.
func writeFileAtomic(path string, data []byte) error {
	tmp := path + ".tmp" + strconv.Itoa(os.Getpid())
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
