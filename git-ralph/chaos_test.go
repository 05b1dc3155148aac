//go:build linux

package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/git-ralph/git-ralph/internal/gitdir"
)

// TestChaos runs a three-story loop with the fake agent and kills git-ralph with SIGKILL
// somewhere in it — after a random delay, at the n-th step it takes, or at a named step
// of an attempt — then runs `git ralph start` again and `git ralph finish --squash`.
// Half the trials kill git-ralph alone (its agent lives on, orphaned); the other half
// kill everything at once, as a power loss or the OOM killer would: git-ralph, the git
// it is running (which leaves its lock files), its hooks, the agent and its children.
// After every trial it checks what a crash must never break: one "initial state" and one
// "checkpoint: <id>" per story, in order; the work of every completed story; the user's
// uncommitted work from before the loop; no lock, no "running" status and no agent left
// behind by a dead process; nothing of an interrupted attempt in any checkpoint; no
// lock file or temporary index left in .git; a clean git fsck.
//
// The steps are found by watching, not by a switch in the product: the fake agent and
// the trial's hooks touch files in a signal directory, and inotify reports what git and
// git-ralph create in .git (index.lock, ref locks, the temporary index of a saved
// attempt, each write of the run record).
//
//	go test ./git-ralph -run TestChaos -v                               # 26 trials: each point twice
//	CHAOS_TRIALS=500 go test ./git-ralph -run TestChaos -timeout 30m
//	CHAOS_SEED=7 CHAOS_ONLY=12 go test ./git-ralph -run TestChaos -v    # trial 12 of seed 7 alone
//	CHAOS_KEEP_GOING=1 …                                                 # do not stop after 3 failures
func TestChaos(t *testing.T) {
	if testing.Short() {
		t.Skip("kills git-ralph at 26 points, about 25 seconds; skipped with -short")
	}
	t.Parallel() // with the scripts: much of a trial is waiting
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("CHAOS_SEED"); s != "" {
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("CHAOS_SEED: %v", err)
		}
		seed = v
	}
	trials := 2 * len(chaosPoints) // small by default (the suite's time); CHAOS_TRIALS raises it
	if s := os.Getenv("CHAOS_TRIALS"); s != "" {
		v, err := strconv.Atoi(s)
		if err != nil {
			t.Fatalf("CHAOS_TRIALS: %v", err)
		}
		trials = v
	}
	only := -1
	if s := os.Getenv("CHAOS_ONLY"); s != "" {
		only, _ = strconv.Atoi(s)
	}
	t.Logf("seed %d (replay with CHAOS_SEED=%d)", seed, seed)

	root := memTempDir(t)
	tmpl := newChaosTemplate(t, root)
	full := tmpl.calibrate(t)
	t.Logf("an uninterrupted run takes %v and %d observed steps", full.took.Round(time.Millisecond), full.steps)

	failed, kills, inGit := 0, 0, 0
	for i := range trials {
		// Each trial draws from its own stream, so CHAOS_ONLY=i replays trial i alone.
		rng := rand.New(rand.NewPCG(seed, uint64(i)))
		plan := newChaosPlan(rng, i, full)
		if only >= 0 && i != only {
			continue
		}
		var tr *chaosTrial
		ok := t.Run(fmt.Sprintf("%02d-%s", i, plan.point), func(t *testing.T) {
			tr = tmpl.newTrial(t, root, i, plan)
			tr.run(t)
		})
		if tr != nil {
			kills += tr.killed
			inGit += tr.inGit
		}
		if !ok {
			failed++
			t.Errorf("trial %d (%s) failed; replay it with CHAOS_SEED=%d CHAOS_ONLY=%d", i, plan, seed, i)
			if failed >= 3 && os.Getenv("CHAOS_KEEP_GOING") == "" {
				t.Fatalf("stopping after %d failed trials", failed)
			}
		}
	}
	t.Logf("%d trials, %d kills, %d of them inside a running git", trials, kills, inGit)
}

// TestChaosFinishSquashKilledAtEveryStep: the chaos test found that a finish --squash
// killed after its merge cannot be finished: the next one refuses because of the
// uncommitted changes its own merge left (or, once the branch is deleted, because the
// branch is gone), and the run record stays. Here finish is killed at each of its
// steps in turn, then run again, and must end as an uninterrupted one. Last, it is
// killed inside git's packed-refs rewrite of its branch -D (packed-refs.new written,
// not yet renamed), which the steps hit only by chance: a reference-transaction hook
// holds git there (see packedRefsHook), so that case is proven every run.
func TestChaosFinishSquashKilledAtEveryStep(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the loop once per step of finish; skipped with -short")
	}
	t.Parallel() // with the scripts: much of a trial is waiting
	if pendingFinishFix {
		t.Skip("pending fix: finish --squash killed after its merge cannot be finished again (internal/loop/finish.go)")
	}
	root := memTempDir(t)
	tmpl := newChaosTemplate(t, root)
	full := tmpl.calibrate(t)
	for i := 2; i <= 2*(full.finishSteps+1)+1; i++ {
		n, all := i/2, i%2 == 1 // each step twice: git-ralph killed alone, then everything
		name := fmt.Sprintf("step-%d", n)
		if all {
			name += "-all"
		}
		t.Run(name, func(t *testing.T) {
			tr := tmpl.newTrial(t, root, i, chaosPlan{point: "finish", nth: n, all: all})
			tr.writeScenario(t)
			defer tr.cleanup(t)
			ph := tr.startPhase(t, "start")
			if code, _ := ph.wait(t); code != 0 {
				t.Fatalf("start exited %d:\n%s", code, ph.out.String())
			}
			tr.killFinish(t, tr.plan)
			tr.checkFinished(t)
		})
	}
	// Inside git's packed-refs rewrite (finish --squash's branch -D), every run: the
	// steps above land there only by chance.
	t.Run("packed-refs-rewrite-all", func(t *testing.T) {
		tr := tmpl.newTrial(t, root, 2*(full.finishSteps+2), chaosPlan{point: "packed-refs", all: true})
		tr.writeScenario(t)
		defer tr.cleanup(t)
		ph := tr.startPhase(t, "start")
		if code, _ := ph.wait(t); code != 0 {
			t.Fatalf("start exited %d:\n%s", code, ph.out.String())
		}
		tr.killFinish(t, tr.plan)
		tr.checkFinished(t)
	})
}

