package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/rhysd/actionlint"
	"github.com/rogpeppe/go-internal/testscript"
)

// cmdFakeRunner runs the workflow that 'git ralph ci init' wrote, the way a GitHub
// runner would, on this machine: the fake runner of docs/REMOTE.md, "The test harness".
//
//	fakerunner [flags] WORKFLOW REMOTE RUN_ID CHANGE [CANCEL_ON]
//
// Each job checks out ralph/CHANGE from REMOTE (a bare repository) into a fresh clone
// and runs the workflow's own steps in order, with their if: conditions, env: and
// outputs: each run: body through bash (-eo pipefail, as Actions does), with git-ralph
// and the fake agents from PATH. What needs the network is emulated: checkout is a
// clone, setup-go and the install step are skipped, the artifact is a directory. No git
// identity is set, as on a hosted runner. It writes $WORK/runs/RUN_ID/steps.txt ("job
// step outcome" lines, then "conclusion X") for the script to compare; it fails only
// when the workflow holds something it cannot emulate (an unknown action or expression).
//
// A run: step's process is the bash the runner starts (a body that execs a program
// makes that program the step's process), in the runner's own process group, as
// actions/runner starts it. Stopping a step is what the runner does on a cancel or a
// timeout (docs: "Workflow cancellation reference"): SIGINT to the step's process,
// SIGTERM -sigint-grace later if it is still there, and -sigterm-grace after that the
// kill: with -kill tree, SIGKILL to every process under the step's (as the docs say);
// with -kill entry, to the step's process alone (what actions/runner's Process.Kill()
// does on Linux: the rest live on as orphans). The flags (durations):
//
//	-cancel-on FILE     cancel the run once FILE exists while the "loop" step runs
//	                    (the optional fifth argument says the same)
//	-kill-on FILE       once FILE exists while the "loop" step runs, SIGKILL its whole
//	                    process tree at once, no signal first, and cancel the run
//	-sigint-grace D     SIGINT to SIGTERM (GitHub: 7.5s; here 2m)
//	-sigterm-when FILE  SIGTERM once FILE exists instead (after the SIGINT)
//	-sigterm-grace D    SIGTERM to the kill (GitHub: 2.5s; here 2m)
//	-kill tree|entry    what the kill reaches (default tree)
//	-minute D           how long one minute of timeout-minutes lasts here (default 1m)
//	-clock FILE         timeout-minutes are measured on the clock FILE moves (as the
//	                    test binary's git-ralph measures its limits: a Go duration per
//	                    line, appended by the fake agent's advance_clock), not in time
//	-force D            after a cancel, whatever still runs this much later is killed
//	                    and nothing more runs (GitHub: 5m)
//
// The graces are two minutes each here (scriptTiming), not GitHub's: how long a loop takes to save its attempt after the SIGINT
// depends on how loaded the machine is, and a script that is not about the escalation
// must not see it. A script that is sets it off by a file (-sigterm-when, -cancel-on,
// -kill-on) or at once (0s); the speed of the save is cancel_bench_test.go's.
//
// After a cancel only if: always() steps and jobs run, and the conclusion is cancelled.
// A step's timeout-minutes stops it (outcome failure; the job goes on as after any
// failure); the job's timeout-minutes stops the step under way and then, as a cancel
// does, runs only the job's if: always() steps; the conclusion is then timed_out.
func cmdFakeRunner(ts *testscript.TestScript, neg bool, args []string) {
	fs := flag.NewFlagSet("fakerunner", flag.ContinueOnError)
	var spec fakeRunSpec
	spec.Timing = scriptTiming
	cancelOn := fs.String("cancel-on", "", "")
	killOn := fs.String("kill-on", "", "")
	sigtermWhen := fs.String("sigterm-when", "", "")
	clock := fs.String("clock", "", "")
	fs.DurationVar(&spec.Timing.SIGINTGrace, "sigint-grace", spec.Timing.SIGINTGrace, "")
	fs.DurationVar(&spec.Timing.SIGTERMGrace, "sigterm-grace", spec.Timing.SIGTERMGrace, "")
	fs.DurationVar(&spec.Timing.Minute, "minute", spec.Timing.Minute, "")
	fs.DurationVar(&spec.Timing.Force, "force", spec.Timing.Force, "")
	fs.StringVar(&spec.Timing.Kill, "kill", spec.Timing.Kill, "")
	usage := "usage: fakerunner [-cancel-on FILE] [-kill-on FILE] [-sigint-grace D] [-sigterm-when FILE] [-sigterm-grace D] [-kill tree|entry] [-minute D] [-clock FILE] [-force D] WORKFLOW REMOTE RUN_ID CHANGE [CANCEL_ON]"
	if neg || fs.Parse(args) != nil {
		ts.Fatalf("%s", usage)
	}
	args = fs.Args()
	if len(args) < 4 || len(args) > 5 || (spec.Timing.Kill != "tree" && spec.Timing.Kill != "entry") {
		ts.Fatalf("%s", usage)
	}
	src, err := os.ReadFile(ts.MkAbs(args[0]))
	ts.Check(err)
	spec.Workflow, spec.Remote, spec.RunID, spec.Change = src, ts.MkAbs(args[1]), args[2], args[3]
	spec.Dir, spec.Getenv = filepath.Join(ts.Getenv("WORK"), "runs", args[2]), ts.Getenv
	if len(args) == 5 {
		*cancelOn = args[4]
	}
	if *cancelOn != "" {
		spec.CancelOn = ts.MkAbs(*cancelOn)
	}
	if *killOn != "" {
		spec.KillOn = ts.MkAbs(*killOn)
	}
	if *sigtermWhen != "" {
		spec.Timing.SIGTERMWhen = ts.MkAbs(*sigtermWhen)
	}
	if *clock != "" {
		spec.Timing.Clock = newTestTimeClock(ts.MkAbs(*clock))
	}
	conclusion, log, err := runWorkflow(spec)
	ts.Check(err)
	ts.Check(os.WriteFile(filepath.Join(spec.Dir, "steps.txt"), []byte(strings.Join(append(log, "conclusion "+conclusion), "\n")+"\n"), 0o644))
}

