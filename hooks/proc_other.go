//go:build !unix

package hooks

import (
	"os"
	"syscall"
)

// termSignal is what a timeout sends first; without process groups, a kill.
var termSignal os.Signal = os.Kill

func groupAttr() *syscall.SysProcAttr { return nil }

// signalGroup kills the process itself: there are no process groups to signal.
func signalGroup(pid int, _ os.Signal) {
	if p, err := os.FindProcess(pid); err == nil {
		_ = p.Kill()
	}
}

func isNoExec(error) bool { return false }
