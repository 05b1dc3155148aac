package sandbox

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"github.com/landlock-lsm/go-landlock/landlock"
	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

// Probe asks the kernel which Landlock ABI it offers.
func Probe() Support {
	v, err := ll.LandlockGetABIVersion()
	switch {
	case errors.Is(err, syscall.ENOSYS):
		return Support{Why: "no Landlock in this kernel"}
	case errors.Is(err, syscall.EOPNOTSUPP):
		return Support{Why: "Landlock is turned off in this kernel (its lsm= boot parameter)"}
	case err != nil:
		return Support{Why: "Landlock: " + err.Error()}
	}
	return Supported(v)
}

// configs are go-landlock's full configurations of ABI 1 to maxABI.
var configs = []landlock.Config{landlock.V1, landlock.V2, landlock.V3, landlock.V4, landlock.V5, landlock.V6, landlock.V7, landlock.V8, landlock.V9}

// Main is the launcher: "git-ralph __sandbox FD POLICY PATH ARGV..." (args after the
// command word). It restricts its own thread and execve's the agent from it; it returns
// only when that failed, after writing why to file descriptor FD, which the parent
// reads to tell a launch that failed from an agent that started (the descriptor is
// closed on exec, so a started agent leaves it empty).
func Main(args []string) int {
	runtime.LockOSThread() // never unlocked: the restrictions are this thread's, and the exec is its
	if len(args) == 1 && args[0] == terminalsCommand {
		return terminalsMain()
	}
	fd, p, path, argv, err := parseArgs(args)
	if fd >= 3 {
		syscall.CloseOnExec(fd)
	}
	if p.NotifyFD >= 3 {
		syscall.CloseOnExec(p.NotifyFD)
	}
	if err == nil {
		err = launch(p, path, argv)
	}
	msg := "sandbox: " + err.Error()
	if fd < 3 {
		fmt.Fprintln(os.Stderr, "git-ralph: "+msg)
		return 127
	}
	f := os.NewFile(uintptr(fd), "status")
	_, _ = f.WriteString(msg)
	return 127
}

// launch applies p to the calling thread and execs path.
func launch(p Policy, path string, argv []string) error {
	if p.PTY {
		if err := mountTerminals(); err != nil {
			return err
		}
	}
	rs, flags, err := ruleset(p)
	if err != nil {
		return err
	}
	defer unix.Close(rs)
	o := filterOptionsOf(p)
	o.Notify = p.NotifyFD >= 3
	listener, err := restrictThread(rs, flags, o)
	if err != nil {
		return err
	}
	if listener >= 0 {
		// To git-ralph, which supervises; the launcher keeps none (the agent must not
		// answer its own calls).
		err := unix.Sendmsg(p.NotifyFD, []byte{0}, unix.UnixRights(listener), nil, 0)
		unix.Close(listener)
		unix.Close(p.NotifyFD)
		if err != nil {
			return fmt.Errorf("send the filter's listener: %w", err)
		}
	}
	err = syscall.Exec(path, argv, agentEnv(p, os.Environ()))
	return fmt.Errorf("exec %s: %w", path, err)
}

// ruleset is p as a Landlock ruleset, not yet in force: its descriptor (close-on-exec,
// for the caller to close) and the flags to restrict with.
func ruleset(p Policy) (fd int, flags uint32, err error) {
	fd, flags, _, err = rulesetWrites(p)
	return fd, flags, err
}

// rulesetWrites is ruleset, with the real path of each of p.Write, in order: what the
// rules were made for (no link on the way, or the user's resolved).
func rulesetWrites(p Policy) (fd int, flags uint32, writes []string, err error) {
	if p.ABI < MinABI {
		return -1, 0, nil, fmt.Errorf("Landlock ABI %d is below %d", p.ABI, MinABI)
	}
	cfg := config(p)
	rs, flags, err := cfg.NewRulesetFD(netRules(p)...)
	if err != nil {
		return -1, 0, nil, err
	}
	if rs < 0 {
		return -1, 0, nil, errors.New("the kernel has no Landlock")
	}
	if writes, err = addWriteRules(rs, uint64(cfg.HandledAccessFS), p); err != nil {
		unix.Close(rs)
		return -1, 0, nil, err
	}
	g := p.Read
	if !g.Current(p.Hide, p.Reveal) {
		g = ReadGrants(p.Hide, p.Reveal)
	}
	if err := addReadGrants(rs, uint64(cfg.HandledAccessFS), g); err != nil {
		unix.Close(rs)
		return -1, 0, nil, err
	}
	if err := addSocketRules(rs, uint64(cfg.HandledAccessFS), p); err != nil {
		unix.Close(rs)
		return -1, 0, nil, err
	}
	return rs, flags, writes, nil
}