// runnerTiming is how the fake runner stops a step, and how long its minutes last.
type runnerTiming struct {
	SIGINTGrace, SIGTERMGrace time.Duration
	Kill                      string         // "tree" or "entry"
	Minute                    time.Duration  // one minute of timeout-minutes
	Force                     time.Duration  // after a cancel, the end of everything
	SIGTERMWhen               string         // SIGTERM once this file exists ("": after SIGINTGrace)
	Clock                     *testTimeClock // timeout-minutes are measured on it; nil: time
}

// scriptTiming is GitHub's ("Workflow cancellation reference": SIGINT, 7.5 s later
// SIGTERM, 2.5 s later the kill; a cancelled run's end 5 minutes on) with graces no
// loaded machine reaches (see cmdFakeRunner).
var scriptTiming = runnerTiming{SIGINTGrace: 2 * time.Minute, SIGTERMGrace: 2 * time.Minute,
	Kill: "tree", Minute: time.Minute, Force: 5 * time.Minute}

// fakeRunSpec is one run of the workflow on the fake runner. The fake GitHub server can
// start one on dispatch.
type fakeRunSpec struct {
	Workflow []byte              // the workflow file
	Remote   string              // the bare repository that plays GitHub's
	RunID    string              // GITHUB_RUN_ID
	Change   string              // inputs.change; inputs.branch is ralph/<change>
	Dir      string              // where the run's clones, artifact and logs go
	Getenv   func(string) string // the environment the runner's steps start from
	CancelOn string              // cancel the run once this file exists ("": never)
	KillOn   string              // kill the loop step's tree at once when this file exists ("": never)
	Timing   runnerTiming        // the zero value is scriptTiming
	Control  *runControl         // cancels the run from outside, as GitHub's cancel API does; nil: none
}

// runControl cancels a run on the fake runner from outside: what GitHub does when it
// is asked to cancel (or force-cancel) a run. A cancel before the run starts applies
// from its start.
type runControl struct {
	mu  sync.Mutex
	run *fakeRun
	req int // 0 none, 1 cancel, 2 force-cancel
}

