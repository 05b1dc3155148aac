// Package sandbox holds the agent's sandbox: the policy git-ralph computes for an
// attempt (what the agent may write, what it may not read, which TCP ports it may
// reach), Start, which starts an agent under it, what the running system supports,
// and the process settings that keep a same-user agent away from git-ralph itself.
//
// Start restricts a thread of git-ralph's own, locked to a goroutine: it drops every
// capability (the bounding set too), sets no_new_privs and a seccomp filter,
// restricts itself with a Landlock ruleset built with go-landlock (one domain: file
// system rights, the signal and abstract-socket scopes, and TCP connect only when
// ports are named), starts the agent, which inherits all of it for good, and dies;
// the agent is held stopped (ptrace) until it has (start_linux.go says why). Where
// that cannot be done, the launcher does the same: git-ralph re-executed
// (/proc/self/exe, the hidden command "__sandbox") restricts its thread and execve's
// the agent. git-ralph itself is never restricted. Landlock rules are allow lists on
// file hierarchies that a subdirectory cannot take back, so reading "everything but
// the secrets" is granted per entry of each directory on the way to a hidden path
// (Policy.Hide).
//
// Elsewhere than Linux nothing here restricts anything: Probe says why, and Start and
// the launcher refuse to run.
//
// It is a leaf: it imports nothing of this module, runs no git and prints nothing
// but the launcher's own failure (to the status pipe its parent reads).
package sandbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Mode is what the user asked for: --sandbox, ralph.sandbox.
type Mode string

// The modes.
const (
	Auto Mode = "auto" // sandbox when the system can; say so either way
	On   Mode = "on"   // sandbox, or refuse to start
	Off  Mode = "off"  // never sandbox
)

// ParseMode reads a mode; "" is Auto.
func ParseMode(s string) (Mode, error) {
	switch m := Mode(strings.ToLower(strings.TrimSpace(s))); m {
	case "":
		return Auto, nil
	case Auto, On, Off:
		return m, nil
	}
	return "", fmt.Errorf("sandbox mode %q: want auto, on or off", s)
}

// MinABI is the oldest Landlock ABI git-ralph sandboxes with: ABI 3 (Linux 6.2). ABI 1
// refuses every rename or link between directories (every build tool and package
// manager does that), and before ABI 3 truncate(2) is not a right Landlock can take
// away, so an agent could empty any file of the user's.
const MinABI = 3

// maxABI is the newest ABI whose rights git-ralph asks for: ABI 9 adds connecting to
// pathname unix sockets (the user's ssh-agent, systemd and D-Bus, docker.sock). Newer
// kernels are used at this level.
const maxABI = 9

// Support is what the running system offers.
type Support struct {
	ABI int    // the kernel's Landlock ABI; 0 when it has none
	Why string // when ABI < MinABI: why there is no sandbox here
}

// Supported is the Support of a kernel with Landlock ABI abi (0: none).
func Supported(abi int) Support {
	switch {
	case abi <= 0:
		return Support{Why: "no Landlock in this kernel"}
	case abi < MinABI:
		return Support{ABI: abi, Why: fmt.Sprintf("Landlock ABI %d in this kernel; git-ralph needs ABI %d, Linux 6.2", abi, MinABI)}
	}
	return Support{ABI: abi}
}

// Usable reports whether git-ralph can sandbox with s.
func (s Support) Usable() bool { return s.ABI >= MinABI }

// Level is the sandbox in force for a run, as start, status, the report and the run
// record say it.
type Level struct {
	ABI int    // the Landlock ABI the agent is restricted with; 0 when it is not
	Why string // when ABI is 0: why not ("off", or the Support's reason)
	// InPlace: the run works in the checkout that holds the git directory, which
	// Landlock cannot take out of the writable working tree, and it stays there (set by
	// the loop): Stays says why it cannot move.
	InPlace bool
	Stays   string
	// Moved: the run works in the checkout that holds the git directory, and the git
	// directory moves out of the working tree while the run works, read-only to the
	// agent (set by the loop; internal/gitdir).
	Moved bool
	// Required: the user asked for the sandbox (--sandbox=on), which refuses a run whose
	// git directory cannot be made read-only.
	Required bool
	// GitWritable: another writable path (ralph.sandboxWritable) holds the git
	// directory (set by the loop).
	GitWritable bool
	// Ports: ralph.sandboxNetwork named TCP ports, and the ABI can hold the agent to them.
	Ports bool
	// PortsIgnored: ralph.sandboxNetwork named ports the ABI cannot enforce (auto below ABI 4).
	PortsIgnored bool
}

