//go:build unix

package hooks

import (
	"errors"
	"os"
	"syscall"
)

// termSignal is what a timeout sends first.
const termSignal = syscall.SIGTERM

// groupAttr starts the command as the leader of a new process group, so the
// whole group can be stopped on a timeout.
func groupAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}

// signalGroup sends sig to the process group led by pid. A group that is
// already gone is not an error worth reporting.
func signalGroup(pid int, sig os.Signal) {
	if s, ok := sig.(syscall.Signal); ok {
		_ = syscall.Kill(-pid, s)
	}
}

// isNoExec reports whether a start failed because the file is not a binary
// and has no #! line.
func isNoExec(err error) bool { return errors.Is(err, syscall.ENOEXEC) }
