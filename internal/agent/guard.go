package agent

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
)

// Guarder is a driver whose CLI reads, in every session, settings of the user's that
// its agent can write and that run code or instruct the model (an MCP server, a hook, a
// memory file), but that has no configuration directory of its own for an attempt
// (OwnStater): Guarded names them in env, each directly in one of its State's
// directories. Run puts back what the agent changed of them (Result.Restored).
type Guarder interface {
	Guarded(env []string) []string
}

// guardedFile is what one guarded path was before the attempt: missing, a regular
// file (its content and mode) or a symbolic link (where it led).
type guardedFile struct {
	path    string
	exists  bool
	link    string
	content []byte
	mode    fs.FileMode
}

// guard records the guarded files of d in env: only those directly in a directory of
// its State (the agent cannot replace that directory, only what it holds).
func guard(d Driver, env []string) []guardedFile {
	g, ok := d.(Guarder)
	if !ok {
		return nil
	}
	dirs := StateOf(d, env).Dirs
	var out []guardedFile
	for _, p := range g.Guarded(env) {
		if !filepath.IsAbs(p) || !slices.Contains(dirs, filepath.Dir(p)) {
			continue
		}
		f := guardedFile{path: p}
		fi, err := os.Lstat(p)
		switch {
		case err != nil:
		case fi.Mode()&fs.ModeSymlink != 0:
			f.exists = true
			f.link, _ = os.Readlink(p)
		case fi.Mode().IsRegular():
			b, err := os.ReadFile(p)
			if err != nil {
				continue // not readable to git-ralph: not guarded
			}
			f.exists, f.content, f.mode = true, b, fi.Mode().Perm()
		default:
			continue
		}
		out = append(out, f)
	}
	return out
}

// same reports whether f's path is still what it was.
func (f guardedFile) same() bool {
	fi, err := os.Lstat(f.path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return !f.exists
	case err != nil || !f.exists:
		return false
	case f.link != "":
		l, err := os.Readlink(f.path)
		return err == nil && fi.Mode()&fs.ModeSymlink != 0 && l == f.link
	case !fi.Mode().IsRegular() || fi.Mode().Perm() != f.mode:
		return false
	}
	b, err := os.ReadFile(f.path)
	return err == nil && bytes.Equal(b, f.content)
}

// restore puts back each of files that changed, once the agent and all it started are
// gone: what is there now is removed (never followed: it may be the agent's link), and
// what was there is made again. It returns the paths it put back, and those it could
// not (an error each).
func restore(files []guardedFile) (restored []string, errs []error) {
	for _, f := range files {
		if f.same() {
			continue
		}
		if err := os.RemoveAll(f.path); err != nil {
			errs = append(errs, err)
			continue
		}
		var err error
		switch {
		case !f.exists:
		case f.link != "":
			err = os.Symlink(f.link, f.path)
		default:
			var w *os.File
			if w, err = os.OpenFile(f.path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, f.mode); err == nil {
				_, err = w.Write(f.content)
				if cerr := w.Close(); err == nil {
					err = cerr
				}
				if err == nil {
					err = os.Chmod(f.path, f.mode)
				}
			}
		}
		if err != nil {
			errs = append(errs, err)
			continue
		}
		restored = append(restored, f.path)
	}
	return restored, errs
}
