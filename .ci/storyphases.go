// storyphases reads what `perf trace -e execve,exit_group,fsync,mkdirat,unlinkat` printed
// of a `git ralph start` with an instant agent named claude (.ci/storyphases.sh runs one)
// and prints where each story's time went, phase by phase: the median and the least over
// the stories. Phases are told apart by the moments the kernel saw (the agent's exec and
// exit, the git processes, the fsyncs of the record and the snapshot, the attempt's
// cgroup made and removed), so git-ralph needs no switch of its own to be measured. Only
// the standard library.
//
//	go run .ci/storyphases.go < trace.txt
package main

import (
	"bufio"
	"fmt"
	"os"
	"regexp"
	"sort"
	"strconv"
)

type event struct {
	t    float64 // ms since the trace began
	comm string  // the process's name as it ended (git, claude, git-ralph)
	pid  int
	call string
}

var line = regexp.MustCompile(`^\s*([\d.]+) \(\s*[\d. ms]*\): (\S*)/(\d+) (\w+)\((.*)`)

func main() {
	var evs []event
	sc := bufio.NewScanner(os.Stdin)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		m := line.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		t, _ := strconv.ParseFloat(m[1], 64)
		pid, _ := strconv.Atoi(m[3])
		if m[4] == "execve" && len(m[5]) > 0 && m[5][0] == ' ' {
			continue // the end of an exec printed apart
		}
		evs = append(evs, event{t, m[2], pid, m[4]})
	}
	sort.SliceStable(evs, func(i, j int) bool { return evs[i].t < evs[j].t })
	final := map[int]string{}
	for _, e := range evs {
		if e.call == "exit_group" {
			final[e.pid] = e.comm
		}
	}
	exits := map[int]float64{}
	seen := map[int]bool{}
	var kept []event
	for _, e := range evs {
		if e.call == "execve" {
			if seen[e.pid] {
				continue // a launcher's exec of the agent: the process's first exec counts
			}
			seen[e.pid] = true
			if c, ok := final[e.pid]; ok {
				e.comm = c
			}
		}
		if e.call == "exit_group" {
			if _, ok := exits[e.pid]; !ok {
				exits[e.pid] = e.t
			}
		}
		kept = append(kept, e)
	}
	evs = kept
	var agents []int
	for i, e := range evs {
		if e.comm == "claude" && e.call == "execve" {
			agents = append(agents, i)
		}
	}
	names := []string{
		"record save 4 (commit exit -> its fsync)",
		"prompt, surface snapshot saved, record save 1",
		"attempt set-up: log, home marks, TMPDIR, cgroup made",
		"sandbox start (cgroup made -> agent exec)",
		"agent (exec -> exit)",
		"wait + leftovers (agent exit -> cgroup removed)",
		"link, layout walk, records check (-> for-each-ref)",
		"git for-each-ref (the surface's refs)",
		"surface compare + record save 3",
		"(link check,) drop snapshot, story done, gate, message (-> git add)",
		"git add -A",
		"between add and commit",
		"git commit",
	}
	// A run compares the trust surface after each attempt (three gits after the agent)
	// or only at its end (two): the kind most of its stories show is taken, and a story
	// whose trace lost an event is left out rather than read as the other kind.
	var cols [][]float64
	for _, surfaced := range []bool{true, false} {
		cols = make([][]float64, len(names))
		for k := 1; k+1 < len(agents); k++ {
			if row, ok := story(evs[agents[k-1]:agents[k]], evs[agents[k]:agents[k+1]], exits, surfaced); ok {
				for i, v := range row {
					cols[i] = append(cols[i], v)
				}
			}
		}
		if 2*len(cols[0]) >= len(agents)-2 {
			break
		}
	}
	if len(cols[0]) == 0 {
		fmt.Fprintln(os.Stderr, "storyphases: no story found in the trace")
		os.Exit(1)
	}
	var sumMed, sumMin float64
	for i, c := range cols {
		sort.Float64s(c)
		med := c[len(c)/2]
		sumMed, sumMin = sumMed+med, sumMin+c[0]
		fmt.Printf("%7.2f ms median %7.2f ms least  %s\n", med, c[0], names[i])
	}
	fmt.Printf("%7.2f ms        %7.2f ms        all phases; %d stories\n", sumMed, sumMin, len(cols[0]))
}

// story is one story's phases from the events before its agent's exec (back to the
// previous agent's) and after it (to the next agent's); ok is false when one is missing.
// surfaced: the run compares the trust surface after each attempt. Where it does so
// only at the run's end (the agent and its gate can write none of it), a story runs two
// gits after its agent, not three: the surface's phases are 0 and what is left of the
// checks after the agent counts as the last phase before git add.
func story(before, after []event, exits map[int]float64, surfaced bool) (row []float64, ok bool) {
	var commitExit float64
	for _, e := range before {
		if e.comm == "git" && e.call == "exit_group" {
			commitExit = e.t
		}
	}
	var mkdirs []float64
	for _, e := range before {
		if e.comm == "git-ralph" && e.call == "mkdirat" && e.t > commitExit {
			mkdirs = append(mkdirs, e.t)
		}
	}
	if len(mkdirs) < 1 || commitExit == 0 {
		return nil, false
	}
	cgroup := mkdirs[len(mkdirs)-1]
	save4, ok := firstAfter(before, commitExit, func(e event) bool { return e.comm == "git-ralph" && e.call == "fsync" })
	if !ok {
		return nil, false
	}
	save1 := save4
	for _, e := range before {
		if e.comm == "git-ralph" && e.call == "fsync" && e.t > save4 && e.t < cgroup {
			save1 = e.t
		}
	}
	exec, apid := after[0].t, after[0].pid
	aexit, ok := exits[apid]
	if !ok {
		return nil, false
	}
	rm, ok := firstAfter(after, aexit, func(e event) bool { return e.call == "unlinkat" })
	if !ok {
		return nil, false
	}
	var gits []event
	for _, e := range after {
		if e.comm == "git" && e.call == "execve" && e.t > aexit {
			gits = append(gits, e)
		}
	}
	if surfaced && len(gits) < 3 || !surfaced && len(gits) != 2 {
		return nil, false
	}
	add, commit := gits[len(gits)-2].t, gits[len(gits)-1].t
	addX, commitX := exits[gits[len(gits)-2].pid], exits[gits[len(gits)-1].pid]
	fer, ferX, save3 := rm, rm, rm
	if surfaced {
		fer, ferX = gits[0].t, exits[gits[0].pid]
		if save3, ok = firstAfter(after, ferX, func(e event) bool { return e.comm == "git-ralph" && e.call == "fsync" }); !ok {
			return nil, false
		}
	}
	row = []float64{save4 - commitExit, save1 - save4, cgroup - save1, exec - cgroup, aexit - exec, rm - aexit,
		fer - rm, ferX - fer, save3 - ferX, add - save3, addX - add, commit - addX, commitX - commit}
	for _, v := range row {
		if v < 0 {
			return nil, false // events out of order across CPUs
		}
	}
	return row, true
}

func firstAfter(evs []event, t float64, f func(event) bool) (float64, bool) {
	for _, e := range evs {
		if e.t > t && f(e) {
			return e.t, true
		}
	}
	return 0, false
}