// TestChaosAgentActsBeforeItIsRecorded: git-ralph records the agent's pid (so that the
// next start can stop an agent a killed git-ralph left behind) only after it has handed
// the agent its prompt. An agent that gets to work in between and a git-ralph killed
// there leave an agent nobody stops, working on while the next start runs its own. The
// test stops git-ralph the moment its agent exists, lets the agent reach its first
// step if it can, then kills git-ralph and checks that the next start stopped it.
func TestChaosAgentActsBeforeItIsRecorded(t *testing.T) {
	if testing.Short() {
		t.Skip("races git-ralph against its agent; skipped with -short")
	}
	t.Parallel() // with the scripts: much of a trial is waiting
	if pendingAgentRecordFix {
		t.Skip("pending fix: the agent gets its prompt before its pid is recorded (internal/agent/run.go)")
	}
	root := memTempDir(t)
	tmpl := newChaosTemplate(t, root)
	const tries = 30
	for try := range tries {
		tr := tmpl.newTrial(t, root, try, chaosPlan{point: "agent-start", story: "1"})
		tr.writeScenario(t)
		ph := tr.startPhase(t, "start")
		// Stop git-ralph a little later each try: between the prompt and the record.
		pid, agent := ph.stopAtAgentSpawn(t, time.Duration(try)*70*time.Microsecond)
		if agent == 0 {
			tr.cleanup(t)
			t.Fatalf("the agent was never started:\n%s", ph.out.String())
		}
		rec, _ := readChaosRecord(filepath.Join(tr.repo, ".git", "ralph", chaosChange, "run.json"))
		acted := false
		if rec.AgentPID == 0 {
			// Not recorded yet: does the agent get to work while git-ralph is stopped?
			for range 40 {
				if _, err := os.Stat(filepath.Join(tr.sig, "started-1-1")); err == nil {
					acted = true
					break
				}
				time.Sleep(5 * time.Millisecond)
			}
		}
		if testing.Verbose() {
			t.Logf("try %d: agent %d, recorded %d, acted %v", try, agent, rec.AgentPID, acted)
		}
		if !acted {
			_ = syscall.Kill(pid, syscall.SIGKILL)
			<-ph.done
			ph.w.stop()
			tr.cleanup(t)
			continue
		}
		// The agent works, unrecorded. Kill git-ralph here and start again.
		_ = syscall.Kill(pid, syscall.SIGKILL)
		<-ph.done
		ph.w.stop()
		ph = tr.startPhase(t, "start")
		code, _ := ph.wait(t)
		alive := agentAlive(agent)
		tr.cleanup(t)
		if code != 0 {
			t.Fatalf("start after the kill exited %d:\n%s", code, ph.out.String())
		}
		if alive {
			t.Fatalf("the agent (pid %d) of the killed git-ralph is still running after the next start (try %d): it got its prompt before its pid was recorded", agent, try)
		}
		return
	}
	t.Logf("in %d tries the agent never got to work before it was recorded", tries)
}

// pendingAgentRecordFix: see TestChaosAgentActsBeforeItIsRecorded. Set to false once
// internal/agent.Run records the agent (OnStart) before it writes the prompt.
const pendingAgentRecordFix = false

// stopAtAgentSpawn watches git-ralph's children and stops git-ralph (SIGSTOP) after
// delay once its agent exists. It returns git-ralph's pid and the agent's (0 when none
// came).
func (ph *chaosPhase) stopAtAgentSpawn(t *testing.T, delay time.Duration) (ralph, agent int) {
	t.Helper()
	ralph = ph.ralphPid()
	if ralph == 0 {
		return 0, 0
	}
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		tasks, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", ralph))
		if err != nil {
			return ralph, 0
		}
		for _, task := range tasks {
			data, _ := os.ReadFile(fmt.Sprintf("/proc/%d/task/%s/children", ralph, task.Name()))
			for _, f := range strings.Fields(string(data)) {
				pid, _ := strconv.Atoi(f)
				if comm, _ := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid)); strings.TrimSpace(string(comm)) == "claude" {
					for start := time.Now(); time.Since(start) < delay; {
					}
					_ = syscall.Kill(ralph, syscall.SIGSTOP)
					return ralph, pid
				}
			}
		}
	}
	return ralph, 0
}

// chaosPoints are the places a trial kills git-ralph at.
var chaosPoints = []string{
	"random-delay",  // a random delay after start
	"random-step",   // the n-th thing git-ralph or its git did in .git
	"new-run",       // one of the steps of a new run, before the first attempt
	"before-agent",  // the record says an attempt runs, no agent is recorded yet
	"agent-start",   // the agent's first step
	"agent-running", // the agent is at work: files written, tasks ticked
	"after-result",  // the agent printed its final result, then hangs
	"verify",        // the ralph-verify hook runs
	"commit",        // the checkpoint commit runs the user's pre-commit hook
	"commit-step",   // the n-th git step after the agent's result: add, commit, ref update
	"restore",       // the n-th git step of saving and restoring a failed attempt
	"finish",        // the n-th git step of finish --squash
	"in-git",        // everything, while the n-th git that git-ralph started runs
	"packed-refs",   // everything, inside git's packed-refs rewrite in finish --squash's branch -D
}

// pendingFinishFix: finish --squash killed after its merge cannot be finished by running
// it again (TestChaosFinishSquashKilledAtEveryStep). Set to false once the fix in
// internal/loop/finish.go lands.
const pendingFinishFix = false

const (
	chaosChange = "x"
	chaosTasks  = "# Tasks\n\n## 1. One\n- [ ] 1.1 first\n\n## 2. Two\n- [ ] 2.1 second\n- [ ] 2.2 second, more\n\n## 3. Three\n- [ ] 3.1 third\n"
	chaosNotes  = "notes the user edited and did not commit\n"
)

// chaosStories are the change's stories. Story 2's first attempt fails, so every trial
// saves and restores an attempt.
var chaosStories = []string{"1", "2", "3"}

// chaosPlan is where one trial kills git-ralph.
type chaosPlan struct {
	point string
	story string        // the story a named point applies to
	nth   int           // for the counting points: kill at the nth matching step
	delay time.Duration // for random-delay
	hooks bool          // install a ralph-verify and a pre-commit hook
	again time.Duration // when > 0, the first resume is killed too, after this delay
	all   bool          // kill every process of the run at once, git included, not git-ralph alone
}

func (p chaosPlan) String() string {
	s := p.point
	if p.story != "" {
		s += " story " + p.story
	}
	if p.nth > 0 {
		s += fmt.Sprintf(" step %d", p.nth)
	}
	if p.delay > 0 && p.point == "in-git" {
		s += " + " + p.delay.String()
	} else if p.delay > 0 {
		s += " after " + p.delay.String()
	}
	if p.again > 0 {
		s += ", resume killed after " + p.again.String()
	}
	if p.all {
		s += ", all killed"
	}
	return s
}

func newChaosPlan(rng *rand.Rand, i int, full chaosCalibration) chaosPlan {
	p := chaosPlan{point: chaosPoints[i%len(chaosPoints)], story: chaosStories[rng.IntN(len(chaosStories))]}
	p.hooks = rng.IntN(3) == 0
	switch p.point {
	case "random-delay":
		p.delay = time.Duration(rng.Int64N(int64(full.took))) + time.Millisecond
		p.story = ""
	case "random-step":
		p.nth = 1 + rng.IntN(full.steps)
		p.story = ""
	case "new-run":
		p.nth = 1 + rng.IntN(full.newRunSteps)
		p.story = ""
	case "verify":
		p.hooks = true
		if p.story == "2" && rng.IntN(2) == 0 {
			p.story = "3"
		}
	case "commit":
		p.hooks = true
	case "commit-step":
		p.nth = 1 + rng.IntN(6)
	case "restore":
		p.story = "2"
		p.nth = 1 + rng.IntN(9)
	case "finish":
		p.story = ""
		p.nth = 1 + rng.IntN(full.finishSteps)
	case "packed-refs":
		p.story = ""
	case "in-git":
		p.story = ""
		p.nth = 1 + rng.IntN(full.gits)
		p.delay = time.Duration(rng.IntN(1000)) * time.Microsecond
	}
	if rng.IntN(5) == 0 && p.point != "finish" && p.point != "packed-refs" {
		p.again = time.Duration(rng.Int64N(int64(full.took))) + time.Millisecond
	}
	p.all = rng.IntN(2) == 0 || p.point == "in-git" || p.point == "packed-refs"
	return p
}

