package main

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"

	"github.com/rogpeppe/go-internal/testscript"
)

// cmdCPUCgroup makes a cpu cgroup of the script's own, limited to one CPU, removed when
// the script ends, and sets the variable NAME to its directory: cpucgroup NAME. A
// command started as `exec sh -c 'echo $$ >$NAME/cgroup.procs && exec "$@"' sh CMD…`
// runs in it, as in a container, a CI job or a systemd unit with the cpu controller:
// what it and its children get of the CPU is shared there, among them alone.
func cmdCPUCgroup(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: cpucgroup NAME")
	}
	root := cpuCgroupRoot()
	if root == "" {
		ts.Fatalf("no cpu cgroup here (condition [cpucgroup])")
	}
	dir, err := os.MkdirTemp(root, "git-ralph-test-")
	if err != nil {
		ts.Fatalf("make a cpu cgroup: %v", err)
	}
	ts.Defer(func() { _ = os.Remove(dir) })
	// One CPU at most: a v1 cpu cgroup (cfs quota) or v2 (cpu.max).
	if _, err := os.Stat(filepath.Join(dir, "cpu.max")); err == nil {
		err = os.WriteFile(filepath.Join(dir, "cpu.max"), []byte("100000 100000"), 0)
	} else {
		err = os.WriteFile(filepath.Join(dir, "cpu.cfs_quota_us"), []byte("100000"), 0)
	}
	if err != nil {
		ts.Fatalf("limit the cpu cgroup: %v", err)
	}
	ts.Setenv(args[0], dir)
}

// cpuCgroupRoot is where this process may make a cpu cgroup: the cpu controller's
// version 1 hierarchy, or the version 2 one where cpu is a controller of the root's
// children. "" when neither is (or it is not writable).
func cpuCgroupRoot() string {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		pre, post, ok := strings.Cut(sc.Text(), " - ")
		fields, super := strings.Fields(pre), strings.Fields(post)
		if !ok || len(fields) < 5 || len(super) < 3 || fields[3] != "/" {
			continue
		}
		mnt := fields[4]
		switch {
		case super[0] == "cgroup" && hasOpt(super[2], "cpu"):
		case super[0] == "cgroup2":
			b, _ := os.ReadFile(filepath.Join(mnt, "cgroup.subtree_control"))
			if !hasOpt(strings.ReplaceAll(strings.TrimSpace(string(b)), " ", ","), "cpu") {
				continue
			}
		default:
			continue
		}
		if probe, err := os.MkdirTemp(mnt, "git-ralph-probe-"); err == nil {
			_ = os.Remove(probe)
			return mnt
		}
	}
	return ""
}

func hasOpt(opts, name string) bool {
	for _, o := range strings.Split(opts, ",") {
		if o == name {
			return true
		}
	}
	return false
}
