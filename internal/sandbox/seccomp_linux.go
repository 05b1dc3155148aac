package sandbox

import (
	"fmt"
	"runtime"
	"sync"
	"unsafe"

	"golang.org/x/sys/unix"
)

// What Landlock does not govern, a seccomp filter refuses where a call's number and
// arguments tell enough: prlimit and the scheduling calls on other pids, unix sockets
// below ABI 9, io_uring, chown to others, xattrs, set-ID chmod; a plain chmod and utime
// go to the supervisor (supervise_linux.go). Each rule and why: docs/SANDBOX.md,
// "What else it is denied".

// filterOptions are what a policy changes in the filter.
type filterOptions struct {
	// Unix refuses socket(AF_UNIX): below ABI 9, with no socket named.
	Unix bool
	// Notify hands chmod and utime, and their kind, to a supervisor in git-ralph
	// (supervise), which does them for the agent when the file lies in its writable
	// paths, and refuses them elsewhere. The utime calls of the 32-bit ABIs (their
	// time structures are another size) are not handed over.
	Notify bool
	// UID and GID are the agent's: a chown to them (or -1, no change) is what a tool
	// that keeps a file's owner does (write-file-atomic, Codex), and is let through, to
	// the supervisor with Notify; a chown to anyone else is refused.
	UID, GID uint32
}

// filterOptionsOf are p's.
func filterOptionsOf(p Policy) filterOptions {
	return filterOptions{Unix: p.ABI < 9 && len(p.Sockets) == 0, UID: uint32(unix.Geteuid()), GID: uint32(unix.Getegid())}
}

// The system calls the filter looks at, by name.
const (
	scPrlimit = iota
	scSchedSetscheduler
	scSchedSetparam
	scSchedSetattr
	scSchedSetaffinity
	scSetpriority
	scIoprioSet
	scSocket
	scSocketcall
	scIoUringSetup
	scChown
	scFchown
	scLchown
	scFchownat
	scChown16 // i386 and arm: the calls of 16-bit ids (the others are their chown32 and kind)
	scFchown16
	scLchown16
	scSetxattr
	scLsetxattr
	scFsetxattr
	scRemovexattr
	scLremovexattr
	scFremovexattr
	scSetxattrat
	scRemovexattrat
	scChmod
	scFchmod
	scFchmodat
	scFchmodat2
	scUtime
	scUtimes
	scFutimesat
	scUtimensat
	numCalls
)

// callTable is each call's number in one system call table; -1: the table has none.
type callTable [numCalls]int

func table(set map[int]int) callTable {
	var t callTable
	for i := range t {
		t[i] = -1
	}
	for k, v := range set {
		t[k] = v
	}
	return t
}

// tables are the system call tables of each ABI, made when a filter is (not at
// start-up: git-ralph's commands that run no agent pay nothing for them).
func tables() (x86_64, i386, aarch64, arm callTable) {
	x86_64 = table(map[int]int{scPrlimit: 302, scSchedSetscheduler: 144, scSchedSetparam: 142, scSchedSetattr: 314,
		scSchedSetaffinity: 203, scSetpriority: 141, scIoprioSet: 251, scSocket: 41, scIoUringSetup: 425,
		scChown: 92, scFchown: 93, scLchown: 94, scFchownat: 260,
		scSetxattr: 188, scLsetxattr: 189, scFsetxattr: 190, scRemovexattr: 197, scLremovexattr: 198, scFremovexattr: 199,
		scSetxattrat: 463, scRemovexattrat: 466, scChmod: 90, scFchmod: 91, scFchmodat: 268, scFchmodat2: 452,
		scUtime: 132, scUtimes: 235, scFutimesat: 261, scUtimensat: 280})
	i386 = table(map[int]int{scPrlimit: 340, scSchedSetscheduler: 156, scSchedSetparam: 154, scSchedSetattr: 351,
		scSchedSetaffinity: 241, scSetpriority: 97, scIoprioSet: 289, scSocket: 359, scSocketcall: 102, scIoUringSetup: 425,
		scChown16: 182, scFchown16: 95, scLchown16: 16, scFchownat: 298, scChown: 212, scFchown: 207, scLchown: 198,
		scSetxattr: 226, scLsetxattr: 227, scFsetxattr: 228, scRemovexattr: 235, scLremovexattr: 236, scFremovexattr: 237,
		scSetxattrat: 463, scRemovexattrat: 466, scChmod: 15, scFchmod: 94, scFchmodat: 306, scFchmodat2: 452})
	aarch64 = table(map[int]int{scPrlimit: 261, scSchedSetscheduler: 119, scSchedSetparam: 118, scSchedSetattr: 274,
		scSchedSetaffinity: 122, scSetpriority: 140, scIoprioSet: 30, scSocket: 198, scIoUringSetup: 425,
		scFchown: 55, scFchownat: 54,
		scSetxattr: 5, scLsetxattr: 6, scFsetxattr: 7, scRemovexattr: 14, scLremovexattr: 15, scFremovexattr: 16,
		scSetxattrat: 463, scRemovexattrat: 466, scFchmod: 52, scFchmodat: 53, scFchmodat2: 452,
		scUtimensat: 88})
	arm = table(map[int]int{scPrlimit: 369, scSchedSetscheduler: 156, scSchedSetparam: 154, scSchedSetattr: 380,
		scSchedSetaffinity: 241, scSetpriority: 97, scIoprioSet: 314, scSocket: 281, scIoUringSetup: 425,
		scChown16: 182, scFchown16: 95, scLchown16: 16, scFchownat: 325, scChown: 212, scFchown: 207, scLchown: 198,
		scSetxattr: 226, scLsetxattr: 227, scFsetxattr: 228, scRemovexattr: 235, scLremovexattr: 236, scFremovexattr: 237,
		scSetxattrat: 463, scRemovexattrat: 466, scChmod: 15, scFchmod: 94, scFchmodat: 333, scFchmodat2: 452})
	return
}

