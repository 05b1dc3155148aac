// Run's tests are in package agent_test: they drive Claude Code's driver (package
// claude), which imports agent.
package agent_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/git-ralph/git-ralph/internal/agent"
	"github.com/git-ralph/git-ralph/internal/agent/agenttest"
	"github.com/git-ralph/git-ralph/internal/agent/claude"
)

// From the helper (helper_test.go, package agent).
const helperEnv = agent.HelperEnv

var (
	childPid = agent.ChildPid
	waitGone = agent.WaitGone
	newFlood = agent.NewFlood
)

// decodeFile decodes the transcript testdata/name with Claude Code's driver.
func decodeFile(t *testing.T, name string) (agent.Result, *agenttest.Recorder) {
	t.Helper()
	return agenttest.Decode(t, claude.Claude{}, filepath.Join("testdata", name))
}

// helperRequest is a Request that runs the helper in mode.
func helperRequest(t *testing.T, mode string, env ...string) agent.Request {
	return agent.Request{
		Dir: t.TempDir(),
		Env: append([]string{helperEnv + "=" + mode}, env...),
		// Generous: they cost nothing unless the helper misbehaves.
		KillGrace: 2 * time.Second,
		Grace:     2 * time.Second,
	}
}

// syncBuffer is a bytes.Buffer safe to read while Run writes, which closes
// started on the first write.
type syncBuffer struct {
	mu      sync.Mutex
	buf     bytes.Buffer
	once    sync.Once
	started chan struct{}
}

func newSyncBuffer() *syncBuffer { return &syncBuffer{started: make(chan struct{})} }

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.once.Do(func() { close(b.started) })
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// manualClock is an agent.Clock that moves only when the test says so: whether a
// timeout fired then depends on what the test did, never on how fast the machine is.
type manualClock struct {
	mu     sync.Mutex
	now    time.Time
	timers []manualTimer
}

type manualTimer struct {
	at time.Time
	ch chan time.Time
}

func newManualClock() *manualClock { return &manualClock{now: time.Unix(1_000_000_000, 0)} }

func (c *manualClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *manualClock) After(d time.Duration) <-chan time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	ch := make(chan time.Time, 1)
	if d <= 0 {
		ch <- c.now
		return ch
	}
	c.timers = append(c.timers, manualTimer{c.now.Add(d), ch})
	return ch
}

// Advance moves the clock by d and fires the timers that are due.
func (c *manualClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
	keep := c.timers[:0]
	for _, t := range c.timers {
		if t.at.After(c.now) {
			keep = append(keep, t)
			continue
		}
		t.ch <- c.now
	}
	c.timers = keep
}

