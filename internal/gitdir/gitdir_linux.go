package gitdir

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"golang.org/x/sys/unix"
)

func where(tree, gitDir string) (string, error) {
	tree = filepath.Clean(tree)
	if filepath.Clean(gitDir) != filepath.Join(tree, linkName) {
		return "", &NotMovedError{"the git directory " + gitDir + " is not " + filepath.Join(tree, linkName)}
	}
	var ts, gs unix.Stat_t
	if err := unix.Stat(tree, &ts); err != nil {
		return "", &NotMovedError{"cannot look at the working tree: " + err.Error()}
	}
	if err := unix.Lstat(gitDir, &gs); err != nil || gs.Mode&unix.S_IFMT != unix.S_IFDIR {
		return "", &NotMovedError{filepath.Join(tree, linkName) + " is not a directory"}
	}
	for _, home := range Homes(tree) {
		// The nearest directory on the way that is there already says the file system
		// and whether the home can be made: a dry run makes nothing.
		parent := filepath.Dir(home)
		for parent != filepath.Dir(parent) {
			if _, err := os.Lstat(parent); err == nil {
				break
			}
			parent = filepath.Dir(parent)
		}
		var ps unix.Stat_t
		if unix.Stat(parent, &ps) != nil || ps.Mode&unix.S_IFMT != unix.S_IFDIR || ps.Dev != ts.Dev || unix.Access(parent, unix.W_OK) != nil {
			continue
		}
		if inside(tree, home) || !trusted(tree, home) {
			continue
		}
		if fi, err := os.Lstat(home); err == nil && !fi.IsDir() {
			continue // something else in its way
		}
		return home, nil
	}
	return "", &NotMovedError{"no place outside the working tree on its file system to move the git directory to (tried " + strings.Join(Homes(tree), ", ") + ")"}
}

// inside reports whether path lies in or beneath dir.
func inside(dir, path string) bool {
	rel, err := filepath.Rel(dir, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, "../")
}

// Move moves tree's git directory (tree/.git, a directory) to its home and leaves
// tree/.git a symbolic link to it, in one exchange: at no moment is there no .git in
// the tree. The caller holds the returned Moved until it calls Restore; a git directory
// already moved by a killed run of the same tree is taken over.
func Move(tree string) (*Moved, error) {
	tree = filepath.Clean(tree)
	m := &Moved{Tree: tree}
	link := filepath.Join(tree, linkName)
	var ls unix.Stat_t
	if err := unix.Lstat(link, &ls); err != nil {
		return nil, &NotMovedError{"cannot look at " + link + ": " + err.Error()}
	}
	if ls.Mode&unix.S_IFMT == unix.S_IFLNK {
		// Moved already (a killed run that Recover did not reach): take it over when
		// its home is ours and free.
		for _, home := range Homes(tree) {
			if t, err := os.Readlink(link); err == nil && t == filepath.Join(home, linkName) && m.owns(home) {
				if err := m.take(home); err != nil {
					return nil, err
				}
				// Held now: a Recover that put it back meanwhile leaves no .git there.
				if fi, err := os.Lstat(m.Dir); err != nil || !fi.IsDir() {
					m.release()
					return nil, &NotMovedError{link + " is a symbolic link, not a directory of its own"}
				}
				return m, nil
			}
		}
		return nil, &NotMovedError{link + " is a symbolic link, not a directory of its own"}
	}
	home, err := where(tree, link)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(home, 0o700); err != nil {
		return nil, &NotMovedError{"cannot make " + home + ": " + err.Error()}
	}
	if err := m.take(home); err != nil {
		return nil, err
	}
	ok := false
	defer func() {
		if !ok {
			m.release()
		}
	}()
	if t, err := os.Readlink(m.Dir); err == nil && t == m.Dir {
		// The link a move or a put-back killed half-way left (it names itself).
		_ = os.Remove(m.Dir)
	}
	if _, err := os.Lstat(m.Dir); err == nil {
		return nil, &NotMovedError{m.Dir + " is in the way (a git directory a killed run left moved? 'git ralph status' puts it back)"}
	}
	if err := writeAtomic(filepath.Join(home, treeName), []byte(tree+"\n")); err != nil {
		return nil, &NotMovedError{"cannot write " + filepath.Join(home, treeName) + ": " + err.Error()}
	}
	// The link's text is its final target; made where the git directory goes, the
	// exchange puts it in the tree and the directory in its place.
	if err := unix.Symlink(m.Dir, m.Dir); err != nil {
		return nil, &NotMovedError{"cannot make a link in " + home + ": " + err.Error()}
	}
	if err := unix.Renameat2(unix.AT_FDCWD, link, unix.AT_FDCWD, m.Dir, unix.RENAME_EXCHANGE); err != nil {
		_ = os.Remove(m.Dir)
		why := err.Error()
		if err == unix.EXDEV {
			why = "its home is on another file system"
		} else if err == unix.EINVAL || err == unix.ENOSYS {
			why = "the file system cannot exchange two names atomically"
		}
		return nil, &NotMovedError{"cannot move " + link + " to " + m.Dir + ": " + why}
	}
	syncDirs(home, tree)
	ok = true
	if err := m.linkSubmodules(); err != nil {
		return m, err
	}
	return m, nil
}

