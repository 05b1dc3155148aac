package agent

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/git-ralph/git-ralph/internal/sandbox"
)

// command is the process that runs argv, and, with req.Sandbox, the policy
// sandbox.Start starts it under (nil without). env is the agent's environment (the
// command's is set); dir the attempt's directory, writable in the sandbox.
func command(d Driver, req Request, argv []string, env []string, dir string) (*exec.Cmd, *sandbox.Policy, error) {
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
	return &exec.Cmd{Path: path, Args: argv, Env: env}, pol, nil
}

// PolicyFor is base with what d's agent must also write in env: its State (and
// pseudo-terminals when it asks for them).
func PolicyFor(d Driver, base *sandbox.Policy, env []string) *sandbox.Policy {
	pol := base.Clone()
	st := StateOf(d, env)
	pol.AddWrite(st.Paths()...)
	if st.PTY {
		pol.AddWrite(sandbox.PTY...)
		pol.Dev = append(pol.Dev, sandbox.PTY...)
		// Terminals of its own where it can have them; else the user's are reachable
		// too, which the level says.
		pol.PTY = sandbox.Terminals() == ""
	}
	return pol
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
