package hooks

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"time"
)

// killGrace is the time between the polite signal and SIGKILL when a verify
// command is stopped. It is shorter than the grace git-ralph's loop gives the
// whole hook after an interrupt (3 s), so the command's process group is gone
// before the hook process itself is killed.
const killGrace = 2 * time.Second

// Command describes one run of the verify command.
type Command struct {
	Argv           []string // required; Argv[0] is looked up on PATH when it has no slash
	Dir            string   // required: the worktree root
	Env            []string // the whole environment; nil means the current one
	Stdout, Stderr io.Writer
	Timeout        time.Duration // 0: none
}

// Result is how a command ended.
type Result struct {
	ExitCode    int  // -1 when it was killed by a signal
	TimedOut    bool // the timeout was reached and its process group stopped
	Interrupted bool // ctx was cancelled and its process group stopped
}

// Failed reports whether the command did not succeed.
func (r Result) Failed() bool { return r.ExitCode != 0 || r.TimedOut || r.Interrupted }

// RunCommand runs c.Argv (never through a shell) in its own process group,
// stdin closed. When the timeout passes (SIGTERM) or ctx is cancelled
// (SIGINT), the whole group is signalled, then killed killGrace later: a test
// suite's children go with it. err is non-nil only when the command could not
// be started (exec.ErrNotFound when it is not on PATH).
func RunCommand(ctx context.Context, c Command) (Result, error) {
	if len(c.Argv) == 0 {
		return Result{ExitCode: -1}, errors.New("empty command")
	}
	cmd := exec.Command(c.Argv[0], c.Argv[1:]...)
	cmd.Dir, cmd.Env, cmd.Stdout, cmd.Stderr = c.Dir, c.Env, c.Stdout, c.Stderr
	cmd.SysProcAttr = groupAttr()
	// A background process of the suite that keeps our pipes open must not
	// hold us once the command itself has exited.
	cmd.WaitDelay = killGrace
	if err := cmd.Start(); err != nil {
		return Result{ExitCode: -1}, err
	}
	pid := cmd.Process.Pid

	var res Result
	done, stopped := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(stopped)
		var timer <-chan time.Time
		if c.Timeout > 0 {
			t := time.NewTimer(c.Timeout)
			defer t.Stop()
			timer = t.C
		}
		select {
		case <-done:
			return
		case <-timer:
			res.TimedOut = true
			signalGroup(pid, termSignal)
		case <-ctx.Done():
			res.Interrupted = true
			signalGroup(pid, os.Interrupt)
		}
		t := time.NewTimer(killGrace)
		defer t.Stop()
		select {
		case <-done:
		case <-t.C:
		}
		signalGroup(pid, os.Kill) // whatever of the group is left
	}()
	err := cmd.Wait()
	close(done)
	<-stopped
	res.ExitCode = cmd.ProcessState.ExitCode()
	if err == nil || errors.Is(err, exec.ErrWaitDelay) {
		res.ExitCode = 0
	}
	return res, nil
}

// NotFound reports whether err from RunCommand means the command is not on PATH.
func NotFound(err error) bool { return errors.Is(err, exec.ErrNotFound) }

// LocalHook returns the path of <dir>/<name>.local when it is a hook git
// would run: a file (symlinks followed) with an executable bit.
func LocalHook(dir, name string) (path string, ok bool, err error) {
	path = filepath.Join(dir, name+LocalSuffix)
	fi, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return path, false, nil
	}
	if err != nil {
		return path, false, err
	}
	return path, fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0, nil
}

// Local describes one run of a user's own hook kept as <name>.local.
type Local struct {
	Path           string   // required: from LocalHook
	Args           []string // the hook's arguments, as git gave them
	Env            []string // the whole environment; nil means the current one
	Stdin          io.Reader
	Stdout, Stderr io.Writer
}

// RunLocal runs a user's own hook the way git runs hooks: in the current
// directory, with git's arguments, stdin and environment (GIT_INDEX_FILE
// included: a pre-commit hook needs it), falling back to /bin/sh for a script
// without a #! line as git does. It returns the exit code (-1 when killed by
// a signal); err is non-nil only when the hook could not be started.
func RunLocal(l Local) (exitCode int, err error) {
	run := func(name string, args ...string) (int, error) {
		cmd := exec.Command(name, args...)
		cmd.Env, cmd.Stdin, cmd.Stdout, cmd.Stderr = l.Env, l.Stdin, l.Stdout, l.Stderr
		cmd.WaitDelay = killGrace
		if err := cmd.Start(); err != nil {
			return -1, err
		}
		err := cmd.Wait()
		if err == nil || errors.Is(err, exec.ErrWaitDelay) {
			return 0, nil
		}
		return cmd.ProcessState.ExitCode(), nil
	}
	code, err := run(l.Path, l.Args...)
	if err != nil && isNoExec(err) {
		return run("/bin/sh", append([]string{l.Path}, l.Args...)...)
	}
	return code, err
}