// owns reports whether home is the home of m.Tree's moved git directory.
func (m *Moved) owns(home string) bool {
	b, err := readSmall(filepath.Join(home, treeName))
	return err == nil && strings.TrimSuffix(string(b), "\n") == m.Tree
}

// take locks home for m: ErrBusy when another process holds it.
func (m *Moved) take(home string) error {
	f, err := os.OpenFile(filepath.Join(home, lockName), os.O_RDWR|os.O_CREATE|unix.O_NOFOLLOW, 0o600)
	if err != nil {
		return &NotMovedError{"cannot open " + filepath.Join(home, lockName) + ": " + err.Error()}
	}
	if err := flock(f, unix.LOCK_EX|unix.LOCK_NB); err != nil {
		f.Close()
		if err == unix.EWOULDBLOCK {
			return ErrBusy
		}
		return err
	}
	m.Home, m.Dir, m.lock = home, filepath.Join(home, linkName), f
	return nil
}

func flock(f *os.File, how int) error {
	for {
		err := unix.Flock(int(f.Fd()), how)
		if err != unix.EINTR {
			return err
		}
	}
}

// release lets go of the home's lock.
func (m *Moved) release() {
	if m.lock != nil {
		_ = flock(m.lock, unix.LOCK_UN)
		_ = m.lock.Close()
		m.lock = nil
	}
}

// linkSubmodules links each entry of the tree from the home when the git directory
// holds submodules' git directories: their core.worktree is relative to where the git
// directory is (.git/modules/sub: ../../../sub), and leads from the home to the same
// name beside it.
func (m *Moved) linkSubmodules() error {
	if fi, err := os.Lstat(filepath.Join(m.Dir, "modules")); err != nil || !fi.IsDir() {
		return nil
	}
	ents, err := os.ReadDir(m.Tree)
	if err != nil {
		return err
	}
	for _, e := range ents {
		n := e.Name()
		if n == linkName || n == lockName || n == treeName {
			continue
		}
		if err := os.Symlink(filepath.Join(m.Tree, n), filepath.Join(m.Home, n)); err != nil && !errors.Is(err, fs.ErrExist) {
			return err
		}
		m.Links = append(m.Links, n)
	}
	return nil
}

// Link reports whether tree/.git is still the link to m.Dir. When it is not (the
// agent removed or replaced it), what is there is moved to keep (a path on the tree's
// file system that does not exist yet, its parent made, named shown to the user) and
// the link made again; what says what was found ("" when the link was as made).
func (m *Moved) Link(keep, shown string) (what string, err error) {
	link := filepath.Join(m.Tree, linkName)
	if t, err := os.Readlink(link); err == nil && t == m.Dir {
		return "", nil
	}
	var st unix.Stat_t
	switch err := unix.Lstat(link, &st); {
	case err == unix.ENOENT:
		what = ".git (the link to the git directory) removed"
	case err != nil:
		return "", err
	default:
		what = ".git (the link to the git directory) replaced by " + describe(st.Mode) + " (kept as " + shown + ")"
		if err := os.MkdirAll(filepath.Dir(keep), 0o755); err != nil {
			return "", err
		}
		if err := unix.Renameat2(unix.AT_FDCWD, link, unix.AT_FDCWD, keep, unix.RENAME_NOREPLACE); err != nil {
			return "", fmt.Errorf("move %s aside: %w", link, err)
		}
	}
	if err := relink(m.Dir, link); err != nil {
		return "", err
	}
	return what, nil
}

