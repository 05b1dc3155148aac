//go:build !unix

package git

import (
	"context"
	"syscall"
)

// newProcAttr: process groups are a Unix notion; elsewhere git shares ours.
func newProcAttr() *syscall.SysProcAttr { return nil }

// interruptOnDone is a no-op where process groups do not exist.
func interruptOnDone(context.Context, int) (stop func()) { return func() {} }

// processGone cannot tell here, so nothing is swept.
func processGone(int) bool { return false }
