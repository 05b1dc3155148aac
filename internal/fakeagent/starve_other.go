//go:build !linux

package fakeagent

import "errors"

// idleParent: SCHED_IDLE is Linux's.
func idleParent() error { return errors.ErrUnsupported }
