package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/git-ralph/git-ralph/internal/cli"
	"github.com/git-ralph/git-ralph/internal/fakeagent"
	"github.com/git-ralph/git-ralph/internal/github"
	"github.com/git-ralph/git-ralph/internal/githubflow"
	"github.com/git-ralph/git-ralph/internal/loop"
	"github.com/git-ralph/git-ralph/internal/sandbox"
	"github.com/git-ralph/git-ralph/internal/term"
)

// TestMain turns the test binary into git-ralph and into the fake agents, which
// testscript puts first on PATH: `git ralph` then goes through git's real dispatch
// of external commands, and `claude` / `codex` are the scriptable fake.
func TestMain(m *testing.M) {
	testscript.Main(scriptParallel{m}, map[string]func(){
		"git-ralph":    func() { os.Exit(cli.MainWith(os.Args[1:], term.System(), testSetup())) },
		"hold-lock":    holdLock,
		"attacker":     attacker,
		"claude":       fakeagent.Main,
		"codex":        fakeagent.Main,
		"gemini":       fakeagent.Main,
		"opencode":     fakeagent.Main,
		"amp":          fakeagent.Main,
		"cursor-agent": fakeagent.Main,
		"copilot":      fakeagent.Main,
		"qwen":         fakeagent.Main,
	})
}

// scriptParallel runs the tests with -test.parallel at 4 per CPU unless it was given.
// A script mostly waits for the processes it starts, one after the other: at the
// default (one per CPU) the suite kept two cores about a third busy; at 4 per CPU it
// is bound by the CPU instead (docs/DESIGN-LOG.md, "fast at scale", issue 22).
type scriptParallel struct{ m *testing.M }

func (p scriptParallel) Run() int {
	flag.Parse()
	given := false
	flag.Visit(func(f *flag.Flag) { given = given || f.Name == "test.parallel" })
	if !given {
		if err := flag.Set("test.parallel", strconv.Itoa(4*runtime.GOMAXPROCS(0))); err != nil {
			panic(err)
		}
	}
	return p.m.Run()
}

func TestScript(t *testing.T) {
	t.Parallel() // with the long tests (chaos, install), not after them
	testscript.Run(t, testscript.Params{
		Dir:                 "testdata/script",
		WorkdirRoot:         memTempDir(t),
		RequireExplicitExec: true,
		RequireUniqueNames:  true,
		UpdateScripts:       os.Getenv("UPDATE_GOLDEN") != "",
		Setup:               hermetic,
		Condition:           condition,
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"pane":       cmdPane, // first: the others' additions go last
			"snapshot":   cmdSnapshot,
			"envfile":    cmdEnvfile,
			"await":      cmdAwait,
			"dead":       cmdDead,
			"alive":      cmdAlive,
			"sigparent":  cmdSigparent,
			"exitcode":   cmdExitcode,
			"agentpid":   cmdAgentpid,
			"advance":    cmdAdvance,
			"htmlcheck":  cmdHTMLCheck,
			"fakegh":     cmdFakeGH,
			"fakerunner": cmdFakeRunner,
			"cpucgroup":  cmdCPUCgroup,
			"openpty":    cmdOpenpty,
			"ptyread":    cmdPtyread,
		},
	})
}

// condition answers a script's own conditions: [landlock] is a kernel git-ralph can
// sandbox the agent on (the scripts that need it say so and skip elsewhere), and
// [landlock:N] one whose Landlock ABI is N or later. GIT_RALPH_TEST_LANDLOCK=N in the
// environment of `go test` plays an older kernel for every script (and its git-ralph).
// [cgroup]: git-ralph can make a cgroup for each attempt (sandbox.Contain).
// [cpucgroup]: a cpu cgroup can be made here (the cpucgroup command).
// [terminals]: an agent's pseudo-terminals can be its own here (sandbox.Terminals).
// [root]: the tests run as root, whose capabilities read a non-dumpable process's /proc
// files unless the sandbox drops them.
func condition(cond string) (bool, error) {
	s := sandbox.Probe()
	if f := testLandlock(os.Getenv("GIT_RALPH_TEST_LANDLOCK")); f != nil {
		s = f()
	}
	switch name, arg, _ := strings.Cut(cond, ":"); {
	case cond == "landlock":
		return s.Usable(), nil
	case cond == "cgroup": // git-ralph can give each attempt a cgroup of its own here
		return sandbox.CanContain() && os.Getenv("GIT_RALPH_TEST_CGROUP") != "0", nil
	case cond == "cpucgroup": // a cpu cgroup can be made here (cpucgroup)
		return cpuCgroupRoot() != "", nil
	case cond == "root":
		return os.Geteuid() == 0, nil
	case cond == "terminals": // an agent can have a devpts instance of its own here
		return s.Usable() && sandbox.Terminals() == "", nil
	case name == "landlock":
		n, err := strconv.Atoi(arg)
		if err != nil {
			return false, fmt.Errorf("condition %q: want landlock:N", cond)
		}
		return s.Usable() && s.ABI >= n, nil
	}
	return false, fmt.Errorf("unknown condition %q", cond)
}

