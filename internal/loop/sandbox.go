package loop

import (
	"fmt"
	"os"
	"path/filepath"
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
// state: the working tree, the devices, the agents' own caches (sandbox.AgentCache)
// and ralph.sandboxWritable.
func writable(set sandbox.Settings, tree string) []string {
	w := []string{tree}
	w = append(w, sandbox.Devices...)
	if c := sandbox.AgentCache(os.Environ()); c != "" {
		w = append(w, c)
	}
	return append(w, set.Writable...)
}

// sandboxPolicy is the policy of the agent working in tree under set, nil when the run is
// not sandboxed; agent.Run adds the attempt's directory and the driver's state. Shared are
// what other runs' agents may write (set.Shared, the agents' caches, commonDir). files (the
// learnings, an issue's tasks) are writable too: the prompt asks the agent to write them.
// With create, the agents' caches are made where missing. docs/SANDBOX.md.
func sandboxPolicy(set sandbox.Settings, tree, commonDir string, files []string, create bool) (*sandbox.Policy, error) {
	if !set.Level.On() {
		return nil, nil
	}
	p := &sandbox.Policy{ABI: set.Level.ABI, Ports: set.Ports, Sockets: set.Sockets}
	cache := sandbox.AgentCache(os.Environ())
	p.Shared = slices.Clone(set.Shared)
	if cache != "" {
		p.Shared = append(p.Shared, cache)
		p.Env = append(sandbox.CacheEnv(cache), sandbox.GoProxyEnv(os.Environ())...)
	}
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
	// The home directory is hidden but for the toolchains and settings, the git
	// directory (a worktree run's, in the home directory) and what the user adds.
	p.Reveal = sandbox.ReadableIn(os.Environ(), set.Readable)
	if commonDir != "" {
		p.Reveal = append(p.Reveal, commonDir)
	}
	if dl := sandbox.UserModuleDownloads(os.Environ()); dl != "" {
		p.Reveal = append(p.Reveal, dl) // the agent's GOPROXY reads it first
	}
	if create && cache != "" {
		if err := sandbox.EnsureDirs(sandbox.CacheDirs(cache)); err != nil {
			return nil, fmt.Errorf("sandbox: create the agents' caches: %w", err)
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
	env := append(os.Environ(), p.Env...)
	own := ""
	if o, ok := drv.(agent.OwnStater); ok {
		// Its CLI's state is a directory of the attempt's (Run makes it): said, not listed.
		if own = o.OwnState(env).Var; own != "" {
			env = append(env, own+"="+ownStatePlaceholder)
		}
	}
	p = agent.PolicyFor(drv, p, env)
	p.Write = slices.DeleteFunc(p.Write, func(w string) bool { return sandbox.Covers([]string{ownStatePlaceholder}, w) })
	home := filepath.Clean(os.Getenv("HOME"))
	inHome := func(s string) bool { return filepath.IsAbs(home) && home != "/" && sandbox.Covers([]string{home}, s) }
	short := func(ps []string) string {
		out := make([]string, len(ps))
		for i, s := range ps {
			if inHome(s) {
				s = "~" + strings.TrimPrefix(s, home)
			}
			out[i] = s
		}
		return strings.Join(out, ", ")
	}
	// Writing a directory includes reading it: a hidden path beneath a writable one is
	// not hidden, and is said so rather than listed as hidden.
	var hidden, exposed, shown, within []string
	reveal := sandbox.Existing(p.Reveal)
	for _, r := range reveal {
		if inHome(r) && !sandbox.Covers(p.Write, r) && !slices.ContainsFunc(reveal, func(o string) bool { return o != r && sandbox.Covers([]string{o}, r) }) && !slices.Contains(shown, r) {
			shown = append(shown, r)
		}
	}
	for _, h := range sandbox.Existing(p.Hide) {
		switch {
		case h == home:
		case sandbox.Covers(p.Write, h):
			exposed = append(exposed, h)
		case !inHome(h):
			hidden = append(hidden, h)
		case sandbox.Covers(shown, h):
			within = append(within, h)
		}
	}
	tmp := ", and a temporary directory of its own (TMPDIR), removed after the attempt"
	if own != "" {
		tmp = ", a temporary directory of its own (TMPDIR) and its CLI's configuration directory (" + own +
			": a copy of the user's login and settings), both removed after the attempt"
	}
	lines = append(lines, "  writable: "+short(p.Write)+tmp)
	if slices.Contains(p.Hide, home) && sandbox.Covers(p.Write, home) {
		lines = append(lines, "  readable in ~: all of it, being inside a writable path")
	} else if slices.Contains(p.Hide, home) {
		line := "  readable in ~: only " + orNothing(short(shown)) + "; the rest of ~ is hidden (ralph.sandboxReadable adds to it)"
		if len(within) > 0 {
			line += "; hidden in them: " + short(within)
		}
		lines = append(lines, line)
	}
	lines = append(lines, "  readable elsewhere: everything, but not: "+orNone(short(hidden)))
	if len(exposed) > 0 {
		lines = append(lines, "  not hidden, being inside a writable path: "+short(exposed))
	}
	if len(p.Dev) > 0 {
		lines = append(lines, "  terminal devices (ioctl): "+short(p.Dev)+sandbox.TerminalsNote(p))
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

// ownStatePlaceholder stands for the configuration directory of its own that Run makes
// for an attempt's CLI, in the dry run's policy.
const ownStatePlaceholder = "/git-ralph-attempt-state"

func orNothing(s string) string {
	if s == "" {
		return "what it may write"
	}
	return s + " and what it may write"
}

func orNone(s string) string {
	if s == "" {
		return "(none of the hidden paths exists)"
	}
	return s
}
