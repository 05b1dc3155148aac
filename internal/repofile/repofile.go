// Package repofile reads the files of a repository's work tree whose content git-ralph
// passes on (into an agent's prompt, the report, a pull request): a change's tasks,
// proposal, design and specs, and the task sources of other kinds. A cloned repository
// is input, so every such read goes through here, under one rule:
//
//   - the file's real path (every symlink followed) is inside the work tree and outside
//     the git directory (no element of it is ".git", whatever its case), so that no
//     file of elsewhere (a symlink to /proc/self/environ, to ~/.ssh/id_ed25519) nor the
//     repository's own config, with the remote URL and its token, reaches a model's
//     vendor;
//   - a path that goes through a symlink is followed only to a file git tracks (the
//     index holds it), never to an ignored or untracked one such as a .env;
//   - it is a regular file with one name (no FIFO that would block, no device, no hard
//     link: a file of elsewhere under an innocent name), and the file opened is the one
//     looked at;
//   - it is read with a stated size limit, never whole: Read takes up to MaxFile of a
//     task list and refuses a larger one by name; ReadHead takes the first MaxDoc of a
//     document and says it cut it; ReadEnd the last bytes of a learnings file.
//
// It is a leaf package: it imports nothing of git-ralph's, runs no git and prints
// nothing. Whether a file is tracked is asked of git through the function the program
// sets once (SetTracked); where none is set, no symlink is followed.
package repofile

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
)

// The size limits.
const (
	// MaxFile is the most Read reads of a file: a task list (tasks.md, a plan, a
	// prd.json) or a schema. A larger file is refused by name.
	MaxFile = 4 << 20
	// MaxDoc is the most ReadHead reads of a document (a proposal, a design, a spec, a
	// spec-kit document or checklist). The prompt inlines a document of at most 24 KiB
	// and names a longer one, and what is read of it besides (a title, a "Why", a
	// spec's scenarios) is at its start.
	MaxDoc = 64 << 10
	// MaxDocs is how many documents of one kind a source reads (its delta specs, its
	// checklists); the rest are named as left out.
	MaxDocs = 64
)

// RefusedError names a file that Read would not read, and why.
type RefusedError struct {
	Rel string // the path as the user knows it: relative to the repository root, slash-separated
	Why string // "a symlink to /proc/self/environ, outside the repository", "a FIFO", …
	// Rule is the rule the file breaks, said after Why; "" for the rule of where a file
	// may be and what it may be.
	Rule string
}

// The rule most refusals break, as the error says it.
const placeRule = "git-ralph reads a change's files only when they are regular files inside the repository, outside its .git, reached through a symlink only when git tracks what it points to"

func (e *RefusedError) Error() string {
	rule := e.Rule
	if rule == "" {
		rule = placeRule
	}
	return fmt.Sprintf("%s is %s: %s", e.Rel, e.Why, rule)
}

// Hint says what to do about the file.
func (e *RefusedError) Hint() string {
	if e.Rule != "" {
		return "make it smaller, or move what is beyond the limit into another file; nothing was changed"
	}
	return "put the file itself in the repository (replace the symlink by a copy of what it should hold, or track its target with git add), then run the command again; nothing was changed"
}

// tracked is the function SetTracked set.
var tracked atomic.Pointer[func(root, rel string) (bool, error)]

// SetTracked sets how a read asks git whether the file at rel (slash-separated,
// relative to the work tree at root) is tracked. The program sets it once, before
// anything is read; unset, a file reached through a symlink is refused.
func SetTracked(f func(root, rel string) (bool, error)) { tracked.Store(&f) }

// Read returns the content of path, a file under root, at most MaxFile bytes: a larger
// file is a *RefusedError naming its size, none of it read past the limit. ok is false,
// without an error, when nothing is there (a missing file, a dangling symlink) or it is
// a directory, as for a missing file. Anything the package's rule refuses is a
// *RefusedError.
func Read(root, path string) (data []byte, ok bool, err error) {
	f, size, rel, err := open(root, path)
	if f == nil || err != nil {
		return nil, false, err
	}
	defer f.Close()
	if size > MaxFile {
		return nil, false, &RefusedError{Rel: rel, Why: Size(size), Rule: "git-ralph reads at most " + Size(MaxFile) + " of a task list"}
	}
	data, err = io.ReadAll(io.LimitReader(f, MaxFile+1))
	if err != nil {
		return nil, false, err
	}
	if len(data) > MaxFile { // it grew since it was looked at
		return nil, false, &RefusedError{Rel: rel, Why: "more than " + Size(MaxFile), Rule: "git-ralph reads at most " + Size(MaxFile) + " of a task list"}
	}
	return data, true, nil
}

// Head is the start of a document.
type Head struct {
	Data []byte // at most MaxDoc bytes
	Size int64  // the whole file's size
}

// Cut reports whether the document goes on past Data.
func (h Head) Cut() bool { return h.Size > int64(len(h.Data)) }

// ReadHead returns the first MaxDoc bytes of path, a document under root, and its
// size; ok and the refusals are Read's.
func ReadHead(root, path string) (h Head, ok bool, err error) {
	f, size, _, err := open(root, path)
	if f == nil || err != nil {
		return Head{}, false, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxDoc))
	if err != nil {
		return Head{}, false, err
	}
	return Head{Data: data, Size: max(size, int64(len(data)))}, true, nil
}

// ReadEnd returns the last max bytes of path, a file under root, from the start of a
// line, and how many bytes before them it left out; ok and the refusals are Read's.
func ReadEnd(root, path string, max int64) (data []byte, cut int64, ok bool, err error) {
	f, _, _, err := open(root, path)
	if f == nil || err != nil {
		return nil, 0, false, err
	}
	defer f.Close()
	data, cut, err = Tail(f, max)
	return data, cut, err == nil, err
}