// Resolve decides the level of a run from the mode and what the system supports. On
// refuses (an *UnavailableError) where the system cannot sandbox; ports asks for
// ralph.sandboxNetwork, which On also refuses below ABI 4.
func Resolve(m Mode, s Support, ports bool) (Level, error) {
	switch {
	case m == Off:
		return Level{Why: "off"}, nil
	case !s.Usable():
		if m == On {
			return Level{}, &UnavailableError{Why: s.Why}
		}
		return Level{Why: s.Why}, nil
	case ports && s.ABI < 4:
		if m == On {
			return Level{}, &UnavailableError{Why: fmt.Sprintf("ralph.sandboxNetwork needs Landlock ABI 4 (Linux 6.7); this kernel has ABI %d", s.ABI)}
		}
		return Level{ABI: min(s.ABI, maxABI), PortsIgnored: true, Required: m == On}, nil
	}
	return Level{ABI: min(s.ABI, maxABI), Ports: ports, Required: m == On}, nil
}

// On reports whether the agent runs in the sandbox.
func (l Level) On() bool { return l.ABI > 0 }

// String is the level in one line, e.g. "landlock ABI 7, git directory read-only".
func (l Level) String() string {
	if !l.On() {
		why := l.Why
		if why == "off" {
			return "off; changes are detected and undone, not prevented"
		}
		return "unavailable (" + why + "); changes are detected and undone, not prevented"
	}
	s := "landlock ABI " + strconv.Itoa(l.ABI)
	switch {
	case l.Moved:
		s += ", git directory read-only (moved out of the working tree while the run works)"
	case l.InPlace:
		s += ", git directory writable (in place"
		if l.Stays != "" {
			s += ", " + l.Stays
		}
		s += ": checked after each attempt; --worktree makes it read-only)"
	case l.GitWritable:
		s += ", git directory writable (ralph.sandboxWritable holds it: checked after each attempt)"
	default:
		s += ", git directory read-only"
	}
	var lost []string
	if l.ABI < 6 {
		lost = append(lost, "signals to git-ralph (ABI 6, Linux 6.12)")
	}
	if l.PortsIgnored {
		lost = append(lost, "ralph.sandboxNetwork (ABI 4, Linux 6.7)")
	}
	if len(lost) > 0 {
		s += "; not blocked: " + strings.Join(lost, ", ")
	}
	return s
}

// UnavailableError is --sandbox=on where the system cannot sandbox.
type UnavailableError struct{ Why string }

func (e *UnavailableError) Error() string { return "cannot sandbox the agent: " + e.Why }