// keepAdvancing moves clock by d now and every 10ms until done is closed: Run arms its
// timers when it begins to supervise the process, which may be after the output the
// test waited for, so a single move could come before the timer it was meant to fire.
func keepAdvancing(clock *manualClock, d time.Duration, done <-chan struct{}) {
	for {
		clock.Advance(d)
		select {
		case <-done:
			return
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// textSink hands each live text to the test as it arrives.
type textSink struct {
	mu    sync.Mutex
	texts []string
	got   chan string
}

func newTextSink() *textSink { return &textSink{got: make(chan string, 1000)} }

func (s *textSink) Text(text string) {
	s.mu.Lock()
	s.texts = append(s.texts, text)
	s.mu.Unlock()
	s.got <- text
}
func (s *textSink) Tool(string, string) {}
func (s *textSink) Terminal()           {}

// next waits for the next text (two minutes at most: a safety net, not a bound any
// run meets by being fast).
func (s *textSink) next(t *testing.T) string {
	t.Helper()
	select {
	case text := <-s.got:
		return text
	case <-time.After(2 * time.Minute):
		t.Fatal("no text from the agent")
		return ""
	}
}

func TestRunSamples(t *testing.T) {
	h := newHelper(t)
	files, err := filepath.Glob("testdata/*claude*")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range files {
		t.Run(filepath.Base(name), func(t *testing.T) {
			want, _ := decodeFile(t, filepath.Base(name))
			abs, _ := filepath.Abs(name)
			exit := 0
			if want.IsError {
				exit = 1 // as claude does (docs/AGENTS.md, "Claude Code")
			}
			req := helperRequest(t, "sample", "HELPER_FILE="+abs, fmt.Sprintf("HELPER_EXIT=%d", exit))
			var log bytes.Buffer
			rec := &agenttest.Recorder{}
			req.Log, req.Sink = &log, rec
			got, err := agent.Run(context.Background(), h, req)
			if err != nil {
				t.Fatal(err)
			}
			if got.ExitCode != exit || got.Signal != "" || got.TimedOut || got.Idle || got.Interrupted || got.Lingered {
				t.Errorf("process fields: %+v", got)
			}
			if got.SawResult != want.SawResult || got.Text != want.Text || got.IsError != want.IsError ||
				got.Turns != want.Turns || got.SessionID != want.SessionID || got.Promise() != want.Promise() {
				t.Errorf("Run = %+v\nDecode = %+v", got, want)
			}
			sample, _ := os.ReadFile(name)
			logged := log.String()
			if !strings.HasPrefix(logged, string(sample)) {
				t.Fatalf("the log does not start with the raw stdout")
			}
			trailer := strings.TrimPrefix(logged, string(sample))
			wantTrailer := fmt.Sprintf("--- git-ralph: agent exited with status %d ---\n", exit)
			if !want.SawResult {
				wantTrailer = fmt.Sprintf("--- git-ralph: agent exited with status %d (no result event) ---\n", exit)
			}
			if !bytes.HasSuffix(sample, []byte("\n")) {
				wantTrailer = "\n" + wantTrailer
			}
			if trailer != wantTrailer {
				t.Errorf("trailer = %q, want %q", trailer, wantTrailer)
			}
			if len(rec.Texts) == 0 && want.Text != "" && name != "testdata/claude-output-format-json.json" {
				t.Errorf("no live text reached the sink")
			}
		})
	}
}

func TestRunNormalExitKillsLeftovers(t *testing.T) {
	// The agent exits normally but leaves a child that ignores SIGTERM and
	// holds stdout open: the group kill must reap it, and stdout must reach
	// EOF at once.
	req := helperRequest(t, "complete", "HELPER_CHILD=1")
	req.KillGrace = time.Hour // the drain must not need it: Run returning at all says so
	rec := &agenttest.Recorder{}
	req.Sink = rec
	res, err := agent.Run(context.Background(), newHelper(t), req)
	if err != nil {
		t.Fatal(err)
	}
	if !res.SawResult || res.ExitCode != 0 || res.Promise().Kind != agent.PromiseComplete {
		t.Fatalf("res = %+v", res)
	}
	if len(rec.Texts) != 2 || len(rec.Tools) != 1 || rec.Tools[0] != "Bash: sleep 1000 &" {
		t.Errorf("texts %q tools %q", rec.Texts, rec.Tools)
	}
	waitGone(t, childPid(t, res.Stderr))
}

func TestRunHangIgnoringSIGTERM(t *testing.T) {
	req := helperRequest(t, "hang-init", "HELPER_SIGTERM=ignore", "HELPER_CHILD=1")
	req.IdleTimeout = 100 * time.Millisecond
	req.KillGrace = 150 * time.Millisecond
	// Idle once the helper has printed its first line, which it does after it
	// started ignoring SIGTERM.
	clock, log := newManualClock(), newSyncBuffer()
	req.Clock, req.Log = clock, log
	done := make(chan struct{})
	defer close(done)
	go func() {
		<-log.started
		keepAdvancing(clock, req.IdleTimeout, done)
	}()
	var pid int
	var start uint64
	req.OnStart = func(p int, s uint64) {
		if runtime.GOOS == "linux" && !agent.GroupAlive(p, s) {
			t.Errorf("GroupAlive(%d, %d) = false right after the start", p, s)
		}
		pid, start = p, s
	}
	t0 := time.Now()
	res, err := agent.Run(context.Background(), newHelper(t), req)
	if err != nil {
		t.Fatal(err)
	}
	d := time.Since(t0)
	if !res.Idle || res.TimedOut || res.SawResult || res.Signal != "killed" || res.ExitCode != -1 {
		t.Fatalf("res = %+v", res)
	}
	if d < 150*time.Millisecond {
		t.Errorf("Run took %v; want at least KillGrace", d)
	}
	waitGone(t, childPid(t, res.Stderr))
	if pid == 0 || agent.GroupAlive(pid, start) {
		t.Errorf("GroupAlive(%d, %d) after Run", pid, start)
	}
}

func TestRunLingerAfterResult(t *testing.T) {
	req := helperRequest(t, "hang-result")
	req.Grace = 2 * time.Second
	// The limits are on a clock that stands still: only the grace after the result
	// can end the run, however slowly the helper starts.
	req.Clock = newManualClock()
	req.Timeout = 10 * time.Second
	req.IdleTimeout = time.Second
	res, err := agent.Run(context.Background(), newHelper(t), req)
	if err != nil {
		t.Fatal(err)
	}
	if !res.SawResult || !res.Lingered || res.Idle || res.TimedOut || res.Interrupted || res.Promise().Kind != agent.PromiseComplete {
		t.Fatalf("res = %+v", res)
	}
	if res.ExitCode > 0 {
		t.Errorf("ExitCode = %d: a lingering agent must not look like a failed one", res.ExitCode)
	}
}

func TestRunIdleTimeout(t *testing.T) {
	req := helperRequest(t, "idle")
	req.IdleTimeout = time.Second
	req.Timeout = 10 * time.Second
	clock := newManualClock()
	req.Clock = clock
	var log bytes.Buffer
	req.Log = &log
	sink := newTextSink()
	req.Sink = sink
	done := make(chan struct{})
	defer close(done)
	go func() {
		sink.next(t) // "thinking hard": then nothing more for the idle timeout
		keepAdvancing(clock, req.IdleTimeout, done)
	}()
	res, err := agent.Run(context.Background(), newHelper(t), req)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Idle || res.TimedOut || res.SawResult || res.ExitCode != 143 || res.Signal != "" {
		t.Fatalf("res = %+v", res)
	}
	if len(sink.texts) != 1 || res.Text != "thinking hard" {
		t.Errorf("texts %q, Text %q", sink.texts, res.Text)
	}
	if !strings.HasSuffix(log.String(), "--- git-ralph: agent exited with status 143 (idle timeout, no result event) ---\n") {
		t.Errorf("log ends %q", agent.Tail(log.String(), 200))
	}
}

// Output resets the idle timer: an agent that prints something every second runs
// three seconds under an idle timeout of a second and a half, unharmed.
func TestRunIdleResetByOutput(t *testing.T) {
	dir := t.TempDir()
	req := helperRequest(t, "steps", "HELPER_DIR="+dir)
	req.IdleTimeout = 1500 * time.Millisecond
	clock := newManualClock()
	req.Clock = clock
	sink := newTextSink()
	req.Sink = sink
	step := func(name string) {
		if err := os.WriteFile(filepath.Join(dir, name), nil, 0o644); err != nil {
			t.Error(err)
		}
	}
	go func() {
		for i := 1; i <= 3; i++ {
			// The second passes first, then the line comes: it is read at the
			// clock's new time, so the agent was never quiet for longer than it.
			clock.Advance(time.Second)
			step("go-" + strconv.Itoa(i))
			if got := sink.next(t); got != "step "+strconv.Itoa(i) {
				t.Errorf("text %q", got)
			}
		}
		step("done")
	}()
	res, err := agent.Run(context.Background(), newHelper(t), req)
	if err != nil {
		t.Fatal(err)
	}
	if res.Idle || res.TimedOut || !res.SawResult || res.ExitCode != 0 {
		t.Fatalf("res = %+v", res)
	}
	if d := clock.Now().Sub(time.Unix(1_000_000_000, 0)); d <= req.IdleTimeout {
		t.Fatalf("the clock moved %v, not past the idle timeout", d)
	}
}

func TestRunTimeout(t *testing.T) {
	req := helperRequest(t, "trickle")
	req.Timeout = time.Second
	req.IdleTimeout = 3 * time.Second // output every 20ms keeps it quiet anyway
	clock := newManualClock()
	req.Clock = clock
	sink := newTextSink()
	req.Sink = sink
	done := make(chan struct{})
	defer close(done)
	go func() {
		sink.next(t) // at work, printing: then its time runs out
		keepAdvancing(clock, req.Timeout, done)
	}()
	res, err := agent.Run(context.Background(), newHelper(t), req)
	if err != nil {
		t.Fatal(err)
	}
	if !res.TimedOut || res.Idle || res.SawResult || res.ExitCode != 143 {
		t.Fatalf("res = %+v", res)
	}
}

func TestRunInterrupt(t *testing.T) {
	req := helperRequest(t, "hang-init")
	log := newSyncBuffer()
	req.Log = log
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		<-log.started // the helper has trapped SIGINT before it printed init
		cancel()
	}()
	res, err := agent.Run(ctx, newHelper(t), req)
	if err != nil {
		t.Fatal(err)
	}
	// claude exits 0 on SIGINT without a result (docs/AGENTS.md, "Common to every agent").
	if !res.Interrupted || res.SawResult || res.ExitCode != 0 || !strings.Contains(res.Stderr, "got SIGINT") {
		t.Fatalf("res = %+v", res)
	}
	if !strings.Contains(log.String(), "--- git-ralph: agent stderr ---\ngot SIGINT\n--- git-ralph: end of agent stderr ---\n") {
		t.Errorf("log = %q", log.String())
	}
}

func TestRunKillChannel(t *testing.T) {
	req := helperRequest(t, "hang-init", "HELPER_SIGINT=ignore", "HELPER_SIGTERM=ignore")
	req.KillGrace = time.Hour // Run returning at all says the Kill channel did not wait for it
	log := newSyncBuffer()
	req.Log = log
	kill := make(chan struct{})
	req.Kill = kill
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		<-log.started
		cancel() // first Ctrl-C: SIGINT, ignored
		time.Sleep(50 * time.Millisecond)
		close(kill) // second Ctrl-C
	}()
	res, err := agent.Run(ctx, newHelper(t), req)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Interrupted || !res.KilledAtOnce || res.Signal != "killed" || res.ExitCode != -1 {
		t.Fatalf("res = %+v", res)
	}
}

func TestRunPromptOnStdinAndEnvironment(t *testing.T) {
	prompt := strings.Repeat("Implement story 1.2 — ünïcode and all.\n", 8000) // ~300 KB, over the argv limit
	if len(prompt) < 300<<10 {
		t.Fatalf("prompt of %d bytes", len(prompt))
	}
	for _, k := range []string{"GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_PREFIX"} {
		t.Setenv(k, "/somewhere/else")
	}
	t.Setenv("HELPER_OVERRIDE", "inherited")
	req := helperRequest(t, "stdin", "RALPH_STORY=1.2", "HELPER_OVERRIDE=ours")
	req.Prompt = prompt
	var onStart int
	req.OnStart = func(pid int, start uint64) {
		onStart++
		if got, err := agent.ProcStart(pid); runtime.GOOS == "linux" && (err != nil || got != start || start == 0) {
			t.Errorf("OnStart(%d, %d); ProcStart = %d, %v", pid, start, got, err)
		}
	}
	res, err := agent.Run(context.Background(), newHelper(t), req)
	if err != nil {
		t.Fatal(err)
	}
	dir, _ := filepath.EvalSymlinks(req.Dir)
	want := fmt.Sprintf("bytes=%d sha256=%x git_dir=<unset> left=[] story=1.2 override=ours cwd=%s\n<promise>COMPLETE</promise>",
		len(prompt), sha256.Sum256([]byte(prompt)), dir)
	if res.Text != want {
		t.Errorf("Text = %q\nwant   %q", res.Text, want)
	}
	if onStart != 1 {
		t.Errorf("OnStart called %d times", onStart)
	}
}

func TestRunRootRefusal(t *testing.T) {
	req := helperRequest(t, "root")
	var log bytes.Buffer
	req.Log = &log
	res, err := agent.Run(context.Background(), newHelper(t), req)
	if err != nil {
		t.Fatal(err)
	}
	if res.SawResult || res.ExitCode != 1 || !strings.Contains(res.Fatal, "IS_SANDBOX=1") || !strings.Contains(res.Fatal, "root") {
		t.Fatalf("res = %+v", res)
	}
	want := "--- git-ralph: agent stderr ---\n--dangerously-skip-permissions cannot be used with root/sudo privileges for security reasons\n" +
		"--- git-ralph: end of agent stderr ---\n--- git-ralph: agent exited with status 1 (no result event) ---\n"
	if log.String() != want {
		t.Errorf("log = %q", log.String())
	}
}

func TestRunEscapedDescendant(t *testing.T) {
	// A descendant in its own session holds stdout: Run cannot kill it, but
	// must not wait for it longer than KillGrace.
	req := helperRequest(t, "escape")
	req.KillGrace = 200 * time.Millisecond
	// The descendant sleeps far longer than any test runs: Run returning at all
	// says it did not wait for it.
	res, err := agent.Run(context.Background(), newHelper(t), req)
	if err != nil {
		t.Fatal(err)
	}
	pid := childPid(t, res.Stderr)
	defer syscall.Kill(pid, syscall.SIGKILL)
	if !res.SawResult || res.ExitCode != 0 || res.Promise().Kind != agent.PromiseComplete {
		t.Fatalf("res = %+v", res)
	}
}

func TestRunCancelledBeforeStart(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	req := helperRequest(t, "complete")
	req.OnStart = func(int, uint64) { t.Error("started") }
	res, err := agent.Run(ctx, newHelper(t), req)
	if err != nil || !res.Interrupted {
		t.Fatalf("res %+v err %v", res, err)
	}
}

func TestRunNotFound(t *testing.T) {
	d := helperDriver{exe: "git-ralph-no-such-agent"}
	_, err := agent.Run(context.Background(), d, agent.Request{Dir: t.TempDir()})
	var nf *agent.NotFoundError
	if !errors.As(err, &nf) || nf.Binary != "git-ralph-no-such-agent" || !strings.Contains(nf.Hint(), "npm install") {
		t.Fatalf("err = %#v", err)
	}
	if !errors.Is(err, exec.ErrNotFound) {
		t.Errorf("err does not wrap exec.ErrNotFound: %v", err)
	}
	_, err = agent.Run(context.Background(), helperDriver{exe: "/nonexistent/claude"}, agent.Request{Dir: t.TempDir()})
	if err == nil {
		t.Fatal("no error for a missing absolute path")
	}
}

type failingWriter struct{ n int }

func (w *failingWriter) Write(p []byte) (int, error) {
	w.n++
	return 0, errors.New("disk full")
}

func TestRunLogWriteErrorIsHarmless(t *testing.T) {
	req := helperRequest(t, "complete")
	w := &failingWriter{}
	req.Log = w
	res, err := agent.Run(context.Background(), newHelper(t), req)
	if err != nil {
		t.Fatal(err)
	}
	if res.Promise().Kind != agent.PromiseComplete || w.n != 1 {
		t.Fatalf("res %+v, %d writes", res, w.n)
	}
}

// panicDriver's Decode panics after reading a little.
type panicDriver struct{ helperDriver }

func (panicDriver) Decode(r io.Reader, ev agent.Events) (agent.Result, error) {
	var b [1]byte
	_, _ = r.Read(b[:])
	panic("decoder bug")
}

func TestRunDecoderPanic(t *testing.T) {
	req := helperRequest(t, "complete")
	var log bytes.Buffer
	req.Log = &log
	res, err := agent.Run(context.Background(), panicDriver{newHelper(t)}, req)
	if err != nil {
		t.Fatal(err)
	}
	if res.SawResult || len(res.Errors) != 1 || !strings.Contains(res.Errors[0], "decoder bug") {
		t.Fatalf("res = %+v", res)
	}
	if !strings.Contains(log.String(), `"type":"result"`) {
		t.Errorf("the rest of stdout did not reach the log")
	}
}

// floodMB is how many megabytes the flood tests stream: 40, more than their 32 MiB
// bound on the heap, so that an agent's output kept whole fails them; GIT_RALPH_FLOOD_MB
// raises it (the suite runs them beside everything else, on two cores).
func floodMB() int {
	if n, err := strconv.Atoi(os.Getenv("GIT_RALPH_FLOOD_MB")); err == nil && n > 40 {
		return n
	}
	return 40
}

// maxFloodHeap is the flood tests' bound on the peak heap.
const maxFloodHeap = 32 << 20

func TestRunFloodMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("streams tens of MB")
	}
	mb := floodMB()
	req := helperRequest(t, "flood", "HELPER_MB="+strconv.Itoa(mb))
	req.Log = io.Discard
	var texts atomic.Int64
	req.Sink = countSink{&texts}
	stop := sampleHeap()
	res, err := agent.Run(context.Background(), newHelper(t), req)
	peak := stop()
	if err != nil {
		t.Fatal(err)
	}
	if !res.SawResult || res.Promise().Kind != agent.PromiseComplete {
		t.Fatalf("res = %+v", res)
	}
	if n := texts.Load(); n < int64(mb)*900 {
		t.Errorf("only %d text events", n)
	}
	t.Logf("peak HeapInuse %.1f MiB for %d MB of output", float64(peak)/(1<<20), mb)
	if peak > maxFloodHeap {
		t.Errorf("peak HeapInuse %d MiB, want < %d MiB", peak>>20, maxFloodHeap>>20)
	}
}