// restrictThread puts the calling thread, for good, where the agent is to run: no
// capability, no_new_privs, the seccomp filter of o (its listener returned with
// o.Notify, else -1), and the Landlock domain of the ruleset rs. The caller's goroutine must be locked to the thread and never unlock it: the
// thread must die with its goroutine (or become the agent by execve).
func restrictThread(rs int, flags uint32, o filterOptions) (listener int, err error) {
	if err := dropCapabilities(); err != nil {
		return -1, err
	}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return -1, fmt.Errorf("prctl(PR_SET_NO_NEW_PRIVS): %w", err)
	}
	if listener, err = installFilter(o); err != nil {
		return -1, err
	}
	if err := ll.LandlockRestrictSelf(rs, flags); err != nil {
		if listener >= 0 {
			unix.Close(listener)
		}
		return -1, fmt.Errorf("landlock_restrict_self: %w", err)
	}
	return listener, nil
}

// config is the ruleset's: the file system rights of p.ABI, the signal and abstract
// socket scopes from ABI 6, and TCP connect only when ports are named (handling it
// with no port allowed would cut the agent off from its model).
func config(p Policy) landlock.Config {
	full := configs[min(p.ABI, len(configs))-1]
	c := landlock.Config{HandledAccessFS: full.HandledAccessFS, Scoped: full.Scoped}
	if len(p.Ports) > 0 && p.ABI >= 4 {
		c.HandledAccessNet = ll.AccessNetConnectTCP
	}
	return c
}

// netRules are the Landlock rules of p made with go-landlock: TCP connect to Ports.
// The file system's are git-ralph's own (addWriteRules, addReadGrants), since
// go-landlock opens a rule's path following links.
func netRules(p Policy) []landlock.Rule {
	var rs []landlock.Rule
	if len(p.Ports) > 0 && p.ABI >= 4 {
		for _, port := range p.Ports {
			rs = append(rs, landlock.ConnectTCP(port))
		}
	}
	return rs
}

// addWriteRules adds p.Write to the ruleset rs, within the handled rights: full rights
// on a directory, a file's on a file, ioctl on p.Dev. A link in a directory an agent
// may write (p.Write, p.Shared) refuses the start; the real path is opened with no link
// in it. See docs/SANDBOX.md, "How the agent is started".
func addWriteRules(rs int, handled uint64, p Policy) (reals []string, err error) {
	const (
		file = uint64(ll.AccessFSExecute | ll.AccessFSWriteFile | ll.AccessFSTruncate | ll.AccessFSReadFile)
		dir  = uint64(ll.AccessFSExecute|ll.AccessFSReadFile|ll.AccessFSReadDir|
			ll.AccessFSWriteFile|ll.AccessFSRemoveDir|ll.AccessFSRemoveFile|ll.AccessFSMakeChar|
			ll.AccessFSMakeDir|ll.AccessFSMakeReg|ll.AccessFSMakeSock|ll.AccessFSMakeFifo|
			ll.AccessFSMakeBlock|ll.AccessFSMakeSym|ll.AccessFSTruncate) | uint64(ll.AccessFSRefer)
	)
	agentMay := agentWritable(append(slices.Clone(p.Write), p.Shared...))
	for _, w := range p.Write {
		fd, real, err := openWrite(w, agentMay)
		if err != nil {
			return nil, err
		}
		reals = append(reals, real)
		var st unix.Stat_t
		err = unix.Fstat(fd, &st)
		if err == nil {
			rights := file
			if st.Mode&unix.S_IFMT == unix.S_IFDIR {
				rights = dir
			}
			if p.ABI >= 5 && slices.Contains(p.Dev, w) {
				rights |= uint64(ll.AccessFSIoctlDev)
			}
			if p.ABI >= 9 {
				rights |= uint64(ll.AccessFSResolveUnix)
			}
			attr := ll.PathBeneathAttr{ParentFd: fd, AllowedAccess: rights & handled}
			if err = ll.LandlockAddPathBeneathRule(rs, &attr, 0); err != nil {
				err = fmt.Errorf("landlock_add_rule: %w", err)
			}
		}
		unix.Close(fd)
		if err != nil {
			return nil, fmt.Errorf("writable path %s: %w", w, err)
		}
	}
	return reals, nil
}

