package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/git-ralph/git-ralph/internal/testtmp"
)

// The harness commands below replace the shell helpers scripts used to carry
// (await.sh, dead.sh, alive.sh, interrupt.sh, rc.sh): each of those forked sh, cat,
// wc and sleep every 10 ms while it waited, a measurable share of the suite's CPU
// on a 2-core machine. They wait for a condition, never for a time: the bound is a
// safety net for a broken test (harnessBound), far above what any run needs however
// loaded the machine is, so that no assertion depends on how fast the machine is.

// harnessBound is how long a harness command waits for its condition before it
// fails the script. It only ends a test that is broken: a correct run meets the
// condition whatever the load.
const harnessBound = 2 * time.Minute

// harnessPoll is how often a harness command looks again.
const harnessPoll = 5 * time.Millisecond

// waitFor calls cond until it reports true, failing the script after harnessBound
// with what it waited for.
func waitFor(ts *testscript.TestScript, what string, cond func() bool) {
	deadline := time.Now().Add(harnessBound)
	for !cond() {
		if time.Now().After(deadline) {
			ts.Fatalf("gave up after %s waiting for %s", harnessBound, what)
		}
		time.Sleep(harnessPoll)
	}
}

// cmdAwait waits for a file:
//
//	await FILE           FILE exists and is not empty
//	await -exists FILE   FILE exists (an empty file too)
//	await -lines N FILE  FILE has at least N lines
func cmdAwait(ts *testscript.TestScript, neg bool, args []string) {
	usage := "usage: await [-exists | -lines N] FILE"
	if neg {
		ts.Fatalf("%s (no negation: to say a file does not exist, use ! exists)", usage)
	}
	lines, exists := 0, false
	switch {
	case len(args) == 2 && args[0] == "-exists":
		exists, args = true, args[1:]
	case len(args) == 3 && args[0] == "-lines":
		n, err := strconv.Atoi(args[1])
		if err != nil || n < 1 {
			ts.Fatalf("%s", usage)
		}
		lines, args = n, args[2:]
	case len(args) != 1:
		ts.Fatalf("%s", usage)
	}
	file := ts.MkAbs(args[0])
	what := file
	if lines > 0 {
		what = fmt.Sprintf("%d line(s) in %s", lines, file)
	}
	waitFor(ts, what, func() bool {
		if exists {
			_, err := os.Lstat(file)
			return err == nil
		}
		data, err := os.ReadFile(file)
		if err != nil {
			return false
		}
		if lines == 0 {
			return len(data) > 0
		}
		return strings.Count(string(data), "\n") >= lines
	})
}

// readPids reads the pids a file lists, one per line (blank lines skipped).
func readPids(ts *testscript.TestScript, file string) []int {
	var pids []int
	sc := bufio.NewScanner(strings.NewReader(ts.ReadFile(file)))
	for sc.Scan() {
		f := strings.TrimSpace(sc.Text())
		if f == "" {
			continue
		}
		p, err := strconv.Atoi(f)
		if err != nil || p <= 0 {
			ts.Fatalf("%s: %q is not a pid", file, f)
		}
		pids = append(pids, p)
	}
	if len(pids) == 0 {
		ts.Fatalf("%s lists no pid", file)
	}
	return pids
}

// procState is the state letter of a process (R, S, D, T, Z, X, …), "" when it does
// not exist.
func procState(pid int) string {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return ""
	}
	// pid (comm) S ...: comm may hold spaces and parentheses, so look after the last ')'.
	s := string(data)
	i := strings.LastIndexByte(s, ')')
	if i < 0 || i+2 >= len(s) {
		return ""
	}
	return s[i+2 : i+3]
}

// startedAfter reports whether process pid started after t (its start time in
// /proc/<pid>/stat, in clock ticks since boot, of 1/100 s here as on every Linux git-ralph
// runs on).
func startedAfter(pid int, t time.Time) bool {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	s := string(data)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return false
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 20 {
		return false
	}
	ticks, err := strconv.ParseInt(f[19], 10, 64)
	if err != nil {
		return false
	}
	stat, err := os.ReadFile("/proc/stat")
	if err != nil {
		return false
	}
	for line := range strings.SplitSeq(string(stat), "\n") {
		if v, ok := strings.CutPrefix(line, "btime "); ok {
			boot, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			if err != nil {
				return false
			}
			return time.Unix(boot, 0).Add(time.Duration(ticks) * 10 * time.Millisecond).After(t)
		}
	}
	return false
}

// gone reports whether a process has ended: it does not exist, or it is a zombie
// nobody reaped yet.
func gone(pid int) bool {
	st := procState(pid)
	return st == "" || st == "Z" || st == "X"
}