// chaosTemplate is a repository made once and copied for every trial: a base commit with
// the change, then the user's uncommitted work (a modified file, a staged new file, an
// untracked file, an ignored file).
type chaosTemplate struct {
	dir  string // holds repo/
	env  []string
	base string // the base commit
}

func newChaosTemplate(t *testing.T, root string) *chaosTemplate {
	c := &chaosTemplate{dir: filepath.Join(root, "template")}
	c.env = benchEnv(t, root)
	repo := filepath.Join(c.dir, "repo")
	benchMkdir(t, filepath.Join(repo, "openspec", "changes", chaosChange))
	benchGit(t, c.env, repo, "init", "-q", "-b", "main")
	benchWrite(t, filepath.Join(repo, "openspec", "changes", chaosChange, "tasks.md"), chaosTasks)
	benchWrite(t, filepath.Join(repo, "notes.txt"), "base notes\n")
	benchWrite(t, filepath.Join(repo, ".gitignore"), "*.ignored\n")
	benchGit(t, c.env, repo, "add", "-A")
	benchGit(t, c.env, repo, "commit", "-q", "-m", "base")
	c.base = strings.TrimSpace(benchGit(t, c.env, repo, "rev-parse", "HEAD"))
	benchGit(t, c.env, repo, "tag", "chaos-tag") // story 2's failing attempt deletes it
	benchWrite(t, filepath.Join(repo, "notes.txt"), chaosNotes)
	benchWrite(t, filepath.Join(repo, "staged.txt"), "staged by the user\n")
	benchGit(t, c.env, repo, "add", "staged.txt")
	benchWrite(t, filepath.Join(repo, "wip.txt"), "untracked work in progress\n")
	benchWrite(t, filepath.Join(repo, "cache.ignored"), "ignored\n")
	// Directories that exist only once git-ralph has run, made now so that inotify can
	// watch them from the start. git treats empty ref directories as nothing.
	for _, d := range []string{"refs/heads/ralph", "refs/ralph/" + chaosChange + "/attempts", "refs/ralph/" + chaosChange + "/backup", "ralph/" + chaosChange} {
		benchMkdir(t, filepath.Join(repo, ".git", d))
	}
	return c
}

// chaosCalibration is what an uninterrupted trial looks like.
type chaosCalibration struct {
	took        time.Duration
	steps       int // observed steps of the whole start
	newRunSteps int // observed steps before the first attempt
	finishSteps int // observed steps of finish --squash
	gits        int // git processes of the whole start that a poller saw
}

// calibrate runs the loop and finish once without killing anything, to learn how long
// a run takes and how many steps the watcher sees, and checks that it ends as every
// trial must.
func (c *chaosTemplate) calibrate(t *testing.T) chaosCalibration {
	t.Helper()
	var cal chaosCalibration
	t.Run("calibrate", func(t *testing.T) {
		tr := c.newTrial(t, memTempDir(t), -1, chaosPlan{point: "none", hooks: true})
		tr.writeScenario(t)
		defer tr.cleanup(t)
		start := time.Now()
		ph := tr.startPhase(t, "start")
		gits := make(chan int, 1)
		go func() {
			n := 0
			watchGits(ph.ralphPid(), ph.done, func(int) bool { n++; return false })
			gits <- n
		}()
		code, events := ph.wait(t)
		cal.gits = max(<-gits, 1)
		cal.took = time.Since(start)
		if code != 0 {
			t.Fatalf("an uninterrupted run exited %d:\n%s", code, ph.out.String())
		}
		// The steps before the first agent's signal, less the two record writes of its
		// attempt (attempt started, agent started), are the new run's.
		for _, e := range events {
			if e.dir == "sig" {
				break
			}
			cal.newRunSteps++
		}
		cal.newRunSteps = max(cal.newRunSteps-2, 1)
		cal.steps = countSteps(events)
		if testing.Verbose() {
			for _, e := range events {
				t.Logf("%8s %s", e.at.Round(10*time.Microsecond), e)
			}
		}
		tr.checkLoopDone(t)
		ph = tr.startPhase(t, "finish", "--squash")
		code, events = ph.wait(t)
		if code != 0 {
			t.Fatalf("finish --squash exited %d:\n%s", code, ph.out.String())
		}
		cal.finishSteps = countSteps(events)
		if testing.Verbose() {
			for _, e := range events {
				t.Logf("finish %8s %s", e.at.Round(10*time.Microsecond), e)
			}
		}
		tr.checkFinished(t)
	})
	if testing.Verbose() {
		t.Logf("calibration: %+v", cal)
	}
	if cal.steps == 0 || cal.finishSteps == 0 {
		t.FailNow()
	}
	return cal
}

func countSteps(events []fsEvent) int {
	n := 0
	for _, e := range events {
		if gitStep(e) {
			n++
		}
	}
	return n
}

// chaosTrial is one trial's copy of the template.
type chaosTrial struct {
	plan     chaosPlan
	dir      string
	repo     string
	sig      string // the signal directory the fake agent and the hooks touch
	env      []string
	base     string
	scenario string
	kills    []string // what each kill hit, for messages
	killed   int
	inGit    int // kills that caught a git (other than `git ralph` itself) running
}

func (c *chaosTemplate) newTrial(t *testing.T, root string, n int, plan chaosPlan) *chaosTrial {
	t.Helper()
	tr := &chaosTrial{plan: plan, dir: filepath.Join(root, fmt.Sprintf("trial-%02d", n)), base: c.base}
	if n < 0 {
		tr.dir = filepath.Join(root, "calibrate")
	}
	benchMkdir(t, tr.dir)
	if out, err := exec.Command("cp", "-a", filepath.Join(c.dir, "repo"), tr.dir).CombinedOutput(); err != nil {
		t.Fatalf("copy the template: %v\n%s", err, out)
	}
	tr.repo = filepath.Join(tr.dir, "repo")
	tr.sig = filepath.Join(tr.dir, "sig")
	benchMkdir(t, tr.sig)
	benchMkdir(t, filepath.Join(tr.dir, "fake-state"))
	tr.scenario = filepath.Join(tr.dir, "scenario.json")
	// The fake agent's sandbox lets it write its state and the signal directory, beside
	// the repository (ralph.sandboxWritable, here from the environment).
	tr.env = append(slices.Clone(c.env),
		"FAKE_AGENT_SCENARIO="+tr.scenario,
		"FAKE_AGENT_STATE_DIR="+filepath.Join(tr.dir, "fake-state"),
		"FAKE_AGENT_RECORD="+filepath.Join(tr.dir, "fake-state", "agent-calls.ndjson"),
		"CHAOS_SIG="+tr.sig,
		"GIT_CONFIG_COUNT=2",
		"GIT_CONFIG_KEY_0=ralph.sandboxWritable", "GIT_CONFIG_VALUE_0="+tr.sig,
		"GIT_CONFIG_KEY_1=ralph.sandboxWritable", "GIT_CONFIG_VALUE_1="+filepath.Join(tr.dir, "fake-state"),
	)
	if plan.hooks {
		hooks := filepath.Join(tr.repo, ".git", "hooks")
		benchMkdir(t, hooks)
		pause := ""
		if plan.point == "verify" || plan.point == "commit" {
			pause = "sleep 0.05\n" // time for the test to see the signal and kill git-ralph
		}
		benchWriteExec(t, filepath.Join(hooks, "ralph-verify"),
			"#!/bin/sh\ntouch \"$CHAOS_SIG/verify-$RALPH_STORY-$RALPH_ATTEMPT\"\n"+pause)
		benchWriteExec(t, filepath.Join(hooks, "pre-commit"),
			"#!/bin/sh\ntouch \"$CHAOS_SIG/pre-commit.$$\"\n"+pause)
	}
	return tr
}

