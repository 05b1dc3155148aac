package fakeagent

import (
	"bytes"
	"compress/zlib"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// attack plays a hostile agent's move (the "attack" step): what a prompt injection
// would have an agent do to the user's machine or to git-ralph. It prints one line on
// stderr, "fake-agent attack VERB ARG: done" or "...: denied (why)", so a test can
// assert that its sandbox refused the move and that the loop went on:
//
//	write PATH     append a line to PATH (created if missing)
//	mkdir PATH     make a directory
//	read PATH      read a file
//	environ        read git-ralph's /proc/<pid>/environ (the agent's parent)
//	signal         SIGSTOP git-ralph, then SIGCONT it (so that a test never hangs)
//	prlimit        set git-ralph's CPU limit (to what it is: a lower one would kill it)
//	sched          set git-ralph's scheduling policy and nice value (to what they are: the
//	               permission is the one that would put it on SCHED_IDLE)
//	connect SOCK   connect to the unix socket SOCK and send it a line
//	chmod MODE PATH
//	               chmod PATH to MODE (octal: 4755 sets the set-user-ID bit)
//	chown PATH     chown PATH to the agent's own user and group (no change of owner)
//	setxattr PATH  set the extended attribute user.ralph on PATH
//	openpty        make a pseudo-terminal (/dev/ptmx, then its /dev/pts/N), and pass a
//	               line through it: what a CLI's shell tool does
//	link TARGET PATH
//	               replace PATH (whatever it is) with a symbolic link to TARGET
//	daemon PIDFILE TARGET
//	               leave a process in a session of its own, which writes its pid to
//	               PIDFILE and, once git-ralph has exited, appends to TARGET
//	rewrite-object REV
//	               rewrite the loose object REV names (git rev-parse) with other
//	               content under the same id: history changed where fsck alone sees it
//	starve N PIDFILE TARGET
//	               SCHED_IDLE on git-ralph's threads, and N busy processes left in
//	               sessions of their own (pids in PIDFILE) that append to TARGET
//	               once git-ralph has exited
func (f *fake) attack(spec string) {
	verb, arg, _ := strings.Cut(strings.TrimSpace(f.subst(spec)), " ")
	arg = strings.TrimSpace(arg)
	switch verb {
	case "write", "mkdir", "read", "connect", "chown", "setxattr":
		arg = f.path(arg)
	case "chmod":
		mode, path, _ := strings.Cut(arg, " ")
		arg = mode + " " + f.path(strings.TrimSpace(path))
	case "daemon", "link":
		first, second, _ := strings.Cut(arg, " ")
		arg = f.path(first) + " " + f.path(strings.TrimSpace(second))
	}
	var err error
	switch verb {
	case "write":
		var file *os.File
		if file, err = os.OpenFile(arg, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644); err == nil {
			_, err = file.WriteString("written by the agent\n")
			if cerr := file.Close(); err == nil {
				err = cerr
			}
		}
	case "mkdir":
		err = os.Mkdir(arg, 0o755)
	case "read":
		_, err = os.ReadFile(arg)
	case "environ":
		_, err = os.ReadFile("/proc/" + strconv.Itoa(os.Getppid()) + "/environ")
	case "signal":
		if err = syscall.Kill(os.Getppid(), syscall.SIGSTOP); err == nil {
			err = syscall.Kill(os.Getppid(), syscall.SIGCONT)
		}
	case "link":
		target, path, _ := strings.Cut(arg, " ")
		if err = os.RemoveAll(path); err == nil {
			err = os.Symlink(target, path)
		}
	case "daemon":
		pidfile, target, _ := strings.Cut(arg, " ")
		err = f.leaveDaemon(pidfile, target)
	case "prlimit":
		err = prlimitParent()
	case "rewrite-object":
		err = rewriteObject(f.cwd, arg)
	case "sched":
		err = schedParent()
	case "connect":
		err = connectUnix(arg)
	case "chmod":
		mode, path, _ := strings.Cut(arg, " ")
		err = chmodRaw(path, mode)
	case "chown":
		err = chownSelf(arg)
	case "setxattr":
		err = setxattr(arg)
	case "starve":
		err = f.starve(arg)
	case "openpty":
		err = openPTY()
	default:
		err = fmt.Errorf("unknown attack %q", verb)
	}
	outcome := "done"
	if err != nil {
		outcome = "denied (" + errText(err) + ")"
	}
	fmt.Fprintf(f.stderr, "fake-agent attack %s: %s\n", strings.TrimSpace(verb+" "+arg), outcome)
}

// errText is err's innermost message ("permission denied", "operation not permitted").
func errText(err error) string {
	for {
		u := errors.Unwrap(err)
		if u == nil {
			return err.Error()
		}
		err = u
	}
}

// daemonEnv carries a daemon's orders to the fake re-executed as one: its pid file,
// its target, and the pid of the git-ralph it outlives, separated by newlines.
const daemonEnv = "FAKE_AGENT_DAEMON"

// leaveDaemon starts the fake again as a daemon in a session of its own and returns
// once it has written its pid: it is still there when the agent ends.
func (f *fake) leaveDaemon(pidfile, target string) error {
	if !f.proc {
		return usagef("a daemon needs a real process: run the fake through Main")
	}
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	cmd := exec.Command(exe)
	cmd.Args[0] = f.args[0]
	cmd.Dir = f.cwd
	cmd.Env = append(f.childEnv(), daemonEnv+"="+pidfile+"\n"+target+"\n"+strconv.Itoa(os.Getppid()))
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return err
	}
	_ = cmd.Process.Release()
	for { // its pid file is written whole, by rename
		if fi, err := os.Stat(pidfile); err == nil && fi.Size() > 0 {
			return nil
		}
		if f.scriptGone() {
			return errors.New("the test is gone")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// daemon is the fake re-executed by leaveDaemon: it writes its pid, waits for
// git-ralph to exit, appends to its target, and stays until its test is gone.
func daemon(orders string) int {
	parts := strings.Split(orders, "\n")
	if len(parts) != 3 {
		fmt.Fprintln(os.Stderr, "fake-agent daemon: bad orders")
		return exitUsage
	}
	pidfile, target := parts[0], parts[1]
	ralph, _ := strconv.Atoi(parts[2])
	if err := writeFileAtomic(pidfile, []byte(strconv.Itoa(os.Getpid())+"\n")); err != nil {
		return 1
	}
	f := &fake{env: os.Getenv}
	wrote := false
	for !f.scriptGone() {
		if _, err := os.Stat("/proc/" + strconv.Itoa(ralph)); !wrote && ralph > 1 && err != nil {
			if file, err := os.OpenFile(target, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644); err == nil {
				_, _ = file.WriteString("written after git-ralph exited\n")
				_ = file.Close()
			}
			wrote = true
		}
		time.Sleep(20 * time.Millisecond)
	}
	return 0
}

// rewriteObject replaces the loose object rev names with a blob "evil\n" under the same
// id, as a same-user process can where the git directory is writable.
func rewriteObject(dir, rev string) error {
	cmd := exec.Command("git", "rev-parse", "--path-format=absolute", "--git-common-dir", rev)
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		return err
	}
	lines := strings.Fields(string(out))
	if len(lines) != 2 {
		return fmt.Errorf("rev-parse said %q", out)
	}
	id := lines[1]
	path := filepath.Join(lines[0], "objects", id[:2], id[2:])
	var z bytes.Buffer
	w := zlib.NewWriter(&z)
	w.Write([]byte("blob 5\x00evil\n"))
	w.Close()
	if err := os.Chmod(path, 0o644); err != nil {
		return err
	}
	return os.WriteFile(path, z.Bytes(), 0o444)
}
