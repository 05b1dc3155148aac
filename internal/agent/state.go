package agent

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
)

// State is what an agent CLI keeps outside the working tree and must be able to
// write: its sessions, settings, logs and caches. Its sandbox lets it write them and
// nothing else of the user's home (internal/sandbox).
type State struct {
	// Dirs are directories the CLI writes, created when missing.
	Dirs []string
	// Files are single files the CLI writes, created with their Initial content when
	// missing (a sandbox rule needs the file to exist).
	Files []StateFile
	// PTY: the CLI runs its shell tool on a pseudo-terminal (/dev/ptmx, /dev/pts).
	PTY bool
}

// StateFile is a file of an agent's State.
type StateFile struct {
	Path    string
	Initial string // its content when git-ralph creates it
}

// StateHolder is a driver whose agent keeps state outside the working tree. env is
// the environment the agent gets (HOME, XDG_*, the CLI's own variables).
type StateHolder interface {
	State(env []string) State
}

// StateOf is d's State in env; the zero State for a driver that declares none (a
// custom agent, whose user names what it writes in ralph.sandboxWritable).
func StateOf(d Driver, env []string) State {
	if s, ok := d.(StateHolder); ok {
		return s.State(env).nonEmpty()
	}
	return State{}
}

// Paths are the state's files and directories, directories first.
func (s State) Paths() []string {
	var out []string
	out = append(out, s.Dirs...)
	for _, f := range s.Files {
		out = append(out, f.Path)
	}
	return slices.Clip(out)
}

// Ensure creates what is missing of s: directories (0700, as the CLIs make them), and
// files with their initial content. An existing file is never touched.
func (s State) Ensure() error {
	for _, d := range s.Dirs {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return err
		}
	}
	for _, f := range s.Files {
		if err := os.MkdirAll(filepath.Dir(f.Path), 0o700); err != nil {
			return err
		}
		w, err := os.OpenFile(f.Path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return err
		}
		_, err = w.WriteString(f.Initial)
		if cerr := w.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// Home is HOME in env ("" when unset).
func Home(env []string) string { return EnvValue(env, "HOME") }

// InHome is filepath.Join(HOME, elem...) with HOME from env; "" without a HOME.
func InHome(env []string, elem ...string) string {
	h := Home(env)
	if h == "" {
		return ""
	}
	return filepath.Join(append([]string{h}, elem...)...)
}

// XDG is the XDG base directory key (XDG_CONFIG_HOME, XDG_DATA_HOME, XDG_STATE_HOME,
// XDG_CACHE_HOME) in env, else its default under HOME (".config", ".local/share",
// ".local/state", ".cache"), joined with elem.
func XDG(env []string, key string, elem ...string) string {
	base := EnvValue(env, key)
	if !filepath.IsAbs(base) {
		def := map[string]string{"XDG_CONFIG_HOME": ".config", "XDG_DATA_HOME": ".local/share", "XDG_STATE_HOME": ".local/state", "XDG_CACHE_HOME": ".cache"}[key]
		if base = InHome(env, def); base == "" {
			return ""
		}
	}
	return filepath.Join(append([]string{base}, elem...)...)
}

// EnvDir is the directory named by variable key in env when it is an absolute path,
// else filepath.Join(HOME, def...).
func EnvDir(env []string, key string, def ...string) string {
	if v := EnvValue(env, key); filepath.IsAbs(v) {
		return v
	}
	return InHome(env, def...)
}

// nonEmpty drops the empty paths (no HOME).
func (s State) nonEmpty() State {
	s.Dirs = slices.DeleteFunc(slices.Clone(s.Dirs), func(p string) bool { return p == "" })
	s.Files = slices.DeleteFunc(slices.Clone(s.Files), func(f StateFile) bool { return f.Path == "" })
	return s
}

// OwnState is a CLI's configuration directory of its own for one attempt: the variable
// that names it (Claude Code's CLAUDE_CONFIG_DIR, Codex's CODEX_HOME) and the user's
// files copied into it, so that the CLI logs in and works as the user set it up, while
// what the agent writes there (a hook in settings.json, an MCP server in config.toml)
// is gone with the attempt and never reaches the user's next session.
type OwnState struct {
	Var   string
	Files []OwnFile
}

// OwnFile is a file of the user's copied into an OwnState directory: From, an absolute
// path, to Name in it.
type OwnFile struct {
	From, Name string
}

// OwnStater is a driver whose CLI takes its configuration directory from a variable.
// env is the agent's environment before that variable is set.
type OwnStater interface {
	OwnState(env []string) OwnState
}

// makeOwnState creates d's configuration directory of its own (a new temporary
// directory, 0700, for the caller to remove), with the user's files of its OwnState
// that exist copied into it, and returns the variable to add to the agent's
// environment and the directory ("", "" for a driver that has none). A file is copied
// as a regular file of mode 0600; one missing, or not a regular file, is left out.
func makeOwnState(d Driver, env []string) (kv, dir string, err error) {
	o, ok := d.(OwnStater)
	if !ok {
		return "", "", nil
	}
	st := o.OwnState(env)
	if st.Var == "" {
		return "", "", nil
	}
	if dir, err = os.MkdirTemp("", "git-ralph-"+d.Name()+"-state-"); err != nil {
		return "", "", err
	}
	fail := func(err error) (string, string, error) {
		os.RemoveAll(dir)
		return "", "", err
	}
	for _, f := range st.Files {
		if !filepath.IsAbs(f.From) {
			continue
		}
		fi, err := os.Stat(f.From)
		if err != nil || !fi.Mode().IsRegular() {
			continue
		}
		b, err := os.ReadFile(f.From)
		if err != nil {
			return fail(fmt.Errorf("copy %s: %w", f.From, err))
		}
		to := filepath.Join(dir, f.Name)
		if err := os.MkdirAll(filepath.Dir(to), 0o700); err != nil {
			return fail(err)
		}
		if err := os.WriteFile(to, b, 0o600); err != nil {
			return fail(err)
		}
	}
	return st.Var + "=" + dir, dir, nil
}
