//go:build !linux

package sandbox

import "errors"

// Harden does nothing on this system.
func Harden() {}

// BecomeReaper reports that this system has no child subreaper.
func BecomeReaper() error { return errors.ErrUnsupported }

// IsReaper is false on this system.
func IsReaper() bool { return false }

// KillLeftovers does nothing on this system: a process the agent leaves outside its
// process group is not found.
func KillLeftovers() int { return 0 }