// openWrite opens the writable path w (O_PATH) with no link in the way, and returns
// its real path: at once where it has none (the usual start: one call), else by its
// real path (realWrite), which a link in a directory an agent may write (agentMay)
// refuses.
func openWrite(w string, agentMay func(dir string) bool) (fd int, real string, err error) {
	how := &unix.OpenHow{Flags: unix.O_PATH | unix.O_CLOEXEC, Resolve: unix.RESOLVE_NO_SYMLINKS}
	if filepath.IsAbs(w) {
		if fd, err := unix.Openat2(unix.AT_FDCWD, filepath.Clean(w), how); err == nil {
			return fd, filepath.Clean(w), nil
		}
	}
	if real, err = realWrite(w, agentMay); err != nil {
		return -1, "", fmt.Errorf("writable path %s: %w", w, err)
	}
	if fd, err = unix.Openat2(unix.AT_FDCWD, real, how); err != nil {
		return -1, "", fmt.Errorf("writable path %s: %w", w, &os.PathError{Op: "open", Path: real, Err: err})
	}
	return fd, real, nil
}

// agentWritable reports whether an agent may write the directory dir (a real path):
// whether it is, or lies beneath, one of dirs, by name (as given, and with their
// links resolved) or by identity (device and inode: the same directory mounted under
// another name).
func agentWritable(dirs []string) func(dir string) bool {
	var names []string
	var ids map[[2]uint64]bool
	// Worked out when a link is first met on the way to a writable path, which is
	// seldom: most starts meet none, and resolve no directory for it.
	resolve := sync.OnceFunc(func() {
		names = slices.Clone(dirs)
		ids = map[[2]uint64]bool{}
		for _, d := range dirs {
			if r, err := filepath.EvalSymlinks(d); err == nil {
				names = append(names, r)
			}
			var st unix.Stat_t
			if unix.Stat(d, &st) == nil && st.Mode&unix.S_IFMT == unix.S_IFDIR {
				ids[[2]uint64{uint64(st.Dev), st.Ino}] = true
			}
		}
	})
	return func(dir string) bool {
		resolve()
		if Covers(names, dir) {
			return true
		}
		for d := dir; ; d = filepath.Dir(d) {
			var st unix.Stat_t
			if unix.Lstat(d, &st) == nil && ids[[2]uint64{uint64(st.Dev), st.Ino}] {
				return true
			}
			if d == "/" {
				return false
			}
		}
	}
}

// realWrite is path with its links resolved one component at a time; a link in a
// directory the agent may write (agentMay) is refused (plantedLinkError).
func realWrite(path string, agentMay func(dir string) bool) (string, error) {
	if !filepath.IsAbs(path) {
		return "", errors.New("not an absolute path")
	}
	rest := strings.Split(filepath.Clean(path), "/")[1:]
	cur := "/"
	for links := 0; len(rest) > 0; {
		name := rest[0]
		rest = rest[1:]
		switch name {
		case "", ".":
			continue
		case "..":
			cur = filepath.Dir(cur)
			continue
		}
		next := filepath.Join(cur, name)
		fi, err := os.Lstat(next)
		if err != nil {
			return "", err
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			cur = next
			continue
		}
		if agentMay(cur) {
			return "", &plantedLinkError{Link: next, Dir: cur}
		}
		if links++; links > 40 {
			return "", &os.PathError{Op: "resolve", Path: path, Err: unix.ELOOP}
		}
		target, err := os.Readlink(next)
		if err != nil {
			return "", err
		}
		if filepath.IsAbs(target) {
			cur = "/"
		}
		rest = append(strings.Split(target, "/"), rest...)
	}
	return cur, nil
}

// plantedLinkError is a writable path reached through a symbolic link in a directory
// the agent may write: it could be the agent's, and lead anywhere.
type plantedLinkError struct {
	Link, Dir string
}

func (e *plantedLinkError) Error() string {
	return fmt.Sprintf("reached through the symbolic link %s, in %s, which an agent may write (remove the link if it is not yours; if it is, name the real path instead)", e.Link, e.Dir)
}

