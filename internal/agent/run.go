package agent

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/git-ralph/git-ralph/internal/sandbox"
)

const (
	defaultGrace = 5 * time.Second
	// maxStderrLog is how much of the agent's stderr is kept for the log.
	maxStderrLog = 64 << 10
	// maxStderr bounds Result.Stderr.
	maxStderr = 4 << 10
)

// Run runs the agent once and returns what came of it. It errs only when the process
// could not be started (*NotFoundError, a sandbox start, Preflight) or what it left
// could not be ended (*LeftoversError, with the Result). The agent runs in a session
// of its own in req.Dir, with its own TMPDIR, under req.Sandbox plus the driver's
// State. How it is ended: docs/AGENTS.md, "Common to every agent".
func Run(ctx context.Context, d Driver, req Request) (Result, error) {
	if ctx.Err() != nil {
		return Result{ExitCode: -1, Interrupted: true}, nil
	}
	if err := Preflight(d, req); err != nil {
		return Result{ExitCode: -1}, err
	}
	// The attempt's own directory: the output file a driver asks for, and a sandboxed
	// agent's TMPDIR; removed with all it holds once the agent and what it left are gone.
	dir, err := os.MkdirTemp("", "git-ralph-"+d.Name()+"-")
	if err != nil {
		return Result{ExitCode: -1}, fmt.Errorf("create the attempt's temporary directory: %w", err)
	}
	defer removeAll(dir)
	of, wantsFile := d.(OutputFiler)
	if wantsFile {
		req.OutputFile = filepath.Join(dir, "output.txt")
		if err := os.WriteFile(req.OutputFile, nil, 0o600); err != nil {
			return Result{ExitCode: -1}, fmt.Errorf("create temporary file: %w", err)
		}
	}
	argv := d.Argv(req)
	if len(argv) == 0 {
		return Result{ExitCode: -1}, fmt.Errorf("agent %q: empty command line", d.Name())
	}
	env, stateDir, err := attemptEnv(d, req, dir)
	if stateDir != "" {
		defer removeAll(stateDir)
	}
	if err != nil {
		return Result{ExitCode: -1}, err
	}
	cmd, p, guarded, err := startAgent(d, req, argv, childEnv(WithoutSecrets(os.Environ(), req.KeepEnv), env), dir)
	if err != nil {
		return Result{ExitCode: -1}, err
	}
	defer p.closeAll()

	r := &runner{
		d:         d,
		req:       req,
		pid:       cmd.Process.Pid,
		pipes:     p,
		clock:     ClockOr(req.Clock),
		base:      time.Now(),
		clockBase: ClockOr(req.Clock).Now(),
		grace:     orDefault(req.Grace),
		killGrace: orDefault(req.KillGrace),
		log:       &logWriter{w: req.Log},
		stderr:    &TailBuffer{Max: maxStderrLog},
		ev:        &runEvents{sink: req.Sink, terminal: make(chan struct{})},
	}
	state, left := r.run(ctx, cmd)
	res := r.result(r.drain(), state, guarded)
	if wantsFile {
		of.ReadOutputFile(&res, req.OutputFile)
	}
	if dg, ok := d.(Diagnoser); ok {
		dg.Diagnose(&res)
	}
	r.writeTrailer(res)
	if left != nil {
		return res, &LeftoversError{Err: left}
	}
	return res, nil
}

// attemptEnv is what the agent's environment adds to the user's: req.Env, the
// driver's, and for a sandboxed agent its TMPDIR (dir), its caches and its CLI's
// configuration of its own, for this attempt: in stateDir ("" when none), beside its
// TMPDIR, not in it (Codex makes no helper binaries in a CODEX_HOME under TMPDIR).
// The caller removes stateDir, even with an error.
func attemptEnv(d Driver, req Request, dir string) (env []string, stateDir string, err error) {
	env = req.Env
	if a, ok := d.(EnvAdder); ok {
		env = append(slices.Clone(env), a.ExtraEnv(req)...)
	}
	if req.Sandbox == nil {
		return env, "", nil
	}
	env = append(slices.Clone(env), "TMPDIR="+dir)
	env = append(env, req.Sandbox.Env...)
	kv, stateDir, err := makeOwnState(d, childEnv(WithoutSecrets(os.Environ(), req.KeepEnv), env))
	if err != nil {
		return nil, stateDir, fmt.Errorf("agent %q: its configuration of its own: %w", d.Name(), err)
	}
	if stateDir != "" {
		env = append(env, kv)
	}
	return env, stateDir, nil
}

