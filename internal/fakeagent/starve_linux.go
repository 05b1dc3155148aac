package fakeagent

import (
	"errors"
	"os"
	"strconv"
	"syscall"
	"unsafe"
)

// idleParent sets SCHED_IDLE on every thread of the agent's parent (git-ralph): the
// lowest CPU share there is. The first refusal is its error.
func idleParent() error {
	dir := "/proc/" + strconv.Itoa(os.Getppid()) + "/task"
	tasks, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	const schedIdle = 5
	var first error
	for _, t := range tasks {
		tid, err := strconv.Atoi(t.Name())
		if err != nil {
			continue
		}
		param := [1]int32{0} // struct sched_param: sched_priority
		_, _, e := syscall.RawSyscall(syscall.SYS_SCHED_SETSCHEDULER, uintptr(tid), schedIdle, uintptr(unsafe.Pointer(&param)))
		if e != 0 && !errors.Is(e, syscall.ESRCH) && first == nil {
			first = e
		}
	}
	return first
}
