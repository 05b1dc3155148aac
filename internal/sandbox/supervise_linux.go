package sandbox

import (
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The supervisor: the filter hands chmod, utime and a chown to the agent's own ids to
// git-ralph (SECCOMP_RET_USER_NOTIF), which reads the arguments once, opens the file
// itself, and does the call on that file only beneath the agent's writable paths;
// elsewhere EPERM. See docs/SANDBOX.md, "What else it is denied".

// seccompNotif is struct seccomp_notif; seccompNotifResp struct seccomp_notif_resp.
type seccompNotif struct {
	id    uint64
	pid   uint32
	flags uint32
	nr    int32
	arch  uint32
	ip    uint64
	args  [6]uint64
}

type seccompNotifResp struct {
	id    uint64
	val   int64
	error int32
	flags uint32
}

// supervisor is what the calls of one agent's processes are decided by.
type supervisor struct {
	writes []string          // the agent's writable paths, their links resolved
	calls  map[[2]uint32]int // (audit arch, number) → call
	native map[uint32]bool   // the audit arches whose structures are this process's
}

func newSupervisor(p Policy) *supervisor {
	var writes []string
	for _, w := range p.Write {
		if r, err := filepath.EvalSymlinks(w); err == nil {
			writes = append(writes, r)
		}
	}
	return supervising(writes)
}

// supervising is the supervisor of an agent whose writable paths are writes, their
// links resolved (as the ruleset's writable rules resolved them).
func supervising(writes []string) *supervisor {
	t := callsOf()
	return &supervisor{writes: writes, calls: t.calls, native: t.native}
}

// callsOf are the calls the filter hands over, by audit arch and number, and the
// arches whose structures are this process's: worked out once, read by every
// supervisor.
var callsOf = sync.OnceValue(func() (t struct {
	calls  map[[2]uint32]int
	native map[uint32]bool
}) {
	t.calls, t.native = map[[2]uint32]int{}, map[uint32]bool{}
	for i, a := range abis(runtime.GOARCH) {
		if i == 0 {
			t.native[a.arch] = true // x86_64 and x32 share the structures that matter
		}
		for c, nr := range a.calls {
			if nr >= 0 {
				t.calls[[2]uint32{a.arch, uint32(nr) | a.or}] = c
			}
		}
	}
	return t
})

// serve answers the notifications of listener until no process is left under the
// filter, then closes it.
func (s *supervisor) serve(listener int) {
	defer unix.Close(listener)
	fds := []unix.PollFd{{Fd: int32(listener), Events: unix.POLLIN}}
	for {
		if _, err := unix.Poll(fds, -1); err != nil {
			if errors.Is(err, unix.EINTR) {
				continue
			}
			return
		}
		if fds[0].Revents&unix.POLLIN == 0 {
			return // POLLHUP: every process under the filter has gone
		}
		var n seccompNotif
		if _, _, e := unix.Syscall(unix.SYS_IOCTL, uintptr(listener), unix.SECCOMP_IOCTL_NOTIF_RECV, uintptr(unsafe.Pointer(&n))); e != 0 {
			if e == unix.EINTR || e == unix.ENOENT {
				continue // the caller went away meanwhile
			}
			return
		}
		errno := s.decide(listener, &n)
		resp := seccompNotifResp{id: n.id, error: -int32(errno)}
		_, _, _ = unix.Syscall(unix.SYS_IOCTL, uintptr(listener), unix.SECCOMP_IOCTL_NOTIF_SEND, uintptr(unsafe.Pointer(&resp)))
	}
}

// target is what a call names: a directory and a path in it (or the directory's own
// file, empty), or one of the caller's descriptors; and whether a final link is
// followed.
type target struct {
	dirfd  int32
	path   uint64 // a pointer in the caller's memory; 0: none
	fd     int32  // with fromFD
	fromFD bool
	follow bool
}

// request is what one notification asks: the call's target and its arguments.
type request struct {
	t         target
	op        int    // opChmod, opChown, opTime
	mode      uint32 // a chmod's
	uid, gid  int    // a chown's, -1: unchanged
	timesPtr  uint64 // a utime's times in the caller's memory; 0: now
	timesKind int    // 0 timespec[2], 1 timeval[2], 2 utimbuf
	flags     uint64
}

const (
	opChmod = iota
	opChown
	opTime
)

// request reads the call n asks for from its registers; false: not one supervised.
func (s *supervisor) request(n *seccompNotif) (request, bool) {
	call, ok := s.calls[[2]uint32{n.arch, uint32(n.nr)}]
	if !ok {
		return request{}, false
	}
	a := n.args
	chown := func(t target, u, g uint64) request {
		return request{t: t, op: opChown, uid: int(int32(u)), gid: int(int32(g))}
	}
	var r request
	switch call {
	case scChmod:
		r = request{t: target{dirfd: unix.AT_FDCWD, path: a[0], follow: true}, mode: uint32(a[1])}
	case scFchmod:
		r = request{t: target{fd: int32(a[0]), fromFD: true}, mode: uint32(a[1])}
	case scFchmodat:
		r = request{t: target{dirfd: int32(a[0]), path: a[1], follow: true}, mode: uint32(a[2])}
	case scFchmodat2:
		r = request{t: target{dirfd: int32(a[0]), path: a[1], follow: a[3]&unix.AT_SYMLINK_NOFOLLOW == 0}, mode: uint32(a[2]), flags: a[3]}
	case scChown, scLchown:
		r = chown(target{dirfd: unix.AT_FDCWD, path: a[0], follow: call == scChown}, a[1], a[2])
	case scFchown:
		r = chown(target{fd: int32(a[0]), fromFD: true}, a[1], a[2])
	case scFchownat:
		r = chown(target{dirfd: int32(a[0]), path: a[1], follow: a[4]&unix.AT_SYMLINK_NOFOLLOW == 0}, a[2], a[3])
		r.flags = a[4]
	case scUtime:
		r = request{t: target{dirfd: unix.AT_FDCWD, path: a[0], follow: true}, op: opTime, timesPtr: a[1], timesKind: 2}
	case scUtimes:
		r = request{t: target{dirfd: unix.AT_FDCWD, path: a[0], follow: true}, op: opTime, timesPtr: a[1], timesKind: 1}
	case scFutimesat:
		r = request{t: target{dirfd: int32(a[0]), path: a[1], follow: true}, op: opTime, timesPtr: a[2], timesKind: 1}
	case scUtimensat:
		r = request{t: target{dirfd: int32(a[0]), path: a[1], follow: a[3]&unix.AT_SYMLINK_NOFOLLOW == 0}, op: opTime, timesPtr: a[2], flags: a[3]}
		if a[1] == 0 { // futimens: the descriptor itself
			r.t = target{fd: int32(a[0]), fromFD: true}
		}
	default:
		return request{}, false
	}
	return r, true
}

// decide does the call n asks for when it may be done, and returns its errno (0: done).
func (s *supervisor) decide(listener int, n *seccompNotif) unix.Errno {
	r, ok := s.request(n)
	if !ok || r.op == opTime && !s.native[n.arch] {
		return unix.ENOSYS
	}
	pid := int(n.pid)
	mem, err := os.Open("/proc/" + strconv.Itoa(pid) + "/mem")
	if err != nil {
		return unix.EPERM
	}
	defer mem.Close()
	var path string
	if r.t.path != 0 {
		if path, err = readString(mem, r.t.path); err != nil {
			return unix.EFAULT
		}
	}
	var times []unix.Timespec // nil: now
	if r.op == opTime && r.timesPtr != 0 {
		if times, err = readTimes(mem, r.timesPtr, r.timesKind); err != nil {
			return unix.EFAULT
		}
	}
	// The caller is still the one that asked (its pid not reused since).
	if _, _, e := unix.Syscall(unix.SYS_IOCTL, uintptr(listener), unix.SECCOMP_IOCTL_NOTIF_ID_VALID, uintptr(unsafe.Pointer(&n.id))); e != 0 {
		return unix.ENOENT
	}
	fd, errno := s.open(pid, r.t, path, r.flags)
	if errno != 0 {
		return errno
	}
	defer unix.Close(fd)
	return s.apply(pid, fd, r, times)
}

// apply does r on fd, git-ralph's descriptor of what the caller pid named, if it lies
// beneath the agent's writable paths, is no device, and is the agent's own (a utime to
// now: or writable to it).
func (s *supervisor) apply(pid, fd int, r request, times []unix.Timespec) unix.Errno {
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return errnoOfErr(err)
	}
	real, err := os.Readlink("/proc/self/fd/" + strconv.Itoa(fd))
	if err != nil || !Covers(s.writes, real) {
		return unix.EPERM
	}
	if k := st.Mode & unix.S_IFMT; k == unix.S_IFCHR || k == unix.S_IFBLK {
		return unix.EPERM
	}
	agentUID, ok := fsuid(pid)
	if !ok {
		return unix.EPERM
	}
	owner := st.Uid == agentUID
	self := "/proc/self/fd/" + strconv.Itoa(fd)
	switch r.op {
	case opChown: // to the agent's own user and group (the filter let no other through)
		if !owner {
			return unix.EPERM
		}
		return errnoOfErr(unix.Fchownat(unix.AT_FDCWD, self, r.uid, r.gid, 0))
	case opChmod:
		if !owner {
			return unix.EPERM
		}
		if !r.t.follow && st.Mode&unix.S_IFMT == unix.S_IFLNK {
			return unix.EOPNOTSUPP
		}
		return errnoOfErr(unix.Fchmodat(unix.AT_FDCWD, self, r.mode&0o7777, 0))
	}
	now := times == nil || times[0].Nsec == unix.UTIME_NOW && times[1].Nsec == unix.UTIME_NOW
	if !owner && !(now && unix.Faccessat(unix.AT_FDCWD, self, unix.W_OK, unix.AT_EACCESS) == nil) {
		return unix.EPERM
	}
	var tp uintptr
	if times != nil {
		tp = uintptr(unsafe.Pointer(&times[0]))
	}
	p, _ := unix.BytePtrFromString(self)
	atFDCWD := unix.AT_FDCWD
	_, _, e := unix.Syscall6(unix.SYS_UTIMENSAT, uintptr(atFDCWD), uintptr(unsafe.Pointer(p)), tp, 0, 0, 0)
	return e
}