// writeScenario writes the fake agent's script. Every attempt writes a scratch file
// first and removes it just before it signals COMPLETE: a scratch file in a checkpoint
// is work of an interrupted attempt that leaked into it. Story 2's first attempt fails
// after scribbling on the user's notes. The attempt a named agent point targets pauses
// there (and scribbles too).
func (tr *chaosTrial) writeScenario(t *testing.T) {
	t.Helper()
	type step = map[string]any
	scratch := step{"write": step{"path": "scratch/{{story}}-{{attempt}}.txt", "content": "scratch of {{story}}-{{attempt}}\n"}}
	scribble := step{"write": step{"path": "notes.txt", "content": "the agent scribbled here\n"}}
	signal := func(name string) step { return step{"touch": "$CHAOS_SIG/" + name + "-{{story}}-{{attempt}}"} }
	wait := step{"wait_for_file": "$CHAOS_SIG/go-{{story}}-{{attempt}}"}
	ok := func(first, pause, after []step) map[string]any {
		steps := append(first,
			scratch,
			step{"write": step{"path": "story-{{story}}.txt", "content": "story {{story}} attempt {{attempt}}\n"}},
			step{"check_story": true})
		steps = append(steps, pause...)
		steps = append(steps,
			step{"bash": "rm -f scratch/{{story}}-{{attempt}}.txt"},
			step{"say": "done\n<promise>COMPLETE</promise>"})
		return map[string]any{"steps": steps, "after": append([]step{signal("result")}, after...)}
	}
	// The failing attempt also tampers with the trust surface (a tag deleted, a branch
	// created): whenever the kill comes, the tag must be back and the branch gone.
	tamper := step{"bash": "git tag -d chaos-tag >/dev/null 2>&1; git branch chaos-evil 2>/dev/null; true"}
	fail := map[string]any{
		"steps": []step{
			scratch, scribble, tamper,
			{"write": step{"path": "story-{{story}}.txt", "content": "broken\n"}},
			{"check_task": "2.1"},
			{"say": "<promise>FAILED: 2.2 needs a decision</promise>"},
		},
		"after": []step{signal("result")},
	}
	byStory := map[string][]any{}
	for _, s := range chaosStories {
		var first, pause, after []step
		if s == tr.plan.story {
			switch tr.plan.point {
			case "agent-start":
				first = []step{signal("started"), wait}
			case "agent-running":
				pause = []step{scribble, signal("running"), wait}
			case "after-result":
				after = []step{{"hang": step{}}}
			}
		}
		runs := []any{ok(first, pause, after), ok(nil, nil, nil)}
		if s == "2" {
			runs = []any{fail, ok(first, pause, after), ok(nil, nil, nil)}
		}
		byStory[s] = runs
	}
	data, err := json.Marshal(map[string]any{
		"result":   step{"cost_usd": 0.01, "input_tokens": 10, "output_tokens": 5},
		"by_story": byStory,
	})
	if err != nil {
		t.Fatal(err)
	}
	benchWrite(t, tr.scenario, string(data))
}

func (tr *chaosTrial) run(t *testing.T) {
	tr.writeScenario(t)
	defer tr.cleanup(t)
	p := tr.plan

	if p.point == "finish" || p.point == "packed-refs" {
		if pendingFinishFix {
			t.Skip("pending fix: finish --squash killed after its merge cannot be finished again (TestChaosFinishSquashKilledAtEveryStep)")
		}
		ph := tr.startPhase(t, "start")
		if code, _ := ph.wait(t); code != 0 {
			t.Fatalf("start exited %d:\n%s", code, ph.out.String())
		}
		tr.checkLoopDone(t)
		tr.killFinish(t, p)
		tr.checkFinished(t)
		return
	}

	if tr.startPhase(t, "start").runUntil(t, tr, p) {
		tr.checkAfterKill(t)
	}
	if p.again > 0 { // the resume is killed too
		if tr.startPhase(t, "start").runUntil(t, tr, chaosPlan{point: "random-delay", delay: p.again, all: p.all}) {
			tr.checkAfterKill(t)
		}
	}
	ph := tr.startPhase(t, "start")
	if code, _ := ph.wait(t); code != 0 {
		t.Fatalf("start after the kill (%s) exited %d:\n%s", tr.killText(), code, ph.out.String())
	}
	tr.checkLoopDone(t)
	ph = tr.startPhase(t, "finish", "--squash")
	if code, _ := ph.wait(t); code != 0 {
		t.Fatalf("finish --squash exited %d:\n%s", code, ph.out.String())
	}
	tr.checkFinished(t)
	if testing.Verbose() {
		t.Logf("kills: %s", tr.killText())
	}
}

// killFinish runs finish --squash, kills it at the plan's step, and runs it again.
func (tr *chaosTrial) killFinish(t *testing.T, p chaosPlan) {
	t.Helper()
	if p.point == "packed-refs" {
		// Refs packed, as git gc leaves them: then deleting the branch rewrites
		// packed-refs in every git version (2.39 does it for a loose-only ref too).
		tr.git(t, "-c", "core.hooksPath=/dev/null", "pack-refs", "--all")
		// Armed for finish only: the loop's agent deletes a tag of its own. git runs
		// it there only with ralph.verifySandbox=off (else finish's git runs no hook).
		tr.packedRefsHook(t)
		tr.git(t, "config", "ralph.verifySandbox", "off")
	}
	if !tr.startPhase(t, "finish", "--squash").runUntil(t, tr, p) {
		if p.point == "packed-refs" {
			t.Fatalf("finish --squash ended without a packed-refs rewrite to kill (kills: %s)", tr.killText())
		}
		return
	}
	if p.point == "packed-refs" {
		// The kill is proven to have landed inside the rewrite: git's tempfile is
		// there, beside its lock, as a power loss leaves them.
		for _, f := range []string{"packed-refs.new", "packed-refs.lock"} {
			if _, err := os.Stat(filepath.Join(tr.repo, ".git", f)); err != nil {
				t.Fatalf("after the kill inside the packed-refs rewrite (%s): %v", tr.killText(), err)
			}
		}
	}
	tr.checkAfterKill(t)
	if _, err := os.Stat(filepath.Join(tr.repo, ".git", "ralph", chaosChange, "run.json")); errors.Is(err, os.ErrNotExist) {
		// The kill came after finish had forgotten the run, its last step: the step's
		// event reached the test late (a loaded machine). Nothing is left to resume, and
		// running finish again would rightly say "no run"; checkFinished checks the end.
		tr.kills[len(tr.kills)-1] += " (after the finish had completed)"
		return
	}
	ph := tr.startPhase(t, "finish", "--squash")
	if code, _ := ph.wait(t); code != 0 {
		t.Fatalf("finish --squash after a kill (%s) exited %d:\n%s", tr.killText(), code, ph.out.String())
	}
	if testing.Verbose() {
		t.Logf("finish --squash after a kill (%s):\n%s", tr.killText(), ph.out.String())
	}
}

