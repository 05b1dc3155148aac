package fakeagent

import (
	"os"

	"golang.org/x/sys/unix"
)

// prlimitParent sets git-ralph's (the agent's parent's) CPU limit to what it is: no
// change, but the permission the kernel checks is the one that lets an agent lower it to
// nothing and kill git-ralph with it. The sandbox's seccomp filter refuses it (EPERM).
func prlimitParent() error {
	var cur unix.Rlimit
	if err := unix.Prlimit(os.Getppid(), unix.RLIMIT_CPU, nil, &cur); err != nil {
		return err
	}
	return unix.Prlimit(os.Getppid(), unix.RLIMIT_CPU, &cur, nil)
}