// hermetic isolates every script: its own HOME and global config, no system config,
// a fixed identity and fixed dates (stable commit ids), no colour, no prompts.
func hermetic(e *testscript.Env) error {
	home := filepath.Join(e.WorkDir, ".home")
	if err := os.MkdirAll(home, 0o755); err != nil {
		return err
	}
	// The fake agent keeps its state and its record of calls in .fake-state, the one
	// place outside the repository its sandbox lets it write (ralph.sandboxWritable);
	// scripts read the record as $WORK/agent-calls.ndjson, a link to it that dangles
	// until the first call ("! exists" still says no agent ran).
	state := filepath.Join(e.WorkDir, ".fake-state")
	if err := os.MkdirAll(state, 0o755); err != nil {
		return err
	}
	if err := os.Symlink(filepath.Join(".fake-state", "agent-calls.ndjson"), filepath.Join(e.WorkDir, "agent-calls.ndjson")); err != nil {
		return err
	}
	// No automatic maintenance or gc: a commit would start 'git maintenance run
	// --auto' (a tenth of the suite's processes) for repositories of a few objects.
	cfg := "[init]\n\tdefaultBranch = main\n[advice]\n\tdetachedHead = false\n[maintenance]\n\tauto = false\n[gc]\n\tauto = 0\n" +
		"[ralph]\n\tsandboxWritable = " + state + "\n" +
		// The verify gates of the scripts keep their records in $WORK, which the gate's
		// sandbox lets them write (ralph.verifyWritable); a script about what the gate's
		// sandbox refuses unsets it.
		"\tverifyWritable = " + e.WorkDir + "\n"
	if err := os.WriteFile(filepath.Join(home, ".gitconfig"), []byte(cfg), 0o644); err != nil {
		return err
	}
	for k, v := range map[string]string{
		"HOME":                  home,
		"XDG_CONFIG_HOME":       filepath.Join(home, ".config"),
		"GIT_CONFIG_NOSYSTEM":   "1",
		"GIT_ALLOW_PROTOCOL":    "file", // no test's git may reach a network: remotes are bare repositories
		"GIT_CONFIG_GLOBAL":     filepath.Join(home, ".gitconfig"),
		"GIT_AUTHOR_NAME":       "Ada Tester",
		"GIT_AUTHOR_EMAIL":      "ada@example.com",
		"GIT_AUTHOR_DATE":       "2026-01-02T03:04:05Z",
		"GIT_COMMITTER_NAME":    "Ada Tester",
		"GIT_COMMITTER_EMAIL":   "ada@example.com",
		"GIT_COMMITTER_DATE":    "2026-01-02T03:04:05Z",
		"NO_COLOR":              "1",
		"CI":                    "true",
		"IS_SANDBOX":            "1",
		"FAKE_AGENT_STATE_DIR":  state,
		"FAKE_AGENT_RECORD":     filepath.Join(state, "agent-calls.ndjson"),
		"FAKE_AGENT_FIXED_TIME": "2026-01-02T03:04:05Z",
		"GIT_RALPH_TEST_CLOCK":  "2026-01-02T03:04:05Z",
		"GIT_RALPH_TEST_TIME":   filepath.Join(state, "time"),
	} {
		e.Setenv(k, v)
	}
	// Unset what would point git elsewhere or change our output.
	drop := map[string]bool{"GIT_DIR": true, "GIT_WORK_TREE": true, "GIT_INDEX_FILE": true, "GIT_PREFIX": true,
		"GIT_RALPH_VERBOSE": true, "CLICOLOR_FORCE": true, "GIT_CONFIG_COUNT": true, "GIT_CONFIG_PARAMETERS": true}
	vars := e.Vars[:0]
	for _, kv := range e.Vars {
		k, _, _ := strings.Cut(kv, "=")
		if !drop[k] {
			vars = append(vars, kv)
		}
	}
	e.Vars = vars
	e.Setenv("HOST_GOCACHE", hostGoCache())
	// The agents' own caches (git-ralph/agent-cache in XDG_CACHE_HOME) of a script
	// whose agent runs go test, kept beside the go's between runs of the suite.
	if c := hostGoCache(); c != "" {
		e.Setenv("HOST_AGENT_CACHE", filepath.Join(filepath.Dir(c), "git-ralph-test-agent-cache"))
	}
	if v := os.Getenv("GIT_RALPH_TEST_LANDLOCK"); v != "" {
		e.Setenv("GIT_RALPH_TEST_LANDLOCK", v) // an older kernel played for the whole suite (see condition)
	}
	hermeticGitHub(e)
	return nil
}

