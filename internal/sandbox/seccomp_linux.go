package sandbox

import (
	"fmt"
	"runtime"
	"unsafe"

	"golang.org/x/sys/unix"
)

// What Landlock does not scope: prlimit(2) on another process of the same user. An
// agent that lowers git-ralph's address space or CPU limit (prlimit --pid $PPID
// --as=…) kills it as surely as a signal (seen: SIGABRT at the next thread git-ralph
// started), and a dead git-ralph checks nothing. Landlock scopes signals (ABI 6) and
// already refuses ptrace and what rides on its access check (process_vm_readv and
// _writev, pidfd_getfd, /proc/<pid>/mem and environ) across the domain; prlimit's
// check is the user's and CAP_SYS_RESOURCE's alone. So the launcher adds a seccomp
// filter: prlimit64 of any process but the caller's own (pid 0) fails with EPERM, in
// every ABI the process could call it through. getrlimit and setrlimit (ulimit) are
// untouched.

// prlimitNumbers are prlimit64's syscall number in each ABI a process of this
// architecture can call the kernel with: audit arch, number.
var prlimitNumbers = map[string][][2]uint32{
	// x86_64, x32 (the same number with __X32_SYSCALL_BIT) and i386.
	"amd64": {{unix.AUDIT_ARCH_X86_64, 302}, {unix.AUDIT_ARCH_X86_64, 0x40000000 | 302}, {unix.AUDIT_ARCH_I386, 340}},
	// aarch64 and 32-bit arm.
	"arm64": {{unix.AUDIT_ARCH_AARCH64, 261}, {unix.AUDIT_ARCH_ARM, 369}},
}

// seccompFilter is the BPF program: prlimit64 with a pid argument other than 0 returns
// EPERM; every other call is allowed. ok is false on an architecture it does not know.
func seccompFilter(goarch string) (prog []unix.SockFilter, ok bool) {
	nums, ok := prlimitNumbers[goarch]
	if !ok {
		return nil, false
	}
	const (
		offNr   = 0  // struct seccomp_data: int nr
		offArch = 4  // __u32 arch
		offArg0 = 16 // __u64 args[0]: its low half (both arches are little-endian)
	)
	stmt := func(code uint16, k uint32) unix.SockFilter { return unix.SockFilter{Code: code, K: k} }
	jump := func(code uint16, k uint32, jt, jf uint8) unix.SockFilter {
		return unix.SockFilter{Code: code, K: k, Jt: jt, Jf: jf}
	}
	ld := uint16(unix.BPF_LD | unix.BPF_W | unix.BPF_ABS)
	jeq := uint16(unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K)
	ret := uint16(unix.BPF_RET | unix.BPF_K)
	// For each (arch, nr), four instructions: load arch; not it: on to the next pair;
	// load nr; it: go check the pid (past the later pairs and the "allow" that ends
	// them), else on. A jump's offset counts from the next instruction.
	n := len(nums)
	for i, an := range nums {
		left := n - 1 - i // pairs after this one
		toCheck := uint8(4*left + 1)
		prog = append(prog,
			stmt(ld, offArch),
			jump(jeq, an[0], 0, 2),
			stmt(ld, offNr),
			jump(jeq, an[1], toCheck, 0),
		)
	}
	prog = append(prog,
		stmt(ret, unix.SECCOMP_RET_ALLOW),
		// check: prlimit64 — its own process (pid 0) is allowed, any other refused.
		stmt(ld, offArg0),
		jump(jeq, 0, 0, 1),
		stmt(ret, unix.SECCOMP_RET_ALLOW),
		stmt(ret, unix.SECCOMP_RET_ERRNO|uint32(unix.EPERM)),
	)
	return prog, true
}

// filterPrlimit installs seccompFilter on the calling thread (the launcher's, which
// then execs the agent: the filter goes with it, to every process it starts). It needs
// no_new_privs. On an architecture without a filter it does nothing, and the manual
// says so.
func filterPrlimit() error {
	prog, ok := seccompFilter(runtime.GOARCH)
	if !ok {
		return nil
	}
	fprog := unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}
	if err := unix.Prctl(unix.PR_SET_SECCOMP, unix.SECCOMP_MODE_FILTER, uintptr(unsafe.Pointer(&fprog)), 0, 0); err != nil {
		return fmt.Errorf("prctl(PR_SET_SECCOMP): %w", err)
	}
	return nil
}
