package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/git-ralph/git-ralph/internal/git"
	"github.com/git-ralph/git-ralph/internal/sandbox"
)

// The benchmarks compare git-ralph with the bare commands it stands for, each measured
// inside one benchmark so that the ratio is of the same machine at the same moment:
//
//	go test ./git-ralph -run '^$' -bench . -benchtime 3x -timeout 30m
//
// BenchmarkLoop40 is a 40-story run with an instant fake agent against a bare loop that
// runs the same agent and `git add -A && git commit` per story. BenchmarkLargeRepo
// works on a generated repository of 100 000 files (made once per benchmark run in a
// temporary directory, never committed): `git ralph status` against `git status`, one
// checkpoint against `git add -A && git commit`, and a whole run's per-story cost
// against the bare loop. Each reports ralph-ms, bare-ms and their ratio (x-bare);
// BenchmarkLoop40 also git-ralph's own time per story (own-ms/story: the difference),
// the processes it starts per story (procs/story, the agent included) and what the
// sandbox's launcher adds to each attempt (launcher-ms/attempt, launcher-cpu-ms/attempt).

// benchStories is the fake agent's work for every story: write a file, tick the
// story's tasks, say COMPLETE.
const benchScenario = `{"by_story": {"*": [{"steps": [
  {"write": {"path": "story-{{story}}.txt", "content": "the work of story {{story}}\n"}},
  {"check_story": true},
  {"say": "<promise>COMPLETE</promise>"}
]}]}}`

// benchTasks is a tasks.md of n one-task stories; done ticks them all.
func benchTasks(n int, done bool) string {
	box := " "
	if done {
		box = "x"
	}
	var b strings.Builder
	b.WriteString("# Tasks\n")
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "\n## %d. Story %d\n- [%s] %d.1 Write story-%d.txt\n", i, i, box, i, i)
	}
	return b.String()
}

// BenchmarkLoop40 times `git ralph start` over 40 stories with an instant agent against
// a bare loop doing the same agent runs and `git add -A && git commit` per story, in a
// small repository; each iteration starts from a fresh copy.
func BenchmarkLoop40(b *testing.B) {
	const stories = 40
	root := memTempDir(b)
	env := append(benchEnv(b, root), "FAKE_AGENT_SCENARIO="+filepath.Join(root, "scenario.json"))
	tmpl := benchLoopRepo(b, env, root, stories)

	var ralph, bare, ralphCPU, bareCPU time.Duration
	b.ResetTimer()
	b.StopTimer()
	for i := 0; i < b.N; i++ {
		dir := filepath.Join(root, fmt.Sprintf("ralph-%d", i))
		benchCopy(b, tmpl, dir)
		c := cpuTime(b)
		ralph += benchTime(func() { benchRalph(b, env, dir, "start", "x") })
		ralphCPU += cpuTime(b) - c
		if got := strings.Count(benchGit(b, env, dir, "log", "--format=%s"), "checkpoint: "); got != stories {
			b.Fatalf("%d checkpoints, want %d", got, stories)
		}

		dir = filepath.Join(root, fmt.Sprintf("bare-%d", i))
		benchCopy(b, tmpl, dir)
		c = cpuTime(b)
		bare += benchTime(func() { benchBareLoop(b, env, dir, "x", stories) })
		bareCPU += cpuTime(b) - c
	}
	benchReport(b, ralph, bare)
	// git-ralph's own time per story: all but what the bare loop also does (the agent,
	// add and commit), in wall time and in CPU time (the agent's and git's included on
	// both sides: robust under load); and the processes it starts per story, from a
	// --verbose run.
	b.ReportMetric(ms(ralph-bare)/float64(b.N*stories), "own-ms/story")
	b.ReportMetric(ms(ralphCPU-bareCPU)/float64(b.N*stories), "own-cpu-ms/story")
	b.ReportMetric(ms(bareCPU)/float64(b.N*stories), "bare-cpu-ms/story")
	dir := filepath.Join(root, "verbose")
	benchCopy(b, tmpl, dir)
	b.ReportMetric(procsPerStory(b, benchRalph(b, env, dir, "start", "x", "--verbose")), "procs/story")
	// What starting the agent in the sandbox adds to each attempt (the loop above ran
	// every agent in it, where the kernel has Landlock): wall and CPU time per start, as
	// an attempt starts it (from a thread of git-ralph's own, where the system allows),
	// and through the launcher (git-ralph re-executed: where it does not).
	if c, ok := launcherCost(b, env, dir, b.N*stories); ok {
		b.ReportMetric(ms(c.wall), "launcher-ms/attempt")
		b.ReportMetric(ms(c.cpu), "launcher-cpu-ms/attempt")
		b.ReportMetric(ms(c.reexecWall), "reexec-ms/attempt")
		b.ReportMetric(ms(c.reexecCPU), "reexec-cpu-ms/attempt")
	}
}