// cmdDead checks, at once, that every pid FILE lists has ended (a zombie nobody
// reaped counts as ended): dead FILE. With -wait it waits for them to end, for the
// processes that are being stopped when the script goes on (a killed process group
// is gone a moment after the kill returns).
func cmdDead(ts *testscript.TestScript, neg bool, args []string) {
	wait := len(args) == 2 && args[0] == "-wait"
	if wait {
		args = args[1:]
	}
	if neg || len(args) != 1 {
		ts.Fatalf("usage: dead [-wait] FILE (to say they run, use alive)")
	}
	pids := readPids(ts, args[0])
	// A pid the system gave again to a process started after FILE was written (the
	// suite starts thousands, and pid_max may be 32768) is not one of them.
	var written time.Time
	if fi, err := os.Stat(ts.MkAbs(args[0])); err == nil {
		written = fi.ModTime()
	}
	gone := func(p int) bool { return gone(p) || !written.IsZero() && startedAfter(p, written) }
	allGone := func() bool {
		for _, p := range pids {
			if !gone(p) {
				return false
			}
		}
		return true
	}
	if wait {
		waitFor(ts, fmt.Sprintf("pids %v to end", pids), allGone)
		return
	}
	for _, p := range pids {
		if !gone(p) {
			ts.Fatalf("pid %d is still running (state %s)", p, procState(p))
		}
	}
}

// cmdAlive checks that every pid FILE lists is running: alive FILE.
func cmdAlive(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: alive FILE (to say they ended, use dead)")
	}
	for _, p := range readPids(ts, args[0]) {
		if gone(p) {
			ts.Fatalf("pid %d is gone", p)
		}
	}
}

// parentOf is the parent pid of a process, 0 when it cannot be read.
func parentOf(pid int) int {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	s := string(data)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 2 {
		return 0
	}
	pp, _ := strconv.Atoi(f[1])
	return pp
}

// cmdSigparent sends a signal to git-ralph, the parent of the agent whose pid is the
// first line of PIDFILE, as a Ctrl-C (INT), the runner's cancel (INT, TERM) or a
// crash (KILL) would; it waits for PIDFILE to be written first, and refuses when the
// parent is not git-ralph:
//
//	sigparent INT $WORK/agent.pid
func cmdSigparent(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: sigparent INT|TERM|KILL|STOP|CONT PIDFILE")
	}
	sig, ok := map[string]syscall.Signal{"INT": syscall.SIGINT, "TERM": syscall.SIGTERM,
		"KILL": syscall.SIGKILL, "STOP": syscall.SIGSTOP, "CONT": syscall.SIGCONT, "HUP": syscall.SIGHUP}[args[0]]
	if !ok {
		ts.Fatalf("sigparent: unknown signal %q", args[0])
	}
	file := ts.MkAbs(args[1])
	waitFor(ts, file, func() bool { // pid files are written whole (by rename)
		fi, err := os.Stat(file)
		return err == nil && fi.Size() > 0
	})
	agent := readPids(ts, args[1])[0]
	ralph := parentOf(agent)
	comm, _ := os.ReadFile(fmt.Sprintf("/proc/%d/comm", ralph))
	if ralph <= 1 || strings.TrimSpace(string(comm)) != "git-ralph" {
		ts.Fatalf("the agent %d's parent %d is %q, not git-ralph", agent, ralph, strings.TrimSpace(string(comm)))
	}
	ts.Check(syscall.Kill(ralph, sig))
}

// cmdExitcode runs a command as exec does and checks its exact exit status, which
// exec cannot (it tells only zero from non-zero); its output is then stdout and stderr
// as after exec:
//
//	exitcode 75 git ralph start x --deadline 2s
func cmdExitcode(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: exitcode N COMMAND [ARG...]")
	}
	want, err := strconv.Atoi(args[0])
	if err != nil {
		ts.Fatalf("exitcode: %q is not a number", args[0])
	}
	err = ts.Exec(args[1], args[2:]...)
	got := 0
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		got = ee.ExitCode()
	case err != nil:
		ts.Fatalf("exitcode: %v", err)
	}
	if got != want {
		ts.Fatalf("exit status %d, want %d", got, want)
	}
}

// cmdAgentpid writes the pid of the fake agent's last call, as its record
// (FAKE_AGENT_RECORD) lists it, to PIDFILE, for sigparent and dead to use:
//
//	agentpid $WORK/agent-calls.ndjson $WORK/agent.pid
func cmdAgentpid(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: agentpid RECORD PIDFILE")
	}
	pid := 0
	for line := range strings.Lines(ts.ReadFile(args[0])) {
		var call struct {
			PID int `json:"pid"`
		}
		if json.Unmarshal([]byte(line), &call) == nil && call.PID > 0 {
			pid = call.PID
		}
	}
	if pid == 0 {
		ts.Fatalf("%s records no agent pid", args[0])
	}
	ts.Check(os.WriteFile(ts.MkAbs(args[1]), []byte(strconv.Itoa(pid)+"\n"), 0o644))
}

// testTimeClock is the clock of the test binary's git-ralph for the user's limits
// (--timeout, --idle-timeout, --deadline): it stands still until a script moves it,
// by appending a Go duration per line to the file GIT_RALPH_TEST_TIME names (the fake
// agent's advance_clock step, the harness command advance). Every git-ralph process of
// a script shares the file; each counts only what was appended after it started. A
// limit is then reached when the script says so, never because the machine was slow.
type testTimeClock struct {
	path  string
	start time.Time     // the wall clock when the process made the clock
	base  time.Duration // the advances the file held then

	mu   sync.Mutex
	size int64 // of the file when total was summed
	sum  time.Duration
}

