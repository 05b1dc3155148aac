package sandbox

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// probeCommand makes the test binary play an agent that tries what the seccomp filter
// governs (probeMain), one line per move: "NAME: done" or "NAME: denied (why)".
const probeCommand = "__probe"

// victimCommand makes the test binary a process outside the sandbox for the probe to
// aim at: a sleep with no capability. (As root, the kernel already refuses a process
// without CAP_SYS_NICE the scheduling of one that has capabilities it lacks; git-ralph
// run by a user has none, and that is the case to test.)
const victimCommand = "__victim"

func victimMain() int {
	runtime.LockOSThread()
	if err := dropCapabilities(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	path, err := exec.LookPath("sleep")
	if err == nil {
		err = syscall.Exec(path, []string{"sleep", "1000"}, os.Environ())
	}
	fmt.Fprintln(os.Stderr, err)
	return 1
}

// probeMain: probe SOCKET VICTIM WORK OUTSIDE. SOCKET is a unix socket a process
// outside listens on; VICTIM the pid of a process outside; WORK a directory the agent
// may write, OUTSIDE one it may not.
func probeMain(args []string) int {
	sock, work, outside := args[0], args[2], args[3]
	victim, _ := strconv.Atoi(args[1])
	say := func(name string, err error) {
		if err != nil {
			fmt.Printf("%s: denied (%v)\n", name, err)
			return
		}
		fmt.Printf("%s: done\n", name)
	}
	// Unix sockets: the one outside, one of its own in its working tree, a pair.
	c, err := net.Dial("unix", sock)
	if err == nil {
		c.Close()
	}
	say("connect outside", errnoOf(err))
	l, err := net.Listen("unix", filepath.Join(work, "own.sock"))
	if err == nil {
		l.Close()
	}
	say("listen in work", errnoOf(err))
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM, 0)
	if err == nil {
		unix.Close(fds[0])
		unix.Close(fds[1])
	}
	say("socketpair", err)
	// Scheduling and priority: of the victim, and of itself.
	idle := struct{ prio int32 }{0}
	_, _, e := unix.Syscall(unix.SYS_SCHED_SETSCHEDULER, uintptr(victim), uintptr(unix.SCHED_IDLE), uintptr(unsafe.Pointer(&idle)))
	say("sched_setscheduler victim", errOf(e))
	say("setpriority victim", unix.Setpriority(unix.PRIO_PROCESS, victim, 19))
	var set unix.CPUSet
	_ = unix.SchedGetaffinity(0, &set)
	say("sched_setaffinity victim", unix.SchedSetaffinity(victim, &set))
	_, _, e = unix.Syscall(unix.SYS_IOPRIO_SET, 1, uintptr(victim), 3<<13) // IOPRIO_CLASS_IDLE
	say("ioprio_set victim", errOf(e))
	say("setpriority self", unix.Setpriority(unix.PRIO_PROCESS, 0, 5))
	_, _, e = unix.Syscall(unix.SYS_IOPRIO_SET, 1, 0, 2<<13|4)
	say("ioprio_set self", errOf(e))
	// Modes, owners, attributes.
	script := filepath.Join(work, "run.sh")
	err = os.WriteFile(script, []byte("#!/bin/sh\n"), 0o644)
	if err == nil {
		err = os.Chmod(script, 0o755)
	}
	say("chmod +x in work", err)
	say("chmod setuid in work", unix.Chmod(script, 0o4755))
	say("chown in work", unix.Chown(script, os.Getuid(), os.Getgid()))
	say("chown in work to another group", unix.Chown(script, -1, os.Getgid()+4242))
	say("chown outside", unix.Chown(filepath.Join(outside, "plain"), os.Getuid(), os.Getgid()))
	say("setxattr in work", unix.Setxattr(script, "user.ralph", []byte("x"), 0))
	say("setxattr outside", unix.Setxattr(filepath.Join(outside, "plain"), "user.ralph", []byte("x"), 0))
	// Modes and times: in its working tree, and outside it.
	plain := filepath.Join(outside, "plain")
	old := time.Date(2001, 1, 1, 0, 0, 0, 0, time.UTC)
	say("chmod outside", unix.Chmod(plain, 0o666))
	say("utime outside", errnoOf(os.Chtimes(plain, old, old)))
	say("touch outside", unix.UtimesNanoAt(unix.AT_FDCWD, plain, []unix.Timespec{{Nsec: unix.UTIME_NOW}, {Nsec: unix.UTIME_NOW}}, 0))
	say("utime in work", errnoOf(os.Chtimes(script, old, old)))
	f, err := os.Open(script)
	if err == nil {
		err = unix.Fchmod(int(f.Fd()), 0o700)
		f.Close()
	}
	say("fchmod in work", err)
	// From a thread that is not the process's first (libuv's pool does its file calls so).
	done := make(chan error)
	var spawn func()
	spawn = func() {
		runtime.LockOSThread() // never unlocked: the thread ends with the goroutine
		if unix.Gettid() == os.Getpid() {
			go spawn() // another goroutine, another thread, while this one holds the first
			select {}
		}
		f, err := os.Open(script)
		if err == nil {
			err = unix.Fchmod(int(f.Fd()), 0o700)
			f.Close()
		}
		done <- err
	}
	go spawn()
	say("fchmod in work from a thread", <-done)
	if fi, err := os.Stat(script); err == nil && fi.Mode().Perm() == 0o700 && fi.ModTime().Equal(old) {
		fmt.Println("work script 0700, 2001")
	}
	return 0
}