// relink makes link a symbolic link to target, where nothing is.
func relink(target, link string) error {
	tmp := link + ".ralph-link"
	_ = os.Remove(tmp)
	if err := os.Symlink(target, tmp); err != nil {
		return err
	}
	if err := unix.Renameat2(unix.AT_FDCWD, tmp, unix.AT_FDCWD, link, unix.RENAME_NOREPLACE); err != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("put back %s: %w", link, err)
	}
	return nil
}

func describe(mode uint32) string {
	switch mode & unix.S_IFMT {
	case unix.S_IFDIR:
		return "a directory"
	case unix.S_IFLNK:
		return "another link"
	case unix.S_IFREG:
		return "a file"
	}
	return "something else"
}

// Restore puts the git directory back in the tree, in one exchange with the link, and
// removes its home. What stands at tree/.git instead of the link (the agent's, after a
// crash no check followed) is moved aside beside it first, and named in the note.
func (m *Moved) Restore() (note string, err error) {
	defer m.release()
	link := filepath.Join(m.Tree, linkName)
	for _, n := range m.Links {
		if t, err := os.Readlink(filepath.Join(m.Home, n)); err == nil && t == filepath.Join(m.Tree, n) {
			_ = os.Remove(filepath.Join(m.Home, n))
		}
	}
	if t, err := os.Readlink(link); err == nil && t == m.Dir {
		if err := unix.Renameat2(unix.AT_FDCWD, m.Dir, unix.AT_FDCWD, link, unix.RENAME_EXCHANGE); err != nil {
			return "", fmt.Errorf("put the git directory back from %s: %w", m.Dir, err)
		}
		_ = os.Remove(m.Dir) // the link, now here
	} else {
		if fi, err := os.Lstat(m.Dir); err != nil || !fi.IsDir() {
			return "", fmt.Errorf("put the git directory back from %s: it is not there", m.Dir)
		}
		var st unix.Stat_t
		if unix.Lstat(link, &st) == nil {
			aside, err := moveAside(link)
			if err != nil {
				return "", err
			}
			note = fmt.Sprintf("%s was %s, not the link to the git directory: kept as %s", link, describe(st.Mode), aside)
		}
		if err := unix.Renameat2(unix.AT_FDCWD, m.Dir, unix.AT_FDCWD, link, unix.RENAME_NOREPLACE); err != nil {
			return note, fmt.Errorf("put the git directory back from %s: %w", m.Dir, err)
		}
	}
	syncDirs(m.Tree, m.Home)
	m.repairWorktrees(link)
	_ = os.Remove(filepath.Join(m.Home, treeName))
	_ = os.Remove(filepath.Join(m.Home, lockName))
	_ = os.Remove(m.Home)
	return note, nil
}

// moveAside renames path to a free name path.ralph-aside-N and returns it.
func moveAside(path string) (string, error) {
	for n := 1; n < 1000; n++ {
		aside := fmt.Sprintf("%s.ralph-aside-%d", path, n)
		err := unix.Renameat2(unix.AT_FDCWD, path, unix.AT_FDCWD, aside, unix.RENAME_NOREPLACE)
		if err == unix.EEXIST {
			continue
		}
		if err != nil {
			return "", fmt.Errorf("move %s aside: %w", path, err)
		}
		return aside, nil
	}
	return "", fmt.Errorf("move %s aside: no free name", path)
}

