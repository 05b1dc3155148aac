//go:build !linux

package fakeagent

import "errors"

// prlimitParent: prlimit(2) is Linux's.
func prlimitParent() error { return errors.ErrUnsupported }