func newTestTimeClock(path string) *testTimeClock {
	c := &testTimeClock{path: path, start: time.Now()}
	c.base = c.advanced()
	return c
}

// advanced is the sum of the durations in the file, read again only when it grew.
func (c *testTimeClock) advanced() time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	fi, err := os.Stat(c.path)
	if err != nil || fi.Size() == c.size {
		return c.sum
	}
	data, err := os.ReadFile(c.path)
	if err != nil {
		return c.sum
	}
	var sum time.Duration
	for line := range strings.Lines(string(data)) {
		if !strings.HasSuffix(line, "\n") {
			break // a line still being written: the next look sees it whole
		}
		if d, err := time.ParseDuration(strings.TrimSpace(line)); err == nil {
			sum += d
		}
	}
	c.size, c.sum = fi.Size(), sum
	return sum
}

func (c *testTimeClock) Now() time.Time { return c.start.Add(c.advanced() - c.base) }

func (c *testTimeClock) After(d time.Duration) <-chan time.Time {
	ch := make(chan time.Time, 1)
	target := c.advanced() + d
	go func() {
		for {
			if a := c.advanced(); a >= target {
				ch <- c.start.Add(a - c.base)
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
	}()
	return ch
}

// cmdAdvance moves the test binary's clock forward (see testTimeClock): advance 2s.
func cmdAdvance(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: advance DURATION")
	}
	d, err := time.ParseDuration(args[0])
	if err != nil || d <= 0 {
		ts.Fatalf("advance: %q is not a positive Go duration", args[0])
	}
	f, err := os.OpenFile(ts.Getenv("GIT_RALPH_TEST_TIME"), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	ts.Check(err)
	_, err = f.WriteString(args[0] + "\n")
	ts.Check(err)
	ts.Check(f.Close())
}

// memTempDir is a temporary directory in memory (testtmp.Root: /dev/shm, when it is a
// tmpfs with room to spare), removed when the test ends; else t.TempDir(). The scripts
// and the chaos trials create and remove thousands of small files: on the machine's
// ext4, allocating an inode among so many recently deleted ones cost a quarter of the
// suite's CPU (perf: find_get_block_common, recently_deleted under ext4_create and
// ext4_mkdir). The install tests stay on the disk: they link Go's build cache, which
// must be on the same file system.
func memTempDir(t testing.TB) string {
	t.Helper()
	if root := testtmp.Root(); root != "" {
		if dir, err := os.MkdirTemp(root, "git-ralph-test-"); err == nil {
			t.Cleanup(func() { os.RemoveAll(dir) })
			return dir
		}
	}
	return t.TempDir()
}

// cmdPane runs a command in a real terminal, a tmux pane, and reads its screen:
//
//	pane start 'SHELL COMMAND'   start it in a 160x40 pane of the script's own tmux
//	                             server; "[exit N]" is printed when it ends
//	pane wait REGEXP             wait until a line of the screen matches
//	pane screen                  the screen as the terminal shows it, to stdout
//
// The screen is what tmux drew from the bytes the command wrote: an escape code the
// terminal did not act on shows there as the symbol it became.
func cmdPane(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) == 0 {
		ts.Fatalf("usage: pane start 'CMD' | pane wait REGEXP | pane screen")
	}
	sock := filepath.Join(ts.Getenv("WORK"), ".tmux.sock")
	capture := func() string {
		out, err := exec.Command("tmux", "-S", sock, "capture-pane", "-p", "-J").Output()
		if err != nil {
			ts.Fatalf("tmux capture-pane: %v", err)
		}
		return string(out)
	}
	switch {
	case args[0] == "start" && len(args) == 2:
		shell := args[1] + `; echo "[exit $?]"; exec cat`
		ts.Check(ts.Exec("tmux", "-S", sock, "-f", "/dev/null", "new-session", "-d",
			"-x", "160", "-y", "40", "-c", ts.MkAbs("."), shell))
		ts.Defer(func() { _ = exec.Command("tmux", "-S", sock, "kill-server").Run() })
	case args[0] == "wait" && len(args) == 2:
		re, err := regexp.Compile("(?m)" + args[1])
		ts.Check(err)
		var last string
		deadline := time.Now().Add(harnessBound)
		for {
			last = capture()
			if re.MatchString(last) {
				return
			}
			if time.Now().After(deadline) {
				ts.Fatalf("gave up after %s waiting for %q on the screen:\n%s", harnessBound, args[1], last)
			}
			time.Sleep(20 * harnessPoll)
		}
	case args[0] == "screen" && len(args) == 1:
		ts.Check(ts.Exec("tmux", "-S", sock, "capture-pane", "-p", "-J"))
	default:
		ts.Fatalf("usage: pane start 'CMD' | pane wait REGEXP | pane screen")
	}
}
