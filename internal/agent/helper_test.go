package agent

import (
	"bufio"
	"crypto/sha256"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/git-ralph/git-ralph/internal/sandbox"

	"github.com/git-ralph/git-ralph/internal/testtmp"
)

// The test binary doubles as a fake claude: when helperEnv is set, TestMain
// runs helperMain instead of the tests (the re-exec trick of
// docs/AGENTS.md, "Testing drivers"). The environment selects the behaviour:
//
//	GIT_RALPH_AGENT_HELPER  mode: sample complete escape hang-init hang-result idle trickle stdin root flood sleeper group
//	HELPER_FILE             sample: file to copy to stdout
//	HELPER_EXIT             sample: exit code
//	HELPER_CHILD=1          complete, hang-init: first start a sleeper child (same group, holding stdout)
//	HELPER_SIGTERM          hang-*: "ignore" or "exit143" (default, as claude does)
//	HELPER_SIGINT           hang-*: "ignore" or "exit0" (default, as claude does; says "got SIGINT" on stderr)
//	HELPER_MB               flood: megabytes of assistant text lines
const helperEnv = "GIT_RALPH_AGENT_HELPER"

func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == sandbox.Command {
		os.Exit(sandbox.Main(os.Args[2:])) // the launcher of a sandboxed Run
	}
	if mode := os.Getenv(helperEnv); mode != "" {
		// syscall.Exit, not os.Exit: skip the race detector's slow exit,
		// which would make the helper look like an agent that lingers.
		syscall.Exit(helperMain(mode, os.Args[1:]))
	}
	os.Exit(testtmp.Main(m))
}

const (
	helperInit   = `{"type":"system","subtype":"init","cwd":"/x","session_id":"h1","model":"claude-sonnet-4-5","permissionMode":"bypassPermissions"}`
	helperResult = `{"type":"result","subtype":"success","is_error":false,"num_turns":2,"result":%s,"session_id":"h1","total_cost_usd":0.01,"usage":{"input_tokens":100,"output_tokens":20}}`
)

func helperMain(mode string, args []string) int {
	// Behave like claude about the arguments git-ralph must pass.
	if !slices.Contains(args, "-p") {
		fmt.Fprintln(os.Stderr, "helper: missing -p")
		return 64
	}
	if i := slices.Index(args, "--output-format"); i >= 0 && i+1 < len(args) && args[i+1] == "stream-json" && !slices.Contains(args, "--verbose") {
		fmt.Fprintln(os.Stderr, "Error: When using --print, --output-format=stream-json requires --verbose")
		return 1
	}
	out := func(line string) { _, _ = os.Stdout.WriteString(line + "\n") }
	result := func(text string) { out(fmt.Sprintf(helperResult, strconv.Quote(text))) }
	trapSignals := func() {
		switch os.Getenv("HELPER_SIGTERM") {
		case "ignore":
			signal.Ignore(syscall.SIGTERM)
		default:
			exitOn(syscall.SIGTERM, 143, "")
		}
		switch os.Getenv("HELPER_SIGINT") {
		case "ignore":
			signal.Ignore(syscall.SIGINT)
		default:
			exitOn(syscall.SIGINT, 0, "got SIGINT")
		}
	}
	switch mode {
	case "sample":
		f, err := os.Open(os.Getenv("HELPER_FILE"))
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 64
		}
		_, _ = io.Copy(os.Stdout, f)
		code, _ := strconv.Atoi(os.Getenv("HELPER_EXIT"))
		return code
	case "complete":
		out(helperInit)
		if os.Getenv("HELPER_CHILD") == "1" {
			startChild(false)
		}
		out(assistantText("m1", "Working on it."))
		out(`{"type":"assistant","message":{"id":"m1","content":[{"type":"tool_use","id":"t1","name":"Bash","input":{"command":"sleep 1000 &"}}]},"parent_tool_use_id":null}`)
		out(assistantText("m2", "Done.\n\n<promise>COMPLETE</promise>"))
		result("Done.\n\n<promise>COMPLETE</promise>")
		return 0
	case "escape":
		out(helperInit)
		startChild(true)
		result("Done.\n<promise>COMPLETE</promise>")
		return 0
	case "hang-init":
		trapSignals()
		if os.Getenv("HELPER_CHILD") == "1" {
			startChild(false)
		}
		out(helperInit)
		hang()
	case "hang-result":
		trapSignals()
		out(helperInit)
		result("Done.\n<promise>COMPLETE</promise>")
		hang()
	case "idle":
		trapSignals()
		out(helperInit)
		time.Sleep(30 * time.Millisecond)
		out(assistantText("m1", "thinking hard"))
		hang()
	case "steps":
		// A line each time the test makes HELPER_DIR/go-N (N from 1), then the
		// result once HELPER_DIR/done exists: the test decides when output comes.
		trapSignals()
		out(helperInit)
		dir := os.Getenv("HELPER_DIR")
		for i := 1; ; i++ {
			for {
				if _, err := os.Stat(filepath.Join(dir, "done")); err == nil {
					result("Done.\n<promise>COMPLETE</promise>")
					return 0
				}
				if _, err := os.Stat(filepath.Join(dir, "go-"+strconv.Itoa(i))); err == nil {
					break
				}
				time.Sleep(5 * time.Millisecond)
			}
			out(assistantText("m"+strconv.Itoa(i), "step "+strconv.Itoa(i)))
		}
	case "trickle":
		trapSignals()
		out(helperInit)
		for i := 0; ; i++ {
			time.Sleep(20 * time.Millisecond)
			out(assistantText("m"+strconv.Itoa(i), "still busy"))
		}
	case "stdin":
		data, err := io.ReadAll(os.Stdin)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 64
		}
		cwd, _ := os.Getwd()
		gitDir, ok := os.LookupEnv("GIT_DIR")
		if !ok {
			gitDir = "<unset>"
		}
		var scrubbed []string
		for _, k := range []string{"GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_PREFIX"} {
			if _, ok := os.LookupEnv(k); ok {
				scrubbed = append(scrubbed, k)
			}
		}
		out(helperInit)
		result(fmt.Sprintf("bytes=%d sha256=%x git_dir=%s left=%v story=%s override=%s cwd=%s\n<promise>COMPLETE</promise>",
			len(data), sha256.Sum256(data), gitDir, scrubbed, os.Getenv("RALPH_STORY"), os.Getenv("HELPER_OVERRIDE"), cwd))
		return 0
	case "root":
		fmt.Fprintln(os.Stderr, "--dangerously-skip-permissions cannot be used with root/sudo privileges for security reasons")
		return 1
	case "flood":
		mb, _ := strconv.Atoi(os.Getenv("HELPER_MB"))
		w := bufio.NewWriterSize(os.Stdout, 64<<10)
		_, _ = io.Copy(w, newFlood(int64(mb)<<20))
		_ = w.Flush()
		return 0
	case "sleeper":
		signal.Ignore(syscall.SIGTERM, syscall.SIGINT)
		hang()
	case "group":
		// A group leader that ignores SIGTERM, with a child that does too.
		signal.Ignore(syscall.SIGTERM)
		pid := startChild(false)
		fmt.Printf("child-pid=%d\n", pid)
		hang()
	}
	fmt.Fprintf(os.Stderr, "helper: unknown mode %q\n", mode)
	return 64
}