// benchLoopRepo makes the repository a loop benchmark copies for each run, in root: an
// OpenSpec change x of stories one-task stories and 50 small files, committed, with
// the fake agent's scenario (benchScenario) at root/scenario.json. It returns its path.
func benchLoopRepo(b *testing.B, env []string, root string, stories int) string {
	b.Helper()
	benchWrite(b, filepath.Join(root, "scenario.json"), benchScenario)
	tmpl := filepath.Join(root, "template")
	benchMkdir(b, filepath.Join(tmpl, "openspec", "changes", "x"))
	benchGit(b, env, tmpl, "init", "-q", "-b", "main")
	benchWrite(b, filepath.Join(tmpl, "openspec", "changes", "x", "tasks.md"), benchTasks(stories, false))
	for i := range 50 {
		benchWrite(b, filepath.Join(tmpl, fmt.Sprintf("file-%02d.txt", i)), strings.Repeat("line\n", i+1))
	}
	benchGit(b, env, tmpl, "add", "-A")
	benchGit(b, env, tmpl, "commit", "-q", "-m", "base")
	return tmpl
}

// installBuild is git-ralph built as install.sh builds it (static, stripped), in a
// directory of its own, or "" when it cannot be built (the caller then measures the
// test binary, larger).
func installBuild(b *testing.B) string {
	b.Helper()
	real := filepath.Join(b.TempDir(), "git-ralph")
	build := exec.Command("go", "build", "-trimpath", "-ldflags", "-s -w", "-o", real, ".") // as install.sh builds it
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		b.Logf("measuring with the test binary (larger): go build: %v %s", err, out)
		return ""
	}
	return real
}

// startCost is what starting an agent in the sandbox costs over a plain start, per
// start: as an attempt starts it (wall, cpu), and through the launcher alone
// (reexecWall, reexecCPU).
type startCost struct{ wall, cpu, reexecWall, reexecCPU time.Duration }