// Cancel asks for the run to be cancelled; force: force-cancelled (the step's tree is
// killed at once and nothing more runs, if: always() or not).
func (c *runControl) Cancel(force bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.req = max(c.req, 1)
	if force {
		c.req = 2
	}
	if c.run != nil {
		c.run.request(c.req)
	}
}

func (c *runControl) attach(r *fakeRun) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.run = r
	if c.req > 0 {
		r.request(c.req)
	}
}

// request cancels the run (1) or force-cancels it (2).
func (r *fakeRun) request(req int) {
	r.cancel()
	if req == 2 {
		r.forceNow.Store(true)
	}
}

// runFailure is how the fake runner gives up on a workflow it cannot emulate.
type runFailure struct{ err error }

// runWorkflow runs spec's workflow and returns its conclusion (success, failure or
// cancelled) and one "job step outcome" line per step. err is for a workflow the fake
// runner cannot emulate, never for a step that failed.
func runWorkflow(spec fakeRunSpec) (conclusion string, log []string, err error) {
	defer func() {
		if p := recover(); p != nil {
			f, ok := p.(runFailure)
			if !ok {
				panic(p)
			}
			err = f.err
		}
	}()
	w, errs := actionlint.Parse(spec.Workflow)
	if len(errs) > 0 {
		return "", nil, fmt.Errorf("parse the workflow: %v", errs[0])
	}
	if spec.Timing.Kill == "" {
		spec.Timing = scriptTiming
	}
	r := &fakeRun{getenv: spec.Getenv, remote: spec.Remote, id: spec.RunID, change: spec.Change,
		dir: spec.Dir, cancelOn: spec.CancelOn, killOn: spec.KillOn, timing: spec.Timing, outputs: map[string]string{}}
	r.check(os.MkdirAll(r.dir, 0o755))
	if spec.Control != nil {
		spec.Control.attach(r)
	}
	conclusion = "success"
	failed := false
	for _, name := range []string{"loop", "publish"} {
		job := w.Jobs[name]
		if job == nil {
			r.fail("the workflow has no job %q", name)
		}
		if r.forced() || (job.If == nil && (r.cancelled.Load() || failed)) || (job.If != nil && !r.cond(job.If.Value, nil, true)) {
			r.log = append(r.log, name+" - skipped")
			continue
		}
		if !r.job(name, job) {
			conclusion, failed = "failure", true
		}
	}
	switch {
	case r.cancelled.Load():
		conclusion = "cancelled"
	case r.timedOut:
		conclusion = "timed_out"
	}
	return conclusion, r.log, nil
}

func (r *fakeRun) fail(format string, args ...any) {
	panic(runFailure{fmt.Errorf(format, args...)})
}

func (r *fakeRun) check(err error) {
	if err != nil {
		panic(runFailure{err})
	}
}

type fakeRun struct {
	getenv             func(string) string
	remote, id, change string
	dir                string
	temp               string            // the running job's RUNNER_TEMP
	outputs            map[string]string // "<job>.<output>"
	log                []string
	cancelOn, killOn   string // cancel the run, kill the loop step at once, when this file exists
	timing             runnerTiming
	cancelled          atomic.Bool
	cancelAt           atomic.Int64 // unix nanoseconds of the cancel
	jobEnd             time.Time    // the running job's timeout; zero: none
	jobTimedOut        atomic.Bool  // the running job's timeout expired
	timedOut           bool         // some job's did
	forceNow           atomic.Bool  // force-cancelled: everything ends now
}

// cancel marks the run cancelled (once) and starts the force-termination clock.
func (r *fakeRun) cancel() {
	if r.cancelled.CompareAndSwap(false, true) {
		r.cancelAt.Store(time.Now().UnixNano())
	}
}

// stopped tells whether the run (cancelled) or the running job (timed out) is being
// stopped: from then on only if: always() steps run.
func (r *fakeRun) stopped() bool { return r.cancelled.Load() || r.jobTimedOut.Load() }