// Policy is what one attempt's agent may do, beyond reading what Hide leaves.
type Policy struct {
	// ABI is the Landlock ABI whose rights are handled (Level.ABI).
	ABI int `json:"abi"`
	// Write lists the files and directories the agent may change, with everything
	// beneath them. Each must exist when the launcher runs.
	Write []string `json:"write"`
	// Hide lists the paths the agent may not read; everything else is readable and
	// executable. A hidden directory's entries can still be listed (the right to list
	// a directory granted on the way to it covers it too), their contents not. Missing
	// paths are left out.
	Hide []string `json:"hide,omitempty"`
	// Reveal lists paths beneath a hidden one that the agent may read all the same
	// (the toolchains and settings in a hidden home directory); a path of Hide beneath
	// one of them is hidden again. Missing paths are left out.
	Reveal []string `json:"reveal,omitempty"`
	// Dev lists device files and directories of Write on which the agent may also use
	// ioctl (a pseudo-terminal: /dev/ptmx, /dev/pts); ABI 5 and later.
	Dev []string `json:"dev,omitempty"`
	// PTY: /dev/ptmx and /dev/pts (in Write and Dev) are a devpts instance of the
	// agent's own, mounted by the launcher in namespaces of its own (Terminals says
	// whether it can be), so the agent reaches no terminal it did not make.
	PTY bool `json:"pty,omitempty"`
	// Ports, when not empty, are the only TCP ports the agent may connect to (ABI 4).
	Ports []uint16 `json:"ports,omitempty"`
	// Sockets are the unix sockets outside Write the agent may connect to
	// (ralph.sandboxSockets: a socket, or a directory for every socket beneath it).
	// From ABI 9 Landlock allows those and no other; below it, where nothing can tell
	// one socket's path from another's, naming any lets the agent make unix sockets
	// again, and so reach every one (the seccomp filter refuses socket(AF_UNIX)
	// otherwise).
	Sockets []string `json:"sockets,omitempty"`
	// Shared are directories that the agents of other runs may write (every driver's
	// state, every build cache, the repository's git directory): a link found in one
	// of them on the way to a Write path, as in a Write directory, may be an agent's
	// and is not followed (addWriteRules).
	Shared []string `json:"shared,omitempty"`
	// Read, when set, are the grants of Hide computed once for the run (ReadGrants):
	// the launcher uses them while they are Current, and walks the file system again
	// when a hidden path has appeared since.
	Read *Grants `json:"read,omitempty"`
	// Env are variables the agent's environment gets (CacheEnv: its caches of its
	// own); the launcher is started with them already set.
	Env []string `json:"-"`
	// MaxProcs: the launcher's environment has GOMAXPROCS=1 that the agent's has not
	// (a Go program starts sooner with one processor, and the launcher needs no more);
	// the launcher takes it out before the agent starts.
	MaxProcs bool `json:"maxProcs,omitempty"`
	// NotifyFD, when not 0, is the launcher's descriptor of a unix socket on which it
	// sends git-ralph the seccomp filter's listener (SCM_RIGHTS) before the agent
	// starts: git-ralph's supervisor then decides the agent's chmod and utime, as for a
	// direct start (startLauncher sets it).
	NotifyFD int `json:"notifyFD,omitempty"`
}

// Clone returns a copy of p that shares no slice with it.
func (p *Policy) Clone() *Policy {
	if p == nil {
		return nil
	}
	c := *p
	c.Write, c.Hide, c.Dev, c.Ports = slices.Clone(p.Write), slices.Clone(p.Hide), slices.Clone(p.Dev), slices.Clone(p.Ports)
	c.Shared, c.Sockets, c.Reveal, c.Env = slices.Clone(p.Shared), slices.Clone(p.Sockets), slices.Clone(p.Reveal), slices.Clone(p.Env)
	if p.Read != nil {
		r := *p.Read
		r.Dirs, r.Files, r.ListOnly = slices.Clone(r.Dirs), slices.Clone(r.Files), slices.Clone(r.ListOnly)
		r.Hidden, r.Targets = slices.Clone(r.Hidden), slices.Clone(r.Targets)
		r.Revealed, r.RevealTargets = slices.Clone(r.Revealed), slices.Clone(r.RevealTargets)
		c.Read = &r
	}
	return &c
}

// AddWrite adds paths to Write, once each.
func (p *Policy) AddWrite(paths ...string) {
	for _, q := range paths {
		if q = filepath.Clean(q); q != "." && !slices.Contains(p.Write, q) {
			p.Write = append(p.Write, q)
		}
	}
}

// Command is the launcher's command word: git-ralph run as "git-ralph __sandbox
// FD POLICY PATH ARGV..." is the launcher.
const Command = "__sandbox"

// Self is the executable re-run as the launcher: this very binary, even if the file
// was replaced or removed since it started.
const Self = "/proc/self/exe"

// maxPolicyArg is the longest policy argument LauncherArgs makes with the run's read
// grants in it: a quarter of what execve takes in one argument (MAX_ARG_STRLEN, 128
// KiB), and of what it takes in all with the environment under the smallest stack
// limit; a home's grants are a few KiB.
const maxPolicyArg = 32 << 10

// LauncherArgs is the launcher's argv (Args[0] included, "git-ralph", the name a test
// binary standing in for git-ralph dispatches on) that runs argv, found at path, under
// p, reporting a failure before the agent starts on file descriptor fd.
func LauncherArgs(p *Policy, fd int, path string, argv []string) ([]string, error) {
	b, err := json.Marshal(p)
	if err != nil {
		return nil, err
	}
	if p.Read != nil && (len(b) > maxPolicyArg || !p.Read.utf8()) {
		// The run's grants are too many for one argument (the kernel takes 128 KiB at
		// most, arguments and environment together), or name a path JSON cannot carry (not UTF-8: it would arrive mangled,
		// and be left out as missing): the launcher works them out itself.
		q := *p
		q.Read = nil
		if b, err = json.Marshal(&q); err != nil {
			return nil, err
		}
	}
	return append([]string{"git-ralph", Command, strconv.Itoa(fd), string(b), path}, argv...), nil
}