// launcherCost is what the sandbox adds to starting an agent, per start: n starts of
// true(1) with sandbox.Start under a policy like the loop's, with a hidden ~/.ssh so
// that reading is granted entry by entry, against n plain starts, and n more through
// the launcher (git-ralph itself, built once here as install.sh builds it; the test
// binary, larger, should the build fail), alternating. ok is false where the kernel
// has no Landlock.
func launcherCost(b *testing.B, env []string, dir string, n int) (c startCost, ok bool) {
	b.Helper()
	lvl, err := sandbox.Resolve(sandbox.On, sandbox.Probe(), false)
	if err != nil {
		b.Logf("the launcher is not measured: %v", err)
		return c, false
	}
	self, err := exec.LookPath("git-ralph")
	if err != nil {
		b.Fatal(err)
	}
	if real := installBuild(b); real != "" {
		self = real
	}
	truePath, err := exec.LookPath("true")
	if err != nil {
		b.Fatal(err)
	}
	home := ""
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "HOME="); ok {
			home = v
		}
	}
	// A home as a developer's looks: a few dozen entries beside the hidden ones, in a
	// parent of few (the benchmark's own directory), so that the read grants made entry
	// by entry on the way to ~/.ssh are as many as on a workstation, not as many as a
	// shared /tmp holds.
	benchMkdir(b, filepath.Join(home, ".ssh"))
	for _, e := range []string{".bashrc", ".profile", ".gitconfig", ".npmrc", ".viminfo", ".lesshst", ".wget-hsts"} {
		benchWrite(b, filepath.Join(home, e), "x\n")
	}
	for _, d := range []string{".cache", ".config", ".local", ".npm", "go", "src", "Documents", "Downloads", ".vscode", ".docker", ".kube", ".gnupg", ".aws"} {
		benchMkdir(b, filepath.Join(home, d))
	}
	p := &sandbox.Policy{ABI: lvl.ABI, Hide: sandbox.HiddenIn(home, nil), Reveal: sandbox.ReadableIn(env, nil)}
	p.AddWrite(dir)
	p.AddWrite(sandbox.Devices...)
	p.AddWrite(sandbox.AgentCache(env))
	if err := sandbox.EnsureDirs(sandbox.CacheDirs(sandbox.AgentCache(env))); err != nil {
		b.Fatal(err)
	}
	// As a run does: the read grants once for all its attempts (their cost is
	// counted below, shared by the n starts of each kind).
	t := cpuTime(b)
	p.Read = sandbox.ReadGrants(p.Hide, p.Reveal)
	grantsCPU := cpuTime(b) - t
	launcherEnv := sandbox.LauncherEnv(p.Clone(), env)
	args, err := sandbox.LauncherArgs(p, 3, truePath, []string{"true"})
	if err != nil {
		b.Fatal(err)
	}
	const plain, direct, reexec = 0, 1, 2
	start := func(how int) {
		cmd := &exec.Cmd{Path: truePath, Args: []string{"true"}, Env: env, Dir: dir}
		var status *os.File
		switch how {
		case direct:
			var err error
			if cmd, err = sandbox.Start(p, cmd); err != nil {
				b.Fatal(err)
			}
		case reexec:
			r, w, err := os.Pipe()
			if err != nil {
				b.Fatal(err)
			}
			defer w.Close()
			cmd = &exec.Cmd{Path: self, Args: args, Env: launcherEnv, Dir: dir, ExtraFiles: []*os.File{w}}
			status = r
			fallthrough
		default:
			if err := cmd.Start(); err != nil {
				b.Fatal(err)
			}
		}
		msg := []byte{}
		if status != nil {
			cmd.ExtraFiles[0].Close()
			msg, _ = io.ReadAll(status)
			status.Close()
		}
		if err := cmd.Wait(); err != nil {
			b.Fatalf("%v: %v %s", cmd.Args, err, msg)
		}
	}
	var wall, cpu [3]time.Duration
	cpu[direct], cpu[reexec] = grantsCPU, grantsCPU
	for range n {
		for _, how := range []int{plain, direct, reexec} {
			t := cpuTime(b)
			wall[how] += benchTime(func() { start(how) })
			cpu[how] += cpuTime(b) - t
		}
	}
	per := func(d time.Duration) time.Duration { return d / time.Duration(n) }
	return startCost{wall: per(wall[direct] - wall[plain]), cpu: per(cpu[direct] - cpu[plain]),
		reexecWall: per(wall[reexec] - wall[plain]), reexecCPU: per(cpu[reexec] - cpu[plain])}, true
}

// procsPerStory is the mean number of processes git-ralph starts per story in a
// --verbose trace: the commands it traces ("$ …") between one attempt line and the
// next, plus the agent. The first and last stories, which carry the run's set-up and
// ending, are left out.
func procsPerStory(tb testing.TB, trace string) float64 {
	tb.Helper()
	var counts []int
	for _, line := range strings.Split(trace, "\n") {
		switch {
		case attemptLine.MatchString(line):
			counts = append(counts, 1) // the agent
		case strings.HasPrefix(line, "$ ") && len(counts) > 0:
			counts[len(counts)-1]++
		}
	}
	if len(counts) < 3 {
		tb.Fatalf("%d attempts in the trace:\n%s", len(counts), trace)
	}
	sum := 0
	for _, n := range counts[1 : len(counts)-1] {
		sum += n
	}
	return float64(sum) / float64(len(counts)-2)
}