// startAgent starts argv in req.Dir with env, in a session of its own, in the
// attempt's cgroup, sandboxed when req says so, with its stdio on pipes (the caller
// closes them once the agent is done). guarded are the CLI's settings that run in the
// user's next session, as they were before it started.
func startAgent(d Driver, req Request, argv, env []string, dir string) (*exec.Cmd, *pipes, []guardedFile, error) {
	cmd, pol, err := command(d, req, argv, env, dir)
	if err != nil {
		return nil, nil, nil, err
	}
	guarded := guard(d, env)
	cmd.Dir = req.Dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	sandbox.Contain(cmd) // the attempt's cgroup, where there is one

	p, err := openPipes()
	if err != nil {
		return nil, nil, nil, err
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = p.inR, p.outW, p.errW
	if pol == nil {
		err = cmd.Start()
	} else if cmd, err = sandbox.Start(pol, cmd); err != nil {
		err = fmt.Errorf("agent %q: %w", d.Name(), err)
	}
	if err != nil {
		p.closeAll()
		if errors.Is(err, exec.ErrNotFound) {
			return nil, nil, nil, &NotFoundError{Agent: d.Name(), Binary: argv[0], Install: d.InstallHint(), Err: err}
		}
		return nil, nil, nil, err
	}
	p.closeChildEnds()
	return cmd, p, guarded, nil
}

// run supervises the started agent until it and its process group are gone, and
// kills what it left running elsewhere: left is why that could not all be ended.
func (r *runner) run(ctx context.Context, cmd *exec.Cmd) (state *os.ProcessState, left error) {
	exited, reap := watchExit(cmd)
	// The agent is recorded before it gets its prompt: a git-ralph killed once the
	// agent is at work leaves one that the next start finds in the record and stops.
	if r.req.OnStart != nil {
		start, _ := ProcStart(r.pid) // 0 when unknown: GroupAlive then never matches
		r.req.OnStart(r.pid, start)
	}
	r.startIO()
	r.supervise(ctx, exited)

	// The leader has exited; on Linux it is not reaped yet, so its pid (the
	// group id) cannot have been reused: kill whatever is left of the group.
	signalGroup(r.pid, syscall.SIGKILL)
	state, _ = reap()
	// What the agent left running outside its group (a daemon in a session of its own)
	// is git-ralph's child now, when git-ralph is a reaper: killed and reaped before
	// anything looks at what the attempt did: all of it, however long that takes, or
	// nothing is looked at (a LeftoversError).
	_, left = sandbox.KillLeftovers(ctx, r.req.Note)
	_ = r.pipes.inW.Close() // unblocks the prompt writer if nobody read stdin
	return state, left
}

// result is the Result of the agent's run: what its output said (out), how it ended
// (state and r's flags), and the settings of its CLI put back as they were (guarded).
func (r *runner) result(out decoded, state *os.ProcessState, guarded []guardedFile) Result {
	res := out.res
	// Nothing of the agent's runs any more: what it changed of them is put back.
	var notRestored []error
	res.Restored, notRestored = restore(guarded)
	for _, e := range notRestored {
		res.NotRestored = append(res.NotRestored, e.Error())
	}
	if out.err != nil {
		var pe *decodePanic
		if errors.As(out.err, &pe) {
			AddError(&res.Errors, fmt.Sprintf("internal error: the %s decoder panicked: %v", r.d.Name(), pe.value))
		}
	}
	res.TimedOut, res.Idle, res.Interrupted, res.Lingered = r.flags.TimedOut, r.flags.Idle, r.flags.Interrupted, r.flags.Lingered
	res.KilledAtOnce = r.flags.KilledAtOnce
	res.ExitCode, res.Signal = exitStatus(state)
	res.Stderr = strings.ToValidUTF8(Tail(string(r.stderr.Bytes()), maxStderr), "\uFFFD")
	return res
}

// LeftoversError is Run's error when the agent ran but what it left running could not
// all be ended (sandbox.KillLeftovers stopped by Ctrl-C, or the attempt's cgroup
// failed): nothing the attempt did may be checked or committed while it runs.
type LeftoversError struct{ Err error }

func (e *LeftoversError) Error() string { return e.Err.Error() }

func (e *LeftoversError) Unwrap() error { return e.Err }

// EnvAdder is a driver that passes something through the environment
// rather than the argv (a custom agent's model: RALPH_MODEL).
type EnvAdder interface {
	ExtraEnv(req Request) []string
}

// OutputFiler is a driver whose CLI writes something its stream lacks to a
// file named on its command line (codex --output-last-message: the final
// answer; copilot --usage-output-file: the token counts). Run makes an empty
// temporary file, puts its path in Request.outputFile for Argv, and after the
// run (before Diagnose) hands the path to readOutputFile, which must bound
// what it reads and tolerate a file left empty or cut short.
type OutputFiler interface {
	ReadOutputFile(res *Result, path string)
}

// OpenOutput opens a file the agent's CLI wrote in the attempt's directory (an
// OutputFiler's): the agent can write there too, so only a regular file is taken,
// never what a symlink in its place leads to (O_NOFOLLOW: a file of the user's the
// agent cannot read itself must not come back as its answer), nor a FIFO (O_NONBLOCK).
func OpenOutput(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		f.Close()
		if err == nil {
			err = fmt.Errorf("%s is not a regular file", path)
		}
		return nil, err
	}
	return f, nil
}

