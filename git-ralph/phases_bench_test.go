package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/git-ralph/git-ralph/internal/sandbox"
)

// BenchmarkStoryPhases is where a story's time goes, phase by phase: a 40-story run of
// git-ralph built as install.sh builds it against the bare loop (the same agent, then
// `git add -A` and `git commit`), alternately, both timed from the outside with no
// switch of git-ralph's own: git's trace (GIT_TRACE2_EVENT: when each add and commit
// started and exited) and the fake agent's (FAKE_AGENT_TIMES: when it began and
// ended). A story's phases, from the commit before it:
//
//	pre     to the agent's start: git-ralph's record save, next story, prompt, the
//	        attempt's set-up and the sandbox's start (the bare loop: a fork and exec);
//	        both include the agent's exec and its runtime's start
//	agent   the agent, from its start to its end
//	post    to the start of git add: the agent's exit, what it left, git-ralph's checks
//	        and the story's (the bare loop: an exec)
//	add     git add -A
//	mid     from add to the start of git commit: the staged tree, the message
//	commit  git commit
//
// Each is reported as its median over the stories of every run (the first story left
// out: it follows the run's start), git-ralph's as <phase>-ms and the difference from
// the bare loop as own-<phase>-ms; own-ms/story is their sum. run-start-ms is from the
// start of the command to the first agent's start, run-end-ms from the last commit's
// exit to the command's end (the last checks, the report), both over the bare loop's.
//
//	go test ./git-ralph -run '^$' -bench StoryPhases -benchtime 5x
func BenchmarkStoryPhases(b *testing.B) {
	const stories = 40
	root := memTempDir(b)
	env := append(benchEnv(b, root), "FAKE_AGENT_SCENARIO="+filepath.Join(root, "scenario.json"))
	tmpl := benchLoopRepo(b, env, root, stories)
	if bin := installBuild(b); bin != "" {
		env = withPathFirst(env, filepath.Dir(bin))
	}
	// The agent writes its times where a sandboxed agent may write: the agents' cache.
	cache := sandbox.AgentCache(env)
	benchMkdir(b, cache)
	var ralph, bare phaseTimes
	b.ResetTimer()
	b.StopTimer()
	for i := 0; i < b.N; i++ {
		for _, kind := range []string{"ralph", "bare"} {
			dir := filepath.Join(root, fmt.Sprintf("%s-%d", kind, i))
			benchCopy(b, tmpl, dir)
			trace := filepath.Join(root, fmt.Sprintf("%s-%d.trace2", kind, i))
			times := filepath.Join(cache, fmt.Sprintf("%s-%d.times", kind, i))
			runEnv := append(slices.Clone(env), "GIT_TRACE2_EVENT="+trace, "FAKE_AGENT_TIMES="+times)
			start := time.Now()
			if kind == "ralph" {
				benchRalph(b, runEnv, dir, "start", "x")
			} else {
				benchBareLoop(b, runEnv, dir, "x", stories)
			}
			end := time.Now()
			p, err := storyPhases(trace, times, start, end)
			if err != nil {
				b.Fatalf("%s: %v", kind, err)
			}
			if len(p.phases[0]) != stories-1 {
				b.Fatalf("%s: %d stories timed, want %d", kind, len(p.phases[0]), stories-1)
			}
			if kind == "ralph" {
				ralph.add(p)
			} else {
				bare.add(p)
			}
		}
	}
	own := 0.0
	for i, name := range phaseNames {
		r, bb := median(ralph.phases[i]), median(bare.phases[i])
		b.ReportMetric(r, name+"-ms")
		b.ReportMetric(r-bb, "own-"+name+"-ms")
		b.Logf("%-7s git-ralph %6.2f ms, bare loop %6.2f ms, own %6.2f ms", name, r, bb, r-bb)
		own += r - bb
	}
	b.ReportMetric(own, "own-ms/story")
	b.ReportMetric(median(ralph.head)-median(bare.head), "run-start-ms")
	b.ReportMetric(median(ralph.tail)-median(bare.tail), "run-end-ms")
}

// phaseNames are the phases of a story, in order (see BenchmarkStoryPhases).
var phaseNames = []string{"pre", "agent", "post", "add", "mid", "commit"}

// phaseTimes are a run's phases in milliseconds: phases[i] for phaseNames[i], one
// entry a story; head and tail the run's start and end, one entry a run.
type phaseTimes struct {
	phases     [6][]float64
	head, tail []float64
}

func (p *phaseTimes) add(q phaseTimes) {
	for i := range p.phases {
		p.phases[i] = append(p.phases[i], q.phases[i]...)
	}
	p.head, p.tail = append(p.head, q.head...), append(p.tail, q.tail...)
}