// packedRefsHook installs a reference-transaction hook that stops git inside its
// packed-refs rewrite: git 2.39 runs the hook ("prepared") for the packed-refs
// transaction of a ref deletion once packed-refs.new is written under packed-refs.lock
// and before it is renamed over packed-refs. The hook signals the test and waits, and
// git waits for the hook, so the kill that follows lands in that window every time,
// not by chance. It stops once per trial.
func (tr *chaosTrial) packedRefsHook(t *testing.T) {
	t.Helper()
	hooks := filepath.Join(tr.repo, ".git", "hooks")
	benchMkdir(t, hooks)
	benchWriteExec(t, filepath.Join(hooks, "reference-transaction"), `#!/bin/sh
cat >/dev/null
[ -e "`+filepath.Join(tr.repo, ".git", "packed-refs.new")+`" ] || exit 0
for f in "$CHAOS_SIG"/packed-refs-new.*; do [ -e "$f" ] && exit 0; done
touch "$CHAOS_SIG/packed-refs-new.$$"
exec sleep 60
`)
}

func (tr *chaosTrial) killText() string {
	if len(tr.kills) == 0 {
		return "no kill"
	}
	return strings.Join(tr.kills, "; ")
}

// chaosPhase is one `git ralph …` process and the watcher of its steps.
type chaosPhase struct {
	cmd   *exec.Cmd
	out   *bytes.Buffer
	w     *watcher
	done  chan struct{}
	code  int
	ralph int // pid of git-ralph (git's child), 0 until found
}

func (tr *chaosTrial) startPhase(t *testing.T, args ...string) *chaosPhase {
	t.Helper()
	git := filepath.Join(tr.repo, ".git")
	// The git directory's move out of the tree (an in-place run in the sandbox) and back:
	// its home, made now so that inotify can watch it, and the tree's .git.
	home := gitdir.HomesIn(chaosStateDir(tr.env), tr.repo)[0]
	benchMkdir(t, home)
	w, err := newWatcher(map[string]string{
		"home":     home,
		"tree":     tr.repo,
		"git":      git,
		"heads":    filepath.Join(git, "refs", "heads", "ralph"),
		"attempts": filepath.Join(git, "refs", "ralph", chaosChange, "attempts"),
		"backup":   filepath.Join(git, "refs", "ralph", chaosChange, "backup"),
		"ralph":    filepath.Join(git, "ralph", chaosChange),
		"sig":      tr.sig,
	})
	if err != nil {
		t.Fatalf("inotify: %v", err)
	}
	ph := &chaosPhase{w: w, out: &bytes.Buffer{}, done: make(chan struct{})}
	ph.cmd = exec.Command("git", append([]string{"ralph"}, args...)...)
	if args[0] == "start" {
		ph.cmd.Args = append(ph.cmd.Args, chaosChange)
	}
	ph.cmd.Dir, ph.cmd.Env = tr.repo, tr.env
	ph.cmd.Stdout, ph.cmd.Stderr = ph.out, ph.out
	if err := ph.cmd.Start(); err != nil {
		w.stop()
		t.Fatal(err)
	}
	go func() {
		_ = ph.cmd.Wait()
		ph.code = ph.cmd.ProcessState.ExitCode()
		close(ph.done)
	}()
	return ph
}

// wait lets the process run to its end and returns its exit code and what it did.
func (ph *chaosPhase) wait(t *testing.T) (int, []fsEvent) {
	t.Helper()
	select {
	case <-ph.done:
	case <-time.After(time.Minute):
		_ = ph.cmd.Process.Kill()
		t.Fatalf("git ralph did not end within a minute:\n%s", ph.out.String())
	}
	return ph.code, ph.w.stop()
}

// ralphPid finds git-ralph, the child git started for `git ralph`.
func (ph *chaosPhase) ralphPid() int {
	if ph.ralph != 0 {
		return ph.ralph
	}
	gitPid := ph.cmd.Process.Pid
	for range 20000 {
		data, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/children", gitPid, gitPid))
		if err != nil {
			return 0 // git is gone
		}
		for _, f := range strings.Fields(string(data)) {
			pid, _ := strconv.Atoi(f)
			if comm, _ := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid)); strings.TrimSpace(string(comm)) == "git-ralph" {
				ph.ralph = pid
				return pid
			}
		}
		time.Sleep(50 * time.Microsecond)
	}
	return 0
}

// runUntil lets the process run until the plan's point, kills git-ralph there with
// SIGKILL and waits for git to end. It reports false when the process ended first.
func (ph *chaosPhase) runUntil(t *testing.T, tr *chaosTrial, p chaosPlan) bool {
	t.Helper()
	m := &matcher{plan: p}
	var timer <-chan time.Time
	if p.point == "random-delay" {
		timer = time.After(p.delay)
	}
	// in-git: a poller kills everything while the nth git runs, then reports here.
	inGit := make(chan int, 1)
	var killing atomic.Bool // the poller has begun to kill: the end that follows is its doing
	if p.point == "in-git" {
		go watchGits(ph.ralphPid(), ph.done, func(n int) bool {
			if n < p.nth {
				return false
			}
			for start := time.Now(); time.Since(start) < p.delay; {
			}
			killing.Store(true)
			inGit <- killTree(ph.cmd.Process.Pid)
			return true
		})
	}
	inGitKilled := func(gits int) bool {
		what := p.String() + " (all killed, no git running)"
		if gits > 0 {
			tr.inGit++
			what = fmt.Sprintf("%s (all killed, %d git running)", p.String(), gits)
		}
		tr.kills = append(tr.kills, what)
		tr.killed++
		<-ph.done
		ph.w.stop()
		return true
	}
	deadline := time.After(time.Minute)
	kill := func(what string) bool {
		pid := ph.ralphPid()
		if pid == 0 {
			return false
		}
		if p.all {
			gits := killTree(ph.cmd.Process.Pid)
			if gits > 0 {
				tr.inGit++
				what += fmt.Sprintf(" (all killed, %d git running)", gits)
			} else {
				what += " (all killed)"
			}
		} else if syscall.Kill(pid, syscall.SIGKILL) != nil {
			return false
		}
		tr.kills = append(tr.kills, what)
		tr.killed++
		<-ph.done
		ph.w.stop()
		return true
	}
	for {
		select {
		case <-ph.done:
			if killing.Load() {
				return inGitKilled(<-inGit)
			}
			ph.w.stop()
			if ph.code != 0 {
				t.Fatalf("git ralph exited %d before the kill point %s (kills: %s):\n%s", ph.code, p, tr.killText(), ph.out.String())
			}
			tr.kills = append(tr.kills, p.String()+": ended before")
			return false
		case <-timer:
			if kill(p.String()) {
				return true
			}
		case gits := <-inGit:
			return inGitKilled(gits)
		case e := <-ph.w.events:
			switch m.match(e) {
			case matchKill:
				if kill(p.String() + " at " + e.String()) {
					return true
				}
			case matchInspect:
				// Stop git-ralph where it is and look at the record it has written.
				pid := ph.ralphPid()
				if pid == 0 || syscall.Kill(pid, syscall.SIGSTOP) != nil {
					continue
				}
				if rec, ok := readChaosRecord(e.path); ok && rec.lastRunning() && rec.AgentPID == 0 && (p.story == "" || rec.CurrentStory == p.story) {
					if kill(p.String() + " at " + e.String()) {
						return true
					}
				}
				_ = syscall.Kill(pid, syscall.SIGCONT)
			}
		case <-deadline:
			_ = ph.cmd.Process.Kill()
			t.Fatalf("no kill point %s within a minute:\n%s", p, ph.out.String())
		}
	}
}