// BenchmarkParallel4 measures what running loops side by side costs: four changes of
// 10 stories each with `git ralph start --worktree -j 4 a b c d`, against one of them
// alone with `git ralph start --worktree a`, both in every iteration, from fresh copies,
// with the instant fake agent. It reports the wall time per story of one loop alone
// (one-ms/story), of the four together (four-ms/story: the wall time over all 40
// stories), their ratio (x-one: the goal is at most 1.3 on two cores), and how much
// longer each of the four loops took than the one alone (wall-x).
func BenchmarkParallel4(b *testing.B) {
	const stories = 10
	changes := []string{"a", "b", "c", "d"}
	root := b.TempDir()
	env := append(benchEnv(b, root), "FAKE_AGENT_SCENARIO="+filepath.Join(root, "scenario.json"))
	benchWrite(b, filepath.Join(root, "scenario.json"), benchScenario)
	tmpl := filepath.Join(root, "template")
	for _, c := range changes {
		benchMkdir(b, filepath.Join(tmpl, "openspec", "changes", c))
		benchWrite(b, filepath.Join(tmpl, "openspec", "changes", c, "tasks.md"), benchTasks(stories, false))
	}
	benchGit(b, env, tmpl, "init", "-q", "-b", "main")
	for i := range 50 {
		benchWrite(b, filepath.Join(tmpl, fmt.Sprintf("file-%02d.txt", i)), strings.Repeat("line\n", i+1))
	}
	benchGit(b, env, tmpl, "add", "-A")
	benchGit(b, env, tmpl, "commit", "-q", "-m", "base")

	var one, four time.Duration
	b.ResetTimer()
	b.StopTimer()
	for i := 0; i < b.N; i++ {
		for j := range 2 { // alternate which goes first
			if (i+j)%2 == 0 {
				dir := filepath.Join(root, fmt.Sprintf("one-%d", i))
				benchCopy(b, tmpl, dir)
				one += benchTime(func() { benchRalph(b, env, dir, "start", "--worktree", "a") })
				if got := strings.Count(benchGit(b, env, dir, "log", "--format=%s", "ralph/a"), "checkpoint: "); got != stories {
					b.Fatalf("%d checkpoints, want %d", got, stories)
				}
			} else {
				dir := filepath.Join(root, fmt.Sprintf("four-%d", i))
				benchCopy(b, tmpl, dir)
				four += benchTime(func() {
					benchRalph(b, env, dir, append([]string{"start", "--worktree", "-j", "4"}, changes...)...)
				})
				for _, c := range changes {
					if got := strings.Count(benchGit(b, env, dir, "log", "--format=%s", "ralph/"+c), "checkpoint: "); got != stories {
						b.Fatalf("%s: %d checkpoints, want %d", c, got, stories)
					}
				}
			}
		}
	}
	perOne := ms(one) / float64(b.N*stories)
	perFour := ms(four) / float64(b.N*stories*len(changes))
	b.ReportMetric(float64(four.Nanoseconds())/float64(b.N), "ns/op")
	b.ReportMetric(perOne, "one-ms/story")
	b.ReportMetric(perFour, "four-ms/story")
	b.ReportMetric(perFour/perOne, "x-one")
	b.ReportMetric(float64(four)/float64(one), "wall-x")
}

// BenchmarkLargeRepo works on a repository of 100 000 files.
func BenchmarkLargeRepo(b *testing.B) {
	lr := largeRepo(b)
	b.Run("status", func(b *testing.B) {
		// A run exists (done during setup), so status has a record to show.
		var ralph, bare time.Duration
		for i := 0; i < b.N; i++ {
			bare += benchTime(func() { benchGit(b, lr.env, lr.dir, "status") })
			ralph += benchTime(func() { benchRalph(b, lr.env, lr.dir, "status", "done") })
		}
		benchReport(b, ralph, bare)
	})
	b.Run("checkpoint", func(b *testing.B) {
		// The checkpoint's git steps as the loop takes them (loop.checkpoint: branch,
		// HEAD and operation checks, add -A, the tree the gate sees and its gitlinks,
		// commit, the commit's tree) against `git add -A && git commit`, each after
		// the same small change.
		ctx := context.Background()
		for _, kv := range lr.env {
			k, v, _ := strings.Cut(kv, "=")
			b.Setenv(k, v)
		}
		repo, err := git.Open(ctx, lr.dir)
		if err != nil {
			b.Fatal(err)
		}
		benchGit(b, lr.env, lr.dir, "checkout", "-q", "-B", "bench-checkpoint", lr.base)
		b.Cleanup(func() { lr.reset(b) })
		var ralph, bare time.Duration
		calls := int64(0)
		for i := 0; i < b.N; i++ {
			// Alternate which goes first, so that neither always finds the caches
			// the other warmed.
			for j := range 2 {
				if (i+j)%2 == 0 {
					lr.touch(b, fmt.Sprintf("bare %d", i))
					bare += benchTime(func() {
						benchGit(b, lr.env, lr.dir, "add", "-A")
						benchGit(b, lr.env, lr.dir, "commit", "-q", "-m", "bare")
					})
				} else {
					lr.touch(b, fmt.Sprintf("ralph %d", i))
					n := repo.Calls.Load()
					ralph += benchTime(func() { benchCheckpoint(b, ctx, repo) })
					calls += repo.Calls.Load() - n
				}
			}
		}
		b.ReportMetric(float64(calls)/float64(b.N), "git-calls/checkpoint")
		benchReport(b, ralph, bare)
	})
	b.Run("story", func(b *testing.B) {
		// A whole run of 5 stories, less a run with nothing to do (the fixed cost of a
		// start: preflight and the "initial state" commit), per story, against the
		// bare loop's per-story cost.
		const stories = 5
		var ralph, fixed, bare time.Duration
		for i := 0; i < b.N; i++ {
			lr.reset(b)
			ralph += benchTime(func() { benchRalph(b, lr.env, lr.dir, "start", "x") })
			lr.reset(b)
			fixed += benchTime(func() { benchRalph(b, lr.env, lr.dir, "start", "done") })
			lr.reset(b)
			benchGit(b, lr.env, lr.dir, "checkout", "-q", "-B", "bare", lr.base)
			bare += benchTime(func() { benchBareLoop(b, lr.env, lr.dir, "x", stories) })
		}
		lr.reset(b)
		b.ReportMetric(ms(fixed)/float64(b.N), "fixed-ms/run")
		b.ReportMetric(ms(ralph)/float64(b.N), "run-ms")
		b.ReportMetric(ms(ralph)/ms(bare), "run-x-bare")
		benchReport(b, (ralph-fixed)/stories, bare/stories)
	})
}