// span is a process's start and end.
type span struct{ start, end time.Time }

// storyPhases lines the agent's times (times) up with git's trace (trace) of a run that
// began at start and ended at end: each story from the second is the commit before it,
// its agent, then the first add after the agent and the first commit after that add.
func storyPhases(trace, times string, start, end time.Time) (phaseTimes, error) {
	var p phaseTimes
	agents, err := agentSpans(times)
	if err != nil {
		return p, err
	}
	adds, commits, err := gitSpans(trace)
	if err != nil {
		return p, err
	}
	after := func(list []span, t time.Time) (span, bool) {
		for _, s := range list {
			if s.start.After(t) {
				return s, true
			}
		}
		return span{}, false
	}
	if len(agents) == 0 {
		return p, fmt.Errorf("no agent ran")
	}
	var prev span // the commit of the story before
	for k, a := range agents {
		add, ok1 := after(adds, a.end)
		commit, ok2 := after(commits, add.end)
		if !ok1 || !ok2 {
			return p, fmt.Errorf("story %d: no add and commit after its agent", k+1)
		}
		if k > 0 {
			ms := func(from, to time.Time) float64 { return float64(to.Sub(from)) / float64(time.Millisecond) }
			for i, v := range []float64{ms(prev.end, a.start), ms(a.start, a.end), ms(a.end, add.start),
				ms(add.start, add.end), ms(add.end, commit.start), ms(commit.start, commit.end)} {
				p.phases[i] = append(p.phases[i], v)
			}
		} else {
			p.head = append(p.head, float64(a.start.Sub(start))/float64(time.Millisecond))
		}
		prev = commit
	}
	p.tail = append(p.tail, float64(end.Sub(prev.end))/float64(time.Millisecond))
	return p, nil
}

// agentSpans reads FAKE_AGENT_TIMES' lines, "<began> <ended>" in Unix nanoseconds, in
// the order the agents began.
func agentSpans(path string) ([]span, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var out []span
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		f := strings.Fields(line)
		if len(f) != 2 {
			return nil, fmt.Errorf("%s: %q", path, line)
		}
		b, err1 := strconv.ParseInt(f[0], 10, 64)
		e, err2 := strconv.ParseInt(f[1], 10, 64)
		if err1 != nil || err2 != nil {
			return nil, fmt.Errorf("%s: %q", path, line)
		}
		out = append(out, span{time.Unix(0, b), time.Unix(0, e)})
	}
	slices.SortFunc(out, func(x, y span) int { return x.start.Compare(y.start) })
	return out, nil
}

// gitSpans reads a GIT_TRACE2_EVENT file: each `git add -A` and `git commit`, from its
// start event to its exit event (by session id), in the order they started.
func gitSpans(path string) (adds, commits []span, err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	type proc struct {
		kind string
		span
	}
	procs := map[string]*proc{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var ev struct {
			Event, Sid, Time string
			Argv             []string
		}
		if json.Unmarshal(sc.Bytes(), &ev) != nil {
			continue
		}
		t, err := time.Parse(time.RFC3339Nano, ev.Time)
		if err != nil {
			continue
		}
		switch ev.Event {
		case "start":
			kind := ""
			for i, a := range ev.Argv {
				if a == "add" && slices.Contains(ev.Argv[i:], "-A") || a == "commit" {
					kind = a
					break
				}
			}
			if kind != "" && (len(ev.Argv) < 2 || ev.Argv[1] != "ralph") {
				procs[ev.Sid] = &proc{kind: kind, span: span{start: t}}
			}
		case "exit":
			if p := procs[ev.Sid]; p != nil {
				p.end = t
			}
		}
	}
	for _, p := range procs {
		if p.end.IsZero() {
			continue
		}
		if p.kind == "add" {
			adds = append(adds, p.span)
		} else {
			commits = append(commits, p.span)
		}
	}
	byStart := func(x, y span) int { return x.start.Compare(y.start) }
	slices.SortFunc(adds, byStart)
	slices.SortFunc(commits, byStart)
	return adds, commits, sc.Err()
}

// median is the middle of v (the mean of the two middle ones), 0 for none.
func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := slices.Clone(v)
	slices.Sort(s)
	if n := len(s); n%2 == 1 {
		return s[n/2]
	} else {
		return (s[n/2-1] + s[n/2]) / 2
	}
}

// withPathFirst is env with dir first on PATH.
func withPathFirst(env []string, dir string) []string {
	out := slices.Clone(env)
	for i, kv := range out {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			out[i] = "PATH=" + dir + string(os.PathListSeparator) + v
			return out
		}
	}
	return append(out, "PATH="+dir)
}
