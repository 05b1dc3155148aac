package sandbox

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

// An agent that runs its shell tool on a pseudo-terminal (Policy.PTY) is started
// through the launcher in a user and mount namespace of its own, where the launcher
// mounts a new devpts instance on /dev/pts and its ptmx on /dev/ptmx before it
// restricts itself: /dev/ptmx and /dev/pts, granted, then reach only the terminals the
// agent makes, never the user's. See docs/SANDBOX.md, "Terminals".

// terminalsCommand is the launcher's argument that asks only whether the mounts can
// be made here (Terminals).
const terminalsCommand = "terminals"

var terminals struct {
	once sync.Once
	why  string
}

// Terminals says why an agent cannot have pseudo-terminals of its own here ("" when it
// can): a launcher is started once per process in the namespaces and tries the mounts.
func Terminals() string {
	terminals.once.Do(func() {
		c := &exec.Cmd{Path: Self, Args: []string{"git-ralph", Command, terminalsCommand}}
		var out bytes.Buffer
		c.Stdout, c.Stderr = &out, &out
		c.SysProcAttr = &syscall.SysProcAttr{}
		inTerminalNamespaces(c.SysProcAttr)
		err := startInNamespaces(c)
		if err == nil {
			err = c.Wait()
		}
		switch {
		case err == nil:
		case out.Len() > 0:
			terminals.why = strings.TrimSpace(out.String())
		default:
			terminals.why = "a user namespace: " + err.Error()
		}
	})
	return terminals.why
}

// inTerminalNamespaces makes a start put its process in a user namespace that maps
// the caller's ids to themselves (every id, for root) and a mount namespace, with
// CAP_SYS_ADMIN there to mount (the launcher drops it before the agent runs).
func inTerminalNamespaces(a *syscall.SysProcAttr) {
	uid, gid := os.Getuid(), os.Getgid()
	size := 1
	if uid == 0 {
		uid, gid, size = 0, 0, 1<<32-1
	}
	a.Cloneflags |= syscall.CLONE_NEWUSER | syscall.CLONE_NEWNS
	a.UidMappings = []syscall.SysProcIDMap{{ContainerID: uid, HostID: uid, Size: size}}
	a.GidMappings = []syscall.SysProcIDMap{{ContainerID: gid, HostID: gid, Size: size}}
	a.GidMappingsEnableSetgroups = os.Getuid() == 0
	a.AmbientCaps = append(a.AmbientCaps, unix.CAP_SYS_ADMIN)
}

// mountTerminals, in the launcher's own mount namespace, mounts a new devpts instance
// on /dev/pts and its ptmx on /dev/ptmx; nothing of it reaches the caller's namespace.
func mountTerminals() error {
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("private terminals: make the mounts private: %w", err)
	}
	if err := unix.Mount("devpts", "/dev/pts", "devpts", unix.MS_NOSUID|unix.MS_NOEXEC, "newinstance,ptmxmode=0666,mode=0620"); err != nil {
		return fmt.Errorf("private terminals: mount devpts on /dev/pts: %w", err)
	}
	if err := unix.Mount("/dev/pts/ptmx", "/dev/ptmx", "", unix.MS_BIND, ""); err != nil {
		return fmt.Errorf("private terminals: mount /dev/pts/ptmx on /dev/ptmx: %w", err)
	}
	return nil
}

// terminalsMain is the launcher asked only whether the mounts can be made.
func terminalsMain() int {
	if err := mountTerminals(); err != nil {
		msg := err.Error()
		if errors.Is(err, unix.EPERM) {
			msg += " (user namespaces may not mount here: a sysctl or AppArmor restriction)"
		}
		fmt.Println(msg)
		return 1
	}
	return 0
}

// dumpable serializes the moments a start makes this process dumpable.
var dumpable sync.Mutex

// startInNamespaces starts c, made with inTerminalNamespaces. Go writes the child's id
// maps from here before it execs, and a child of a process that Harden made undumpable
// has its /proc files owned by root: so, but for root, this process is dumpable for
// the moment of the start (the agents, in their Landlock domains, cannot read it even
// then; an unsandboxed process of the user's could, for those milliseconds).
func startInNamespaces(c *exec.Cmd) error {
	if os.Getuid() == 0 {
		return c.Start()
	}
	dumpable.Lock()
	defer dumpable.Unlock()
	if was, err := unix.PrctlRetInt(unix.PR_GET_DUMPABLE, 0, 0, 0, 0); err == nil && was == 0 {
		_ = unix.Prctl(unix.PR_SET_DUMPABLE, 1, 0, 0, 0)
		defer func() { _ = unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0) }()
	}
	return c.Start()
}