// killTree kills root and every process below it at once, as a power loss would: it
// stops them all (SIGSTOP, passes over the tree until no new process shows up), then
// sends each SIGKILL. git-ralph runs git, and the agent, in process groups of their
// own, so the tree is walked through /proc rather than signalled by group. It returns
// how many of the processes were git, not counting root (the `git ralph` wrapper).
func killTree(root int) (gits int) {
	seen := map[int]bool{}
	var all []int
	for quiet := 0; quiet < 2; {
		found := false
		for queue := []int{root}; len(queue) > 0; {
			pid := queue[0]
			queue = queue[1:]
			if !seen[pid] {
				seen[pid] = true
				all = append(all, pid)
				_ = syscall.Kill(pid, syscall.SIGSTOP)
				found = true
			}
			queue = append(queue, procChildren(pid)...)
		}
		if found {
			quiet = 0
		} else {
			quiet++
		}
		time.Sleep(200 * time.Microsecond)
	}
	for _, pid := range all {
		if pid != root {
			if comm, _ := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid)); strings.TrimSpace(string(comm)) == "git" {
				gits++
			}
		}
	}
	// Children before their parents: a process group whose leader's parent dies while
	// its members are stopped is sent SIGHUP and SIGCONT by the kernel (orphaned
	// process group), and a git that gets them runs its signal handler, which removes
	// its lock files and packed-refs.new: no power loss does that. Killed leaves first,
	// every process is gone before its parent (found because git branch -D, stopped
	// inside its packed-refs rewrite, cleaned up after itself).
	for _, pid := range slices.Backward(all) {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
	return gits
}

// watchGits polls git-ralph's children and calls seen with n for the n-th git process
// it sees start, until seen returns true or done is closed. Short gits may be missed.
func watchGits(ralph int, done <-chan struct{}, seen func(n int) bool) {
	if ralph == 0 {
		return
	}
	known := map[int]bool{}
	for n := 0; ; {
		select {
		case <-done:
			return
		default:
		}
		for _, pid := range procChildren(ralph) {
			if known[pid] {
				continue
			}
			known[pid] = true
			if comm, _ := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid)); strings.TrimSpace(string(comm)) == "git" {
				n++
				if seen(n) {
					return
				}
			}
		}
	}
}

// procChildren lists the children of every thread of pid.
func procChildren(pid int) []int {
	tasks, _ := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	var kids []int
	for _, task := range tasks {
		data, _ := os.ReadFile(fmt.Sprintf("/proc/%d/task/%s/children", pid, task.Name()))
		for _, f := range strings.Fields(string(data)) {
			if k, err := strconv.Atoi(f); err == nil {
				kids = append(kids, k)
			}
		}
	}
	return kids
}

type matchResult int

const (
	matchNone    matchResult = iota
	matchKill                // kill now
	matchInspect             // stop git-ralph and look at the record
)

// matcher decides, step by step, whether a plan's point has come.
type matcher struct {
	plan  chaosPlan
	count int  // matching steps seen so far
	armed bool // for the points counted from an agent's result
}

// gitStep reports whether an event is a step git or git-ralph took in .git.
func gitStep(e fsEvent) bool {
	switch e.dir {
	case "home":
		return true // every step of the move and the put-back
	case "tree":
		return e.name == ".git"
	case "git":
		return e.name == "index.lock" || e.name == "HEAD.lock" || e.name == "packed-refs.lock" || strings.HasPrefix(e.name, "ralph-index-")
	case "heads", "attempts", "backup":
		return strings.HasSuffix(e.name, ".lock")
	case "ralph":
		return e.name == "run.json"
	}
	return false
}

func (m *matcher) match(e fsEvent) matchResult {
	p := m.plan
	sig := func(prefix string) bool { return e.dir == "sig" && strings.HasPrefix(e.name, prefix) }
	// The result of the attempt a point targets; story 2's first attempt is the failing one.
	result := func() bool {
		if p.point == "restore" {
			return sig("result-2-1")
		}
		return sig("result-"+p.story+"-") && e.name != "result-2-1"
	}
	switch p.point {
	case "packed-refs":
		if sig("packed-refs-new.") {
			return matchKill
		}
	case "random-step", "new-run", "finish":
		if gitStep(e) {
			m.count++
			if m.count == p.nth {
				return matchKill
			}
		}
	case "before-agent":
		if e.dir == "ralph" && e.name == "run.json" {
			return matchInspect
		}
	case "agent-start":
		if sig("started-" + p.story + "-") {
			return matchKill
		}
	case "agent-running":
		if sig("running-" + p.story + "-") {
			return matchKill
		}
	case "after-result":
		if result() {
			return matchKill
		}
	case "verify":
		if sig("verify-" + p.story + "-") {
			return matchKill
		}
	case "commit":
		// The first pre-commit is the "initial state" commit's; story k's is the k+1-th.
		if sig("pre-commit.") {
			m.count++
			if m.count == slices.Index(chaosStories, p.story)+2 {
				return matchKill
			}
		}
	case "commit-step", "restore":
		if result() {
			m.armed = true
		} else if m.armed && gitStep(e) {
			m.count++
			if m.count == p.nth {
				return matchKill
			}
		}
	}
	return matchNone
}

// checkAfterKill checks what a dead git-ralph must not leave behind: a held lock, and
// a status that says a loop is running.
func (tr *chaosTrial) checkAfterKill(t *testing.T) {
	t.Helper()
	// A child that git-ralph was starting when it died shares the lock until its exec
	// closes it (the fd is close-on-exec): give it a moment.
	for i := 0; i < 100 && tr.lockHeld(t); i++ {
		time.Sleep(10 * time.Millisecond)
	}
	if tr.lockHeld(t) {
		t.Errorf("the lock is held after git-ralph was killed (%s)", tr.killText())
	}
	out, err := tr.ralph("status", chaosChange, "--json")
	if err != nil {
		t.Fatalf("status after the kill (%s): %v\n%s", tr.killText(), err, out)
	}
	if strings.TrimSpace(out) == "null" {
		return
	}
	var st struct {
		Status  string `json:"status"`
		Running bool   `json:"running"`
	}
	if err := json.Unmarshal([]byte(out), &st); err != nil {
		t.Fatalf("status --json: %v\n%s", err, out)
	}
	if st.Running || st.Status == "running" || st.Status == "starting" {
		t.Errorf("after the kill (%s) status says %q, running %v", tr.killText(), st.Status, st.Running)
	}
}

func (tr *chaosTrial) lockHeld(t *testing.T) bool {
	t.Helper()
	f, err := os.OpenFile(filepath.Join(tr.repo, ".git", "ralph", chaosChange, "lock"), os.O_RDWR, 0)
	if errors.Is(err, os.ErrNotExist) {
		return false
	}
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		return true
	}
	_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
	return false
}

