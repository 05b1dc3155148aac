//go:build !linux

package agent

import (
	"errors"
	"os"
	"os/exec"
)

// ProcStart returns the start time of process pid. It needs /proc and
// reports errors.ErrUnsupported on this system.
func ProcStart(pid int) (uint64, error) {
	return 0, errors.ErrUnsupported
}

// GroupAlive reports whether the process group that Run started as pid is
// still there. Without /proc a process cannot be told from one that reused
// its pid, so it is always false on this system.
func GroupAlive(pid int, start uint64) bool { return false }

// HasEnv reports whether process pid was started with vars in its environment; on
// this system it cannot tell, and says false.
func HasEnv(pid int, vars ...string) bool { return false }

// KillGroup stops the process group led by pid. On this system GroupAlive is
// always false, so it never signals anything and returns nil.
func KillGroup(pid int, start uint64) error { return nil }

// watchExit reports on exited when cmd's process has exited. Without waitid
// WNOWAIT the process is reaped at once, so the group kill that follows has a
// tiny window in which the pid could be reused.
func watchExit(cmd *exec.Cmd) (exited <-chan struct{}, reap func() (*os.ProcessState, error)) {
	ch := make(chan struct{})
	var (
		state *os.ProcessState
		err   error
	)
	go func() {
		state, err = wait(cmd)
		close(ch)
	}()
	return ch, func() (*os.ProcessState, error) {
		<-ch
		return state, err
	}
}