// x32Bit marks an x32 system call (__X32_SYSCALL_BIT): the x86_64 number with it set.
const x32Bit = 0x40000000

// abiTable is one ABI a process can call the kernel with: its audit arch, its table,
// and what its numbers carry (x32's bit).
type abiTable struct {
	arch  uint32
	calls callTable
	or    uint32
}

// goarchs are the architectures the filter knows.
var goarchs = []string{"amd64", "arm64"}

// abis are the ABIs a process of goarch can call the kernel with; nil for an
// architecture the filter does not know.
func abis(goarch string) []abiTable {
	x86_64, i386, aarch64, arm := tables()
	switch goarch {
	case "amd64":
		return []abiTable{{unix.AUDIT_ARCH_X86_64, x86_64, 0}, {unix.AUDIT_ARCH_X86_64, x86_64, x32Bit}, {unix.AUDIT_ARCH_I386, i386, 0}}
	case "arm64":
		return []abiTable{{unix.AUDIT_ARCH_AARCH64, aarch64, 0}, {unix.AUDIT_ARCH_ARM, arm, 0}}
	}
	return nil
}

// struct seccomp_data: int nr; __u32 arch; __u64 instruction_pointer; __u64 args[6].
// An argument's low half (both architectures are little-endian) is what the rules read:
// every argument they look at is an int or a mode.
const (
	offNr   = 0
	offArch = 4
)

func offArg(i int) uint32 { return 16 + 8*uint32(i) }

const (
	opLd   = uint16(unix.BPF_LD | unix.BPF_W | unix.BPF_ABS)
	opJeq  = uint16(unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K)
	opJset = uint16(unix.BPF_JMP | unix.BPF_JSET | unix.BPF_K)
	opJa   = uint16(unix.BPF_JMP | unix.BPF_JA)
	opRet  = uint16(unix.BPF_RET | unix.BPF_K)
	opAnd  = uint16(unix.BPF_ALU | unix.BPF_AND | unix.BPF_K)

	retAllow = unix.SECCOMP_RET_ALLOW
)

func retErrno(e unix.Errno) uint32 { return unix.SECCOMP_RET_ERRNO | uint32(e) }

func stmt(code uint16, k uint32) unix.SockFilter { return unix.SockFilter{Code: code, K: k} }

func jump(code uint16, k uint32, jt, jf uint8) unix.SockFilter {
	return unix.SockFilter{Code: code, K: k, Jt: jt, Jf: jf}
}