// checkLoopDone checks the branch after a start that completed every story.
func (tr *chaosTrial) checkLoopDone(t *testing.T) {
	t.Helper()
	g := func(args ...string) string { return tr.git(t, args...) }
	if b := strings.TrimSpace(g("symbolic-ref", "--short", "HEAD")); b != "ralph/"+chaosChange {
		t.Errorf("on %s after the loop, want ralph/%s", b, chaosChange)
	}
	// The trust surface: what the failing attempt did to it is undone.
	if tag := strings.TrimSpace(g("for-each-ref", "--format=%(objectname)", "refs/tags/chaos-tag")); tag != tr.base {
		t.Errorf("refs/tags/chaos-tag is %q after the loop (kills: %s), want %s", tag, tr.killText(), tr.base)
	}
	if evil := strings.TrimSpace(g("for-each-ref", "refs/heads/chaos-evil")); evil != "" {
		t.Errorf("refs/heads/chaos-evil, which the agent created, is still there (kills: %s)", tr.killText())
	}
	if st := g("status", "--porcelain", "--untracked-files=all"); st != "" {
		t.Errorf("the worktree is not clean after the loop:\n%s", st)
	}
	// One "initial state" on the base, then one checkpoint per story, in order.
	log := g("log", "--first-parent", "--reverse", "--format=%H %P%x09%s%x09%(trailers:key=Ralph-Attempt,valueonly,separator=%x2C)",
		tr.base+"..ralph/"+chaosChange)
	lines := strings.Split(strings.TrimSuffix(log, "\n"), "\n")
	var subjects []string
	for _, l := range lines {
		subjects = append(subjects, strings.Split(l, "\t")[1])
	}
	want := []string{"initial state"}
	for _, s := range chaosStories {
		want = append(want, "checkpoint: "+s)
	}
	if !slices.Equal(subjects, want) {
		t.Fatalf("the branch's history (oldest first, kills: %s) is\n  %s\nwant\n  %s", tr.killText(), strings.Join(subjects, "\n  "), strings.Join(want, "\n  "))
	}
	if f := strings.Fields(strings.Split(lines[0], "\t")[0]); len(f) != 2 || f[1] != tr.base {
		t.Errorf("initial state %q is not a child of the base %s", lines[0], tr.base)
	}
	// Every commit holds exactly the expected files: the user's work and the stories done
	// so far, nothing else — no scratch file, nothing of a failed or interrupted attempt.
	files := []string{".gitignore", "notes.txt", "openspec/changes/" + chaosChange + "/tasks.md", "staged.txt", "wip.txt"}
	for i, l := range lines {
		f := strings.Split(l, "\t")
		id := strings.Fields(f[0])[0]
		if i > 0 {
			s := chaosStories[i-1]
			files = append(files, "story-"+s+".txt")
			attempt := strings.TrimSpace(f[2])
			if got, want := g("show", id+":story-"+s+".txt"), "story "+s+" attempt "+attempt+"\n"; got != want {
				t.Errorf("checkpoint %s (Ralph-Attempt %q) has story-%s.txt %q, want %q", s, attempt, s, got, want)
			}
			for _, line := range strings.Split(g("show", id+":openspec/changes/"+chaosChange+"/tasks.md"), "\n") {
				if strings.HasPrefix(line, "- [ ] "+s+".") {
					t.Errorf("checkpoint %s has an open task of its story: %s", s, line)
				}
			}
		}
		slices.Sort(files)
		got := strings.Split(strings.TrimSpace(g("ls-tree", "-r", "--name-only", id)), "\n")
		if !slices.Equal(got, files) {
			t.Errorf("%s (%s, kills: %s) holds\n  %s\nwant\n  %s", f[1], id[:7], tr.killText(), strings.Join(got, "\n  "), strings.Join(files, "\n  "))
		}
		if n := g("show", id+":notes.txt"); n != chaosNotes {
			t.Errorf("%s (kills: %s) has notes.txt %q, want the user's %q", f[1], tr.killText(), n, chaosNotes)
		}
	}
	if tr.lockHeld(t) {
		t.Errorf("the lock is held after start ended")
	}
	out, err := tr.ralph("status", chaosChange, "--json")
	if err != nil {
		t.Fatalf("status: %v\n%s", err, out)
	}
	var st struct {
		Status  string `json:"status"`
		Running bool   `json:"running"`
	}
	if err := json.Unmarshal([]byte(out), &st); err != nil {
		t.Fatalf("status --json: %v\n%s", err, out)
	}
	if st.Status != "complete" || st.Running {
		t.Errorf("after the loop status is %q (running %v), want complete", st.Status, st.Running)
	}
	tr.checkAgentsGone(t)
	tr.checkNoLeftovers(t)
	tr.fsck(t)
}

// checkFinished checks the original branch after finish --squash: at the base commit,
// the user's uncommitted work and every story's work there as unstaged changes, no run.
func (tr *chaosTrial) checkFinished(t *testing.T) {
	t.Helper()
	g := func(args ...string) string { return tr.git(t, args...) }
	if b := strings.TrimSpace(g("symbolic-ref", "--short", "HEAD")); b != "main" {
		t.Errorf("on %s after finish --squash, want main", b)
	}
	if h := strings.TrimSpace(g("rev-parse", "HEAD")); h != tr.base {
		t.Errorf("main is at %s after finish --squash, want the base %s", h, tr.base)
	}
	if out := g("for-each-ref", "refs/heads/ralph/"); out != "" {
		t.Errorf("the branch is left after finish --squash: %s", out)
	}
	if staged := g("diff", "--cached", "--name-only"); staged != "" {
		t.Errorf("staged after finish --squash:\n%s", staged)
	}
	if _, err := os.Stat(filepath.Join(tr.repo, ".git", "ralph", chaosChange, "run.json")); err == nil {
		t.Errorf("the run record is left after finish --squash")
	}
	want := map[string]string{
		"notes.txt":     chaosNotes,
		"staged.txt":    "staged by the user\n",
		"wip.txt":       "untracked work in progress\n",
		"cache.ignored": "ignored\n",
	}
	for _, s := range chaosStories {
		want["story-"+s+".txt"] = ""
	}
	for name, content := range want {
		data, err := os.ReadFile(filepath.Join(tr.repo, name))
		if err != nil {
			t.Errorf("after finish --squash: %v", err)
		} else if content != "" && string(data) != content {
			t.Errorf("after finish --squash %s is %q, want %q", name, data, content)
		}
	}
	if left, _ := os.ReadDir(filepath.Join(tr.repo, "scratch")); len(left) > 0 {
		t.Errorf("scratch/%s of an interrupted attempt is in the worktree after finish --squash", left[0].Name())
	}
	tasks, _ := os.ReadFile(filepath.Join(tr.repo, "openspec", "changes", chaosChange, "tasks.md"))
	if strings.Contains(string(tasks), "- [ ]") {
		t.Errorf("tasks left open after finish --squash:\n%s", tasks)
	}
	tr.checkNoLeftovers(t)
	tr.fsck(t)
}

// checkAgentsGone checks that no agent of the trial is still running.
func (tr *chaosTrial) checkAgentsGone(t *testing.T) {
	t.Helper()
	for _, pid := range tr.agentPids() {
		if agentAlive(pid) {
			t.Errorf("agent pid %d is still running after the loop ended (kills: %s)", pid, tr.killText())
		}
	}
}

