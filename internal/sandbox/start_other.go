//go:build !linux

package sandbox

import "os/exec"

// startDirect: nowhere but Linux (where nothing is sandboxed anyway).
func startDirect(Policy, *exec.Cmd) (*exec.Cmd, error) { return nil, errNoDirect }
