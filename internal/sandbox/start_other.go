//go:build !linux

package sandbox

import (
	"os"
	"os/exec"
)

// startDirect: nowhere but Linux (where nothing is sandboxed anyway).
func startDirect(Policy, *exec.Cmd) (*exec.Cmd, error) { return nil, errNoDirect }

// No seccomp elsewhere: no listener comes back from the launcher.
func notifySocket() (ours, theirs *os.File, err error) { return nil, nil, errNoDirect }

func receiveListener(*os.File) int { return -1 }

func closeFD(int) {}

type supervisor struct{}

func newSupervisor(Policy) *supervisor { return &supervisor{} }

func (*supervisor) serve(int) {}
