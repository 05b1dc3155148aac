package sandbox

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The direct start: a locked thread restricts itself, starts the agent traced, and
// dies before the agent runs its first instruction (the thread is in the agent's
// domain, where signals are not scoped). Where ptrace or a thread's pidfd is missing,
// startDirect says errNoDirect and Start uses the launcher. Why so:
// docs/SANDBOX.md, "How the agent is started".

// hooks for tests: held runs on the restricted thread once the agent is stopped, just
// before the thread dies; onMain stands for "this is the process's main thread".
var (
	held   func(pid int)
	onMain = func() bool { return unix.Gettid() == os.Getpid() }
)

// startDirect starts cmd under p from a thread that restricts itself and dies.
func startDirect(p Policy, cmd *exec.Cmd) (*exec.Cmd, error) {
	c := like(cmd)
	if c.SysProcAttr == nil {
		c.SysProcAttr = &syscall.SysProcAttr{}
	}
	if c.SysProcAttr.Ptrace || c.SysProcAttr.Pdeathsig != 0 {
		// The start's own ptrace; and the thread that starts the agent dies at once,
		// which a parent-death signal would take for the agent's parent dying.
		return nil, &StartError{Err: errors.New("a sandboxed start cannot ask for Ptrace or Pdeathsig")}
	}
	c.SysProcAttr.Ptrace = true
	// An exec that fails leaves the traced child stopped for any signal that reaches it
	// in that moment, while the thread that started it waits in the kernel for its exec
	// (Go forks with CLONE_VFORK): the two would wait on each other for good. So what
	// can be known to fail is refused before the fork.
	if err := executable(c.Path); err != nil {
		return nil, err
	}
	rs, flags, writes, err := rulesetWrites(p)
	if err != nil {
		return nil, &StartError{Err: err}
	}
	defer unix.Close(rs)
	type result struct {
		thread   int // the pidfd of the restricted thread
		listener int // the seccomp filter's, for supervise; -1 without
		err      error
	}
	o := filterOptionsOf(p)
	o.Notify = true
	sup := supervising(writes) // the writable paths as the rules have them, resolved once
	done := make(chan result, 1)
	onOwnThread(func() (keep bool) {
		thread, err := unix.PidfdOpen(unix.Gettid(), unix.PIDFD_THREAD)
		if err != nil { // before Linux 6.9: there is no waiting for the thread's death
			done <- result{err: fmt.Errorf("%w: pidfd_open(PIDFD_THREAD): %w", errNoDirect, err)}
			return true // not restricted: the thread may serve again
		}
		listener, err := restrictThread(rs, flags, o)
		if err != nil {
			err = &StartError{Err: err}
		} else {
			// A failure here is the agent's own (not found, not executable), said as
			// unsandboxed, but EPERM: ptrace refused, and the agent did not run.
			err = c.Start()
			if errors.Is(err, syscall.EPERM) {
				err = fmt.Errorf("%w: %w", errNoDirect, err)
			}
		}
		if err == nil {
			if err = stopAtExec(c.Process.Pid); err != nil {
				err = &StartError{Err: err}
				_ = c.Process.Kill()
				_ = c.Wait()
			} else if held != nil {
				held(c.Process.Pid)
			}
		}
		if err != nil {
			unix.Close(thread)
			thread = -1
			if listener >= 0 {
				unix.Close(listener)
				listener = -1
			}
		}
		done <- result{thread: thread, listener: listener, err: err}
		return false
	})
	r := <-done
	if r.err != nil {
		return nil, r.err
	}
	if r.listener >= 0 {
		go sup.serve(r.listener)
	}
	err = awaitGone(r.thread)
	unix.Close(r.thread)
	if err != nil {
		_ = c.Process.Kill()
		_ = c.Wait()
		return nil, &StartError{Err: fmt.Errorf("wait for the sandbox's thread to end: %w", err)}
	}
	if err := c.Process.Signal(syscall.SIGCONT); err != nil && !errors.Is(err, os.ErrProcessDone) {
		_ = c.Process.Kill()
		_ = c.Wait()
		return nil, &StartError{Err: fmt.Errorf("let the agent go: %w", err)}
	}
	return c, nil
}

// awaitGone waits until the thread of the pidfd thread is gone: once it is, nothing of
// git-ralph is in the agent's domain. POLLIN says it has exited, POLLHUP that it can
// no longer be found (by tgkill, say).
func awaitGone(thread int) error {
	fds := []unix.PollFd{{Fd: int32(thread), Events: unix.POLLIN}}
	for timeout := -1; ; {
		_, err := unix.Poll(fds, timeout)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil || fds[0].Revents&(unix.POLLHUP|unix.POLLERR|unix.POLLNVAL) != 0 {
			return err
		}
		if fds[0].Revents&unix.POLLIN != 0 { // exited, not yet gone: a moment more
			fds[0].Events, timeout = 0, 1
		}
	}
}