// body is the check of one call, on its arguments: short, its jumps within itself.
func body(call int, o filterOptions) []unix.SockFilter {
	eperm := retErrno(unix.EPERM)
	// self: allowed when argument arg is 0 (the caller), else EPERM.
	self := func(arg int) []unix.SockFilter {
		return []unix.SockFilter{stmt(opLd, offArg(arg)), jump(opJeq, 0, 0, 1), stmt(opRet, retAllow), stmt(opRet, eperm)}
	}
	// whoSelf: allowed when (which, who) is (which, 0), the caller, else EPERM.
	whoSelf := func(which uint32) []unix.SockFilter {
		return []unix.SockFilter{stmt(opLd, offArg(0)), jump(opJeq, which, 0, 3),
			stmt(opLd, offArg(1)), jump(opJeq, 0, 0, 1), stmt(opRet, retAllow), stmt(opRet, eperm)}
	}
	// noSetID: refused when argument arg (a mode) sets the set-user-ID or set-group-ID
	// bit; else allowed, or handed to the supervisor.
	then := uint32(retAllow)
	if o.Notify {
		then = unix.SECCOMP_RET_USER_NOTIF
	}
	noSetID := func(arg int) []unix.SockFilter {
		return []unix.SockFilter{stmt(opLd, offArg(arg)), jump(opJset, unix.S_ISUID|unix.S_ISGID, 0, 1), stmt(opRet, eperm), stmt(opRet, then)}
	}
	switch call {
	case scPrlimit, scSchedSetscheduler, scSchedSetparam, scSchedSetattr, scSchedSetaffinity:
		return self(0)
	case scSetpriority:
		return whoSelf(0) // PRIO_PROCESS
	case scIoprioSet:
		return whoSelf(1) // IOPRIO_WHO_PROCESS
	case scSocket, scSocketcall:
		if !o.Unix {
			return nil
		}
		// socket(domain, …): AF_UNIX. socketcall(call, args): its arguments are in
		// memory, out of the filter's sight; SYS_SOCKET (1) of any domain, then.
		k := uint32(unix.AF_UNIX)
		if call == scSocketcall {
			k = 1
		}
		return []unix.SockFilter{stmt(opLd, offArg(0)), jump(opJeq, k, 0, 1), stmt(opRet, retErrno(unix.EACCES)), stmt(opRet, retAllow)}
	case scIoUringSetup:
		return []unix.SockFilter{stmt(opRet, retErrno(unix.ENOSYS))}
	case scChown, scFchown, scLchown:
		return toSelf(1, o)
	case scFchownat:
		return toSelf(2, o)
	case scChown16, scFchown16, scLchown16, // legacy: refused
		scSetxattr, scLsetxattr, scFsetxattr, scRemovexattr, scLremovexattr, scFremovexattr, scSetxattrat, scRemovexattrat:
		return []unix.SockFilter{stmt(opRet, eperm)}
	case scChmod, scFchmod:
		return noSetID(1)
	case scFchmodat, scFchmodat2:
		return noSetID(2)
	case scUtime, scUtimes, scFutimesat, scUtimensat:
		if !o.Notify {
			return nil
		}
		return []unix.SockFilter{stmt(opRet, unix.SECCOMP_RET_USER_NOTIF)}
	}
	return nil
}

// toSelf is the check of a chown whose uid is argument u and gid the next: allowed
// (or handed to the supervisor) when each is -1 or the agent's own, else EPERM.
func toSelf(u int, o filterOptions) []unix.SockFilter {
	then := uint32(retAllow)
	if o.Notify {
		then = unix.SECCOMP_RET_USER_NOTIF
	}
	const none = 0xffffffff
	return []unix.SockFilter{
		stmt(opLd, offArg(u)),
		jump(opJeq, none, 1, 0),
		jump(opJeq, o.UID, 0, 4),
		stmt(opLd, offArg(u+1)),
		jump(opJeq, none, 1, 0),
		jump(opJeq, o.GID, 0, 1),
		stmt(opRet, then),
		stmt(opRet, retErrno(unix.EPERM)),
	}
}

// seccompFilter is the BPF program for goarch under o; ok is false on an architecture
// it does not know. Its shape: the arch, each known one jumping to its list of numbers;
// each number in the list jumping to its call's body; what is in no list is allowed.
// The kernel compiles the program at every attempt's start, in time that grows with its
// length, so it is kept short: the tables of one arch that differ only by a bit their
// numbers carry (x86_64's and x32's) are one list with that bit masked off, and a number
// jumps straight to its body where the jump fits in a conditional jump's 8 bits.
func seccompFilter(goarch string, o filterOptions) (prog []unix.SockFilter, ok bool) {
	tables := abis(goarch)
	if tables == nil {
		return nil, false
	}
	bodies := map[int][]unix.SockFilter{}
	for c := 0; c < numCalls; c++ {
		if b := body(c, o); len(b) > 0 {
			bodies[c] = b
		}
	}
	if prog, ok := filterLayout(tables, bodies, true); ok {
		return prog, true
	}
	prog, _ = filterLayout(tables, bodies, false)
	return prog, true
}

