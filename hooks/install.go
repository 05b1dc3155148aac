package hooks

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// maxHookSize bounds how much of a hook file is read to look for the marker.
// Ours are a few hundred bytes; anything bigger (a compiled hook) is not ours.
const maxHookSize = 1 << 20

// State is what occupies a hook's place in the hooks directory.
type State int

const (
	// Absent: no file of that name.
	Absent State = iota
	// Ours: a file that carries the Marker.
	Ours
	// Foreign: anything else (someone else's hook, a symlink, a directory).
	Foreign
)

func (s State) String() string {
	switch s {
	case Ours:
		return "git-ralph's"
	case Foreign:
		return "someone else's"
	}
	return "absent"
}

// Entry is one hook's place in a hooks directory.
type Entry struct {
	Name  string
	Path  string // <dir>/<name>
	State State
	// Outdated: ours, but not the shim this binary ships, or not executable
	// (git skips a hook that is not executable).
	Outdated bool
	// Local: <name>.local exists, the user's own hook that our shim runs first.
	Local bool
	// NotFile: a Foreign entry that is neither a regular file nor a symlink
	// (a directory, say); it cannot be kept aside as <name>.local.
	NotFile bool
}

// LocalPath is where the user's own hook is kept when ours takes its place.
func (e Entry) LocalPath() string { return e.Path + LocalSuffix }

// Inspect looks at hook name in dir without changing anything. A missing dir
// is not an error: every hook is then absent.
func Inspect(dir, name string) (Entry, error) {
	shim, ok := Shim(name)
	if !ok {
		return Entry{}, fmt.Errorf("unknown hook %q", name)
	}
	e := Entry{Name: name, Path: filepath.Join(dir, name)}
	if _, err := os.Lstat(e.LocalPath()); err == nil {
		e.Local = true
	} else if !errors.Is(err, fs.ErrNotExist) {
		return Entry{}, err
	}
	fi, err := os.Lstat(e.Path)
	if errors.Is(err, fs.ErrNotExist) {
		return e, nil
	}
	if err != nil {
		return Entry{}, err
	}
	e.State = Foreign
	switch {
	case fi.Mode()&fs.ModeSymlink != 0:
		// Never ours: we write regular files, and never through a link.
		return e, nil
	case !fi.Mode().IsRegular():
		e.NotFile = true
		return e, nil
	case fi.Size() > maxHookSize:
		return e, nil
	}
	content, err := os.ReadFile(e.Path)
	if err != nil {
		return Entry{}, err
	}
	if hasMarker(content) {
		e.State = Ours
		e.Outdated = !bytes.Equal(content, shim) || fi.Mode().Perm()&0o111 == 0
	}
	return e, nil
}

// List inspects every hook in names (all of ours when names is empty).
func List(dir string, names []string) ([]Entry, error) {
	if len(names) == 0 {
		names = Names()
	}
	out := make([]Entry, 0, len(names))
	for _, n := range names {
		e, err := Inspect(dir, n)
		if err != nil {
			return out, err
		}
		out = append(out, e)
	}
	return out, nil
}

// Action is what Install or Uninstall did with one hook.
type Action int

const (
	// Installed: the place was empty; the shim is there now.
	Installed Action = iota
	// Updated: an older shim of ours was replaced by this binary's.
	Updated
	// Unchanged: this binary's shim was already there (install), or
	// nothing of ours was there (uninstall).
	Unchanged
	// Replaced: with force, someone else's hook was renamed to
	// <name>.local and the shim, which runs it first, put in its place.
	Replaced
	// LeftAlone: someone else's hook is there and was not touched.
	LeftAlone
	// Removed: our shim was removed (and <name>.local put back, if any).
	Removed
	// Restored: no shim was there, but <name>.local was, and was put back.
	Restored
)

// Change reports what happened to one hook.
type Change struct {
	Entry         // the state before
	Action Action // what was done
	// Reason says why a hook was LeftAlone.
	Reason string
}

// Install writes the shims of names (all of ours when names is empty) into
// dir, creating it if needed. A hook that is ours is brought up to date; a
// hook that is not ours is left alone (Action LeftAlone) unless force is set,
// in which case it is renamed to <name>.local, which the shim runs first. A
// <name>.local that already exists is never overwritten. Install is
// idempotent. On an I/O error it returns the changes made so far.
func Install(dir string, names []string, force bool) ([]Change, error) {
	if len(names) == 0 {
		names = Names()
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	var out []Change
	for _, n := range names {
		c, err := install(dir, n, force)
		if err != nil {
			return out, fmt.Errorf("install the %s hook: %w", n, err)
		}
		out = append(out, c)
	}
	return out, nil
}

func install(dir, name string, force bool) (Change, error) {
	e, err := Inspect(dir, name)
	if err != nil {
		return Change{}, err
	}
	shim, _ := Shim(name)
	c := Change{Entry: e}
	switch {
	case e.State == Absent:
		c.Action = Installed
	case e.State == Ours && !e.Outdated:
		c.Action = Unchanged
		return c, nil
	case e.State == Ours:
		c.Action = Updated
	case !force:
		c.Action, c.Reason = LeftAlone, "it is not git-ralph's"
		return c, nil
	case e.NotFile:
		c.Action, c.Reason = LeftAlone, "it is not a file"
		return c, nil
	case e.Local:
		c.Action, c.Reason = LeftAlone, "it is not git-ralph's, and "+name+LocalSuffix+" exists too"
		return c, nil
	default:
		if err := os.Rename(e.Path, e.LocalPath()); err != nil {
			return Change{}, err
		}
		if err := writeFile(e.Path, shim); err != nil {
			// Put the user's hook back rather than leave the place empty.
			_ = os.Rename(e.LocalPath(), e.Path)
			return Change{}, err
		}
		c.Action = Replaced
		return c, nil
	}
	return c, writeFile(e.Path, shim)
}

// Uninstall removes the shims of names (all of ours when names is empty)
// from dir and puts any <name>.local back in their place. Files that are not
// ours are left alone. Uninstall is idempotent.
func Uninstall(dir string, names []string) ([]Change, error) {
	if len(names) == 0 {
		names = Names()
	}
	var out []Change
	for _, n := range names {
		c, err := uninstall(dir, n)
		if err != nil {
			return out, fmt.Errorf("uninstall the %s hook: %w", n, err)
		}
		out = append(out, c)
	}
	return out, nil
}

func uninstall(dir, name string) (Change, error) {
	e, err := Inspect(dir, name)
	if err != nil {
		return Change{}, err
	}
	c := Change{Entry: e}
	switch e.State {
	case Foreign:
		c.Action, c.Reason = LeftAlone, "it is not git-ralph's"
		return c, nil
	case Ours:
		if err := os.Remove(e.Path); err != nil {
			return Change{}, err
		}
		c.Action = Removed
	default:
		c.Action = Unchanged
		if !e.Local {
			return c, nil
		}
		c.Action = Restored
	}
	if e.Local {
		if err := os.Rename(e.LocalPath(), e.Path); err != nil {
			return Change{}, err
		}
	}
	return c, nil
}

// writeFile puts an executable file at path through a temporary file and a
// rename, so that a git running the hook at that moment never sees half of it.
func writeFile(path string, content []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	_, err = f.Write(content)
	if err == nil {
		err = f.Chmod(0o755)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		_ = os.Remove(tmp)
	}
	return err
}
