package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// BenchmarkCancelSave100MB times the cancel path of a run on GitHub Actions whose
// attempt under way has written 100 MB (issue 19): from the SIGINT to the loop's exit
// (save-ms: the attempt committed under refs/ralph/, the work tree put back at the
// checkpoint), then export (export-ms: the bundle the artifact carries, bundle-MB its
// size), then publish from a fresh clone to a bare remote (publish-ms); and the same attempt when the loop is killed with SIGKILL instead, saved by
// export as the resume after a crash does (crash-export-ms). GitHub gives the step 7.5s
// after its SIGINT before SIGTERM, 10s before the kill, and everything 5 minutes.
// Wall-clock time depends on what else the machine runs; the *-cpu-ms metrics are the
// processor time git-ralph and its gits used (user + system), which a busy machine
// does not inflate.
//
//	go test ./git-ralph -run '^$' -bench CancelSave -benchtime 3x -timeout 30m
//
// Two shapes of 100 MB: one file of random bytes (nothing compresses), and 5 000 text
// files of 20 KB (base64, as generated code or data would be).
func BenchmarkCancelSave100MB(b *testing.B) {
	for _, shape := range []struct{ name, write string }{
		{"random-1-file", "head -c 104857600 /dev/urandom > big.bin"},
		{"text-5000-files", "mkdir gen && head -c 76800000 /dev/urandom | base64 -w 100 | split -b 20480 -a 4 - gen/part-"},
	} {
		b.Run(shape.name, func(b *testing.B) {
			var sum, crash cancelTimes
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				sum.add(benchCancel(b, shape.write, false))
				crash.add(benchCancel(b, shape.write, true))
				b.StartTimer()
			}
			n := float64(b.N)
			b.ReportMetric(ms(sum.save)/n, "save-ms")
			b.ReportMetric(ms(sum.saveCPU)/n, "save-cpu-ms")
			b.ReportMetric(ms(sum.export)/n, "export-ms")
			b.ReportMetric(ms(sum.exportCPU)/n, "export-cpu-ms")
			b.ReportMetric(ms(crash.export)/n, "crash-export-ms")
			b.ReportMetric(ms(crash.exportCPU)/n, "crash-export-cpu-ms")
			b.ReportMetric(ms(sum.publish)/n, "publish-ms")
			b.ReportMetric(ms(sum.publishCPU)/n, "publish-cpu-ms")
			b.ReportMetric(float64(sum.bundle)/n/(1<<20), "bundle-MB")
		})
	}
}

// cancelTimes are the times of one cancel (or their sums): wall clock and processor.
type cancelTimes struct {
	save, saveCPU, export, exportCPU, publish, publishCPU time.Duration
	bundle                                                int64
}

func (t *cancelTimes) add(u cancelTimes) {
	t.save, t.saveCPU, t.export, t.exportCPU = t.save+u.save, t.saveCPU+u.saveCPU, t.export+u.export, t.exportCPU+u.exportCPU
	t.publish, t.publishCPU = t.publish+u.publish, t.publishCPU+u.publishCPU
	t.bundle += u.bundle
}

