package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/git-ralph/git-ralph/internal/git"
	"github.com/git-ralph/git-ralph/internal/report"
	"github.com/git-ralph/git-ralph/internal/run"
)

// retryScenario fails each story's first attempts (each leaving a file behind, so every
// saved attempt has a diff) and passes the attempt after them. With logLines, each
// attempt first says that many lines of progress (about 450 bytes of log each).
func retryScenario(fails, logLines int) string {
	flood := ""
	if logLines > 0 {
		flood = fmt.Sprintf(`{"spam_lines": {"count": %d, "text": "Working on story {{story}}: reading the code, running the tests, looking at what failed."}},`, logLines)
	}
	var runs []string
	for i := 1; i <= fails; i++ {
		runs = append(runs, fmt.Sprintf(`{"steps": [`+flood+`
  {"write": {"path": "story-{{story}}-try-%d.txt", "content": "a try at story {{story}}\n<script>alert(1)</script>\n"}},
  {"say": "<promise>FAILED: try %d at story {{story}}: the test \"TestStory\" fails</promise>"}]}`, i, i))
	}
	runs = append(runs, `{"steps": [`+flood+`
  {"write": {"path": "story-{{story}}.txt", "content": "the work of story {{story}}\n"}},
  {"check_story": true},
  {"say": "<promise>COMPLETE</promise>"}]}`)
	return `{"by_story": {"*": [` + strings.Join(runs, ",\n") + `]}}`
}

// makeRun makes a repository with a finished run of stories stories, each passing at
// its attempt fails+1, with the fake agent and the test clock.
func makeRun(tb testing.TB, root string, stories, fails int) (dir string, env []string) {
	return makeRunLogs(tb, root, stories, fails, 0)
}

// makeRunLogs is makeRun with logLines lines of agent text in each attempt's log.
func makeRunLogs(tb testing.TB, root string, stories, fails, logLines int) (dir string, env []string) {
	tb.Helper()
	env = append(benchEnv(tb, root), "FAKE_AGENT_SCENARIO="+filepath.Join(root, "scenario.json"),
		"GIT_RALPH_TEST_CLOCK=2026-01-02T03:04:05Z")
	benchWrite(tb, filepath.Join(root, "scenario.json"), retryScenario(fails, logLines))
	dir = filepath.Join(root, "repo")
	benchMkdir(tb, filepath.Join(dir, "openspec", "changes", "x"))
	benchGit(tb, env, dir, "init", "-q", "-b", "main")
	benchWrite(tb, filepath.Join(dir, "openspec", "changes", "x", "tasks.md"), benchTasks(stories, false))
	benchWrite(tb, filepath.Join(dir, "openspec", "changes", "x", "proposal.md"),
		"## Why\n\nA run of many stories, each of which fails before it passes.\n")
	benchGit(tb, env, dir, "add", "-A")
	benchGit(tb, env, dir, "commit", "-q", "-m", "base")
	cmdOut := benchRalphT(tb, env, dir, "start", "x", fmt.Sprintf("--max-retries=%d", fails))
	if !strings.Contains(cmdOut, "report: ") {
		tb.Fatalf("start did not name the report:\n%s", cmdOut)
	}
	return dir, env
}

// BenchmarkReport100x4 times the report of a run of 100 stories with 4 attempts each
// (3 failed, saved with their diffs): gathering it from the record and git, rendering
// it, and the whole `git ralph report` command.
//
//	go test ./git-ralph -run '^$' -bench Report -benchtime 5x
func BenchmarkReport100x4(b *testing.B) {
	dir, env := makeRun(b, b.TempDir(), 100, 3)
	ctx := context.Background()
	repo, err := git.Open(ctx, dir)
	if err != nil {
		b.Fatal(err)
	}
	store := run.NewStore(repo.CommonDir)
	var build, render, command time.Duration
	b.ResetTimer()
	for b.Loop() {
		t0 := time.Now()
		rep, err := report.Build(ctx, repo, store, "x", report.Options{})
		if err != nil {
			b.Fatal(err)
		}
		t1 := time.Now()
		if err := report.Render(io.Discard, rep); err != nil {
			b.Fatal(err)
		}
		t2 := time.Now()
		benchRalphT(b, env, dir, "report", "x")
		command += time.Since(t2)
		build, render = build+t1.Sub(t0), render+t2.Sub(t1)
		if rep.Attempts != 400 || len(rep.Stories) != 100 {
			b.Fatalf("%d attempts in %d stories", rep.Attempts, len(rep.Stories))
		}
	}
	n := float64(b.N)
	b.ReportMetric(ms(build)/n, "build-ms")
	b.ReportMetric(ms(render)/n, "render-ms")
	b.ReportMetric(ms(command)/n, "command-ms")
}

