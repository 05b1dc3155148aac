package sandbox

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// An attempt's cgroup: where git-ralph may make one below its own, every process of an
// attempt starts in it (CLONE_INTO_CGROUP), and one write to cgroup.kill ends them all
// in the kernel. Elsewhere the /proc walk of KillLeftovers does it alone. Why:
// docs/SANDBOX.md, "What the agent leaves running".

// noCgroup is set by the test binary to play a system without cgroups of its own.
var noCgroup bool

// NoCgroup makes git-ralph play a system where it can make no cgroup: the test
// binary's way to run the /proc walk alone.
func NoCgroup() { noCgroup = true }

var attemptGroup struct {
	sync.Mutex
	cg      *cgroup // the current attempt's, made by the first Contain after the last end
	n       int     // attempts so far: names the next cgroup
	broken  error   // set once making one failed: no more tries
	dirHint string  // where they are made, for Containment
	probed  bool    // a process was started in one: the next are not probed again
}

// cgroup is an attempt's cgroup: its directory and an open descriptor of it.
type cgroup struct {
	dir string
	fd  int
}

// Contain makes cmd (not started yet) start in the current attempt's cgroup, when
// git-ralph is a reaper and may make one; elsewhere it leaves cmd as it is.
func Contain(cmd *exec.Cmd) {
	if !reaper.Load() {
		return
	}
	cg := currentGroup()
	if cg == nil {
		return
	}
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.UseCgroupFD, cmd.SysProcAttr.CgroupFD = true, cg.fd
}

// CanContain reports whether this process may make cgroups below its own (the
// directory of its cgroup, version 2, is writable to it).
func CanContain() bool {
	if noCgroup {
		return false
	}
	dir, err := ownCgroupDir()
	return err == nil && unix.Access(dir, unix.W_OK) == nil
}

// currentGroup is the current attempt's cgroup, made if need be; nil where none can be.
func currentGroup() *cgroup {
	g := &attemptGroup
	g.Lock()
	defer g.Unlock()
	if g.cg != nil || g.broken != nil {
		return g.cg
	}
	if noCgroup {
		g.broken = errors.New("off")
		return nil
	}
	parent, err := ownCgroupDir()
	if err == nil && g.n == 0 {
		sweepGroups(parent)
	}
	if err == nil {
		g.n++
		dir := filepath.Join(parent, fmt.Sprintf("%s%d-%d", groupPrefix(), os.Getpid(), g.n))
		if err = unix.Mkdir(dir, 0o755); err == nil {
			var fd int
			if fd, err = unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0); err == nil {
				if _, err = os.Stat(filepath.Join(dir, "cgroup.kill")); err == nil {
					if !g.probed {
						err = probe(fd)
					}
					if err == nil {
						g.probed = true
						g.cg = &cgroup{dir: dir, fd: fd}
						g.dirHint = parent
						return g.cg
					}
				}
				unix.Close(fd)
			}
			_ = unix.Rmdir(dir)
		}
	}
	g.broken = err
	return nil
}

// groupPrefix names the attempts' cgroups of this process: git-ralph-<pid
// namespace>-, so that a pid in the name is read in the namespace that gave it.
func groupPrefix() string { return ownPrefix() }

// ownPrefix is groupPrefix, worked out once: a process's PID namespace is its own for
// good (setns changes its children's, not its own).
var ownPrefix = sync.OnceValue(func() string {
	return fmt.Sprintf("git-ralph-%d-", pidNamespace())
})

// pidNamespace is the inode of this process's PID namespace, 0 when it cannot be known
// (a /proc that is not of its own namespace: /proc/self is not this process).
func pidNamespace() uint64 {
	if self, err := os.Readlink("/proc/self"); err != nil || self != strconv.Itoa(os.Getpid()) {
		return 0
	}
	var st unix.Stat_t
	if unix.Stat("/proc/self/ns/pid", &st) != nil {
		return 0
	}
	return st.Ino
}

// EndStaleOf ends what the attempts of git-ralph pid, killed with SIGKILL (its pid gone
// in this namespace), left running in the cgroups it made below this process's own:
// every process in them is killed (cgroup.kill: once it returns, none of it runs again),
// and the cgroups removed once empty. A resume calls it with the pid its record names,
// before it checks anything: an agent, or a daemon of its, that outlived the run could
// still write. It returns what it ended, said for the user.
func EndStaleOf(pid int) []string {
	if noCgroup || pid <= 0 || pid == os.Getpid() || unix.Kill(pid, 0) != unix.ESRCH {
		return nil
	}
	parent, err := ownCgroupDir()
	prefix := groupPrefix()
	if err != nil || prefix == "git-ralph-0-" {
		return nil
	}
	ents, err := os.ReadDir(parent)
	if err != nil {
		return nil
	}
	var ended []string
	for _, e := range ents {
		if !e.IsDir() || !strings.HasPrefix(e.Name(), prefix+strconv.Itoa(pid)+"-") {
			continue
		}
		dir := filepath.Join(parent, e.Name())
		fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err != nil {
			continue
		}
		cg := &cgroup{dir: dir, fd: fd}
		if n := cg.procs(); n > 0 && cg.kill() == nil {
			ended = append(ended, fmt.Sprintf("ended %d process(es) that the killed git-ralph (pid %d) had left running in its attempt's cgroup", n, pid))
			// Killed, they run no more; gone a moment later, which the checks after
			// this wait for (at most staleWait: one the kernel holds stays, named).
			for deadline := now().Add(staleWait); now().Before(deadline); time.Sleep(time.Millisecond) {
				if left, err := cg.populated(); err != nil || !left {
					break
				}
				reapChildren()
			}
		}
		cg.remove() // else, once empty, by a later sweep
	}
	return ended
}