func hang() {
	for {
		time.Sleep(time.Hour)
	}
}

// exitOn exits with code when sig arrives, after saying msg on stderr.
func exitOn(sig os.Signal, code int, msg string) {
	c := make(chan os.Signal, 1)
	signal.Notify(c, sig)
	go func() {
		<-c
		if msg != "" {
			fmt.Fprintln(os.Stderr, msg)
		}
		syscall.Exit(code)
	}()
}

// startChild starts a sleeper that ignores SIGTERM and SIGINT and holds the
// helper's stdout, and says its pid on stderr. With escape it starts its own
// session, out of the group's reach.
func startChild(escape bool) int {
	exe, _ := os.Executable()
	cmd := exec.Command(exe, "-p")
	cmd.Env = append(os.Environ(), helperEnv+"=sleeper")
	cmd.Stdout = os.Stdout
	if escape {
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	}
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		syscall.Exit(64)
	}
	fmt.Fprintf(os.Stderr, "child-pid=%d\n", cmd.Process.Pid)
	return cmd.Process.Pid
}

// childPid finds "child-pid=N" in s.
func childPid(t *testing.T, s string) int {
	t.Helper()
	_, rest, ok := strings.Cut(s, "child-pid=")
	if !ok {
		t.Fatalf("no child pid in %q", s)
	}
	n, _, _ := strings.Cut(rest, "\n")
	pid, err := strconv.Atoi(n)
	if err != nil {
		t.Fatal(err)
	}
	return pid
}

// waitGone waits until pid has died (a zombie counts: nobody may reap
// orphans in a container).
func waitGone(t *testing.T, pid int) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Second)
	for {
		if processGone(pid) {
			return
		}
		if time.Now().After(deadline) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
			t.Fatalf("process %d survived", pid)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// floodReader generates n bytes (rounded up to whole lines) of claude
// assistant-text lines, then a result line, without holding them in memory.
type floodReader struct {
	line      []byte
	off       int
	remaining int64
	result    io.Reader
}

func newFlood(n int64) *floodReader {
	text := strings.Repeat("All work and no play makes Jack a dull boy. ", 22) // ~1 KiB
	return &floodReader{
		line:      []byte(assistantText("m1", text) + "\n"),
		remaining: n,
		result:    strings.NewReader(fmt.Sprintf(helperResult, `"done\n<promise>COMPLETE</promise>"`) + "\n"),
	}
}

func (f *floodReader) Read(p []byte) (int, error) {
	if f.remaining <= 0 && f.off == 0 {
		return f.result.Read(p)
	}
	n := copy(p, f.line[f.off:])
	f.off += n
	f.remaining -= int64(n)
	if f.off == len(f.line) {
		f.off = 0
	}
	return n, nil
}

// assistantText and quote are claude_test.go's (package claude): the helper speaks
// Claude Code's stream.
func assistantText(id, text string) string {
	return `{"type":"assistant","message":{"id":"` + id + `","model":"claude-sonnet-4-5","content":[{"type":"text","text":` + quote(text) + `}]},"parent_tool_use_id":null,"session_id":"s1"}`
}

func quote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\n':
			b.WriteString(`\n`)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}
