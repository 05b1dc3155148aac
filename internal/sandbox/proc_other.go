//go:build !linux

package sandbox

import (
	"context"
	"errors"
	"os/exec"
)

// Harden does nothing on this system.
func Harden() {}

// BecomeReaper reports that this system has no child subreaper.
func BecomeReaper() error { return errors.ErrUnsupported }

// IsReaper is false on this system.
func IsReaper() bool { return false }

// KillLeftovers does nothing on this system: a process the agent leaves outside its
// process group is not found.
func KillLeftovers(context.Context, func(string)) (int, error) { return 0, nil }

// Contain does nothing on this system.
func Contain(*exec.Cmd) {}

// NoCgroup does nothing on this system.
func NoCgroup() {}

// LeftoverError is never returned on this system.
type LeftoverError struct {
	Pids   []int
	Cgroup string
}

func (e *LeftoverError) Error() string { return "processes the attempt left are still running" }

// Containment says that what an agent leaves outside its process group is not found here.
func Containment() (how string, ok bool) {
	return "only those in the agent's process group are killed on this system", true
}

// CanContain is false on this system.
func CanContain() bool { return false }

// EndStaleOf does nothing on this system.
func EndStaleOf(int) []string { return nil }
