package fakeagent

import (
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"unsafe"

	"golang.org/x/sys/unix"
)

// schedParent sets git-ralph's (the agent's parent's) scheduling policy and nice value
// to what they are: no change, but the permission the kernel checks is the one that
// lets an agent put git-ralph on SCHED_IDLE, nice 19, behind its own busy processes.
// The sandbox's seccomp filter refuses both (EPERM).
func schedParent() error {
	ppid := os.Getppid()
	policy, _, e := unix.Syscall(unix.SYS_SCHED_GETSCHEDULER, uintptr(ppid), 0, 0)
	if e != 0 {
		return e
	}
	var param struct{ prio int32 }
	if _, _, e = unix.Syscall(unix.SYS_SCHED_SETSCHEDULER, uintptr(ppid), policy, uintptr(unsafe.Pointer(&param))); e != 0 {
		return e
	}
	nice, err := unix.Getpriority(unix.PRIO_PROCESS, ppid)
	if err != nil {
		return err
	}
	return unix.Setpriority(unix.PRIO_PROCESS, ppid, 20-nice) // getpriority's is 20 - nice
}

// connectUnix connects to the unix socket path and sends it a line.
func connectUnix(path string) error {
	c, err := net.Dial("unix", path)
	if err != nil {
		return err
	}
	_, err = c.Write([]byte("sent by the agent\n"))
	if cerr := c.Close(); err == nil {
		err = cerr
	}
	return err
}

// chmodRaw is chmod(2) with an octal mode as given (os.Chmod drops the set-ID bits of
// a plain number).
func chmodRaw(path, mode string) error {
	m, err := strconv.ParseUint(mode, 8, 32)
	if err != nil {
		return err
	}
	return unix.Chmod(path, uint32(m))
}

// chownSelf gives path to the agent's own user and group.
func chownSelf(path string) error { return unix.Chown(path, os.Getuid(), os.Getgid()) }

// setxattr sets user.ralph on path.
func setxattr(path string) error {
	return unix.Setxattr(path, "user.ralph", []byte("set by the agent"), 0)
}

// openPTY makes a pseudo-terminal as a CLI's shell tool does (posix_openpt, unlockpt,
// ptsname, open) and passes a line through it, from its terminal's end to the master.
func openPTY() error {
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		return err
	}
	defer m.Close()
	if err := unix.IoctlSetPointerInt(int(m.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		return err
	}
	n, err := unix.IoctlGetInt(int(m.Fd()), unix.TIOCGPTN)
	if err != nil {
		return err
	}
	s, err := os.OpenFile("/dev/pts/"+strconv.Itoa(n), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		return err
	}
	defer s.Close()
	if _, err := s.WriteString("through the terminal\n"); err != nil {
		return err
	}
	buf := make([]byte, 64)
	got, err := m.Read(buf)
	if err != nil {
		return err
	}
	if !strings.Contains(string(buf[:got]), "through the terminal") {
		return fmt.Errorf("the terminal passed %q", buf[:got])
	}
	return nil
}
