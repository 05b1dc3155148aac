package agent

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/git-ralph/git-ralph/internal/sandbox"
)

// command is the process that runs argv: the agent itself, or, with req.Sandbox, the
// launcher that restricts itself and then becomes the agent, with the read end of its
// status pipe (see launched). env is the agent's environment (the command's is set);
// dir the attempt's directory, writable in the sandbox.
func command(d Driver, req Request, argv []string, env []string, dir string) (*exec.Cmd, *os.File, error) {
	if req.Sandbox == nil {
		cmd := exec.Command(argv[0], argv[1:]...)
		cmd.Env = env
		return cmd, nil, nil
	}
	name := argv[0]
	if strings.Contains(name, "/") && !filepath.IsAbs(name) {
		name = filepath.Join(req.Dir, name)
	}
	path, err := exec.LookPath(name)
	if err != nil {
		return nil, nil, &NotFoundError{Agent: d.Name(), Binary: argv[0], Install: d.InstallHint(), Err: err}
	}
	if path, err = filepath.Abs(path); err != nil {
		return nil, nil, err
	}
	pol := PolicyFor(d, req.Sandbox, env)
	pol.AddWrite(dir)
	if err := StateOf(d, env).Ensure(); err != nil {
		return nil, nil, fmt.Errorf("agent %q: create its state: %w", d.Name(), err)
	}
	launcherEnv := sandbox.LauncherEnv(pol, env)
	args, err := sandbox.LauncherArgs(pol, 3, path, argv)
	if err != nil {
		return nil, nil, err
	}
	r, w, err := os.Pipe()
	if err != nil {
		return nil, nil, err
	}
	return &exec.Cmd{Path: sandbox.Self, Args: args, Env: launcherEnv, ExtraFiles: []*os.File{w}}, r, nil
}

// PolicyFor is base with what d's agent must also write in env: its State (and a
// pseudo-terminal when it asks for one).
func PolicyFor(d Driver, base *sandbox.Policy, env []string) *sandbox.Policy {
	pol := base.Clone()
	st := StateOf(d, env)
	pol.AddWrite(st.Paths()...)
	if st.PTY {
		pol.AddWrite(sandbox.PTY...)
		pol.Dev = append(pol.Dev, sandbox.PTY...)
	}
	return pol
}

// closeLauncher closes a launcher's status pipe (status is nil for a plain command).
func closeLauncher(cmd *exec.Cmd, status *os.File) {
	if status != nil {
		status.Close()
		cmd.ExtraFiles[0].Close()
	}
}

// launched waits, for a launcher, until it has become the agent (the status pipe
// closes on exec with nothing written) or failed (it wrote why and exited; it is
// reaped here). It closes the pipe.
func launched(cmd *exec.Cmd, status *os.File) error {
	if status == nil {
		return nil
	}
	cmd.ExtraFiles[0].Close()
	msg, _ := io.ReadAll(io.LimitReader(status, 4<<10))
	status.Close()
	if len(msg) == 0 {
		return nil
	}
	_ = cmd.Wait()
	return errors.New(strings.TrimSpace(string(msg)))
}

// removeAll removes the attempt's directory. What the agent made unwritable in it
// (a directory of mode 0500) is made writable first, so that nothing is left.
func removeAll(dir string) {
	if os.RemoveAll(dir) == nil {
		return
	}
	_ = filepath.WalkDir(dir, func(p string, e os.DirEntry, err error) error {
		if err == nil && e.IsDir() {
			_ = os.Chmod(p, 0o700)
		}
		return nil
	})
	_ = os.RemoveAll(dir)
}