// hostGoCache is the build cache of the go running the tests (asked once), which a
// script whose agent runs go test points GOCACHE at: the script's own HOME has an empty
// one, and compiling the standard library's test dependencies there takes a minute.
var hostGoCache = sync.OnceValue(func() string {
	out, err := exec.Command("go", "env", "GOCACHE").Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
})

// cmdSnapshot writes (with -no-remotes: leaving out refs/remotes/) a description of a
// repository's whole state to a file: every ref, HEAD, the index, and the working
// tree's content including untracked files. Two snapshots are equal only if nothing
// changed, which is what "bad input changes nothing" asserts:
//
//	snapshot before.txt
//	! exec git ralph start '../x'
//	snapshot after.txt
//	cmp before.txt after.txt
func cmdSnapshot(ts *testscript.TestScript, neg bool, args []string) {
	noRemotes := len(args) == 2 && args[0] == "-no-remotes"
	if noRemotes {
		args = args[1:]
	}
	if neg || len(args) != 1 {
		ts.Fatalf("usage: snapshot [-no-remotes] FILE")
	}
	dir := ts.MkAbs(".")
	run := func(env []string, a ...string) string {
		cmd := exec.Command("git", a...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), env...)
		for _, kv := range []string{"HOME", "GIT_CONFIG_GLOBAL", "GIT_CONFIG_NOSYSTEM"} {
			cmd.Env = append(cmd.Env, kv+"="+ts.Getenv(kv))
		}
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		if err := cmd.Run(); err != nil {
			return fmt.Sprintf("<git %s: %v: %s>", strings.Join(a, " "), err, strings.TrimSpace(errb.String()))
		}
		return strings.TrimSpace(out.String())
	}
	tmpIndex := filepath.Join(ts.MkAbs("."), ".."+string(filepath.Separator)+".snapshot-index")
	defer os.Remove(tmpIndex)
	var b strings.Builder
	fmt.Fprintf(&b, "HEAD %s\n", run(nil, "symbolic-ref", "-q", "HEAD"))
	fmt.Fprintf(&b, "HEAD-id %s\n", run(nil, "rev-parse", "-q", "--verify", "HEAD"))
	refs := []string{"for-each-ref", "--format=%(refname) %(objectname)"}
	if noRemotes {
		// A push updates the remote-tracking refs: "nothing else changed" leaves them out.
		refs = append(refs, "refs/heads/", "refs/tags/", "refs/ralph/", "refs/stash")
	}
	fmt.Fprintf(&b, "refs:\n%s\n", run(nil, refs...))
	fmt.Fprintf(&b, "index:\n%s\n", run(nil, "ls-files", "-s"))
	fmt.Fprintf(&b, "status:\n%s\n", run(nil, "status", "--porcelain=v1", "--untracked-files=all"))
	env := []string{"GIT_INDEX_FILE=" + tmpIndex}
	run(env, "add", "-A")
	fmt.Fprintf(&b, "worktree %s\n", run(env, "write-tree"))
	ts.Check(os.WriteFile(ts.MkAbs(args[0]), []byte(b.String()), 0o644))
}

// testSetup is what the test binary's git-ralph changes: a git lock left by a crash
// is stale after 300ms instead of seconds, one in use is waited for 1s, export waits 1s
// for a loop still running to end and 3s for it to save after its SIGINT (instead of
// 30s and 15s), the clock is testClock's when GIT_RALPH_TEST_CLOCK is set, and the
// user's limits (--timeout, --idle-timeout, --deadline) are measured on
// testTimeClock when GIT_RALPH_TEST_TIME is set (hermetic sets both for every
// script), the GitHub polls' waits are testSleep's, and a sandboxed agent starts
// through the launcher, as where the direct start cannot be made, when
// GIT_RALPH_TEST_SANDBOX=launcher. The variables are read here, in test code: the
// shipped binary has no such switch.
func testSetup() cli.Setup {
	if os.Getenv("GIT_RALPH_TEST_SANDBOX") == "launcher" {
		sandbox.UseLauncher()
	}
	if os.Getenv("GIT_RALPH_TEST_CGROUP") == "0" {
		sandbox.NoCgroup() // a system where git-ralph can make no cgroup: the /proc walk alone
	}
	sleep, sleepNow := testSleep(os.Getenv("GIT_RALPH_TEST_SLEEPLOG"))
	now := testClock(os.Getenv("GIT_RALPH_TEST_CLOCK"))
	waits := loop.Waits{LockMinAge: 300 * time.Millisecond, LockWait: time.Second}
	if p := os.Getenv("GIT_RALPH_TEST_TIME"); p != "" {
		waits.Clock = newTestTimeClock(p)
	}
	remote := func(r *githubflow.Remote) {
		r.Sleep = sleep
		if now != nil {
			r.Now = now
		}
	}
	return cli.Setup{
		Loop: func(l *loop.Loop) {
			l.Waits = waits
			if now != nil {
				l.Now = now
			}
		},
		Flow: func(fl *githubflow.Flow) {
			fl.StopWait, fl.KillWait = time.Second, 3*time.Second
			remote(&fl.Remote)
		},
		Remote:   remote,
		GitHub:   func(o *github.Options) { o.Sleep, o.Now = sleep, sleepNow },
		Landlock: testLandlock(os.Getenv("GIT_RALPH_TEST_LANDLOCK")),
	}
}

