package loop

import (
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/git-ralph/git-ralph/internal/agent"
	"github.com/git-ralph/git-ralph/internal/gitdir"
	"github.com/git-ralph/git-ralph/internal/sandbox"
	"github.com/git-ralph/git-ralph/internal/source"
)

// sandboxLevel is the level a run working in tree has: set.Level, with whether the git
// directory is writable to the agent (in place, where it lies inside the working tree
// and cannot move out of it for the run, or under a path the user made writable) or
// moves out of the tree while the run works (internal/gitdir).
func (l *Loop) sandboxLevel(set sandbox.Settings, tree string) sandbox.Level {
	lvl := set.Level
	if lvl.On() {
		lvl.InPlace = sandbox.Covers([]string{tree}, l.Repo.CommonDir)
		if lvl.InPlace {
			if _, err := gitdir.Where(tree, l.Repo.CommonDir); err != nil {
				lvl.Stays = err.Error()
			} else {
				lvl.InPlace, lvl.Moved = false, true
			}
		}
		lvl.GitWritable = !lvl.InPlace && !lvl.Moved && sandbox.Covers(writable(set, tree), l.Repo.CommonDir)
	}
	return lvl
}

// writable is what the agent may write besides its attempt's directory and its own
// state: the working tree, the devices, the build caches and ralph.sandboxWritable.
func writable(set sandbox.Settings, tree string) []string {
	w := []string{tree}
	w = append(w, sandbox.Devices...)
	w = append(w, sandbox.Caches(os.Environ())...)
	return append(w, set.Writable...)
}

// sandboxPolicy is the policy of the agent working in tree under set, nil when the run is
// not sandboxed; agent.Run adds the attempt's directory and the driver's state. Shared are
// what other runs' agents may write (set.Shared, the caches, commonDir). files (the
// learnings, an issue's tasks) are writable too: the prompt asks the agent to write them.
// With create, missing caches are made (a rule names existing paths only). docs/SANDBOX.md.
func sandboxPolicy(set sandbox.Settings, tree, commonDir string, files []string, create bool) (*sandbox.Policy, error) {
	if !set.Level.On() {
		return nil, nil
	}
	p := &sandbox.Policy{ABI: set.Level.ABI, Ports: set.Ports, Sockets: set.Sockets}
	p.Shared = append(slices.Clone(set.Shared), sandbox.AllCaches(os.Environ())...)
	if commonDir != "" {
		p.Shared = append(p.Shared, commonDir)
	}
	p.AddWrite(writable(set, tree)...)
	for _, f := range files {
		if f != "" && !sandbox.Covers(p.Write, f) {
			p.AddWrite(f)
		}
	}
	for _, w := range set.Writable {
		// A device the user names is one the agent needs to drive (a terminal).
		if fi, err := os.Stat(w); err == nil && (fi.Mode()&os.ModeDevice != 0 || w == "/dev/pts") {
			p.Dev = append(p.Dev, w)
		}
	}
	p.Hide = append(sandbox.HiddenIn(os.Getenv("HOME"), set.Hide), sandbox.HiddenEnv(os.Getenv)...)
	if create {
		if err := sandbox.EnsureDirs(sandbox.Caches(os.Environ())); err != nil {
			return nil, fmt.Errorf("sandbox: create a build cache: %w", err)
		}
	}
	return p, nil
}

// gatePolicy is the policy of the verify gate and the commit hooks of a run working in
// tree under set (gateHook): the agent's, but none of the files outside the tree the
// agent is asked to write (the learnings, a tracked file kept outside) and none of its
// CLI's state, plus what the user lets the gate alone write (ralph.verifyWritable).
// Each run of a hook adds a TMPDIR of its own.
func gatePolicy(set sandbox.Settings, tree, commonDir string) (*sandbox.Policy, error) {
	p, err := sandboxPolicy(set, tree, commonDir, nil, false)
	if p != nil {
		p.AddWrite(set.VerifyWritable...)
	}
	return p, err
}

// describeSandbox is the dry run's account of the policy an attempt of drv working in
// tree would run under (set, its level resolved for tree), one line each: the level,
// what is writable, what is hidden, the network.
func describeSandbox(set sandbox.Settings, drv agent.Driver, tree string, files []string) []string {
	if !set.Decided() {
		return nil
	}
	lines := []string{"sandbox: " + set.Level.String()}
	p, _ := sandboxPolicy(set, tree, "", files, false)
	if p == nil {
		return lines
	}
	p = agent.PolicyFor(drv, p, os.Environ())
	home := os.Getenv("HOME")
	short := func(ps []string) string {
		out := make([]string, len(ps))
		for i, s := range ps {
			if home != "" && strings.HasPrefix(s, home+"/") {
				s = "~" + strings.TrimPrefix(s, home)
			}
			out[i] = s
		}
		return strings.Join(out, ", ")
	}
	// Writing a directory includes reading it: a hidden path beneath a writable one is
	// not hidden, and is said so rather than listed as hidden.
	var hidden, exposed []string
	for _, h := range sandbox.Existing(p.Hide) {
		if sandbox.Covers(p.Write, h) {
			exposed = append(exposed, h)
		} else {
			hidden = append(hidden, h)
		}
	}
	lines = append(lines,
		"  writable: "+short(p.Write)+", and a temporary directory of its own (TMPDIR), removed after the attempt",
		"  readable: everything else, but not: "+orNone(short(hidden)))
	if len(exposed) > 0 {
		lines = append(lines, "  not hidden, being inside a writable path: "+short(exposed))
	}
	if len(p.Dev) > 0 {
		lines = append(lines, "  terminal devices (ioctl): "+short(p.Dev))
	}
	if len(p.Ports) > 0 && set.Level.ABI >= 4 {
		ports := make([]string, len(p.Ports))
		for i, n := range p.Ports {
			ports[i] = itoa(int(n))
		}
		lines = append(lines, "  network: TCP connections to port "+strings.Join(ports, ", ")+" only")
	} else {
		lines = append(lines, "  network: unrestricted")
	}
	lines = append(lines, "  unix sockets: "+unixSockets(set.Level.ABI, short(p.Sockets)))
	how, _ := sandbox.Containment()
	lines = append(lines, "  leftover processes: "+how)
	if set.VerifyOff {
		return append(lines, "  verify gate and commit hooks: outside the sandbox (ralph.verifySandbox=off), with your rights")
	}
	gp, _ := gatePolicy(set, tree, "")
	return append(lines, "  verify gate and commit hooks: in the sandbox, may write "+short(gp.Write)+", and a TMPDIR of their own")
}

// unixSockets says which pathname unix sockets an agent under Landlock abi may
// connect to, named the ones ralph.sandboxSockets names (the seccomp filter's rule
// below ABI 9: no unix socket at all, unless one is named, and then any).
func unixSockets(abi int, named string) string {
	switch {
	case abi >= 9 && named != "":
		return "those in its writable paths, and " + named
	case abi >= 9:
		return "those in its writable paths"
	case named != "":
		return "any (ralph.sandboxSockets names " + named + ", and below Landlock ABI 9 nothing tells one socket from another)"
	}
	return "none (socket pairs only; Landlock ABI 9, Linux 7.1, allows those in its writable paths)"
}

// agentFiles are the files outside the working tree the agent writes: the learnings
// file, and the tracked file when its kind keeps it outside the working tree.
func agentFiles(src *source.Source, learnings string) []string {
	files := []string{learnings}
	if src != nil && src.IsOutside() {
		files = append(files, src.TasksPath)
	}
	return files
}

func orNone(s string) string {
	if s == "" {
		return "(none of the hidden paths exists)"
	}
	return s
}
