package sandbox

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// A run's policies, computed from its Settings for the working tree it works in: the
// agent's (AgentPolicy), the verify gate's (GatePolicy), the judge's (JudgePolicy), and
// the dry run's account of them (Describe). Moved here from internal/loop: they are the
// sandbox's set-up, and need nothing of the loop. docs/SANDBOX.md.

// WritableIn is what the agent may write besides its attempt's directory and its own
// state: the working tree, the devices, the agents' own caches (AgentCache) and
// ralph.sandboxWritable.
func (s Settings) WritableIn(tree string) []string {
	w := []string{tree}
	w = append(w, Devices...)
	if c := AgentCache(os.Environ()); c != "" {
		w = append(w, c)
	}
	return append(w, s.Writable...)
}

// AgentPolicy is the policy of the agent working in tree under s, nil when the run is
// not sandboxed; agent.Run adds the attempt's directory and the driver's state. Shared are
// what other runs' agents may write (s.Shared, the agents' caches, commonDir). files (the
// learnings, an issue's tasks) are writable too: the prompt asks the agent to write them.
// With create, the agents' caches are made where missing. docs/SANDBOX.md.
func (s Settings) AgentPolicy(tree, commonDir string, files []string, create bool) (*Policy, error) {
	if !s.Level.On() {
		return nil, nil
	}
	p := &Policy{ABI: s.Level.ABI, Ports: s.Ports, Sockets: s.Sockets}
	cache := AgentCache(os.Environ())
	p.Shared = slices.Clone(s.Shared)
	if cache != "" {
		p.Shared = append(p.Shared, cache)
		p.Env = append(CacheEnv(cache), GoProxyEnv(os.Environ())...)
	}
	if commonDir != "" {
		p.Shared = append(p.Shared, commonDir)
	}
	p.AddWrite(s.WritableIn(tree)...)
	for _, f := range files {
		if f != "" && !Covers(p.Write, f) {
			p.AddWrite(f)
		}
	}
	for _, w := range s.Writable {
		// A device the user names is one the agent needs to drive (a terminal).
		if fi, err := os.Stat(w); err == nil && (fi.Mode()&os.ModeDevice != 0 || w == "/dev/pts") {
			p.Dev = append(p.Dev, w)
		}
	}
	p.Hide = append(HiddenIn(os.Getenv("HOME"), s.Hide), HiddenEnv(os.Getenv)...)
	// The home directory is hidden but for the toolchains and settings, the git
	// directory (a worktree run's, in the home directory) and what the user adds.
	p.Reveal = ReadableIn(os.Environ(), s.Readable)
	if commonDir != "" {
		p.Reveal = append(p.Reveal, commonDir)
	}
	if dl := UserModuleDownloads(os.Environ()); dl != "" {
		p.Reveal = append(p.Reveal, dl) // the agent's GOPROXY reads it first
	}
	if create && cache != "" {
		if err := EnsureDirs(CacheDirs(cache)); err != nil {
			return nil, fmt.Errorf("sandbox: create the agents' caches: %w", err)
		}
	}
	return p, nil
}

// GatePolicy is the policy of the verify gate and the commit hooks of a run working in
// tree under s: the agent's, but none of the files outside the tree the agent is asked
// to write (the learnings, a tracked file kept outside) and none of its CLI's state,
// plus what the user lets the gate alone write (ralph.verifyWritable). Each run of a
// hook adds a TMPDIR of its own.
func (s Settings) GatePolicy(tree, commonDir string) (*Policy, error) {
	p, err := s.AgentPolicy(tree, commonDir, nil, false)
	if p != nil {
		p.AddWrite(s.VerifyWritable...)
	}
	return p, err
}