// testLandlock is the test binary's stand-in for the kernel's Landlock ABI:
// GIT_RALPH_TEST_LANDLOCK=N plays a kernel with ABI N (0: none), so that a script can
// run --sandbox=on and auto where there is no sandbox. nil (the kernel's own answer)
// when the variable is unset.
func testLandlock(v string) func() sandbox.Support {
	n, err := strconv.Atoi(v)
	if v == "" || err != nil {
		return nil
	}
	return func() sandbox.Support { return sandbox.Supported(n) }
}

// testSleep is the waits of the GitHub polls in the test binary: each wait is written
// to the file log names ("sleep 7s", when set), then lasts at most 20ms, so that a
// script asserts what git-ralph waited for (retry-after, x-poll-interval, the second
// between two dispatches) without waiting for it. The clock it returns is moved by
// those waits alone and spaces the GitHub requests (github.Options.Now): the second
// between two dispatches is waited for in full, however slow the machine.
func testSleep(log string) (func(ctx context.Context, d time.Duration) error, func() time.Time) {
	var mu sync.Mutex
	now := time.Now()
	clock := func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		return now
	}
	sleep := func(ctx context.Context, d time.Duration) error {
		if log != "" {
			if f, err := os.OpenFile(log, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644); err == nil {
				fmt.Fprintf(f, "sleep %s\n", d)
				f.Close()
			}
		}
		mu.Lock()
		now = now.Add(d)
		mu.Unlock()
		t := time.NewTimer(min(d, 20*time.Millisecond))
		defer t.Stop()
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
			return nil
		}
	}
	return sleep, clock
}

// testClock is the clock of the test suite: GIT_RALPH_TEST_CLOCK=<RFC 3339 time> starts
// it there, and every reading advances it by one second, so run records, trailers and
// reports come out the same on every run (like git's own GIT_TEST_DATE_NOW). nil when
// the variable is unset or not a time.
func testClock(v string) func() time.Time {
	t, err := time.Parse(time.RFC3339, v)
	if v == "" || err != nil {
		return nil
	}
	var mu sync.Mutex
	return func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		t = t.Add(time.Second)
		return t
	}
}

// holdLock is the test binary as "hold-lock FILE PIDFILE RELEASE": a live process that
// has FILE open, as a running git has its lock. It creates FILE if need be, writes its
// pid to PIDFILE once the file is open, and exits (leaving FILE behind, as a killed git
// would) when RELEASE exists, or once its directory is gone (the script has ended),
// or after ten minutes.
func holdLock() {
	if len(os.Args) != 4 {
		fmt.Fprintln(os.Stderr, "usage: hold-lock FILE PIDFILE RELEASE")
		os.Exit(2)
	}
	f, err := os.OpenFile(os.Args[1], os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	defer f.Close()
	tmp := os.Args[2] + ".tmp"
	if err := os.WriteFile(tmp, []byte(strconv.Itoa(os.Getpid())), 0o644); err != nil || os.Rename(tmp, os.Args[2]) != nil {
		fmt.Fprintln(os.Stderr, "write pid file:", err)
		os.Exit(1)
	}
	for deadline := time.Now().Add(10 * time.Minute); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if _, err := os.Stat(os.Args[3]); err == nil {
			return
		}
		if _, err := os.Stat(filepath.Dir(os.Args[3])); errors.Is(err, fs.ErrNotExist) {
			return
		}
	}
}

// cmdEnvfile sets an environment variable of the script to a file's content, trimmed:
//
//	envfile HOLDER $WORK/holder.pid
//	stderr 'pid '${HOLDER}' '
func cmdEnvfile(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: envfile NAME FILE")
	}
	ts.Setenv(args[0], strings.TrimSpace(ts.ReadFile(args[1])))
}