// open opens what t names in the caller pid's view (its working directory, its
// descriptors), as an O_PATH descriptor of git-ralph's own.
func (s *supervisor) open(pid int, t target, path string, flags uint64) (int, unix.Errno) {
	// The caller's descriptor fd, as a descriptor of the file it is open on (through
	// /proc/<tid>/fd: pid is the calling thread's, a thread pool's included, and this
	// works on every kernel with the notifications).
	getfd := func(fd int32) (int, unix.Errno) {
		got, err := unix.Open("/proc/"+strconv.Itoa(pid)+"/fd/"+strconv.Itoa(int(fd)), unix.O_PATH|unix.O_CLOEXEC, 0)
		if err != nil {
			return -1, unix.EBADF
		}
		return got, 0
	}
	if t.fromFD {
		return getfd(t.fd)
	}
	if path == "" && flags&unix.AT_EMPTY_PATH == 0 {
		return -1, unix.ENOENT
	}
	dir := -1
	if !strings.HasPrefix(path, "/") {
		var e unix.Errno
		if t.dirfd == unix.AT_FDCWD {
			d, err := unix.Open("/proc/"+strconv.Itoa(pid)+"/cwd", unix.O_PATH|unix.O_CLOEXEC, 0)
			if err != nil {
				return -1, unix.ENOENT
			}
			dir = d
		} else if dir, e = getfd(t.dirfd); e != 0 {
			return -1, e
		}
		defer unix.Close(dir)
	}
	if path == "" {
		d, err := unix.Dup(dir)
		if err != nil {
			return -1, errnoOfErr(err)
		}
		return d, 0
	}
	how := unix.O_PATH | unix.O_CLOEXEC
	if !t.follow {
		how |= unix.O_NOFOLLOW
	}
	if dir < 0 {
		// An absolute path, in the caller's mount namespace (its terminals' devpts is
		// not git-ralph's): from its root, which the path cannot leave.
		root, err := unix.Open("/proc/"+strconv.Itoa(pid)+"/root", unix.O_PATH|unix.O_CLOEXEC, 0)
		if err != nil {
			return -1, unix.ENOENT
		}
		defer unix.Close(root)
		fd, err := unix.Openat2(root, path, &unix.OpenHow{Flags: uint64(how), Resolve: unix.RESOLVE_IN_ROOT})
		if err != nil {
			return -1, errnoOfErr(err)
		}
		return fd, 0
	}
	fd, err := unix.Openat(dir, path, how, 0)
	if err != nil {
		return -1, errnoOfErr(err)
	}
	return fd, 0
}