func benchRalphT(tb testing.TB, env []string, dir string, args ...string) string {
	tb.Helper()
	return benchRalph(tb, env, dir, args...)
}

// BenchmarkReport500x4 is the report of a day-long run: 500 stories of 4 attempts (3
// failed, saved with their diffs), each attempt's log about 10 KB (6 lines of agent
// text in stream-json: 20 MB in all). The page must be built in under a second and
// stay under 5 MB: it reports
// build-ms, render-ms, command-ms (the whole `git ralph report`) and page-MB, the CPU
// time of building and of the command (git's included; robust under load), and the
// same page without the room for logs (unbounded-: what it was before).
// Making the run takes minutes.
//
//	go test ./git-ralph -run '^$' -bench Report500 -benchtime 3x -timeout 30m
func BenchmarkReport500x4(b *testing.B) {
	dir, env := makeRunLogs(b, b.TempDir(), 500, 3, 6)
	ctx := context.Background()
	repo, err := git.Open(ctx, dir)
	if err != nil {
		b.Fatal(err)
	}
	store := run.NewStore(repo.CommonDir)
	logs := int64(0)
	_ = filepath.WalkDir(filepath.Join(repo.CommonDir, "ralph", "x", "logs"), func(p string, d fs.DirEntry, err error) error {
		if info, e := d.Info(); err == nil && e == nil && !d.IsDir() {
			logs += info.Size()
		}
		return nil
	})
	var build, render, command, buildCPU, commandCPU time.Duration
	var size int
	for b.Loop() {
		c0, t0 := cpuTime(b), time.Now()
		rep, err := report.Build(ctx, repo, store, "x", report.Options{})
		if err != nil {
			b.Fatal(err)
		}
		c1, t1 := cpuTime(b), time.Now()
		buildCPU += c1 - c0
		var page bytes.Buffer
		if err := report.Render(&page, rep); err != nil {
			b.Fatal(err)
		}
		c2, t2 := cpuTime(b), time.Now()
		benchRalphT(b, env, dir, "report", "x")
		command += time.Since(t2)
		commandCPU += cpuTime(b) - c2
		build, render, size = build+t1.Sub(t0), render+t2.Sub(t1), page.Len()
		if rep.Attempts != 2000 || len(rep.Stories) != 500 {
			b.Fatalf("%d attempts in %d stories", rep.Attempts, len(rep.Stories))
		}
	}
	// The page as it was before the room for logs (every tail on it, 8 MiB of diffs).
	c0, t0 := cpuTime(b), time.Now()
	rep, err := report.Build(ctx, repo, store, "x", report.Options{MaxTotal: 8 << 20, MaxLogs: 1 << 40})
	if err != nil {
		b.Fatal(err)
	}
	var page bytes.Buffer
	if err := report.Render(&page, rep); err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(ms(time.Since(t0)), "unbounded-ms")
	b.ReportMetric(ms(cpuTime(b)-c0), "unbounded-cpu-ms")
	b.ReportMetric(float64(page.Len())/1e6, "unbounded-MB")
	n := float64(b.N)
	b.ReportMetric(ms(build)/n, "build-ms")
	b.ReportMetric(ms(render)/n, "render-ms")
	b.ReportMetric(ms(command)/n, "command-ms")
	b.ReportMetric(float64(size)/1e6, "page-MB")
	b.ReportMetric(float64(logs)/1e6, "logs-MB")
	b.ReportMetric(ms(buildCPU)/n, "build-cpu-ms")
	b.ReportMetric(ms(commandCPU)/n, "command-cpu-ms")
}