func errOf(e unix.Errno) error {
	if e == 0 {
		return nil
	}
	return e
}

// errnoOf is err's system error, the rest of its message left out.
func errnoOf(err error) error {
	var e unix.Errno
	if err != nil && asErrno(err, &e) {
		return e
	}
	return err
}

func asErrno(err error, e *unix.Errno) bool {
	for err != nil {
		if x, ok := err.(unix.Errno); ok {
			*e = x
			return true
		}
		u, ok := err.(interface{ Unwrap() error })
		if !ok {
			return false
		}
		err = u.Unwrap()
	}
	return false
}

// What Landlock does not govern, the filter refuses, and what an agent needs of it
// still works: no unix socket below ABI 9 (but a pair), no scheduling, priority or
// I/O priority of another process (its own, yes), no set-user-ID bit, no owner, no
// extended attribute; chmod +x of its own script. The same moves without the sandbox
// all succeed (the control), so that each refusal is the sandbox's.
func TestFilterHoldsTheAgent(t *testing.T) {
	s := needLandlock(t)
	if !seccompKnown() {
		t.Skip("no seccomp filter on " + runtimeArch())
	}
	root, work, outside, _ := holdDirs(t)
	if err := os.WriteFile(filepath.Join(outside, "plain"), []byte("PLAIN\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(outside, "svc.sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	victim := exec.Command(self, victimCommand)
	if err := victim.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = victim.Process.Kill(); _ = victim.Wait() }()
	argv := []string{self, probeCommand, sock, strconv.Itoa(victim.Process.Pid), work, outside}

	// The control: no sandbox.
	ctl, err := exec.Command(argv[0], argv[1:]...).CombinedOutput()
	if err != nil {
		t.Fatalf("control: %v\n%s", err, ctl)
	}
	xattrs := !strings.Contains(string(ctl), "setxattr in work: denied") // tmpfs without user xattrs: not a test of ours
	for _, line := range strings.Split(strings.TrimSpace(string(ctl)), "\n") {
		// (a group of another's is the kernel's to refuse to a user, not root)
		if strings.Contains(line, "another group") && os.Getuid() != 0 {
			continue
		}
		if strings.Contains(line, ": ") && !strings.HasSuffix(line, ": done") && !(strings.HasPrefix(line, "setxattr") && !xattrs) {
			t.Errorf("control: %s", line)
		}
	}

	p := &Policy{ABI: min(s.ABI, maxABI), Write: []string{work, "/dev/null"}}
	_ = root
	out, status, err := runLauncher(t, p, argv...)
	if err != nil || status != "" {
		t.Fatalf("launch: %v %q\n%s", err, status, out)
	}
	want := []string{
		"socketpair: done",
		"sched_setscheduler victim: denied (operation not permitted)",
		"setpriority victim: denied (operation not permitted)",
		"sched_setaffinity victim: denied (operation not permitted)",
		"ioprio_set victim: denied (operation not permitted)",
		"setpriority self: done",
		"ioprio_set self: done",
		"chmod +x in work: done",
		"chmod setuid in work: denied (operation not permitted)",
		"chown in work: done",
		"chown in work to another group: denied (operation not permitted)",
	}
	if xattrs {
		want = append(want, "setxattr in work: denied (operation not permitted)", "setxattr outside: denied (operation not permitted)")
	}
	if p.ABI < 9 {
		want = append(want, "connect outside: denied (permission denied)", "listen in work: denied (permission denied)")
	} else {
		want = append(want, "connect outside: denied (permission denied)", "listen in work: done")
	}
	for _, w := range want {
		if !strings.Contains(out, w+"\n") {
			t.Errorf("no %q in the output:\n%s", w, out)
		}
	}

	// A socket the user names: below ABI 9, unix sockets are allowed again, all of them.
	p.Sockets = []string{sock}
	out, status, err = runLauncher(t, p, argv...)
	if err != nil || status != "" {
		t.Fatalf("launch: %v %q\n%s", err, status, out)
	}
	for _, w := range []string{"connect outside: done", "listen in work: done", "chown in work to another group: denied (operation not permitted)"} {
		if !strings.Contains(out, w+"\n") {
			t.Errorf("with ralph.sandboxSockets: no %q in the output:\n%s", w, out)
		}
	}
}

func runtimeArch() string { return runtime.GOARCH }

// Started directly, the agent's chmod and utime go through git-ralph's supervisor: done
// on its own files in its working tree (chmod +x, fchmod, a set time, touch), refused
// on a file of the user's outside it. The control (no sandbox) does all of them.
func TestSupervisorDecidesModesAndTimes(t *testing.T) {
	s := needLandlock(t)
	if !seccompKnown() {
		t.Skip("no seccomp filter on " + runtimeArch())
	}
	_, work, outside, _ := holdDirs(t)
	plain := filepath.Join(outside, "plain")
	if err := os.WriteFile(plain, []byte("PLAIN\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var before unix.Stat_t
	if err := unix.Stat(plain, &before); err != nil {
		t.Fatal(err)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(t.TempDir(), "none.sock")
	argv := []string{self, probeCommand, sock, "0", work, outside}
	// The working tree as named, and through a link of the user's: the supervisor knows
	// it by its real path either way.
	link := filepath.Join(t.TempDir(), "work-link")
	if err := os.Symlink(work, link); err != nil {
		t.Fatal(err)
	}
	for _, named := range []string{work, link} {
		p := Policy{ABI: min(s.ABI, maxABI), Write: []string{named, "/dev/null"}}
		checkSupervised(t, runDirect(t, p, self, argv...))
	}
	var after unix.Stat_t
	if err := unix.Stat(plain, &after); err != nil {
		t.Fatal(err)
	}
	if after.Mode != before.Mode || after.Mtim != before.Mtim {
		t.Errorf("the file outside changed: mode %o, was %o; mtime %v, was %v", after.Mode, before.Mode, after.Mtim, before.Mtim)
	}
	// The control: the same moves without the sandbox are all done.
	ctl, err := exec.Command(argv[0], argv[1:]...).CombinedOutput()
	if err != nil {
		t.Fatalf("control: %v\n%s", err, ctl)
	}
	for _, w := range []string{"chmod outside: done", "utime outside: done", "touch outside: done"} {
		if !strings.Contains(string(ctl), w+"\n") {
			t.Errorf("control: no %q in:\n%s", w, ctl)
		}
	}
}

// Through the launcher, the filter's listener comes back to git-ralph before the agent
// starts: its supervisor decides the agent's chmod and utime as for a direct start.
func TestLauncherSupervises(t *testing.T) {
	s := needLandlock(t)
	if !seccompKnown() {
		t.Skip("no seccomp filter on " + runtimeArch())
	}
	t.Cleanup(func() { launcherOnly.Store(false) })
	UseLauncher()
	_, work, outside, _ := holdDirs(t)
	plain := filepath.Join(outside, "plain")
	if err := os.WriteFile(plain, []byte("PLAIN\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	argv := []string{self, probeCommand, filepath.Join(t.TempDir(), "none.sock"), "0", work, outside}
	var buf strings.Builder
	p := &Policy{ABI: min(s.ABI, maxABI), Write: []string{work, "/dev/null"}}
	cmd, err := Start(p, &exec.Cmd{Path: self, Args: argv, Stdout: &buf, Stderr: &buf})
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("%v\n%s", err, buf.String())
	}
	if cmd.Path != Self {
		t.Errorf("started %s, not the launcher", cmd.Path)
	}
	checkSupervised(t, buf.String())
	if fi, err := os.Stat(plain); err != nil || fi.Mode().Perm() != 0o644 {
		t.Errorf("the file outside: %v %v", fi.Mode(), err)
	}
}

// The filter an attempt installs is built once for its options, and is the one
// seccompFilter builds for them: each option gives its own.
func TestBuiltFilterOncePerOptions(t *testing.T) {
	a := filterOptions{Unix: true, Notify: true, UID: 1000, GID: 1000}
	b := filterOptions{Notify: true, UID: 1000, GID: 1000}
	for _, o := range []filterOptions{a, b, a} {
		got, ok := builtFilter(o)
		want, wantOK := seccompFilter(runtime.GOARCH, o)
		if ok != wantOK || !slices.Equal(got, want) {
			t.Fatalf("builtFilter(%+v) is not seccompFilter's program", o)
		}
	}
	pa, _ := builtFilter(a)
	pb, _ := builtFilter(b)
	if slices.Equal(pa, pb) {
		t.Error("two options got one program")
	}
	if again, _ := builtFilter(a); len(pa) > 0 && &again[0] != &pa[0] {
		t.Error("the program was built again")
	}
}

// checkSupervised checks the probe's output (out) of a start whose supervisor decided
// its chmod, utime and chown: done in its working tree, refused outside.
func checkSupervised(t *testing.T, out string) {
	t.Helper()
	for _, w := range []string{
		"chmod +x in work: done",
		"chmod setuid in work: denied (operation not permitted)",
		"utime in work: done",
		"fchmod in work: done",
		"fchmod in work from a thread: done",
		"work script 0700, 2001",
		"chmod outside: denied (operation not permitted)",
		"utime outside: denied (operation not permitted)",
		"touch outside: denied (operation not permitted)",
		"chown in work: done",
		"chown outside: denied (operation not permitted)",
	} {
		if !strings.Contains(out, w+"\n") {
			t.Errorf("no %q in the output:\n%s", w, out)
		}
	}
}