// largeRepoFiles is the size of BenchmarkLargeRepo's repository.
const largeRepoFiles = 100_000

// benchLarge is the generated repository: 100 000 files in 10×100 directories, one
// commit made with fast-import (packed, so generating it is quick), checked out; a
// change "x" of 5 open stories and a change "done" whose stories are all done, and one
// run of "done" left in place for status.
type benchLarge struct {
	dir, base string
	env       []string
}

var (
	largeOnce sync.Once
	large     *benchLarge
	largeErr  error
)

func largeRepo(b *testing.B) *benchLarge {
	largeOnce.Do(func() {
		root, err := os.MkdirTemp("", "git-ralph-bench-100k-")
		if err != nil {
			largeErr = err
			return
		}
		start := time.Now()
		large, largeErr = makeLargeRepo(b, root)
		if largeErr == nil {
			b.Logf("generated %d files in %v: %s", largeRepoFiles, time.Since(start).Round(time.Millisecond), large.dir)
		}
	})
	if largeErr != nil {
		b.Fatal(largeErr)
	}
	// The repository lives as long as this benchmark run: the top-level benchmark's
	// cleanup removes it, and a later -count iteration makes it again.
	b.Cleanup(func() {
		os.RemoveAll(filepath.Dir(large.dir))
		largeOnce, large = sync.Once{}, nil
	})
	return large
}

func makeLargeRepo(b *testing.B, root string) (*benchLarge, error) {
	lr := &benchLarge{dir: filepath.Join(root, "repo")}
	lr.env = append(benchEnv(b, root), "FAKE_AGENT_SCENARIO="+filepath.Join(root, "scenario.json"))
	benchWrite(b, filepath.Join(root, "scenario.json"), benchScenario)
	benchMkdir(b, lr.dir)
	benchGit(b, lr.env, lr.dir, "init", "-q", "-b", "main")

	cmd := exec.Command("git", "fast-import", "--quiet")
	cmd.Dir, cmd.Env = lr.dir, lr.env
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	w := bufio.NewWriterSize(in, 1<<20)
	fmt.Fprintf(w, "commit refs/heads/main\ncommitter Ada Tester <ada@example.com> 1767322800 +0000\ndata 4\nbase\n")
	file := func(path, content string) {
		fmt.Fprintf(w, "M 100644 inline %s\ndata %d\n%s\n", path, len(content), content)
	}
	for i := range largeRepoFiles {
		// Sources of a few hundred bytes, each different.
		file(fmt.Sprintf("src/m%d/p%02d/file%03d.go", i/10000, i/100%100, i%100),
			fmt.Sprintf("package p%02d\n\n// File %d of the benchmark repository.\nfunc F%d() int { return %d }\n%s",
				i/100%100, i, i, i, strings.Repeat("// filler line to give the file a realistic size\n", i%8)))
	}
	file("openspec/changes/x/tasks.md", benchTasks(5, false))
	file("openspec/changes/done/tasks.md", benchTasks(2, true))
	file(".gitignore", "*.log\n")
	if err := w.Flush(); err != nil {
		return nil, err
	}
	in.Close()
	if err := cmd.Wait(); err != nil {
		return nil, fmt.Errorf("git fast-import: %v\n%s", err, stderr.String())
	}
	benchGit(b, lr.env, lr.dir, "reset", "-q", "--hard", "main")
	lr.base = strings.TrimSpace(benchGit(b, lr.env, lr.dir, "rev-parse", "HEAD"))
	// One run of "done" for status to show; it leaves the branch ralph/done behind.
	benchRalph(b, lr.env, lr.dir, "start", "done")
	benchGit(b, lr.env, lr.dir, "checkout", "-q", "main")
	// Warm the caches: the first status after a checkout pays for it.
	benchGit(b, lr.env, lr.dir, "status")
	return lr, nil
}