// executable checks that path is a regular file this process may execute.
func executable(path string) error {
	var st unix.Stat_t
	err := unix.Stat(path, &st)
	if err == nil && st.Mode&unix.S_IFMT != unix.S_IFREG {
		err = unix.EACCES
	}
	if err == nil {
		err = unix.Faccessat(unix.AT_FDCWD, path, unix.X_OK, unix.AT_EACCESS)
	}
	if err != nil {
		return &os.PathError{Op: "exec", Path: path, Err: err}
	}
	return nil
}

// onOwnThread runs f on a thread locked to it that is not the process's main thread
// (which the Go runtime never lets die: restricted, it would stay so). The thread
// dies when f returns, unless f says keep (it did not change the thread).
func onOwnThread(f func() (keep bool)) {
	go func() {
		runtime.LockOSThread()
		if onMain() {
			// Hold the main thread while another goroutine takes a thread, which is
			// then not this one.
			locked := make(chan struct{})
			go func() {
				runtime.LockOSThread()
				close(locked)
				if f() {
					runtime.UnlockOSThread()
				}
			}()
			<-locked
			runtime.UnlockOSThread()
			return
		}
		if f() {
			runtime.UnlockOSThread()
		}
	}()
}

// stopAtExec waits, on the thread that started it traced, for the agent pid to stop at
// its exec, before its first instruction, and detaches from it turning that stop into
// a SIGSTOP: the agent stays stopped, traced by nobody, until a SIGCONT. An agent that
// died in the meantime is left for its Wait; one stopped by anything else is refused.
func stopAtExec(pid int) error {
	var info unix.Siginfo
	for {
		err := unix.Waitid(unix.P_PID, pid, &info, unix.WSTOPPED|unix.WEXITED|unix.WNOWAIT|unix.WALL, nil)
		if err == nil {
			break
		}
		if !errors.Is(err, unix.EINTR) {
			return fmt.Errorf("wait for the agent to start: %w", err)
		}
	}
	code, status := sigchld(&info)
	switch {
	case code == cldTRAPPED && status == int32(unix.SIGTRAP):
		if _, _, e := unix.RawSyscall6(unix.SYS_PTRACE, unix.PTRACE_DETACH, uintptr(pid), 0, uintptr(unix.SIGSTOP), 0, 0); e != 0 {
			return fmt.Errorf("ptrace(PTRACE_DETACH): %w", e)
		}
		return nil
	case code == cldEXITED || code == cldKILLED || code == cldDUMPED:
		return nil // it is gone: its Wait says how
	}
	return fmt.Errorf("the agent was stopped by signal %d before it ran", status)
}

// si_code values of SIGCHLD (linux/uapi/asm-generic/siginfo.h).
const (
	cldEXITED  = 1
	cldKILLED  = 2
	cldDUMPED  = 3
	cldTRAPPED = 4
)

// sigchld reads the si_code and si_status of a SIGCHLD siginfo (struct siginfo:
// signo, errno, code, then the union, aligned as a pointer, whose child fields are
// pid, uid and status).
func sigchld(info *unix.Siginfo) (code, status int32) {
	raw := (*[unsafe.Sizeof(*info)]byte)(unsafe.Pointer(info))
	union := 16
	if unsafe.Sizeof(uintptr(0)) == 4 {
		union = 12
	}
	return int32(binary.NativeEndian.Uint32(raw[8:])), int32(binary.NativeEndian.Uint32(raw[union+8:]))
}

// notifySocket is the pair of sockets the launcher sends its filter's listener on:
// git-ralph's end and the launcher's.
func notifySocket() (ours, theirs *os.File, err error) {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, nil, err
	}
	return os.NewFile(uintptr(fds[0]), "notify"), os.NewFile(uintptr(fds[1]), "notify"), nil
}

// receiveListener waits for the launcher to send its filter's listener on s, or to end
// or exec without one (-1).
func receiveListener(s *os.File) int {
	buf, oob := make([]byte, 1), make([]byte, unix.CmsgSpace(4))
	for {
		_, oobn, _, _, err := unix.Recvmsg(int(s.Fd()), buf, oob, unix.MSG_CMSG_CLOEXEC)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil || oobn == 0 {
			return -1
		}
		msgs, err := unix.ParseSocketControlMessage(oob[:oobn])
		if err != nil || len(msgs) != 1 {
			return -1
		}
		fds, err := unix.ParseUnixRights(&msgs[0])
		if err != nil || len(fds) != 1 {
			for _, fd := range fds {
				unix.Close(fd)
			}
			return -1
		}
		return fds[0]
	}
}

func closeFD(fd int) { unix.Close(fd) }