// ReadTail returns the last n bytes of the regular file at path at most (OpenOutput),
// as valid UTF-8 starting on a rune boundary.
func ReadTail(path string, n int64) (string, error) {
	f, err := OpenOutput(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return "", err
	}
	if fi.Size() > n {
		if _, err := f.Seek(fi.Size()-n, io.SeekStart); err != nil {
			return "", err
		}
	}
	b, err := io.ReadAll(io.LimitReader(f, n))
	if err != nil {
		return "", err
	}
	return ValidTail(b), nil
}

// runner is the state of one Run once the process has started.
type runner struct {
	d                Driver
	req              Request
	pid              int
	pipes            *pipes
	clock            Clock        // Timeout and IdleTimeout are measured on it
	base             time.Time    // the start, wall clock
	clockBase        time.Time    // the start, on clock
	lastOut          atomic.Int64 // time of the last output byte, as a duration since base
	lastOutClock     atomic.Int64 // the same, on clock since clockBase
	grace            time.Duration
	killGrace        time.Duration
	log              *logWriter
	stderr           *TailBuffer
	ev               *runEvents
	flags            Result // TimedOut, Idle, Interrupted, KilledAtOnce, Lingered
	outDone, errDone chan struct{}
	out              decoded
}

// decoded is what the stdout goroutine produced.
type decoded struct {
	res Result
	err error
}

// startIO starts the goroutines that read stdout (decode + log), read stderr
// (tail), and write the prompt.
func (r *runner) startIO() {
	r.outDone, r.errDone = make(chan struct{}), make(chan struct{})
	go func() {
		src := &outputReader{r: r.pipes.outR, log: r.log, touch: r.touch}
		r.out.res, r.out.err = safeDecode(r.d, src, r.ev)
		_, _ = io.Copy(io.Discard, src) // whatever Decode left still goes to the log
		close(r.outDone)
	}()
	go func() {
		_, _ = io.Copy(r.stderr, &outputReader{r: r.pipes.errR, touch: r.touch})
		close(r.errDone)
	}()
	go func() {
		_, _ = io.WriteString(r.pipes.inW, r.req.Prompt)
		_ = r.pipes.inW.Close()
	}()
}

func (r *runner) touch() {
	r.lastOut.Store(int64(time.Since(r.base)))
	r.lastOutClock.Store(int64(r.clock.Now().Sub(r.clockBase)))
}

// supervise waits for the process to exit, signalling its group on
// cancellation, timeouts and a lingering exit.
func (r *runner) supervise(ctx context.Context, exited <-chan struct{}) {
	var timeoutC, idleC, graceC, escalateC <-chan time.Time
	if r.req.Timeout > 0 {
		timeoutC = r.clock.After(r.req.Timeout)
	}
	if r.req.IdleTimeout > 0 {
		idleC = r.clock.After(r.req.IdleTimeout)
	}
	done, kill, terminal := ctx.Done(), r.req.Kill, (<-chan struct{})(r.ev.terminal)
	stopping := false
	stop := func(sig syscall.Signal) {
		stopping = true
		signalGroup(r.pid, sig)
		if escalateC == nil {
			escalateC = time.After(r.killGrace)
		}
	}
	for {
		select {
		case <-exited:
			return
		case <-done:
			done = nil
			r.flags.Interrupted = true
			stop(syscall.SIGINT)
		case <-kill:
			kill = nil
			r.flags.Interrupted = true
			r.flags.KilledAtOnce = true
			stopping = true
			signalGroup(r.pid, syscall.SIGKILL)
		case <-timeoutC:
			timeoutC = nil
			if !stopping {
				r.flags.TimedOut = true
				stop(syscall.SIGTERM)
			}
		case <-idleC:
			quiet := r.clock.Now().Sub(r.clockBase) - time.Duration(r.lastOutClock.Load())
			if quiet < r.req.IdleTimeout {
				idleC = r.clock.After(r.req.IdleTimeout - quiet)
				continue
			}
			idleC = nil
			if !stopping {
				r.flags.Idle = true
				stop(syscall.SIGTERM)
			}
		case <-terminal:
			// The result is in: from now on only Grace applies.
			terminal, timeoutC, idleC = nil, nil, nil
			if !stopping {
				graceC = time.After(r.grace)
			}
		case <-graceC:
			graceC = nil
			if !stopping {
				// Nothing is left to lose: no polite signal, no exit code 143
				// that could pass for a failure.
				r.flags.Lingered = true
				stopping = true
				signalGroup(r.pid, syscall.SIGKILL)
			}
		case <-escalateC:
			escalateC = nil
			signalGroup(r.pid, syscall.SIGKILL)
		}
	}
}