// reset puts the repository back on main at the base, clean, with no run of x and no
// branch made by a benchmark; the run of "done" stays for status.
func (lr *benchLarge) reset(b *testing.B) {
	b.Helper()
	benchGit(b, lr.env, lr.dir, "checkout", "-q", "-f", "main")
	benchGit(b, lr.env, lr.dir, "clean", "-fdq")
	refs := benchGit(b, lr.env, lr.dir, "for-each-ref", "--format=delete %(refname)",
		"refs/heads/ralph/x", "refs/heads/bare", "refs/heads/bench-checkpoint", "refs/ralph/x/")
	cmd := exec.Command("git", "update-ref", "--stdin")
	cmd.Dir, cmd.Env, cmd.Stdin = lr.dir, lr.env, strings.NewReader(refs)
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("update-ref: %v\n%s", err, out)
	}
	if err := os.Remove(filepath.Join(lr.dir, ".git", "ralph", "x", "run.json")); err != nil && !os.IsNotExist(err) {
		b.Fatal(err)
	}
	if err := os.Remove(filepath.Join(lr.dir, ".git", "ralph", "done", "run.json")); err != nil && !os.IsNotExist(err) {
		b.Fatal(err)
	}
	// Keep a complete run of "done" for status: its branch exists, the record says so.
	benchGit(b, lr.env, lr.dir, "branch", "-q", "-D", "ralph/done")
	benchRalph(b, lr.env, lr.dir, "start", "done")
	benchGit(b, lr.env, lr.dir, "checkout", "-q", "main")
}

// touch makes a story-sized change: one file edited, one added.
func (lr *benchLarge) touch(b *testing.B, what string) {
	b.Helper()
	benchWrite(b, filepath.Join(lr.dir, "src", "m0", "p00", "file000.go"), "package p00\n\n// "+what+"\n")
	benchWrite(b, filepath.Join(lr.dir, "src", "m0", "p00", strings.ReplaceAll(what, " ", "-")+".go"), "package p00\n")
}

// benchCheckpoint takes the git steps of loop.checkpoint: the branch the agent left,
// HEAD (did it commit?), whether a ralph-verify hook exists, add -A, commit (which
// reads the new HEAD back).
func benchCheckpoint(b *testing.B, ctx context.Context, repo *git.Repo) {
	if _, err := repo.CurrentBranch(ctx); err != nil {
		b.Fatal(err)
	}
	head, err := repo.Head(ctx)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := repo.InProgress(); err != nil {
		b.Fatal(err)
	}
	if err := repo.AddAll(ctx); err != nil {
		b.Fatal(err)
	}
	tree, _, err := repo.StagedTree(ctx) // the tree the gate sees, and its gitlinks
	if err != nil {
		b.Fatal(err)
	}
	msg := "checkpoint: 1\n\nStory 1: bench\n\nRalph-Change: x\nRalph-Story: 1\nRalph-Attempt: 1\nRalph-Agent: claude\n"
	id, err := repo.Commit(ctx, msg, git.CommitOptions{AllowEmpty: true})
	if err != nil {
		b.Fatal(err)
	}
	if got, parents, err := repo.CommitShape(ctx, id); err != nil || got != tree || len(parents) != 1 || parents[0] != head {
		b.Fatalf("the checkpoint is %s on %v (%v), want %s on %s", got, parents, err, tree, head)
	}
}

// benchBareLoop is the loop without git-ralph: per story, the same agent with the same
// environment and a prompt on stdin, then `git add -A` and `git commit`.
func benchBareLoop(b *testing.B, env []string, dir, change string, stories int) {
	b.Helper()
	for s := 1; s <= stories; s++ {
		story := fmt.Sprint(s)
		cmd := exec.Command("claude", "-p", "--output-format", "stream-json", "--verbose", "--dangerously-skip-permissions")
		cmd.Dir = dir
		cmd.Env = append(env, "RALPH_AGENT=1", "RALPH_CHANGE="+change, "RALPH_STORY="+story, "RALPH_ATTEMPT=1")
		cmd.Stdin = strings.NewReader("Work on story " + story + " of " + change + ".\n" + strings.Repeat("prompt text\n", 200))
		cmd.Stdout = io.Discard
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Run(); err != nil {
			b.Fatalf("agent: %v\n%s", err, stderr.String())
		}
		benchGit(b, env, dir, "add", "-A")
		benchGit(b, env, dir, "commit", "-q", "-m", "story "+story)
	}
}

