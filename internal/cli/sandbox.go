package cli

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/git-ralph/git-ralph/internal/agents"
	"github.com/git-ralph/git-ralph/internal/git"
	"github.com/git-ralph/git-ralph/internal/sandbox"
	"github.com/git-ralph/git-ralph/internal/tell"
)

// sandboxSettings resolves a run's sandbox once: the mode (--sandbox, ralph.sandbox),
// what this system supports, and the user's additions (ralph.sandboxWritable,
// ralph.sandboxHide, ralph.sandboxReadable, ralph.sandboxNetwork). --sandbox=on where the agent cannot be
// sandboxed is an error, before anything changes.
func sandboxSettings(e *env, repo *git.Repo, mode string) (sandbox.Settings, error) {
	m, err := sandbox.ParseMode(mode)
	if err != nil {
		return sandbox.Settings{}, &usageError{msg: "--sandbox: " + err.Error(), hint: "auto sandboxes where the system can, on refuses to run without, off never sandboxes"}
	}
	var s sandbox.Settings
	if m != sandbox.Off {
		if s, err = sandboxConfig(e, repo); err != nil {
			return s, err
		}
	}
	probe := sandbox.Probe
	if e.setup.Landlock != nil {
		probe = e.setup.Landlock
	}
	s.Level, err = sandbox.Resolve(m, probe(), len(s.Ports) > 0)
	var ue *sandbox.UnavailableError
	if errors.As(err, &ue) {
		return s, &tell.Error{Msg: ue.Error() + "; nothing was started", Err: err,
			Hint: "--sandbox=on (ralph.sandbox) refuses to run the agent unsandboxed; --sandbox=auto goes on without the sandbox (changes are then detected and undone, not prevented)"}
	}
	return s, err
}

// sandboxConfig reads and checks ralph.sandboxWritable, ralph.sandboxHide,
// ralph.sandboxReadable, ralph.sandboxNetwork and ralph.sandboxSockets.
func sandboxConfig(e *env, repo *git.Repo) (sandbox.Settings, error) {
	var s sandbox.Settings
	cfg := map[string][]string{}
	for _, key := range []string{"ralph.sandboxWritable", "ralph.sandboxHide", "ralph.sandboxReadable", "ralph.sandboxNetwork", "ralph.sandboxSockets", "ralph.verifyWritable"} {
		vals, err := repo.ConfigPathAll(e.ctx, key)
		if err != nil {
			return s, err
		}
		cfg[strings.ToLower(key)] = vals
	}
	bad := func(key, v, why string) error {
		return &tell.Error{Msg: fmt.Sprintf("git config ralph.%s: %q %s", key, v, why), Code: 2, // a bad value is a usage error
			Hint: "give absolute paths (~/ is expanded), one value each: git config --add ralph." + key + " PATH"}
	}
	for _, p := range cfg["ralph.sandboxwritable"] {
		if !filepath.IsAbs(p) {
			return s, bad("sandboxWritable", p, "is not an absolute path")
		}
		if _, err := os.Stat(p); err != nil {
			return s, bad("sandboxWritable", p, "does not exist (the sandbox can only name what exists)")
		}
		s.Writable = append(s.Writable, filepath.Clean(p))
	}
	for _, p := range cfg["ralph.sandboxhide"] {
		if !filepath.IsAbs(p) {
			return s, bad("sandboxHide", p, "is not an absolute path")
		}
		s.Hide = append(s.Hide, filepath.Clean(p))
	}
	for _, p := range cfg["ralph.sandboxreadable"] {
		if !filepath.IsAbs(p) {
			return s, bad("sandboxReadable", p, "is not an absolute path")
		}
		s.Readable = append(s.Readable, filepath.Clean(p))
	}
	// The files git reads its config from (an include of ~/.gitconfig in the home
	// directory, say): the agent's git dies on one it cannot read.
	for _, f := range repo.ConfigFiles(e.ctx) {
		if filepath.IsAbs(f) {
			s.Readable = append(s.Readable, filepath.Clean(f))
		}
	}
	for _, p := range cfg["ralph.sandboxsockets"] {
		if !filepath.IsAbs(p) {
			return s, bad("sandboxSockets", p, "is not an absolute path")
		}
		if _, err := os.Stat(p); err != nil {
			return s, bad("sandboxSockets", p, "does not exist (name the directory of a socket that comes and goes)")
		}
		s.Sockets = append(s.Sockets, filepath.Clean(p))
	}
	for _, p := range cfg["ralph.verifywritable"] {
		if !filepath.IsAbs(p) {
			return s, bad("verifyWritable", p, "is not an absolute path")
		}
		if _, err := os.Stat(p); err != nil {
			return s, bad("verifyWritable", p, "does not exist (the sandbox can only name what exists)")
		}
		s.VerifyWritable = append(s.VerifyWritable, filepath.Clean(p))
	}
	switch v, _, err := repo.Config(e.ctx, "ralph.verifySandbox"); {
	case err != nil:
		return s, err
	case v == "" || v == "on":
	case v == "off":
		s.VerifyOff = true
	default:
		return s, &tell.Error{Msg: fmt.Sprintf("git config ralph.verifySandbox: %q is not on or off", v), Code: 2,
			Hint: "on (the default) runs the verify gate and the commit hooks in the agent's sandbox; off runs them outside it, with your rights, over what the agent wrote"}
	}
	ports, err := sandbox.ParsePorts(cfg["ralph.sandboxnetwork"])
	if err != nil {
		return s, &tell.Error{Msg: "git config ralph.sandboxNetwork: " + err.Error(), Code: 2,
			Hint: "name the TCP ports the agent may connect to, e.g. git config ralph.sandboxNetwork 443", Err: err}
	}
	s.Ports = ports
	// A link in what another run's agent may write is not followed either.
	// (Their caches are their own: the drivers' state in the cache is found there.)
	s.Shared = agents.StateDirs(append(os.Environ(), sandbox.CacheEnv(sandbox.AgentCache(os.Environ()))...))
	return s, nil
}
