package sandbox

import (
	"errors"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
	"syscall"
)

// Start starts the agent cmd describes under p and returns the command that runs it.
// cmd is not started, its Path is absolute; its SysProcAttr must not ask for Ptrace or
// Pdeathsig. With no error the agent runs in the sandbox and has run nothing outside
// it; with one, nothing runs. It starts directly (startDirect) where it can, else
// through the launcher (startLauncher): docs/SANDBOX.md, "How the agent is started".
func Start(p *Policy, cmd *exec.Cmd) (*exec.Cmd, error) {
	if !launcherOnly.Load() && !p.PTY { // the terminals' mounts need the launcher
		c, err := startDirect(*p, cmd)
		if !errors.Is(err, errNoDirect) {
			return c, err
		}
		launcherOnly.Store(true)
	}
	return startLauncher(p, cmd)
}

// StartError is a start that failed for want of the sandbox, not of the agent: its
// policy could not be made into a ruleset (a writable path missing, or reached through
// a link the agent may have made), or the thread or the launcher could not be
// restricted. Nothing ran.
type StartError struct{ Err error }

func (e *StartError) Error() string { return "sandbox: " + e.Err.Error() }

func (e *StartError) Unwrap() error { return e.Err }

// launcherOnly is set once the direct start proved impossible here (or a test asked for
// the launcher): every later Start uses the launcher.
var launcherOnly atomic.Bool

// UseLauncher makes every later Start go through the launcher: the test binary's way
// to run the launcher where the direct start works.
func UseLauncher() { launcherOnly.Store(true) }

// errNoDirect is startDirect's answer where the system cannot start an agent directly:
// nothing was started, and the launcher can be used instead.
var errNoDirect = errors.New("the agent cannot be started directly here")

// like is a new command with what Start reads of cmd.
func like(cmd *exec.Cmd) *exec.Cmd {
	c := &exec.Cmd{Path: cmd.Path, Args: cmd.Args, Env: cmd.Env, Dir: cmd.Dir,
		Stdin: cmd.Stdin, Stdout: cmd.Stdout, Stderr: cmd.Stderr, ExtraFiles: cmd.ExtraFiles}
	if cmd.SysProcAttr != nil {
		a := *cmd.SysProcAttr
		c.SysProcAttr = &a
	}
	return c
}

// startLauncher starts cmd through the launcher, with a status pipe on a descriptor of
// its own, and waits until the launcher has become the agent (the pipe closes on exec
// with nothing written) or failed (it wrote why and exited; it is reaped here).
func startLauncher(p *Policy, cmd *exec.Cmd) (*exec.Cmd, error) {
	c := like(cmd)
	p = p.Clone()
	c.Env = LauncherEnv(p, cmd.Env)
	// The filter's listener comes back on a socket of its own (where the system has
	// the notifications; else the launcher goes on without them).
	ours, theirs, sockErr := notifySocket()
	extra := append([]*os.File(nil), cmd.ExtraFiles...)
	if sockErr == nil {
		defer ours.Close()
		p.NotifyFD = 3 + len(extra)
		extra = append(extra, theirs)
	}
	args, err := LauncherArgs(p, 3+len(extra), cmd.Path, cmd.Args)
	if err != nil {
		if theirs != nil {
			theirs.Close()
		}
		return nil, err
	}
	c.Path, c.Args = Self, args
	if p.PTY {
		if c.SysProcAttr == nil {
			c.SysProcAttr = &syscall.SysProcAttr{}
		}
		inTerminalNamespaces(c.SysProcAttr)
	}
	r, w, err := os.Pipe()
	if err != nil {
		if theirs != nil {
			theirs.Close()
		}
		return nil, err
	}
	defer r.Close()
	c.ExtraFiles = append(extra, w)
	if p.PTY {
		err = startInNamespaces(c)
	} else {
		err = c.Start()
	}
	w.Close()
	if theirs != nil {
		theirs.Close()
	}
	if err != nil {
		return nil, err
	}
	listener := -1
	if ours != nil {
		listener = receiveListener(ours) // -1 once the launcher has exec'd or failed without one
	}
	msg, _ := io.ReadAll(io.LimitReader(r, 4<<10))
	if len(msg) == 0 {
		if listener >= 0 {
			go newSupervisor(*p).serve(listener)
		}
		return c, nil
	}
	if listener >= 0 {
		closeFD(listener)
	}
	_ = c.Wait()
	return nil, &StartError{Err: errors.New(strings.TrimPrefix(strings.TrimSpace(string(msg)), "sandbox: "))}
}