// benchCancel adopts a one-story run as a runner does, whose agent runs write and then
// hangs, stops the loop (SIGINT, or SIGKILL with kill), exports the run and publishes
// it; it returns how long the loop took to exit after the SIGINT (none with kill), how
// long export and publish took, and the size of the bundle.
func benchCancel(b *testing.B, write string, kill bool) (t cancelTimes) {
	b.Helper()
	root := b.TempDir()
	scenario := `{"steps": [{"bash": ` + jsonString(write) + `}, {"hang": {"on_sigint_exit": 0, "pid_file": ` + jsonString(filepath.Join(root, "agent.pid")) + `}}]}`
	benchWrite(b, filepath.Join(root, "scenario.json"), scenario)
	env := append(benchEnv(b, root), "FAKE_AGENT_SCENARIO="+filepath.Join(root, "scenario.json"))
	dir := filepath.Join(root, "repo")
	benchMkdir(b, filepath.Join(dir, "openspec", "changes", "x"))
	benchGit(b, env, dir, "init", "-q", "-b", "main")
	benchWrite(b, filepath.Join(dir, "openspec", "changes", "x", "tasks.md"), benchTasks(1, false))
	benchGit(b, env, dir, "add", "-A")
	benchGit(b, env, dir, "commit", "-q", "-m", "base")
	// As on a runner: dispatch pushed ralph/x at its initial state commit, the job
	// cloned it and adopts the run.
	remote := filepath.Join(root, "remote.git")
	benchGit(b, env, root, "init", "-q", "--bare", remote)
	benchGit(b, env, dir, "switch", "-q", "-c", "ralph/x")
	benchGit(b, env, dir, "commit", "-q", "--allow-empty", "-m", "initial state", "--trailer", "Ralph-Change: x", "--trailer", "Ralph-Original: main")
	benchGit(b, env, dir, "push", "-q", remote, "main", "ralph/x")
	start := strings.TrimSpace(benchGit(b, env, dir, "rev-parse", "HEAD"))

	loop := exec.Command("git-ralph", "start", "x", "--adopt", "--run-id", "1")
	loop.Dir, loop.Env = dir, env
	var out bytes.Buffer
	loop.Stdout, loop.Stderr = &out, &out
	if err := loop.Start(); err != nil {
		b.Fatal(err)
	}
	for deadline := time.Now().Add(5 * time.Minute); ; time.Sleep(20 * time.Millisecond) {
		if data, err := os.ReadFile(filepath.Join(root, "agent.pid")); err == nil && len(bytes.TrimSpace(data)) > 0 {
			break
		}
		if time.Now().After(deadline) {
			_ = loop.Process.Kill()
			b.Fatalf("the agent never got to its hang:\n%s", out.String())
		}
	}
	if kill {
		_ = loop.Process.Kill()
		_ = loop.Wait()
	} else {
		before := procCPU(b, loop.Process.Pid)
		t.save = benchTime(func() {
			_ = loop.Process.Signal(syscall.SIGINT)
			err := loop.Wait()
			if code := loop.ProcessState.ExitCode(); code != 130 {
				b.Fatalf("the loop exited %d (%v), want 130:\n%s", code, err, out.String())
			}
		})
		t.saveCPU = loop.ProcessState.UserTime() + loop.ProcessState.SystemTime() - before
	}
	art := filepath.Join(root, "artifact")
	export := exec.Command("git-ralph", "export", "x", "--run-id", "1", "--out", art)
	export.Dir, export.Env = dir, env
	t.export = benchTime(func() {
		if msg, err := export.CombinedOutput(); err != nil {
			b.Fatalf("export: %v\n%s", err, msg)
		}
	})
	t.exportCPU = export.ProcessState.UserTime() + export.ProcessState.SystemTime()
	if refs := benchGit(b, env, dir, "for-each-ref", "--format=%(refname)", "refs/ralph/x/runs/1/attempts/"); !strings.Contains(refs, "attempts/1-1") {
		b.Fatalf("the attempt was not exported: %q\n%s", refs, out.String())
	}
	fi, err := os.Stat(filepath.Join(art, "ralph.bundle"))
	if err != nil {
		b.Fatal(err)
	}
	t.bundle = fi.Size()
	// The publish job: a fresh clone checks the bundle and pushes it.
	pub := filepath.Join(root, "publish")
	benchGit(b, env, root, "clone", "-q", "-b", "ralph/x", remote, pub)
	publish := exec.Command("git-ralph", "publish", "x", "--run-id", "1", "--bundle", filepath.Join(art, "ralph.bundle"), "--start", start)
	publish.Dir, publish.Env = pub, env
	t.publish = benchTime(func() {
		if msg, err := publish.CombinedOutput(); err != nil {
			b.Fatalf("publish: %v\n%s", err, msg)
		}
	})
	t.publishCPU = publish.ProcessState.UserTime() + publish.ProcessState.SystemTime()
	if refs := benchGit(b, env, root, "--git-dir", remote, "for-each-ref", "--format=%(refname)", "refs/ralph/x/runs/1/attempts/"); !strings.Contains(refs, "attempts/1-1") {
		b.Fatalf("the attempt was not published: %q", refs)
	}
	return t
}

// procCPU is the processor time process pid and its children it has waited for have
// used so far: utime + stime + cutime + cstime of /proc/<pid>/stat.
func procCPU(b *testing.B, pid int) time.Duration {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		b.Fatal(err)
	}
	f := strings.Fields(string(data[bytes.LastIndexByte(data, ')')+1:])) // f[0] is field 3
	var ticks int64
	for _, v := range f[11:15] { // fields 14-17
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			b.Fatal(err)
		}
		ticks += n
	}
	return time.Duration(ticks) * time.Second / 100 // USER_HZ is 100 on Linux
}

func jsonString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"', '\\':
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	b.WriteByte('"')
	return b.String()
}
