//go:build !linux

package agent

import (
	"errors"
	"syscall"
)

// processGone reports whether pid has died (a zombie still counts as there).
func processGone(pid int) bool {
	return errors.Is(syscall.Kill(pid, 0), syscall.ESRCH)
}