func benchRalph(b testing.TB, env []string, dir string, args ...string) string {
	b.Helper()
	cmd := exec.Command("git", append([]string{"ralph"}, args...)...)
	cmd.Dir, cmd.Env = dir, env
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		b.Fatalf("git ralph %s: %v\n%s", strings.Join(args, " "), err, out.String())
	}
	return out.String()
}

func benchCopy(b *testing.B, from, to string) {
	b.Helper()
	if out, err := exec.Command("cp", "-a", from, to).CombinedOutput(); err != nil {
		b.Fatalf("cp: %v\n%s", err, out)
	}
}

func benchTime(f func()) time.Duration {
	start := time.Now()
	f()
	return time.Since(start)
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// benchReport reports both sides per iteration and their ratio; ns/op is git-ralph's.
func benchReport(b *testing.B, ralph, bare time.Duration) {
	b.ReportMetric(float64(ralph.Nanoseconds())/float64(b.N), "ns/op")
	b.ReportMetric(ms(ralph)/float64(b.N), "ralph-ms")
	b.ReportMetric(ms(bare)/float64(b.N), "bare-ms")
	b.ReportMetric(float64(ralph)/float64(bare), "x-bare")
}

// TestGitCallsPerStory pins how many git processes the loop starts per story: the
// count printed by --verbose between one story's attempt line and the next; with the
// sandbox off, and with the default where the git directory moves out of the tree.
func TestGitCallsPerStory(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		max  int
	}{
		{"off", []string{"--sandbox=off"}, maxGitCallsPerStory},
		{"moved", nil, maxGitCallsPerStoryMoved},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			env := append(benchEnv(t, root), "FAKE_AGENT_SCENARIO="+filepath.Join(root, "scenario.json"))
			benchWrite(t, filepath.Join(root, "scenario.json"), benchScenario)
			dir := filepath.Join(root, "repo")
			benchMkdir(t, filepath.Join(dir, "openspec", "changes", "x"))
			benchGit(t, env, dir, "init", "-q", "-b", "main")
			benchWrite(t, filepath.Join(dir, "openspec", "changes", "x", "tasks.md"), benchTasks(4, false))
			benchGit(t, env, dir, "add", "-A")
			benchGit(t, env, dir, "commit", "-q", "-m", "base")
			cmd := exec.Command("git", append([]string{"ralph", "start", "x", "--verbose"}, tc.args...)...)
			cmd.Dir, cmd.Env = dir, env
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("start: %v\n%s", err, out)
			}
			if tc.args == nil && !strings.Contains(string(out), "git directory read-only (moved") {
				t.Skipf("the git directory is not moved out of the tree here:\n%s", out)
			}
			perStory := gitCallsPerStory(string(out))
			if len(perStory) != 4 {
				t.Fatalf("found %d stories in the trace, want 4:\n%s", len(perStory), out)
			}
			// Stories 2 and 3 are in the middle: the checkpoint of the story before and the
			// steps before the agent of this one.
			for _, calls := range perStory[1:3] {
				if len(calls) > tc.max {
					t.Errorf("%d git calls per story, want at most %d:\n  %s", len(calls), tc.max, strings.Join(calls, "\n  "))
				}
			}
			t.Logf("git calls per story (%d):\n  %s", len(perStory[1]), strings.Join(perStory[1], "\n  "))
		})
	}
}

// maxGitCallsPerStory is the ceiling TestGitCallsPerStory holds the loop to. Lower it
// when a call goes. Three: add, commit, and the for-each-ref that checks the trust
// surface after the agent (the snapshot before it reuses the previous check's refs).
// The tree the verify gate sees (the commit must have exactly that tree: issue 29) is
// computed from the index without a process, and the commit's tree read from its loose
// object; naming the repository on every call (--git-dir, --work-tree) adds none.
// maxGitCallsPerStoryMoved is the ceiling where the git directory is read-only to the
// agent and its gate: add and commit; the surface is compared once, at the run's end.
const (
	maxGitCallsPerStory      = 3
	maxGitCallsPerStoryMoved = 2
)