// checkNoLeftovers checks that no lock file, packed-refs.new or temporary index of a
// dead process stays, in .git, among the refs, or of the auto maintenance.
func (tr *chaosTrial) checkNoLeftovers(t *testing.T) {
	t.Helper()
	entries, _ := os.ReadDir(filepath.Join(tr.repo, ".git"))
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".lock") || strings.HasPrefix(e.Name(), "ralph-index-") || e.Name() == "packed-refs.new" {
			t.Errorf(".git/%s is left behind (kills: %s)", e.Name(), tr.killText())
		}
	}
	for _, f := range []string{"objects/maintenance.lock", "objects/info/commit-graph.lock"} {
		if _, err := os.Stat(filepath.Join(tr.repo, ".git", f)); err == nil {
			t.Errorf(".git/%s is left behind (kills: %s)", f, tr.killText())
		}
	}
	_ = filepath.WalkDir(filepath.Join(tr.repo, ".git", "refs"), func(p string, e os.DirEntry, err error) error {
		if err == nil && strings.HasSuffix(p, ".lock") {
			rel, _ := filepath.Rel(tr.repo, p)
			t.Errorf("%s is left behind (kills: %s)", rel, tr.killText())
		}
		return nil
	})
}

func (tr *chaosTrial) fsck(t *testing.T) {
	t.Helper()
	cmd := exec.Command("git", "fsck", "--no-dangling", "--no-progress")
	cmd.Dir, cmd.Env = tr.repo, tr.env
	if out, err := cmd.CombinedOutput(); err != nil || len(bytes.TrimSpace(out)) > 0 {
		t.Errorf("git fsck (kills: %s): %v\n%s", tr.killText(), err, out)
	}
}

// agentPids lists the pids of the agents the trial started, from the fake's record.
func (tr *chaosTrial) agentPids() []int {
	f, err := os.Open(filepath.Join(tr.dir, "fake-state", "agent-calls.ndjson"))
	if err != nil {
		return nil
	}
	defer f.Close()
	var pids []int
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		var r struct {
			PID int `json:"pid"`
		}
		if json.Unmarshal(sc.Bytes(), &r) == nil && r.PID > 0 {
			pids = append(pids, r.PID)
		}
	}
	return pids
}

// cleanup stops whatever a failed trial left running: agents paused on a signal file
// are let go, then killed.
func (tr *chaosTrial) cleanup(t *testing.T) {
	for _, s := range chaosStories {
		for a := 1; a <= 9; a++ {
			_ = os.WriteFile(filepath.Join(tr.sig, fmt.Sprintf("go-%s-%d", s, a)), nil, 0o644)
		}
	}
	for _, pid := range tr.agentPids() {
		if agentAlive(pid) {
			_ = syscall.Kill(-pid, syscall.SIGKILL)
		}
	}
}

// agentAlive reports whether pid is a running fake agent (not a zombie, not a reused pid).
func agentAlive(pid int) bool {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 || i+2 >= len(stat) || stat[i+2] == 'Z' || stat[i+2] == 'X' {
		return false
	}
	return bytes.Contains(stat[:i], []byte("(claude"))
}

func (tr *chaosTrial) git(t *testing.T, args ...string) string {
	t.Helper()
	return benchGit(t, tr.env, tr.repo, args...)
}

func (tr *chaosTrial) ralph(args ...string) (string, error) {
	cmd := exec.Command("git", append([]string{"ralph"}, args...)...)
	cmd.Dir, cmd.Env = tr.repo, tr.env
	out, err := cmd.Output()
	return string(out), err
}

// chaosRecord is the part of the run record the test looks at.
type chaosRecord struct {
	CurrentStory string `json:"currentStory"`
	AgentPID     int    `json:"agentPID"`
	Attempts     []struct {
		Outcome string `json:"outcome"`
	} `json:"attempts"`
}

func (r chaosRecord) lastRunning() bool {
	return len(r.Attempts) > 0 && r.Attempts[len(r.Attempts)-1].Outcome == "running"
}

func readChaosRecord(path string) (chaosRecord, bool) {
	var r chaosRecord
	data, err := os.ReadFile(path)
	if err != nil || json.Unmarshal(data, &r) != nil {
		return r, false
	}
	// The loop's agent is named in agent.json beside the record (run.Agent).
	var a struct {
		PID int `json:"pid"`
	}
	if b, err := os.ReadFile(filepath.Join(filepath.Dir(path), "agent.json")); err == nil && json.Unmarshal(b, &a) == nil && r.AgentPID == 0 {
		r.AgentPID = a.PID
	}
	return r, true
}

// fsEvent is a file created or renamed into a watched directory.
type fsEvent struct {
	dir, name string
	path      string
	at        time.Duration // since the watch began
}

func (e fsEvent) String() string { return e.dir + ":" + e.name }

// watcher reports, in order, the files created or renamed into a few directories
// (inotify), keeping only the git steps and the signals.
type watcher struct {
	f      *os.File
	dirs   map[int32][2]string // watch descriptor → label, path
	events chan fsEvent
	start  time.Time
	done   chan struct{}
	once   sync.Once
	mu     sync.Mutex
	seen   []fsEvent
}

func newWatcher(dirs map[string]string) (*watcher, error) {
	fd, err := syscall.InotifyInit1(syscall.IN_CLOEXEC | syscall.IN_NONBLOCK)
	if err != nil {
		return nil, err
	}
	w := &watcher{f: os.NewFile(uintptr(fd), "inotify"), dirs: map[int32][2]string{},
		events: make(chan fsEvent, 4096), start: time.Now(), done: make(chan struct{})}
	for label, dir := range dirs {
		wd, err := syscall.InotifyAddWatch(fd, dir, syscall.IN_CREATE|syscall.IN_MOVED_TO)
		if errors.Is(err, syscall.ENOENT) {
			continue // refs/heads/ralph after the branch was deleted
		}
		if err != nil {
			w.f.Close()
			return nil, fmt.Errorf("watch %s: %w", dir, err)
		}
		w.dirs[int32(wd)] = [2]string{label, dir}
	}
	go w.read()
	return w, nil
}

func (w *watcher) read() {
	defer close(w.done)
	buf := make([]byte, 64<<10)
	for {
		n, err := w.f.Read(buf) // the fd is non-blocking: Close ends a pending Read
		if err != nil {
			return
		}
		for off := 0; off+syscall.SizeofInotifyEvent <= n; {
			ev := (*syscall.InotifyEvent)(unsafe.Pointer(&buf[off]))
			start := off + syscall.SizeofInotifyEvent
			off = start + int(ev.Len)
			name := string(bytes.TrimRight(buf[start:off], "\x00"))
			d, ok := w.dirs[ev.Wd]
			if !ok || name == "" {
				continue
			}
			e := fsEvent{dir: d[0], name: name, path: filepath.Join(d[1], name), at: time.Since(w.start)}
			if e.dir != "sig" && !gitStep(e) {
				continue
			}
			w.mu.Lock()
			w.seen = append(w.seen, e)
			w.mu.Unlock()
			select {
			case w.events <- e:
			default:
			}
		}
	}
}

// stop ends the watch and returns every event seen.
func (w *watcher) stop() []fsEvent {
	w.once.Do(func() {
		w.f.Close()
		<-w.done
	})
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.seen)
}

// chaosStateDir is the state directory of a trial's environment, where an in-place
// run's git directory moves to.
func chaosStateDir(env []string) string {
	state, home := "", ""
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "XDG_STATE_HOME="); ok {
			state = v
		}
		if v, ok := strings.CutPrefix(kv, "HOME="); ok {
			home = v
		}
	}
	if state == "" && home != "" {
		state = filepath.Join(home, ".local", "state")
	}
	return state
}