// forceAt is when GitHub force-terminates a cancelled run; zero when not cancelled.
func (r *fakeRun) forceAt() time.Time {
	if n := r.cancelAt.Load(); n != 0 {
		return time.Unix(0, n).Add(r.timing.Force)
	}
	return time.Time{}
}

// forced tells whether the run is past its force-termination (or force-cancelled):
// nothing more runs.
func (r *fakeRun) forced() bool {
	t := r.forceAt()
	return r.forceNow.Load() || (!t.IsZero() && !time.Now().Before(t))
}

// env is the environment of every step: the script's, less the git identity.
func (r *fakeRun) env(temp string) []string {
	var env []string
	for _, k := range []string{"PATH", "HOME", "XDG_CONFIG_HOME", "GIT_CONFIG_NOSYSTEM", "GIT_CONFIG_GLOBAL", "GIT_ALLOW_PROTOCOL",
		"GIT_AUTHOR_DATE", "GIT_COMMITTER_DATE", "NO_COLOR", "IS_SANDBOX", "TMPDIR", "WORK",
		"FAKE_AGENT_STATE_DIR", "FAKE_AGENT_RECORD", "FAKE_AGENT_FIXED_TIME", "FAKE_AGENT_SCENARIO", "GIT_RALPH_TEST_TIME"} {
		if v := r.getenv(k); v != "" {
			env = append(env, k+"="+v)
		}
	}
	return append(env, "CI=true", "GITHUB_ACTIONS=true", "GITHUB_RUN_ID="+r.id, "RUNNER_TEMP="+temp)
}

func (r *fakeRun) job(name string, job *actionlint.Job) bool {
	ws := filepath.Join(r.dir, name, "workspace")
	temp := filepath.Join(r.dir, name, "temp")
	r.check(os.MkdirAll(temp, 0o755))
	r.temp = temp
	r.jobEnd = time.Time{}
	r.jobTimedOut.Store(false)
	if job.TimeoutMinutes != nil {
		r.jobEnd = r.timeoutNow().Add(time.Duration(job.TimeoutMinutes.Value * float64(r.timing.Minute)))
	}
	defer func() {
		if r.jobTimedOut.Load() {
			r.timedOut = true
		}
	}()
	steps := map[string]map[string]string{} // step id -> outputs, plus "outcome"
	ok := true
	for i, st := range job.Steps {
		label := fmt.Sprintf("step%d", i+1)
		if a, ok := st.Exec.(*actionlint.ExecAction); ok {
			label, _, _ = strings.Cut(a.Uses.Value, "@")
		}
		if st.Name != nil {
			label = st.Name.Value
		}
		var cond string
		if st.If != nil {
			cond = st.If.Value
		}
		if !r.jobEnd.IsZero() && !time.Now().Before(r.jobEnd) {
			r.jobTimedOut.Store(true)
		}
		outcome := "skipped"
		if r.forced() {
			// Force-terminated: nothing more runs.
		} else if (cond == "" && ok && !r.stopped()) || (cond != "" && r.cond(cond, steps, ok)) {
			outcome = "success"
			if !r.step(st, ws, temp, steps, &label) {
				outcome, ok = "failure", false
			}
		}
		if st.ID != nil {
			if steps[st.ID.Value] == nil {
				steps[st.ID.Value] = map[string]string{}
			}
			steps[st.ID.Value]["outcome"] = outcome
		}
		r.log = append(r.log, name+" "+strings.ReplaceAll(label, " ", "_")+" "+outcome)
	}
	for k, o := range job.Outputs {
		r.outputs[name+"."+k] = r.expand(o.Value.Value, steps)
	}
	return ok
}