// readString reads a NUL-terminated string at addr of mem, at most PATH_MAX bytes.
func readString(mem *os.File, addr uint64) (string, error) {
	var buf [unix.PathMax]byte
	n, err := mem.ReadAt(buf[:], int64(addr))
	if n == 0 && err != nil {
		return "", err
	}
	if i := strings.IndexByte(string(buf[:n]), 0); i >= 0 {
		return string(buf[:i]), nil
	}
	return "", unix.ENAMETOOLONG
}

// readTimes reads two times at addr of mem: timespec[2], timeval[2] or a utimbuf
// (kind 0, 1, 2), as timespecs.
func readTimes(mem *os.File, addr uint64, kind int) ([]unix.Timespec, error) {
	var b [32]byte
	size := 32
	if kind == 2 {
		size = 16
	}
	if _, err := mem.ReadAt(b[:size], int64(addr)); err != nil {
		return nil, err
	}
	w := func(i int) int64 { return int64(binary.NativeEndian.Uint64(b[8*i:])) }
	switch kind {
	case 1:
		return []unix.Timespec{{Sec: w(0), Nsec: w(1) * 1000}, {Sec: w(2), Nsec: w(3) * 1000}}, nil
	case 2:
		return []unix.Timespec{{Sec: w(0)}, {Sec: w(1)}}, nil
	}
	return []unix.Timespec{{Sec: w(0), Nsec: w(1)}, {Sec: w(2), Nsec: w(3)}}, nil
}

// fsuid is the file system uid of process pid (/proc/pid/status).
func fsuid(pid int) (uint32, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0, false
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "Uid:"); ok {
			f := strings.Fields(rest)
			if len(f) == 4 {
				n, err := strconv.ParseUint(f[3], 10, 32)
				return uint32(n), err == nil
			}
		}
	}
	return 0, false
}

func errnoOfErr(err error) unix.Errno {
	if err == nil {
		return 0
	}
	var e unix.Errno
	if errors.As(err, &e) {
		return e
	}
	return unix.EPERM
}
