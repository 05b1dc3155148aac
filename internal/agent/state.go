package agent

import (
	"errors"
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
