package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
)

// peakCeilingMiB is what git-ralph's peak resident memory must stay under whatever the
// repository holds: the man page's PERFORMANCE says it.
const peakCeilingMiB = 64

// BenchmarkChangeFile512M runs `git ralph start --dry-run` on a change whose design.md
// is 512 MiB (a sparse file made in a temporary directory and removed at the end), and
// whose tasks.md is 512 MiB too in a second change, and reports git-ralph's peak
// resident memory (peak-rss-MiB, from the kernel's rusage of the process); it fails
// above peakCeilingMiB. The design is named in the prompt and cut; the tasks file is
// refused by name.
//
//	go test ./git-ralph -run '^$' -bench ChangeFile512M -benchtime 3x
func BenchmarkChangeFile512M(b *testing.B) {
	ralph, err := exec.LookPath("git-ralph")
	if err != nil {
		b.Fatal(err)
	}
	root := b.TempDir()
	env := benchEnv(b, root)
	dir := filepath.Join(root, "repo")
	for _, c := range []string{"x", "y"} {
		benchMkdir(b, filepath.Join(dir, "openspec", "changes", c))
	}
	benchGit(b, env, dir, "init", "-q")
	benchWrite(b, filepath.Join(dir, "openspec", "changes", "x", "tasks.md"), benchTasks(3, false))
	benchWrite(b, filepath.Join(dir, "openspec", "changes", "x", "proposal.md"), "# Change: x\n\n## Why\n\nTo see.\n")
	benchWrite(b, filepath.Join(dir, "openspec", "changes", "y", "proposal.md"), "# Change: y\n")
	benchGit(b, env, dir, "add", "-A")
	benchGit(b, env, dir, "commit", "-q", "-m", "base")
	sparse(b, filepath.Join(dir, "openspec", "changes", "x", "design.md"), "# Design\n\nThe start of a very long design.\n", 512<<20)
	sparse(b, filepath.Join(dir, "openspec", "changes", "y", "tasks.md"), benchTasks(2, false), 512<<20)

	peak := 0.0
	for b.Loop() {
		out, rss, err := peakRun(ralph, env, dir, "start", "x", "--dry-run")
		if err != nil || !strings.Contains(out, "Too long to include here: read openspec/changes/x/design.md.") {
			b.Fatalf("start x --dry-run: %v\n%s", err, clip(out))
		}
		peak = max(peak, rss)
		out, rss, err = peakRun(ralph, env, dir, "start", "y", "--dry-run")
		if err == nil || !strings.Contains(out, "openspec/changes/y/tasks.md is 512 MiB: git-ralph reads at most 4 MiB of a task list") {
			b.Fatalf("start y --dry-run: %v\n%s", err, clip(out))
		}
		peak = max(peak, rss)
	}
	b.ReportMetric(peak, "peak-rss-MiB")
	if peak > peakCeilingMiB {
		b.Errorf("git-ralph peaked at %.1f MiB with a 512 MiB change file, over the %d MiB of the man page", peak, peakCeilingMiB)
	}
}

// sparse writes head at the start of a file of size bytes, the rest a hole: a big
// file that costs no disk.
func sparse(tb testing.TB, path, head string, size int64) {
	tb.Helper()
	f, err := os.Create(path)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(head); err != nil {
		tb.Fatal(err)
	}
	if err := f.Truncate(size); err != nil {
		tb.Fatal(err)
	}
}

// peakRun runs git-ralph itself (not through git, whose process would be the one
// measured) and returns its output and its peak resident memory in MiB.
func peakRun(ralph string, env []string, dir string, args ...string) (string, float64, error) {
	cmd := exec.Command(ralph, args...)
	cmd.Dir, cmd.Env = dir, env
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	if !ok {
		return out.String(), 0, err
	}
	rss := float64(ru.Maxrss) / 1024 // KiB on Linux
	if runtime.GOOS == "darwin" {
		rss /= 1024 // bytes there
	}
	return out.String(), rss, err
}

func clip(s string) string {
	if len(s) > 2000 {
		return s[:1000] + "\n…\n" + s[len(s)-1000:]
	}
	return s
}