type countSink struct{ n *atomic.Int64 }

func (c countSink) Text(string)         { c.n.Add(1) }
func (c countSink) Tool(string, string) {}

// sampleHeap samples HeapInuse until stop is called, which returns the peak.
func sampleHeap() (stop func() uint64) {
	runtime.GC()
	var peak uint64
	done, finished := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(finished)
		tick := time.NewTicker(2 * time.Millisecond)
		defer tick.Stop()
		var ms runtime.MemStats
		for {
			runtime.ReadMemStats(&ms)
			peak = max(peak, ms.HeapInuse)
			select {
			case <-done:
				return
			case <-tick.C:
			}
		}
	}()
	return func() uint64 {
		close(done)
		<-finished
		return peak
	}
}

func BenchmarkDecodeFlood(b *testing.B) {
	const size = 200 << 20
	b.SetBytes(size)
	var peak uint64
	for b.Loop() {
		stop := sampleHeap()
		res, err := claude.Claude{}.Decode(newFlood(size), agent.NopEvents{})
		peak = max(peak, stop())
		if err != nil || !res.SawResult {
			b.Fatalf("res %+v err %v", res, err)
		}
	}
	b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MiB")
}

func TestDecodeFloodMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("decodes tens of MB")
	}
	stop := sampleHeap()
	res, err := claude.Claude{}.Decode(newFlood(int64(floodMB())<<20), agent.NopEvents{})
	peak := stop()
	if err != nil || !res.SawResult {
		t.Fatalf("res %+v err %v", res, err)
	}
	if peak > maxFloodHeap {
		t.Errorf("peak HeapInuse %d MiB, want < %d MiB", peak>>20, maxFloodHeap>>20)
	}
}

func TestLookPath(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("PATH", dir)
	_, err := agent.LookPath(claude.Claude{})
	var nf *agent.NotFoundError
	if !errors.As(err, &nf) || nf.Agent != "claude" || nf.Binary != "claude" || nf.Hint() != (claude.Claude{}).InstallHint() {
		t.Fatalf("err = %#v", err)
	}
	if err.Error() != `"claude" not found on PATH` {
		t.Errorf("Error() = %q", err.Error())
	}
	if err := os.WriteFile(filepath.Join(dir, "claude"), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if p, err := agent.LookPath(claude.Claude{}); err != nil || p != filepath.Join(dir, "claude") {
		t.Fatalf("LookPath = %q, %v", p, err)
	}
}

// helperDriver is the claude driver with the test binary as the executable.
type helperDriver struct {
	claude.Claude
	exe string
}

func (h helperDriver) Binary() string { return h.exe }

func (h helperDriver) Argv(req agent.Request) []string {
	argv := h.Claude.Argv(req)
	argv[0] = h.exe
	return argv
}

func newHelper(t *testing.T) helperDriver {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return helperDriver{exe: exe}
}
