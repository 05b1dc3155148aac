package agent

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"time"
	"unsafe"
)

// procStat holds the fields of /proc/<pid>/stat that identify a process.
type procStat struct {
	state   byte   // field 3: R, S, D, Z, …
	pgrp    int    // field 5
	session int    // field 6
	start   uint64 // field 22: start time, clock ticks since boot
}

// readStat reads /proc/<pid>/stat.
func readStat(pid int) (procStat, error) {
	if pid <= 0 {
		return procStat{}, fmt.Errorf("invalid pid %d", pid)
	}
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return procStat{}, err
	}
	return parseStat(data)
}

// parseStat parses the content of /proc/<pid>/stat. The command name (field 2)
// is in parentheses and may itself contain spaces and parentheses, so the
// fields are counted from the last ')'.
func parseStat(data []byte) (procStat, error) {
	i := bytes.LastIndexByte(data, ')')
	if i < 0 {
		return procStat{}, errors.New("malformed /proc stat: no ')'")
	}
	f := bytes.Fields(data[i+1:]) // f[0] is field 3
	if len(f) < 20 {
		return procStat{}, fmt.Errorf("malformed /proc stat: %d fields after the command name", len(f))
	}
	var st procStat
	var err error
	if len(f[0]) != 1 {
		return procStat{}, fmt.Errorf("malformed /proc stat: state %q", f[0])
	}
	st.state = f[0][0]
	if st.pgrp, err = strconv.Atoi(string(f[2])); err != nil {
		return procStat{}, fmt.Errorf("malformed /proc stat: pgrp: %w", err)
	}
	if st.session, err = strconv.Atoi(string(f[3])); err != nil {
		return procStat{}, fmt.Errorf("malformed /proc stat: session: %w", err)
	}
	if st.start, err = strconv.ParseUint(string(f[19]), 10, 64); err != nil {
		return procStat{}, fmt.Errorf("malformed /proc stat: starttime: %w", err)
	}
	return st, nil
}

// ProcStart returns the start time of process pid: field 22 of
// /proc/<pid>/stat, in clock ticks since boot. Together with the pid it
// identifies a process across pid reuse (docs/LOOP.md, "Process identity").
func ProcStart(pid int) (uint64, error) {
	st, err := readStat(pid)
	if err != nil {
		return 0, err
	}
	return st.start, nil
}

// GroupAlive reports whether the process group that Run started as pid is
// still there: process pid exists with start time start and still leads its
// own process group. A leader that has exited but not yet been reaped (a
// zombie) counts, since its pid cannot be reused until it is reaped. A zero
// start (unknown) never matches.
func GroupAlive(pid int, start uint64) bool {
	if pid <= 1 || start == 0 {
		return false
	}
	st, err := readStat(pid)
	return err == nil && st.start == start && st.pgrp == pid
}

// HasEnv reports whether process pid was started with every KEY=VALUE of vars in its
// environment (/proc/<pid>/environ: the environment it was executed with). The loop
// asks it before signalling an agent a crashed run recorded, since the record can be
// forged: only a process that carries the attempt's own markers is its agent.
func HasEnv(pid int, vars ...string) bool {
	if pid <= 1 {
		return false
	}
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
	if err != nil {
		return false
	}
	have := map[string]bool{}
	for _, kv := range bytes.Split(data, []byte{0}) {
		have[string(kv)] = true
	}
	for _, kv := range vars {
		if !have[kv] {
			return false
		}
	}
	return true
}

// KillGroup stops the process group led by pid (as Run started it): SIGTERM, then SIGKILL
// to what is left after 5s. It signals nothing unless GroupAlive(pid, start), since a
// recorded pid may have been reused: a group whose leader is gone is left alone. Once
// verified, the group gets the SIGKILL even if its leader exited meanwhile (the kernel
// reuses no pid a group still uses). It errs only when a signal could not be sent.
func KillGroup(pid int, start uint64) error {
	return killGroup(pid, start, 5*time.Second)
}

func killGroup(pid int, start uint64, grace time.Duration) error {
	if !GroupAlive(pid, start) {
		return nil
	}
	if err := syscall.Kill(-pid, syscall.SIGTERM); err != nil {
		if errors.Is(err, syscall.ESRCH) {
			return nil
		}
		return fmt.Errorf("signal process group %d: %w", pid, err)
	}
	deadline := time.Now().Add(grace)
	for groupExists(pid) {
		if time.Now().After(deadline) {
			if err := syscall.Kill(-pid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
				return fmt.Errorf("kill process group %d: %w", pid, err)
			}
			return nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	return nil
}

// groupExists reports whether any process (zombies included) has process
// group id pgid.
func groupExists(pgid int) bool {
	err := syscall.Kill(-pgid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// watchExit reports on exited when cmd's process has exited, without reaping
// it: while the exited leader is an unreaped zombie its pid, which is also
// its group id, cannot be reused, so Run can still kill the group's leftovers
// safely. reap then waits for it (cmd.Wait). If waitid with WNOWAIT is not
// available, it falls back to reaping at once.
func watchExit(cmd *exec.Cmd) (exited <-chan struct{}, reap func() (*os.ProcessState, error)) {
	ch := make(chan struct{})
	var (
		reaped bool
		state  *os.ProcessState
		err    error
	)
	go func() {
		if waitNoReap(cmd.Process.Pid) != nil {
			state, err = wait(cmd)
			reaped = true
		}
		close(ch)
	}()
	return ch, func() (*os.ProcessState, error) {
		<-ch
		if reaped {
			return state, err
		}
		return wait(cmd)
	}
}

// waitNoReap blocks until process pid has exited, leaving it waitable
// (waitid(P_PID, pid, WEXITED|WNOWAIT), as package os does internally).
func waitNoReap(pid int) error {
	const pPID = 1
	var info [16]uint64 // siginfo_t is 128 bytes
	for {
		_, _, errno := syscall.Syscall6(syscall.SYS_WAITID, pPID, uintptr(pid),
			uintptr(unsafe.Pointer(&info[0])), syscall.WEXITED|syscall.WNOWAIT, 0, 0)
		switch errno {
		case 0:
			return nil
		case syscall.EINTR:
			continue
		}
		return errno
	}
}