// addReadGrants adds g to the ruleset rs, within the handled rights: listing on
// ListOnly, reading and executing beneath Dirs and of Files. Each path is opened with
// RESOLVE_NO_SYMLINKS, so a link put in the way since gets no rule; one missing or
// reached through a link is left out. A directory that is a file now is granted as one.
func addReadGrants(rs int, handled uint64, g *Grants) error {
	const (
		list = uint64(ll.AccessFSReadDir)
		file = uint64(ll.AccessFSExecute | ll.AccessFSReadFile)
		dir  = file | list
	)
	add := func(path string, rights uint64) error {
		fd, err := unix.Openat2(unix.AT_FDCWD, path, &unix.OpenHow{Flags: unix.O_PATH | unix.O_CLOEXEC, Resolve: unix.RESOLVE_NO_SYMLINKS})
		if err != nil {
			return nil // missing, or through a link: not granted
		}
		defer unix.Close(fd)
		for {
			attr := ll.PathBeneathAttr{ParentFd: fd, AllowedAccess: rights & handled}
			if attr.AllowedAccess == 0 {
				return nil
			}
			err := ll.LandlockAddPathBeneathRule(rs, &attr, 0)
			if errors.Is(err, unix.EINVAL) && rights&list != 0 {
				// Not a directory (now): the rights of a file, or none where only
				// listing was granted.
				rights &= file
				continue
			}
			if err != nil {
				return fmt.Errorf("landlock_add_rule %s: %w", path, err)
			}
			return nil
		}
	}
	for _, p := range g.ListOnly {
		if err := add(p, list); err != nil {
			return err
		}
	}
	for _, p := range g.Dirs {
		if err := add(p, dir); err != nil {
			return err
		}
	}
	for _, p := range g.Files {
		if err := add(p, file); err != nil {
			return err
		}
	}
	return nil
}

// addSocketRules grants connecting to the unix sockets p.Sockets names, from ABI 9
// (below it Landlock has no such right: the seccomp filter decides, filterOptionsOf).
// Each is opened without following a link, as the read grants are; a missing one is
// left out.
func addSocketRules(rs int, handled uint64, p Policy) error {
	rights := uint64(ll.AccessFSResolveUnix) & handled
	if p.ABI < 9 || rights == 0 {
		return nil
	}
	for _, s := range p.Sockets {
		fd, err := unix.Openat2(unix.AT_FDCWD, s, &unix.OpenHow{Flags: unix.O_PATH | unix.O_CLOEXEC, Resolve: unix.RESOLVE_NO_SYMLINKS})
		if err != nil {
			continue
		}
		attr := ll.PathBeneathAttr{ParentFd: fd, AllowedAccess: rights}
		err = ll.LandlockAddPathBeneathRule(rs, &attr, 0)
		unix.Close(fd)
		if err != nil {
			return fmt.Errorf("socket %s: landlock_add_rule: %w", s, err)
		}
	}
	return nil
}

// capLastCap is the kernel's highest capability number, read once (63 where it cannot
// be read: dropping one the kernel does not have fails with EINVAL, which is ignored).
var capLastCap = sync.OnceValue(func() int {
	if b, err := os.ReadFile("/proc/sys/kernel/cap_last_cap"); err == nil {
		if n, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil {
			return n
		}
	}
	return 63
})

// dropCapabilities empties the calling thread's capability sets, the bounding set
// (where it may: root can) and the ambient set first. With no_new_privs set after it,
// nothing the agent executes gets one back: a root agent is as powerless over
// git-ralph (its /proc environ, ptrace) as any other.
func dropCapabilities() error {
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	// Without CAP_SETPCAP every drop from the bounding set is refused (EPERM): a
	// thread that has none (the usual user) skips the calls.
	mayDrop := unix.Capget(&hdr, &data[0]) != nil || data[0].Effective&(1<<unix.CAP_SETPCAP) != 0
	for c := 0; mayDrop && c <= capLastCap(); c++ {
		if err := unix.Prctl(unix.PR_CAPBSET_DROP, uintptr(c), 0, 0, 0); err != nil && !errors.Is(err, unix.EPERM) && !errors.Is(err, unix.EINVAL) {
			return fmt.Errorf("prctl(PR_CAPBSET_DROP, %d): %w", c, err)
		}
	}
	_ = unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)
	data = [2]unix.CapUserData{}
	if err := unix.Capset(&hdr, &data[0]); err != nil {
		return fmt.Errorf("capset: %w", err)
	}
	if err := unix.Capget(&hdr, &data[0]); err != nil {
		return fmt.Errorf("capget: %w", err)
	}
	for _, d := range data {
		if d.Effective|d.Permitted|d.Inheritable != 0 {
			return errors.New("capabilities left after dropping them")
		}
	}
	return nil
}