// filterLayout lays seccompFilter's program out. With direct, a jeq jumps to its target
// itself, and ok is false when one lies beyond its reach (255 instructions); without,
// each jeq falls through to an unconditional jump ("ja") to it, which reaches anywhere.
func filterLayout(tables []abiTable, bodies map[int][]unix.SockFilter, direct bool) (prog []unix.SockFilter, ok bool) {
	type fix struct {
		at    int
		label string
		jt    bool // the jeq's jt, not a ja's K
	}
	var fixes []fix
	labels := map[string]int{}
	// jeq jumps to label when the accumulator is k, and goes on when not.
	jeq := func(k uint32, label string) {
		if direct {
			fixes = append(fixes, fix{len(prog), label, true})
			prog = append(prog, jump(opJeq, k, 0, 0))
			return
		}
		prog = append(prog, jump(opJeq, k, 0, 1))
		fixes = append(fixes, fix{len(prog), label, false})
		prog = append(prog, stmt(opJa, 0))
	}
	var archs []uint32
	groups := map[uint32][]abiTable{}
	for _, t := range tables {
		if groups[t.arch] == nil {
			archs = append(archs, t.arch)
		}
		groups[t.arch] = append(groups[t.arch], t)
	}
	prog = append(prog, stmt(opLd, offArch))
	for _, a := range archs {
		jeq(a, fmt.Sprintf("arch %#x", a))
	}
	prog = append(prog, stmt(opRet, retAllow))
	for _, a := range archs {
		labels[fmt.Sprintf("arch %#x", a)] = len(prog)
		prog = append(prog, stmt(opLd, offNr))
		group := groups[a]
		if bit, ok := oneListBut(group); ok {
			// nr &^ bit is one of the list's exactly when nr is one of it with or
			// without the bit: the two tables' numbers.
			prog = append(prog, stmt(opAnd, ^bit))
			group = group[:1] // its or is 0
		}
		for _, u := range group {
			for c := 0; c < numCalls; c++ {
				if u.calls[c] >= 0 && bodies[c] != nil {
					jeq(uint32(u.calls[c])|u.or, fmt.Sprintf("call %d", c))
				}
			}
		}
		prog = append(prog, stmt(opRet, retAllow))
	}
	for c := 0; c < numCalls; c++ {
		if b := bodies[c]; b != nil {
			labels[fmt.Sprintf("call %d", c)] = len(prog)
			prog = append(prog, b...)
		}
	}
	for _, f := range fixes {
		to, ok := labels[f.label]
		if !ok {
			panic("seccomp filter: no label " + f.label)
		}
		d := to - f.at - 1
		if !f.jt {
			prog[f.at].K = uint32(d)
			continue
		}
		if d > 255 {
			return nil, false
		}
		prog[f.at].Jt = uint8(d)
	}
	return prog, true
}

// oneListBut reports whether the tables of one arch are one table of numbers, once as it
// is and once with a bit set (x86_64 and x32), and which bit.
func oneListBut(group []abiTable) (bit uint32, ok bool) {
	if len(group) != 2 || group[0].or != 0 || group[1].or == 0 || group[0].calls != group[1].calls {
		return 0, false
	}
	return group[1].or, true
}

// builtFilter is seccompFilter for this architecture under o, built once per o: the
// program is the same for every attempt of a run, and nothing writes it once built.
func builtFilter(o filterOptions) ([]unix.SockFilter, bool) {
	filters.Lock()
	defer filters.Unlock()
	if f, ok := filters.m[o]; ok {
		return f.prog, f.ok
	}
	prog, ok := seccompFilter(runtime.GOARCH, o)
	if filters.m == nil {
		filters.m = map[filterOptions]builtProg{}
	}
	filters.m[o] = builtProg{prog, ok}
	return prog, ok
}

type builtProg struct {
	prog []unix.SockFilter
	ok   bool
}

var filters struct {
	sync.Mutex
	m map[filterOptions]builtProg
}

// installFilter installs seccompFilter on the calling thread (the one that then starts
// or execs the agent: the filter goes with it, to every process it starts). It needs
// no_new_privs. With o.Notify it returns the filter's listener (close-on-exec), for
// supervise; else -1. On an architecture without a filter it does nothing, and the
// manual says so.
func installFilter(o filterOptions) (listener int, err error) {
	prog, ok := builtFilter(o)
	if !ok {
		return -1, nil
	}
	fprog := unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}
	if o.Notify {
		fd, _, e := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, unix.SECCOMP_FILTER_FLAG_NEW_LISTENER, uintptr(unsafe.Pointer(&fprog)))
		if e != 0 {
			return -1, fmt.Errorf("seccomp(SECCOMP_SET_MODE_FILTER, NEW_LISTENER): %w", e)
		}
		return int(fd), nil
	}
	if err := unix.Prctl(unix.PR_SET_SECCOMP, unix.SECCOMP_MODE_FILTER, uintptr(unsafe.Pointer(&fprog)), 0, 0); err != nil {
		return -1, fmt.Errorf("prctl(PR_SET_SECCOMP): %w", err)
	}
	return -1, nil
}