// step runs one step and tells whether it succeeded.
func (r *fakeRun) step(st *actionlint.Step, ws, temp string, steps map[string]map[string]string, label *string) bool {
	with := func(a *actionlint.ExecAction, k string) string {
		if in := a.Inputs[k]; in != nil {
			return r.expand(in.Value.Value, steps)
		}
		return ""
	}
	switch e := st.Exec.(type) {
	case *actionlint.ExecAction:
		action, _, _ := strings.Cut(e.Uses.Value, "@")
		*label = action
		switch action {
		case "actions/checkout":
			return r.git("", "clone", "-q", "-b", with(e, "ref"), r.remote, ws) == nil
		case "actions/setup-go":
			return true
		case "actions/upload-artifact":
			return copyDir(with(e, "path"), filepath.Join(r.dir, "artifacts", with(e, "name"))) == nil
		case "actions/download-artifact":
			return copyDir(filepath.Join(r.dir, "artifacts", with(e, "name")), with(e, "path")) == nil
		}
		r.fail("the fake runner does not know the action %s", e.Uses.Value)
	case *actionlint.ExecRun:
		if strings.HasPrefix(*label, "install ") {
			return true // no network: git-ralph and the fake agent are on PATH already
		}
		out := filepath.Join(temp, "output-"+strings.ReplaceAll(*label, " ", "_"))
		env := append(r.env(temp), "GITHUB_OUTPUT="+out, "GITHUB_STEP_SUMMARY="+filepath.Join(r.dir, "summary.md"))
		if st.Env != nil {
			for _, v := range st.Env.Vars {
				env = append(env, v.Name.Value+"="+r.expand(v.Value.Value, steps))
			}
		}
		cmd := exec.Command("bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", e.Run.Value)
		cmd.Dir, cmd.Env = ws, env
		logf, err := os.OpenFile(filepath.Join(r.dir, "log.txt"), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		r.check(err)
		defer logf.Close()
		fmt.Fprintf(logf, "## %s\n", *label)
		cmd.Stdout, cmd.Stderr = logf, logf
		if err := cmd.Start(); err != nil {
			return false
		}
		var timeout time.Duration
		if st.TimeoutMinutes != nil {
			timeout = time.Duration(st.TimeoutMinutes.Value * float64(r.timing.Minute))
		}
		done := make(chan struct{})
		supervised := make(chan struct{})
		go func() {
			defer close(supervised)
			r.supervise(cmd.Process.Pid, *label == "loop", timeout, done)
		}()
		err = cmd.Wait()
		close(done)
		<-supervised
		if b, rerr := os.ReadFile(out); rerr == nil && st.ID != nil {
			m := map[string]string{}
			for line := range strings.SplitSeq(strings.TrimSpace(string(b)), "\n") {
				if k, v, found := strings.Cut(line, "="); found {
					m[k] = v
				}
			}
			steps[st.ID.Value] = m
		}
		return err == nil
	}
	r.fail("a step that is neither uses: nor run:")
	return false
}

// supervise watches a running step, whose process is pid, until done is closed, and
// stops it as the runner would: on the run's cancel (-cancel-on's file, for the loop
// step; runControl, for any step that began before it), on the step's timeout (0:
// none) or the job's; it kills its tree at once on -kill-on's file (the loop step), a
// force-cancel, or at the force-termination of a cancelled run.
func (r *fakeRun) supervise(pid int, loop bool, timeout time.Duration, done <-chan struct{}) {
	start := r.timeoutNow()
	cancelledBefore := r.cancelled.Load() // an if: always() step after a cancel is not stopped by it
	exists := func(p string) bool {
		_, err := os.Stat(p)
		return p != "" && err == nil
	}
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	stopping := false
	var stopStart time.Time
	var sentTERM, killed bool
	for {
		select {
		case <-done:
			return
		case <-tick.C:
		}
		now, tnow := time.Now(), r.timeoutNow()
		if !killed && r.forced() {
			stepKill(pid, true)
			killed = true
		}
		if loop && !killed && exists(r.killOn) {
			r.cancel()
			stepKill(pid, true)
			killed = true
		}
		if !stopping {
			switch {
			case loop && exists(r.cancelOn):
				r.cancel()
			case !cancelledBefore && r.cancelled.Load():
			case timeout > 0 && tnow.Sub(start) >= timeout:
			case !r.jobEnd.IsZero() && !tnow.Before(r.jobEnd) && !r.jobTimedOut.Load():
				r.jobTimedOut.Store(true)
			default:
				continue
			}
			stopping, stopStart = true, now
			_ = syscall.Kill(pid, syscall.SIGINT)
			continue
		}
		switch {
		case !sentTERM && r.timing.SIGTERMWhen != "" && exists(r.timing.SIGTERMWhen):
			sentTERM = true
			_ = syscall.Kill(pid, syscall.SIGTERM)
		case !sentTERM && r.timing.SIGTERMWhen == "" && now.Sub(stopStart) >= r.timing.SIGINTGrace:
			sentTERM = true
			_ = syscall.Kill(pid, syscall.SIGTERM)
		case !killed && now.Sub(stopStart) >= r.timing.SIGINTGrace+r.timing.SIGTERMGrace:
			killed = true
			stepKill(pid, r.timing.Kill == "tree")
		}
	}
}

// timeoutNow is the time timeout-minutes are measured in: -clock's, else the wall clock.
func (r *fakeRun) timeoutNow() time.Time {
	if r.timing.Clock != nil {
		return r.timing.Clock.Now()
	}
	return time.Now()
}

// stepKill is the runner's kill of a step whose process is pid: with tree, every
// process under it too (killTree, as a power loss would), else pid alone.
func stepKill(pid int, tree bool) {
	if tree {
		killTree(pid)
		return
	}
	_ = syscall.Kill(pid, syscall.SIGKILL)
}

var expr = regexp.MustCompile(`\$\{\{\s*(.*?)\s*\}\}`)

// expand replaces each ${{ name }} with its value; any other expression is a test failure.
func (r *fakeRun) expand(s string, steps map[string]map[string]string) string {
	return expr.ReplaceAllStringFunc(s, func(m string) string {
		return r.value(expr.FindStringSubmatch(m)[1], steps)
	})
}

func (r *fakeRun) value(name string, steps map[string]map[string]string) string {
	f := strings.Split(name, ".")
	switch {
	case name == "inputs.change":
		return r.change
	case name == "inputs.branch":
		return "ralph/" + r.change
	case name == "inputs.nonce":
		return "nonce-" + r.id
	case name == "inputs.ralph_version", name == "inputs.agent_version":
		return "v0.0.0-test"
	case name == "github.run_id":
		return r.id
	case name == "runner.temp":
		return r.temp
	case len(f) == 2 && f[0] == "secrets":
		return "fake-key-" + f[1]
	case len(f) == 4 && f[0] == "steps" && f[2] == "outputs":
		return steps[f[1]][f[3]]
	case len(f) == 3 && f[0] == "steps" && f[2] == "outcome":
		return steps[f[1]]["outcome"]
	case len(f) == 4 && f[0] == "needs" && f[2] == "outputs":
		return r.outputs[f[1]+"."+f[3]]
	}
	r.fail("the fake runner cannot evaluate ${{ %s }}", name)
	return ""
}

var condForm = regexp.MustCompile(`^\$\{\{\s*always\(\)\s*&&\s*([a-z_.]+)\s*(==|!=)\s*'([^']*)'\s*\}\}$`)

// cond evaluates the if: forms the workflow uses: always(), and always() && X == 'v' / != 'v'.
func (r *fakeRun) cond(c string, steps map[string]map[string]string, _ bool) bool {
	if regexp.MustCompile(`^\$\{\{\s*always\(\)\s*\}\}$`).MatchString(strings.TrimSpace(c)) {
		return true
	}
	m := condForm.FindStringSubmatch(strings.TrimSpace(c))
	if m == nil {
		r.fail("the fake runner cannot evaluate if: %s", c)
	}
	v := r.value(m[1], steps)
	return (m[2] == "==") == (v == m[3])
}

func (r *fakeRun) git(dir string, args ...string) error {
	cmd := exec.Command("git", args...)
	cmd.Dir, cmd.Env = dir, r.env(os.TempDir())
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("git %v: %w\n%s", args, err, out)
	}
	return nil
}

func copyDir(src, dst string) error {
	return filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(target, b, 0o644)
	})
}