// drain waits for the stdout and stderr readers to reach EOF. When no byte
// has arrived for killGrace (or 4×killGrace have passed in all, should an
// escaped descendant keep writing), it closes the pipes, which ends the reads.
func (r *runner) drain() decoded {
	hardStop := time.Now().Add(4 * r.killGrace)
	timer := time.NewTimer(r.killGrace)
	defer timer.Stop()
	outDone, errDone := r.outDone, r.errDone
	for outDone != nil || errDone != nil {
		select {
		case <-outDone:
			outDone = nil
		case <-errDone:
			errDone = nil
		case <-timer.C:
			quiet := time.Since(r.base) - time.Duration(r.lastOut.Load())
			if quiet < r.killGrace && time.Now().Before(hardStop) {
				timer.Reset(r.killGrace - quiet)
				continue
			}
			_ = r.pipes.outR.Close()
			_ = r.pipes.errR.Close()
		}
	}
	return r.out
}

// writeTrailer appends the stderr section and the end line to the log (see
// Request.Log).
func (r *runner) writeTrailer(res Result) {
	lw := r.log
	if lw.w == nil {
		return
	}
	if lw.n > 0 && lw.last != '\n' {
		_, _ = io.WriteString(lw, "\n")
	}
	if r.stderr.total > 0 {
		kept := r.stderr.Bytes()
		if int64(len(kept)) < r.stderr.total {
			fmt.Fprintf(lw, "--- git-ralph: agent stderr (last %d of %d bytes) ---\n", len(kept), r.stderr.total)
		} else {
			_, _ = io.WriteString(lw, "--- git-ralph: agent stderr ---\n")
		}
		_, _ = lw.Write(kept)
		if kept[len(kept)-1] != '\n' {
			_, _ = io.WriteString(lw, "\n")
		}
		_, _ = io.WriteString(lw, "--- git-ralph: end of agent stderr ---\n")
	}
	_, _ = io.WriteString(lw, "--- git-ralph: "+endLine(res)+" ---\n")
}

// endLine says how the agent ended, for the log.
func endLine(res Result) string {
	s := fmt.Sprintf("agent exited with status %d", res.ExitCode)
	if res.Signal != "" {
		s = fmt.Sprintf("agent killed by signal %q", res.Signal)
	}
	var why []string
	if res.Interrupted {
		why = append(why, "interrupted")
	}
	if res.KilledAtOnce {
		why = append(why, "killed at once by a second interrupt")
	}
	if res.TimedOut {
		why = append(why, "timeout")
	}
	if res.Idle {
		why = append(why, "idle timeout")
	}
	if res.Lingered {
		why = append(why, "still running after its result")
	}
	if !res.SawResult {
		why = append(why, "no result event")
	}
	if len(why) > 0 {
		s += " (" + strings.Join(why, ", ") + ")"
	}
	return s
}

// pipes are the agent's stdin, stdout and stderr. Run makes them itself
// (rather than cmd.StdoutPipe and friends) so that it can tell the process's
// exit from the pipes' EOF, and close the pipes when a descendant holds them.
type pipes struct {
	inR, inW, outR, outW, errR, errW *os.File
}

func openPipes() (*pipes, error) {
	var p pipes
	var err error
	if p.inR, p.inW, err = os.Pipe(); err != nil {
		return nil, fmt.Errorf("create pipe: %w", err)
	}
	if p.outR, p.outW, err = os.Pipe(); err != nil {
		p.closeAll()
		return nil, fmt.Errorf("create pipe: %w", err)
	}
	if p.errR, p.errW, err = os.Pipe(); err != nil {
		p.closeAll()
		return nil, fmt.Errorf("create pipe: %w", err)
	}
	return &p, nil
}