// Recover puts back the git directory of any working tree at or above dir that a
// killed run left moved (its home's lock free): before any git runs there, since the
// link in the tree may be gone or the agent's. It returns a line per git directory put
// back.
func Recover(dir string) ([]string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		abs = real // git names the tree by its real path, and so does the home
	}
	var notes []string
	for d := abs; ; d = filepath.Dir(d) {
		for _, home := range Homes(d) {
			var st unix.Stat_t
			if unix.Lstat(filepath.Join(home, linkName), &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFDIR {
				continue
			}
			m := &Moved{Tree: d}
			if !trusted(d, home) || !m.owns(home) {
				continue
			}
			if err := m.take(home); err == ErrBusy {
				continue // a run at work
			} else if err != nil {
				return notes, err
			}
			m.Links = m.links()
			note, err := m.Restore()
			if err != nil {
				return notes, fmt.Errorf("a killed run left the git directory of %s moved to %s, and it cannot be put back: %w", d, m.Dir, err)
			}
			notes = append(notes, "put back the git directory of "+d+", which a killed run had left at "+m.Dir)
			if note != "" {
				notes = append(notes, note)
			}
		}
		if d == filepath.Dir(d) {
			return notes, nil
		}
	}
}

// links are the names in m.Home that link to the same name in m.Tree (linkSubmodules').
func (m *Moved) links() []string {
	ents, _ := os.ReadDir(m.Home)
	var out []string
	for _, e := range ents {
		if t, err := os.Readlink(filepath.Join(m.Home, e.Name())); err == nil && t == filepath.Join(m.Tree, e.Name()) {
			out = append(out, e.Name())
		}
	}
	return out
}

func readSmall(path string) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|unix.O_NOFOLLOW, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b := make([]byte, 4097)
	n, err := f.Read(b)
	if n > 4096 {
		return nil, errors.New("too long")
	}
	if err != nil && n == 0 {
		return nil, err
	}
	return b[:n], nil
}

func writeAtomic(path string, data []byte) error {
	tmp := path + ".tmp"
	_ = os.Remove(tmp)
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL|unix.O_NOFOLLOW, 0o600)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// syncDirs makes the renames in dirs durable.
func syncDirs(dirs ...string) {
	for _, d := range dirs {
		if f, err := os.Open(d); err == nil {
			_ = f.Sync()
			f.Close()
		}
	}
}

// TreeOf is the working tree whose git directory is moved to home/.git now (its .git a
// link there), or "": git names a main worktree by its git directory's parent, which
// while moved is the home, not the tree.
func TreeOf(home string) string {
	m := &Moved{}
	b, err := readSmall(filepath.Join(home, treeName))
	if err != nil {
		return ""
	}
	m.Tree = strings.TrimSuffix(string(b), "\n")
	if !slices.Contains(Homes(m.Tree), home) {
		return ""
	}
	if t, err := os.Readlink(filepath.Join(m.Tree, linkName)); err != nil || t != filepath.Join(home, linkName) {
		return ""
	}
	return m.Tree
}

// repairWorktrees points back at gitDir (the tree's .git, back in place) the .git file of
// every linked worktree that was added while the git directory was moved: git wrote the
// moved path there, which is gone now. Only a regular file whose content is exactly that
// path is rewritten, by a rename that replaces it (no link is followed).
func (m *Moved) repairWorktrees(gitDir string) {
	ents, err := os.ReadDir(filepath.Join(gitDir, "worktrees"))
	if err != nil {
		return
	}
	for _, e := range ents {
		b, err := readSmall(filepath.Join(gitDir, "worktrees", e.Name(), "gitdir"))
		if err != nil {
			continue
		}
		dotgit := strings.TrimSpace(string(b))
		if !filepath.IsAbs(dotgit) {
			continue
		}
		moved := "gitdir: " + filepath.Join(m.Dir, "worktrees", e.Name())
		if c, err := readSmall(dotgit); err != nil || strings.TrimSpace(string(c)) != moved {
			continue
		}
		_ = writeAtomic(dotgit, []byte("gitdir: "+filepath.Join(gitDir, "worktrees", e.Name())+"\n"))
	}
}

// trusted reports whether home may hold tree's moved git directory: the state home, or
// the one beside the tree when no working tree holds it (a .git in its directory or
// above): inside one, an agent writing that tree could have made it.
func trusted(tree, home string) bool {
	if home == Homes(tree)[0] && stateDir() != "" {
		return true
	}
	for d := filepath.Dir(home); ; d = filepath.Dir(d) {
		if _, err := os.Lstat(filepath.Join(d, linkName)); err == nil {
			return false
		}
		if d == filepath.Dir(d) {
			return true
		}
	}
}
