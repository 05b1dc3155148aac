package fakeagent

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// starve plays the starvation of git-ralph (the "starve N PIDFILE TARGET" attack): it
// tries to set SCHED_IDLE on every thread of git-ralph (the agent's parent), then
// leaves n busy processes, each in a session of its own, that spin until git-ralph has
// exited, then append to TARGET and end (or end when the test is gone). Their pids go
// to PIDFILE, one a line. A killer of leftovers that gives up after a deadline, or
// walks /proc slower than they fork, leaves them to outlive git-ralph. The error says
// what of it was refused (the scheduling: the sandbox's seccomp filter).
func (f *fake) starve(arg string) error {
	fields := strings.Fields(arg)
	if len(fields) != 3 {
		return usagef("starve N PIDFILE TARGET")
	}
	n, err := strconv.Atoi(fields[0])
	if err != nil || n < 1 {
		return usagef("starve: %q is not a number of processes", fields[0])
	}
	pidfile, target := f.path(fields[1]), f.path(fields[2])
	if !f.proc {
		return usagef("starve needs a real process: run the fake through Main")
	}
	work := filepath.Dir(f.env("FAKE_AGENT_STATE_DIR")) // the test's $WORK: gone when it is over
	if work == "." {
		return usagef("starve needs FAKE_AGENT_STATE_DIR")
	}
	schedErr := idleParent()
	// A shell's busy loop: cheap to start, all CPU once started.
	const loop = `while [ -e /proc/$1 ] && [ -d "$2" ]; do :; done; if [ -d "$2" ]; then echo written after git-ralph exited >>"$3"; fi`
	var pids strings.Builder
	for range n {
		cmd := exec.Command("sh", "-c", loop, "sh", strconv.Itoa(os.Getppid()), work, target)
		cmd.Dir = f.cwd
		cmd.Env = f.childEnv()
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
		if err := cmd.Start(); err != nil {
			return err
		}
		fmt.Fprintln(&pids, cmd.Process.Pid)
		_ = cmd.Process.Release()
	}
	if err := writeFileAtomic(pidfile, []byte(pids.String())); err != nil {
		return err
	}
	if schedErr != nil {
		return fmt.Errorf("%d busy processes left; SCHED_IDLE on git-ralph: %w", n, schedErr)
	}
	return nil
}