// utf8 reports whether every path g names is valid UTF-8, as JSON carries it.
func (g *Grants) utf8() bool {
	for _, list := range [][]string{g.Dirs, g.Files, g.ListOnly, g.Hidden, g.Targets, g.Revealed, g.RevealTargets} {
		for _, p := range list {
			if !utf8.ValidString(p) {
				return false
			}
		}
	}
	return true
}

// LauncherEnv is the launcher's environment for an agent whose environment is env,
// and sets p.MaxProcs when it adds GOMAXPROCS=1 (env does not set it).
func LauncherEnv(p *Policy, env []string) []string {
	for _, kv := range env {
		if strings.HasPrefix(kv, "GOMAXPROCS=") {
			p.MaxProcs = false
			return env
		}
	}
	p.MaxProcs = true
	return append(slices.Clone(env), "GOMAXPROCS=1")
}

// agentEnv is the agent's environment from the launcher's, env: without the
// GOMAXPROCS=1 LauncherEnv added.
func agentEnv(p Policy, env []string) []string {
	if !p.MaxProcs {
		return env
	}
	return slices.DeleteFunc(slices.Clone(env), func(kv string) bool { return kv == "GOMAXPROCS=1" })
}

// parseArgs reads what LauncherArgs wrote, after the command word.
func parseArgs(args []string) (fd int, p Policy, path string, argv []string, err error) {
	if len(args) < 4 {
		return 0, p, "", nil, errors.New("usage: git-ralph " + Command + " FD POLICY PATH ARGV...")
	}
	if fd, err = strconv.Atoi(args[0]); err != nil || fd < 3 {
		return 0, p, "", nil, fmt.Errorf("status descriptor %q", args[0])
	}
	if err = json.Unmarshal([]byte(args[1]), &p); err != nil {
		return fd, p, "", nil, fmt.Errorf("policy: %w", err)
	}
	return fd, p, args[2], args[3:], nil
}

// Settings are a run's sandbox as the CLI resolved it once: the level in force and the
// user's additions to every policy. The zero value (no level decided) sandboxes
// nothing and says nothing: the loop's own tests run that way.
type Settings struct {
	Level    Level
	Writable []string // ralph.sandboxWritable: existing absolute paths
	Shared   []string // what other runs' agents may write: Policy.Shared (every driver's state)
	Hide     []string // ralph.sandboxHide: absolute paths
	Readable []string // ralph.sandboxReadable: absolute paths in the home directory to reveal
	Ports    []uint16 // ralph.sandboxNetwork
	Sockets  []string // ralph.sandboxSockets: existing absolute paths
	// VerifyWritable (ralph.verifyWritable): what the verify gate and the commit hooks
	// may write besides what the agent may (a database's socket directory, a
	// service's files): existing absolute paths.
	VerifyWritable []string
	// VerifyOff (ralph.verifySandbox=off): the gate and the commit hooks run outside
	// the sandbox, with the user's rights, over what the agent wrote.
	VerifyOff bool
}

// Decided reports whether the CLI resolved s (a level, on or not).
func (s Settings) Decided() bool { return s.Level.On() || s.Level.Why != "" }

// Covers reports whether path is one of dirs or beneath one of them.
func Covers(dirs []string, path string) bool {
	path = filepath.Clean(path)
	for _, d := range dirs {
		d = filepath.Clean(d)
		if path == d || strings.HasPrefix(path, strings.TrimSuffix(d, "/")+"/") {
			return true
		}
	}
	return false
}

// TerminalsNote is what the level says after p's terminal devices: whether the
// terminals under /dev/pts are only the agent's own.
func TerminalsNote(p *Policy) string {
	switch {
	case p.PTY:
		return " (a devpts instance of its own: your terminals are out of its reach)"
	case !slices.Contains(p.Dev, "/dev/pts"):
		return ""
	case Terminals() != "":
		return " (your other terminals too: no devpts of its own here, " + Terminals() + ")"
	}
	return " (your other terminals too: ralph.sandboxWritable names /dev/pts)"
}
