package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/git-ralph/git-ralph/internal/sandbox"
)

// BenchmarkGate20 is what running the verify gate and a commit hook in the sandbox costs
// per attempt: a 20-story run whose ralph-verify and pre-commit hooks do nothing, with
// them in the sandbox (the default) against the same run with ralph.verifySandbox=off
// (both in the attempt's cgroup where there is one), alternating. It reports the
// difference per attempt, wall and CPU (git-ralph's and its children's):
//
//	go test ./git-ralph -run '^$' -bench Gate20 -benchtime 3x
func BenchmarkGate20(b *testing.B) {
	if !sandbox.Probe().Usable() {
		b.Skip("no Landlock here: the gate is not sandboxed")
	}
	const stories = 20
	root := memTempDir(b)
	env := append(benchEnv(b, root), "FAKE_AGENT_SCENARIO="+filepath.Join(root, "scenario.json"))
	benchWrite(b, filepath.Join(root, "scenario.json"), benchScenario)
	tmpl := filepath.Join(root, "template")
	benchMkdir(b, filepath.Join(tmpl, "openspec", "changes", "x"))
	benchGit(b, env, tmpl, "init", "-q", "-b", "main")
	benchWrite(b, filepath.Join(tmpl, "openspec", "changes", "x", "tasks.md"), benchTasks(stories, false))
	benchGit(b, env, tmpl, "add", "-A")
	benchGit(b, env, tmpl, "commit", "-q", "-m", "base")
	for _, h := range []string{"ralph-verify", "pre-commit"} {
		p := filepath.Join(tmpl, ".git", "hooks", h)
		benchWrite(b, p, "#!/bin/sh\nexit 0\n")
		if err := os.Chmod(p, 0o755); err != nil {
			b.Fatal(err)
		}
	}
	var wall, cpu [2]time.Duration
	b.ResetTimer()
	b.StopTimer()
	for i := 0; i < b.N; i++ {
		for k, mode := range []string{"on", "off"} {
			dir := filepath.Join(root, fmt.Sprintf("%s-%d", mode, i))
			benchCopy(b, tmpl, dir)
			benchGit(b, env, dir, "config", "ralph.verifySandbox", mode)
			c := cpuTime(b)
			wall[k] += benchTime(func() { benchRalph(b, env, dir, "start", "x") })
			cpu[k] += cpuTime(b) - c
			if got := strings.Count(benchGit(b, env, dir, "log", "--format=%s"), "checkpoint: "); got != stories {
				b.Fatalf("%d checkpoints, want %d", got, stories)
			}
		}
	}
	n := float64(b.N * stories)
	b.ReportMetric(ms(wall[0])/float64(b.N), "sandboxed-ms")
	b.ReportMetric(ms(wall[1])/float64(b.N), "unsandboxed-ms")
	b.ReportMetric(ms(wall[0]-wall[1])/n, "gate-ms/attempt")
	b.ReportMetric(ms(cpu[0]-cpu[1])/n, "gate-cpu-ms/attempt")
}