// staleWait bounds EndStaleOf's wait for the processes it killed to be gone.
const staleWait = 5 * time.Second

// sweepGroups removes, once per run, the attempts' cgroups in parent that a git-ralph
// of this PID namespace killed with SIGKILL left behind: named groupPrefix()<pid>-<n>,
// their pid gone, and empty (rmdir refuses one that holds a process: the resume of that
// run ends it, EndStaleOf). Where the namespace cannot be known it removes nothing.
func sweepGroups(parent string) {
	prefix := groupPrefix()
	if prefix == "git-ralph-0-" {
		return
	}
	ents, err := os.ReadDir(parent)
	if err != nil {
		return
	}
	for _, e := range ents {
		rest, ok := strings.CutPrefix(e.Name(), prefix)
		if !ok || !e.IsDir() {
			continue
		}
		pidText, _, _ := strings.Cut(rest, "-")
		pid, err := strconv.Atoi(pidText)
		if err != nil || pid <= 0 || pid == os.Getpid() {
			continue
		}
		if unix.Kill(pid, 0) == unix.ESRCH {
			_ = unix.Rmdir(filepath.Join(parent, e.Name()))
		}
	}
}

// probe is probeInto; a test counts its calls.
var probe = probeInto

// probeInto starts true(1) in the cgroup fd names, once per run: a cgroup this process
// may make but not start processes in (its own not delegated to it whole) must not
// stop every agent from starting. Where there is no true, it trusts the mkdir.
func probeInto(fd int) error {
	path, err := exec.LookPath("true")
	if err != nil {
		return nil
	}
	cmd := exec.Command(path)
	cmd.SysProcAttr = &syscall.SysProcAttr{UseCgroupFD: true, CgroupFD: fd}
	return cmd.Run()
}

// takeGroup hands over the current attempt's cgroup (nil if none was made): the next
// Contain makes a new one.
func takeGroup() *cgroup {
	g := &attemptGroup
	g.Lock()
	defer g.Unlock()
	cg := g.cg
	g.cg = nil
	return cg
}

// ownCgroupDir is the directory of this process's cgroup (version 2): where the
// cgroup2 file system is mounted (/proc/self/mountinfo) joined with the path
// /proc/self/cgroup names.
func ownCgroupDir() (string, error) {
	b, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return "", err
	}
	// The mount table is read again only when the cgroup changed: an attempt's start
	// reads a line, not the whole table (an agent cannot move git-ralph: the cgroup
	// file system is not its to write).
	own := &ownGroup
	own.Lock()
	defer own.Unlock()
	if own.dir != "" && bytes.Equal(own.line, b) {
		return own.dir, nil
	}
	dir, err := cgroupDirOf(b)
	if err == nil {
		own.line, own.dir = b, dir
	}
	return dir, err
}

// ownGroup is what ownCgroupDir last found: /proc/self/cgroup as it read it, and the
// directory it named.
var ownGroup struct {
	sync.Mutex
	line []byte
	dir  string
}

// cgroupDirOf is the directory of the cgroup (version 2) that b, this process's
// /proc/self/cgroup, names: joined with where /proc/self/mountinfo has the cgroup2 file
// system mounted.
func cgroupDirOf(b []byte) (string, error) {
	var path string
	found := false
	for _, line := range strings.Split(string(b), "\n") {
		if p, ok := strings.CutPrefix(line, "0::"); ok {
			path, found = p, true
		}
	}
	if !found {
		return "", errors.New("no cgroup version 2")
	}
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return "", err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// id parent major:minor root mountpoint options [optional…] - fstype source super
		pre, post, ok := strings.Cut(sc.Text(), " - ")
		if !ok || !strings.HasPrefix(post, "cgroup2 ") {
			continue
		}
		fields := strings.Fields(pre)
		if len(fields) < 5 {
			continue
		}
		root, mnt := unescapeMount(fields[3]), unescapeMount(fields[4])
		rel, ok := strings.CutPrefix(path, root)
		if root == "/" {
			rel, ok = path, true
		}
		if !ok || (rel != "" && !strings.HasPrefix(rel, "/")) {
			continue
		}
		return filepath.Join(mnt, rel), nil
	}
	return "", errors.New("the cgroup2 file system is not mounted")
}

// unescapeMount undoes mountinfo's octal escapes (\040 for a space).
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// procs is how many processes the cgroup holds.
func (cg *cgroup) procs() int {
	b, err := os.ReadFile(filepath.Join(cg.dir, "cgroup.procs"))
	if err != nil {
		return 0
	}
	return len(bytes.Fields(b))
}

// populated reports whether a process is left in the cgroup (cgroup.events).
func (cg *cgroup) populated() (bool, error) {
	b, err := os.ReadFile(filepath.Join(cg.dir, "cgroup.events"))
	if err != nil {
		return false, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "populated "); ok {
			return v != "0", nil
		}
	}
	return false, errors.New("cgroup.events has no populated line")
}

// kill sends SIGKILL to every process in the cgroup (cgroup.kill: the kernel's, which
// a fork in progress does not escape).
func (cg *cgroup) kill() error {
	return os.WriteFile(filepath.Join(cg.dir, "cgroup.kill"), []byte("1"), 0)
}

// remove removes the cgroup, empty by then, and closes its descriptor.
func (cg *cgroup) remove() {
	unix.Close(cg.fd)
	_ = unix.Rmdir(cg.dir)
}

// pids lists the processes in the cgroup, by their pids in this process's namespace.
func (cg *cgroup) pids() []int {
	b, _ := os.ReadFile(filepath.Join(cg.dir, "cgroup.procs"))
	var out []int
	for _, f := range bytes.Fields(b) {
		if n, err := strconv.Atoi(string(f)); err == nil {
			out = append(out, n)
		}
	}
	return out
}