// JudgePolicy is the judge's sandbox: agent's (a run's AgentPolicy), with nothing
// writable but the devices and what the user made writable (s.Writable) away from ours
// (the working tree and the git directories); the caller adds the judge's temporary
// directory and its CLI's state. nil when agent is.
func (s Settings) JudgePolicy(agent *Policy, ours ...string) *Policy {
	if agent == nil {
		return nil
	}
	p := agent.Clone()
	p.Write = nil
	p.AddWrite(Devices...)
	for _, w := range s.Writable {
		if Covers(ours, w) || slices.ContainsFunc(ours, func(o string) bool { return Covers([]string{w}, o) }) {
			continue
		}
		p.AddWrite(w)
	}
	var dev []string
	for _, d := range p.Dev {
		if Covers(p.Write, d) {
			dev = append(dev, d)
		}
	}
	p.Dev = dev
	return p
}

// OwnStatePlaceholder stands, in the dry run's policy, for the configuration directory
// of its own that agent.Run makes for an attempt's CLI.
const OwnStatePlaceholder = "/git-ralph-attempt-state"

// Describe is the dry run's account of p, the policy an attempt working in tree would
// run under (s, its level resolved for tree; p with its driver's state added, own the
// variable naming its CLI's own state, or ""), one line each: the level, what is
// writable, what is hidden, the network, the gate's.
func (s Settings) Describe(p *Policy, own, tree string) []string {
	if !s.Decided() {
		return nil
	}
	lines := []string{"sandbox: " + s.Level.String()}
	if p == nil {
		return lines
	}
	p.Write = slices.DeleteFunc(p.Write, func(w string) bool { return Covers([]string{OwnStatePlaceholder}, w) })
	home := filepath.Clean(os.Getenv("HOME"))
	inHome := func(s string) bool { return filepath.IsAbs(home) && home != "/" && Covers([]string{home}, s) }
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
	reveal := Existing(p.Reveal)
	for _, r := range reveal {
		if inHome(r) && !Covers(p.Write, r) && !slices.ContainsFunc(reveal, func(o string) bool { return o != r && Covers([]string{o}, r) }) && !slices.Contains(shown, r) {
			shown = append(shown, r)
		}
	}
	for _, h := range Existing(p.Hide) {
		switch {
		case h == home:
		case Covers(p.Write, h):
			exposed = append(exposed, h)
		case !inHome(h):
			hidden = append(hidden, h)
		case Covers(shown, h):
			within = append(within, h)
		}
	}
	tmp := ", and a temporary directory of its own (TMPDIR), removed after the attempt"
	if own != "" {
		tmp = ", a temporary directory of its own (TMPDIR) and its CLI's configuration directory (" + own +
			": a copy of the user's login and settings), both removed after the attempt"
	}
	lines = append(lines, "  writable: "+short(p.Write)+tmp)
	if slices.Contains(p.Hide, home) && Covers(p.Write, home) {
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
		lines = append(lines, "  terminal devices (ioctl): "+short(p.Dev)+TerminalsNote(p))
	}
	if len(p.Ports) > 0 && s.Level.ABI >= 4 {
		ports := make([]string, len(p.Ports))
		for i, n := range p.Ports {
			ports[i] = strconv.Itoa(int(n))
		}
		lines = append(lines, "  network: TCP connections to port "+strings.Join(ports, ", ")+" only")
	} else {
		lines = append(lines, "  network: unrestricted")
	}
	lines = append(lines, "  unix sockets: "+unixSockets(s.Level.ABI, short(p.Sockets)))
	how, _ := Containment()
	lines = append(lines, "  leftover processes: "+how)
	if s.VerifyOff {
		return append(lines, "  verify gate and commit hooks: outside the sandbox (ralph.verifySandbox=off), with your rights")
	}
	gp, _ := s.GatePolicy(tree, "")
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

// WithRefusals is reason with what the sandbox refused (rs) added to its first line
// (what the failure line, status and the report show); the rest of reason (a hook's
// output) follows as it was.
func WithRefusals(reason string, rs []Refusal) string {
	if len(rs) == 0 {
		return reason
	}
	first, rest, multi := strings.Cut(reason, "\n")
	first = strings.TrimSuffix(first, ":")
	if first != "" {
		first += "; "
	}
	first += DescribeAll(rs)
	if multi {
		return first + ":\n" + rest
	}
	return first
}