// closeChildEnds closes the ends the child has inherited.
func (p *pipes) closeChildEnds() {
	for _, f := range []*os.File{p.inR, p.outW, p.errW} {
		_ = f.Close()
	}
}

func (p *pipes) closeAll() {
	for _, f := range []*os.File{p.inR, p.inW, p.outR, p.outW, p.errR, p.errW} {
		if f != nil {
			_ = f.Close()
		}
	}
}

// outputReader notes activity on every read and copies stdout to the log.
type outputReader struct {
	r     io.Reader
	log   io.Writer // nil for stderr
	touch func()
}

func (o *outputReader) Read(p []byte) (int, error) {
	n, err := o.r.Read(p)
	if n > 0 {
		o.touch()
		if o.log != nil {
			_, _ = o.log.Write(p[:n])
		}
	}
	return n, err
}

// logWriter writes to Request.Log; after the first error it drops everything,
// so a full disk never stops the agent's output from being read.
type logWriter struct {
	w      io.Writer
	failed bool
	n      int64
	last   byte
}

func (l *logWriter) Write(p []byte) (int, error) {
	if l.w == nil || l.failed || len(p) == 0 {
		return len(p), nil
	}
	if _, err := l.w.Write(p); err != nil {
		l.failed = true
		return len(p), nil
	}
	l.n += int64(len(p))
	l.last = p[len(p)-1]
	return len(p), nil
}

// runEvents is the Events that Run gives Decode.
type runEvents struct {
	sink     Sink
	terminal chan struct{}
	once     sync.Once
}

func (e *runEvents) Text(s string) {
	if e.sink != nil {
		e.sink.Text(s)
	}
}

func (e *runEvents) Tool(name, summary string) {
	if e.sink != nil {
		e.sink.Tool(name, summary)
	}
}

func (e *runEvents) Terminal() { e.once.Do(func() { close(e.terminal) }) }

// decodePanic is a panic of a driver's Decode, turned into an error.
type decodePanic struct{ value any }

func (p *decodePanic) Error() string { return fmt.Sprintf("decoder panicked: %v", p.value) }

// safeDecode runs d.Decode and turns a panic into an error: a decoder bug must
// not take the loop down with the agent's process group still running.
func safeDecode(d Driver, r io.Reader, ev Events) (res Result, err error) {
	defer func() {
		if v := recover(); v != nil {
			res, err = Result{}, &decodePanic{value: v}
		}
	}()
	return d.Decode(r, ev)
}

// signalGroup sends sig to the process group pgid, ignoring "no such process".
func signalGroup(pgid int, sig syscall.Signal) {
	if pgid > 1 {
		_ = syscall.Kill(-pgid, sig)
	}
}

// wait reaps cmd's process; the error is set only when there is no state.
func wait(cmd *exec.Cmd) (*os.ProcessState, error) {
	err := cmd.Wait()
	if cmd.ProcessState != nil {
		return cmd.ProcessState, nil
	}
	return nil, err
}

// exitStatus returns the exit code (-1 for a signal) and the signal's name.
func exitStatus(st *os.ProcessState) (int, string) {
	if st == nil {
		return -1, ""
	}
	if ws, ok := st.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return -1, ws.Signal().String()
	}
	return st.ExitCode(), ""
}

// pinningEnv are the variables that would pin the agent's git to another repository,
// worktree or index (git exports them to hooks, and git-ralph may run under one):
// internal/git removes the same ones from its own git's environment (scrubbedEnv).
var pinningEnv = []string{"GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_PREFIX", "GIT_COMMON_DIR"}

// childEnv is base minus pinningEnv and minus those extra overrides, plus extra.
func childEnv(base, extra []string) []string {
	override := make(map[string]bool, len(extra))
	for _, kv := range extra {
		k, _, _ := strings.Cut(kv, "=")
		override[k] = true
	}
	env := make([]string, 0, len(base)+len(extra))
	for _, kv := range base {
		k, _, _ := strings.Cut(kv, "=")
		if override[k] || slices.Contains(pinningEnv, k) {
			continue
		}
		env = append(env, kv)
	}
	return append(env, extra...)
}

func orDefault(d time.Duration) time.Duration {
	if d <= 0 {
		return defaultGrace
	}
	return d
}
