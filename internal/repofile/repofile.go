// Package repofile reads the files of a repository's work tree whose content git-ralph
// passes on (into an agent's prompt, the report, a pull request): a change's tasks,
// proposal, design and specs, and the task sources of other kinds. It reads a file only
// when it is a regular file whose real path is inside the repository, so that a cloned
// repository cannot make git-ralph send a file from elsewhere (a symlink to
// /proc/self/environ, to ~/.ssh/id_ed25519) to a model's vendor, or block it on a FIFO.
//
// It is a leaf package: it imports nothing of git-ralph's, runs no git and prints nothing.
package repofile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// RefusedError names a file that Read would not read, and why.
type RefusedError struct {
	Rel string // the path as the user knows it: relative to the repository root, slash-separated
	Why string // "a symlink to /proc/self/environ, outside the repository", "a FIFO", …
}

func (e *RefusedError) Error() string {
	return fmt.Sprintf("%s is %s: git-ralph reads a change's files only when they are regular files inside the repository", e.Rel, e.Why)
}

// Read returns the content of path, a file under root. ok is false,
// without an error, when nothing is there (a missing file, a dangling symlink) or it is a
// directory, as for a missing file. A symlink is followed when its target is inside root
// (root's own real path). Anything else is a *RefusedError: a path whose real path is
// outside root (a symlink out, anything under /proc), a FIFO, a device, a socket.
func Read(root, path string) (data []byte, ok bool, err error) {
	if root, err = filepath.Abs(root); err != nil {
		return nil, false, err
	}
	if path, err = filepath.Abs(path); err != nil {
		return nil, false, err
	}
	rel := relName(root, path)
	if _, err := os.Lstat(path); err != nil {
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrInvalid) {
			return nil, false, nil
		}
		return nil, false, err
	}
	real, err := filepath.EvalSymlinks(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, nil // a dangling symlink is no file
	}
	if err != nil {
		return nil, false, err
	}
	realRoot, err := filepath.EvalSymlinks(root)
	if err != nil {
		return nil, false, err
	}
	if !Inside(realRoot, real) {
		return nil, false, &RefusedError{Rel: rel, Why: "a symlink to " + real + ", outside the repository"}
	}
	info, err := os.Stat(real)
	if err != nil {
		return nil, false, err
	}
	if info.IsDir() {
		return nil, false, nil
	}
	if why := notRegular(info.Mode()); why != "" {
		return nil, false, &RefusedError{Rel: rel, Why: why}
	}
	// A hard link is the same file as one elsewhere (made by someone who could write
	// there); its path says nothing of where its content belongs.
	if n := links(info); n > 1 {
		return nil, false, &RefusedError{Rel: rel, Why: fmt.Sprintf("a hard link (%d names)", n)}
	}
	f, where, err := open(real)
	if err != nil {
		return nil, false, err
	}
	defer f.Close()
	// What was opened is what was looked at: a file swapped in between is refused, and
	// so is one reached through a directory swapped for a symlink out after
	// EvalSymlinks (where the system says what was opened: Linux's /proc/self/fd).
	if where != "" && !Inside(realRoot, where) {
		return nil, false, &RefusedError{Rel: rel, Why: "a file that moved outside the repository while it was being read (" + where + ")"}
	}
	if opened, err := f.Stat(); err != nil || !opened.Mode().IsRegular() || !os.SameFile(info, opened) || links(opened) > 1 {
		return nil, false, &RefusedError{Rel: rel, Why: "a file that changed while it was being read"}
	}
	data, err = io.ReadAll(f)
	if err != nil {
		return nil, false, err
	}
	return data, true, nil
}

// Inside reports whether path is root or below it; both are cleaned, absolute paths
// whose symlinks are already resolved.
func Inside(root, path string) bool {
	rel, err := filepath.Rel(root, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}

func notRegular(m fs.FileMode) string {
	switch {
	case m.IsRegular():
		return ""
	case m&fs.ModeNamedPipe != 0:
		return "a FIFO"
	case m&fs.ModeCharDevice != 0, m&fs.ModeDevice != 0:
		return "a device"
	case m&fs.ModeSocket != 0:
		return "a socket"
	}
	return "not a regular file"
}

func relName(root, path string) string {
	if Inside(root, path) {
		if rel, err := filepath.Rel(root, path); err == nil {
			return filepath.ToSlash(rel)
		}
	}
	return path
}
