package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/git-ralph/git-ralph/internal/cli"
	"github.com/git-ralph/git-ralph/internal/run"
	"github.com/git-ralph/git-ralph/internal/term"
)

// BenchmarkScale times the commands that read every change or every run of a repository
// on generated repositories of 100 to 2,000 OpenSpec changes, one in ten of them with a
// run (its record, branch and attempt refs), in-process so that -cpuprofile sees
// git-ralph's own work:
//
//	go test ./git-ralph -run '^$' -bench Scale -benchtime 5x
//	go test ./git-ralph -run '^$' -bench 'Scale/list-1000' -cpuprofile cpu.out
//
// Each reports ms/op and us/change (us/run for status): flat from 100 to 2,000 means
// linear. list's cmd-ms is `git ralph list --json` as a process, the number the user
// waits for, and cmd-cpu-ms its CPU time (git's included), which load does not stretch.
func BenchmarkScale(b *testing.B) {
	for _, n := range []int{100, 500, 1000, 2000} {
		// Made once per size, by the first sub-benchmark that runs (-bench may pick one).
		root := b.TempDir()
		env, dir := benchEnv(b, root), filepath.Join(root, "repo")
		repo := func(b *testing.B) {
			if _, err := os.Stat(dir); err != nil {
				scaleRepo(b, env, dir, n)
			}
		}
		per := func(b *testing.B, d time.Duration, count int, unit string) {
			b.ReportMetric(float64(d.Microseconds())/float64(b.N)/float64(count), unit)
		}
		b.Run(fmt.Sprintf("list-%d", n), func(b *testing.B) {
			repo(b)
			var in, cmd, cmdCPU time.Duration
			for b.Loop() {
				out := scaleMain(b, env, dir, &in, "list", "--json")
				if got := strings.Count(out, `"totalTasks": 9,`); got != n {
					b.Fatalf("%d changes of 9 tasks listed, want %d", got, n)
				}
				c := cpuTime(b)
				cmd += benchTime(func() { benchRalph(b, env, dir, "list", "--json") })
				cmdCPU += cpuTime(b) - c
			}
			per(b, in, n, "us/change")
			b.ReportMetric(ms(cmd)/float64(b.N), "cmd-ms")
			b.ReportMetric(ms(cmdCPU)/float64(b.N), "cmd-cpu-ms")
		})
		b.Run(fmt.Sprintf("status-%d", n), func(b *testing.B) {
			repo(b)
			var in time.Duration
			for b.Loop() {
				out := scaleMain(b, env, dir, &in, "status")
				if got := strings.Count(out, "\tralph/"); got != n/10 {
					b.Fatalf("%d runs in the overview, want %d:\n%s", got, n/10, out)
				}
			}
			per(b, in, n/10, "us/run")
		})
		b.Run(fmt.Sprintf("completion-%d", n), func(b *testing.B) {
			repo(b)
			var in time.Duration
			for b.Loop() {
				for _, what := range []string{"changes", "runs", "reports"} {
					out := scaleMain(b, env, dir, &in, "__complete", what)
					if want := map[string]int{"changes": n, "runs": n / 10, "reports": n / 10}[what]; strings.Count(out, "\n") != want {
						b.Fatalf("%s: %d lines, want %d", what, strings.Count(out, "\n"), want)
					}
				}
			}
			per(b, in, n, "us/change")
		})
	}
}

// scaleMain runs git-ralph in-process in dir with env, adding its time to *d.
func scaleMain(b *testing.B, env []string, dir string, d *time.Duration, args ...string) string {
	b.Helper()
	b.Chdir(dir)
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		b.Setenv(k, v)
	}
	s, out, errOut := term.Test()
	start := time.Now()
	code := cli.Main(args, s)
	*d += time.Since(start)
	if code != 0 {
		b.Fatalf("git ralph %s: exit %d\n%s", strings.Join(args, " "), code, errOut)
	}
	return out.String()
}

// scaleRepo makes a repository of n changes, each with a proposal, a design, a delta
// spec and a tasks.md of 3 stories of 3 tasks (the first story done), and a run of
// every tenth change: its record (4 attempts), its branch and 3 attempt refs.
func scaleRepo(b *testing.B, env []string, dir string, n int) {
	b.Helper()
	benchMkdir(b, dir)
	benchGit(b, env, dir, "init", "-q", "-b", "main")
	benchMkdir(b, filepath.Join(dir, "openspec"))
	benchWrite(b, filepath.Join(dir, "openspec", "config.yaml"), "schema: spec-driven\n")
	var tasks strings.Builder
	for s := 1; s <= 3; s++ {
		box := " "
		if s == 1 {
			box = "x"
		}
		fmt.Fprintf(&tasks, "\n## %d. Story %d\n\n", s, s)
		for t := 1; t <= 3; t++ {
			fmt.Fprintf(&tasks, "- [%s] %d.%d Do part %d of story %d, with a test\n", box, s, t, t, s)
		}
	}
	store := run.NewStore(filepath.Join(dir, ".git"))
	var refs strings.Builder
	for i := range n {
		name := fmt.Sprintf("change-%05d", i)
		cdir := filepath.Join(dir, "openspec", "changes", name)
		benchMkdir(b, filepath.Join(cdir, "specs", "cap"))
		benchWrite(b, filepath.Join(cdir, ".openspec.yaml"), "schema: spec-driven\ncreated: 2026-01-02\n")
		benchWrite(b, filepath.Join(cdir, "proposal.md"), "## Why\n\nChange "+name+".\n\n## What Changes\n\n- one thing\n")
		benchWrite(b, filepath.Join(cdir, "design.md"), "## Context\n\n"+strings.Repeat("A design paragraph.\n", 20))
		benchWrite(b, filepath.Join(cdir, "specs", "cap", "spec.md"),
			"## ADDED Requirements\n\n### Requirement: A thing\nThe system SHALL do it.\n\n#### Scenario: it works\n- **WHEN** asked\n- **THEN** it does\n")
		benchWrite(b, filepath.Join(cdir, "tasks.md"), "# Tasks\n"+tasks.String())
		if i%10 != 0 {
			continue
		}
		rec := &run.Record{Change: name, Branch: "ralph/" + name, Original: "main", OriginalCommit: strings.Repeat("a", 40),
			Status: run.Interrupted, Agent: "claude", CurrentStory: "2"}
		for a := 1; a <= 4; a++ {
			rec.Attempts = append(rec.Attempts, run.Attempt{Story: fmt.Sprint(1 + a/4), N: a, Outcome: run.OutcomeFailed})
		}
		if err := store.Save(rec, time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)); err != nil {
			b.Fatal(err)
		}
		fmt.Fprintf(&refs, "create refs/heads/ralph/%s HEAD\n", name)
		for a := 1; a <= 3; a++ {
			fmt.Fprintf(&refs, "create refs/ralph/%s/attempts/1-%d HEAD\n", name, a)
		}
	}
	benchGit(b, env, dir, "add", "-A")
	benchGit(b, env, dir, "commit", "-q", "-m", "base")
	cmd := exec.Command("git", "update-ref", "--stdin")
	cmd.Dir, cmd.Env, cmd.Stdin = dir, env, strings.NewReader(refs.String())
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("update-ref: %v\n%s", err, out)
	}
	if _, err := os.Stat(filepath.Join(dir, ".git", "ralph")); err != nil {
		b.Fatal(err)
	}
}