var attemptLine = regexp.MustCompile(`^\[\d+/\d+\] story `)

// gitCallsPerStory splits a --verbose trace at the attempt lines and lists the git
// commands after each.
func gitCallsPerStory(trace string) [][]string {
	var stories [][]string
	for _, line := range strings.Split(trace, "\n") {
		switch {
		case attemptLine.MatchString(line):
			stories = append(stories, nil)
		case strings.HasPrefix(line, "$ git ") && len(stories) > 0:
			stories[len(stories)-1] = append(stories[len(stories)-1], strings.TrimPrefix(line, "$ "))
		}
	}
	return stories
}

// benchEnv is main_test.go's hermetic() for plain Go tests and benchmarks: its own HOME
// and global config, no system config, a fixed identity and dates, no colour, and the
// PATH that testscript.Main set up (git-ralph and the fake claude come first).
func benchEnv(tb testing.TB, root string) []string {
	tb.Helper()
	home := filepath.Join(root, "home")
	benchMkdir(tb, home)
	cfg := "[init]\n\tdefaultBranch = main\n[advice]\n\tdetachedHead = false\n[gc]\n\tauto = 0\n[maintenance]\n\tauto = false\n"
	benchWrite(tb, filepath.Join(home, ".gitconfig"), cfg)
	drop := map[string]bool{"GIT_DIR": true, "GIT_WORK_TREE": true, "GIT_INDEX_FILE": true, "GIT_PREFIX": true,
		"GIT_COMMON_DIR": true, "GIT_OBJECT_DIRECTORY": true, "GIT_ALTERNATE_OBJECT_DIRECTORIES": true,
		"GIT_RALPH_VERBOSE": true, "CLICOLOR_FORCE": true, "GIT_CONFIG_COUNT": true, "GIT_CONFIG_PARAMETERS": true,
		"GIT_TRACE": true, "GIT_CONFIG": true, "GIT_CONFIG_SYSTEM": true}
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if !drop[k] && !strings.HasPrefix(k, "FAKE_AGENT_") && !strings.HasPrefix(k, "RALPH_") {
			env = append(env, kv)
		}
	}
	return append(env,
		"HOME="+home,
		"XDG_CONFIG_HOME="+filepath.Join(home, ".config"),
		"GIT_CONFIG_NOSYSTEM=1",
		"GIT_CONFIG_GLOBAL="+filepath.Join(home, ".gitconfig"),
		"GIT_AUTHOR_NAME=Ada Tester", "GIT_AUTHOR_EMAIL=ada@example.com", "GIT_AUTHOR_DATE=2026-01-02T03:04:05Z",
		"GIT_COMMITTER_NAME=Ada Tester", "GIT_COMMITTER_EMAIL=ada@example.com", "GIT_COMMITTER_DATE=2026-01-02T03:04:05Z",
		"NO_COLOR=1", "CI=true", "IS_SANDBOX=1",
		"FAKE_AGENT_FIXED_TIME=2026-01-02T03:04:05Z",
	)
}

func benchGit(tb testing.TB, env []string, dir string, args ...string) string {
	tb.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir, cmd.Env = dir, env
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		tb.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, errb.String())
	}
	return out.String()
}

func benchMkdir(tb testing.TB, dir string) {
	tb.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		tb.Fatal(err)
	}
}

func benchWrite(tb testing.TB, path, content string) {
	tb.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		tb.Fatal(err)
	}
}

func benchWriteExec(tb testing.TB, path, content string) {
	tb.Helper()
	if err := os.WriteFile(path, []byte(content), 0o755); err != nil {
		tb.Fatal(err)
	}
}

// cpuTime is the CPU time (user and system) this process and its waited-for children
// have used so far. Differences of it measure a step's CPU cost, which the load of a
// shared machine leaves about as it is while it stretches the wall time many times.
func cpuTime(tb testing.TB) time.Duration {
	tb.Helper()
	var self, children syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &self); err != nil {
		tb.Fatal(err)
	}
	if err := syscall.Getrusage(syscall.RUSAGE_CHILDREN, &children); err != nil {
		tb.Fatal(err)
	}
	tv := func(t syscall.Timeval) time.Duration { return time.Duration(t.Nano()) }
	return tv(self.Utime) + tv(self.Stime) + tv(children.Utime) + tv(children.Stime)
}