// Tail reads the last max bytes of the regular file f, from the start of a line when
// it leaves anything out, and says how many bytes before them it left out. It is how
// every file an agent appends to (a learnings file) is read: its end, bounded.
func Tail(f *os.File, max int64) (data []byte, cut int64, err error) {
	st, err := f.Stat()
	if err != nil {
		return nil, 0, err
	}
	if st.Size() > max {
		if _, err := f.Seek(-max, io.SeekEnd); err != nil {
			return nil, 0, err
		}
		cut = st.Size() - max
	}
	data, err = io.ReadAll(io.LimitReader(f, max))
	if err != nil {
		return nil, 0, err
	}
	if cut > 0 {
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			data, cut = data[i+1:], cut+int64(i+1)
		}
	}
	return data, cut, nil
}

// OpenRegular opens the file at path for reading when it is a regular file, without
// following a final symlink and (on Linux) without blocking on a FIFO: for the files an
// agent can write outside the work tree (git-ralph's records, a learnings file), which
// are read with a limit too.
func OpenRegular(path string) (*os.File, error) {
	f, _, err := openFile(path)
	if err != nil {
		return nil, err
	}
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		f.Close()
		if err == nil {
			err = fmt.Errorf("%s is not a regular file", path)
		}
		return nil, err
	}
	return f, nil
}

// open opens path, a file under root, for reading after every check of the package's
// rule, and returns its size and its name as the user knows it. The file is nil,
// without an error, when nothing is there or it is a directory.
func open(root, path string) (f *os.File, size int64, rel string, err error) {
	if root, err = filepath.Abs(root); err != nil {
		return nil, 0, "", err
	}
	if path, err = filepath.Abs(path); err != nil {
		return nil, 0, "", err
	}
	rel = relName(root, path)
	if _, err := os.Lstat(path); err != nil {
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrInvalid) {
			return nil, 0, rel, nil
		}
		return nil, 0, rel, err
	}
	real, err := filepath.EvalSymlinks(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, 0, rel, nil // a dangling symlink is no file
	}
	if err != nil {
		return nil, 0, rel, err
	}
	realRoot, err := filepath.EvalSymlinks(root)
	if err != nil {
		return nil, 0, rel, err
	}
	if !Inside(realRoot, real) {
		return nil, 0, rel, &RefusedError{Rel: rel, Why: "a symlink to " + real + ", outside the repository"}
	}
	realRel := relName(realRoot, real)
	if inGitDir(realRel) {
		why := "inside the git directory"
		if realRel != rel {
			why = "a symlink to " + realRel + ", inside the git directory"
		}
		return nil, 0, rel, &RefusedError{Rel: rel, Why: why}
	}
	info, err := os.Stat(real)
	if err != nil {
		return nil, 0, rel, err
	}
	if info.IsDir() {
		return nil, 0, rel, nil
	}
	if why := notRegular(info.Mode()); why != "" {
		return nil, 0, rel, &RefusedError{Rel: rel, Why: why}
	}
	// A hard link is the same file as one elsewhere (made by someone who could write
	// there); its path says nothing of where its content belongs.
	if n := links(info); n > 1 {
		return nil, 0, rel, &RefusedError{Rel: rel, Why: fmt.Sprintf("a hard link (%d names)", n)}
	}
	if realRel != relName(root, path) {
		// Reached through a symlink (of the file, or of a directory on its way): only to
		// a file git tracks, never to an ignored or untracked one (a .env).
		ask := tracked.Load()
		if ask == nil {
			return nil, 0, rel, &RefusedError{Rel: rel, Why: "a symlink to " + realRel + ", which git-ralph cannot ask git about here"}
		}
		in, err := (*ask)(realRoot, realRel)
		if err != nil {
			return nil, 0, rel, fmt.Errorf("is %s tracked: %w", realRel, err)
		}
		if !in {
			return nil, 0, rel, &RefusedError{Rel: rel, Why: "a symlink to " + realRel + ", which git does not track"}
		}
	}
	f, where, err := openFile(real)
	if err != nil {
		return nil, 0, rel, err
	}
	// What was opened is what was looked at: a file swapped in between is refused, and
	// so is one reached through a directory swapped for a symlink out after
	// EvalSymlinks (where the system says what was opened: Linux's /proc/self/fd).
	if where != "" && (!Inside(realRoot, where) || inGitDir(relName(realRoot, where))) {
		f.Close()
		return nil, 0, rel, &RefusedError{Rel: rel, Why: "a file that moved while it was being read (to " + where + ")"}
	}
	if opened, err := f.Stat(); err != nil || !opened.Mode().IsRegular() || !os.SameFile(info, opened) || links(opened) > 1 {
		f.Close()
		return nil, 0, rel, &RefusedError{Rel: rel, Why: "a file that changed while it was being read"}
	} else {
		size = opened.Size()
	}
	return f, size, rel, nil
}

// inGitDir reports whether rel, a slash-separated path under the work tree, is in a git
// directory: the repository's own .git, a nested repository's or a submodule's. The
// name is compared without case, as a case-insensitive file system (and git's own
// checks of tree entries) would.
func inGitDir(rel string) bool {
	for _, el := range strings.Split(rel, "/") {
		if strings.EqualFold(el, ".git") {
			return true
		}
	}
	return false
}

// Size says a number of bytes the way the errors and the manual do: 4 MiB, 512 KiB,
// 300 bytes.
func Size(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", n)
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
