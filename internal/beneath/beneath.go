// Package beneath creates, replaces, removes and reads files beneath a directory
// git-ralph owns (the repository's git directory: its records in ralph/, the hooks,
// info/, the config), following no symlink in any component below that directory. In
// place the git directory lies inside the working tree the agent may write, so any
// name there may be a symlink the agent planted: .git/info -> ~, .git/ralph/x/logs/1-3.log
// -> ~/.zshrc. Through this package git-ralph never reads, writes or removes anything a
// planted link leads to:
//
//   - every operation starts at the root (whose own path is git-ralph's: it was found
//     before any agent ran) and opens each directory below it by name relative to the
//     one before, with O_NOFOLLOW|O_DIRECTORY: a symlink, or anything but a directory,
//     on the way is refused, never followed. The walk holds open descriptors from the
//     root down, so a name swapped while it walks cannot lead it elsewhere (and git-ralph
//     kills every process left from an attempt before it checks anything, so in the
//     checks nothing swaps anything at all);
//   - a read opens the file itself with O_NOFOLLOW|O_NONBLOCK and takes it only when it
//     is a regular file (no FIFO to block on, no device), within a stated size;
//   - a write creates a new file with O_CREAT|O_EXCL|O_NOFOLLOW under a temporary name
//     beside its place and renames it there, which replaces a symlink or a file at that
//     name rather than writing through it; a directory at that name, or a symlink or file
//     where a directory on the way should be, is moved aside first (renamed beside
//     itself, name.ralph-aside-N: kept, never followed nor removed) and the directory
//     made;
//   - a removal unlinks the name itself, reached the same way.
//
// A symlink or non-directory on the way of a read or removal is a *WayError, which
// counts as fs.ErrNotExist: as git-ralph sees it, nothing is there.
//
// It is a leaf package (the standard library and golang.org/x/sys only): it runs no git
// and prints nothing. It is for Unix systems; Linux's openat2 (RESOLVE_BENEATH |
// RESOLVE_NO_SYMLINKS) would do the walk in one call, but the walk by descriptors is as
// safe, works on every kernel and macOS, and is one code path to test.
package beneath

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// WayError says that a name on the way to a file beneath a root, or the file itself, is
// not what the operation may go through: a symlink, or not a directory (not a regular
// file, for a read). It counts as fs.ErrNotExist.
type WayError struct {
	Path string      // the name in the way, absolute
	Mode fs.FileMode // its type
}

func (e *WayError) Error() string {
	return fmt.Sprintf("%s is %s: git-ralph follows no symlink and reads no special file there", e.Path, Describe(e.Mode))
}

// Is makes a *WayError count as fs.ErrNotExist.
func (e *WayError) Is(target error) bool { return target == fs.ErrNotExist }

// TooLargeError is a file over the size a read allows.
type TooLargeError struct {
	Path string
	Max  int64
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("%s is larger than %s: git-ralph reads no more of it", e.Path, size(e.Max))
}

// Describe names a file type: "a symlink", "a directory", "a FIFO", …
func Describe(m fs.FileMode) string {
	switch {
	case m&fs.ModeSymlink != 0:
		return "a symlink"
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a FIFO"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeDevice != 0, m&fs.ModeCharDevice != 0:
		return "a device"
	case m.IsRegular():
		return "a regular file"
	}
	return "not a regular file"
}

// Rel returns path relative to root, both absolute (or both relative to the same
// directory), when path is below root; an error otherwise.
func Rel(root, path string) (string, error) {
	rel, err := filepath.Rel(filepath.Clean(root), filepath.Clean(path))
	if err != nil || rel == "." || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) || filepath.IsAbs(rel) {
		return "", fmt.Errorf("%s is not below %s", path, root)
	}
	return rel, nil
}

// split checks rel and returns its components.
func split(root, rel string) ([]string, error) {
	rel = filepath.Clean(rel)
	if rel == "." || filepath.IsAbs(rel) || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return nil, fmt.Errorf("%q is not a path below %s", rel, root)
	}
	return strings.Split(rel, string(filepath.Separator)), nil
}

const dirFlags = unix.O_RDONLY | unix.O_DIRECTORY | unix.O_NOFOLLOW | unix.O_NONBLOCK | unix.O_CLOEXEC

// openRoot opens root itself, a directory (followed: its path is git-ralph's).
func openRoot(root string) (int, error) {
	for {
		fd, err := unix.Open(root, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return -1, &fs.PathError{Op: "open", Path: root, Err: err}
		}
		return fd, nil
	}
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// walker opens directories below a root, one component at a time.
type walker struct {
	root string
	// make: a missing directory is made (with perm), and a symlink or non-directory in
	// the way is moved aside first.
	make bool
	perm uint32
}

// dir opens the directory comps beneath w.root and returns its descriptor.
func (w walker) dir(comps []string) (int, error) {
	fd, err := openRoot(w.root)
	if err != nil {
		// A missing root is made only where its parent is: a root whose parent went
		// too (a git directory an in-place run had moved, since put back) is not made
		// again in the void.
		if w.make && errors.Is(err, fs.ErrNotExist) && exists(filepath.Dir(w.root)) {
			if err := os.MkdirAll(w.root, fs.FileMode(w.perm)); err != nil {
				return -1, err
			}
			fd, err = openRoot(w.root)
		}
		if err != nil {
			return -1, err
		}
	}
	for i, c := range comps {
		next, err := w.step(fd, c, filepath.Join(append([]string{w.root}, comps[:i+1]...)...))
		unix.Close(fd)
		if err != nil {
			return -1, err
		}
		fd = next
	}
	return fd, nil
}

// step opens the directory name in dirfd without following it.
func (w walker) step(dirfd int, name, full string) (int, error) {
	for tries := 0; ; tries++ {
		fd, err := unix.Openat(dirfd, name, dirFlags, 0)
		if err == unix.EINTR {
			continue
		}
		if err == nil {
			return fd, nil
		}
		if tries > 3 {
			return -1, &fs.PathError{Op: "open", Path: full, Err: err}
		}
		switch err {
		case unix.ENOENT:
			if !w.make {
				return -1, &fs.PathError{Op: "open", Path: full, Err: err}
			}
			if err := unix.Mkdirat(dirfd, name, w.perm); err != nil && err != unix.EEXIST {
				return -1, &fs.PathError{Op: "mkdir", Path: full, Err: err}
			}
		case unix.ELOOP, unix.ENOTDIR, unix.EMLINK:
			mode := lmode(dirfd, name)
			if !w.make {
				return -1, &WayError{Path: full, Mode: mode}
			}
			if _, err := moveAside(dirfd, name, full); err != nil {
				return -1, err
			}
		default:
			return -1, &fs.PathError{Op: "open", Path: full, Err: err}
		}
	}
}

// lmode is the type of name in dirfd, not followed; 0 when it cannot be had.
func lmode(dirfd int, name string) fs.FileMode {
	var st unix.Stat_t
	if unix.Fstatat(dirfd, name, &st, unix.AT_SYMLINK_NOFOLLOW) != nil {
		return 0
	}
	return fileMode(uint32(st.Mode))
}

// moveAside renames name in dirfd to name.ralph-aside-N, a name free there, and
// returns the new name.
func moveAside(dirfd int, name, full string) (string, error) {
	for n := 1; n < 1000; n++ {
		aside := fmt.Sprintf("%s.ralph-aside-%d", name, n)
		var st unix.Stat_t
		if err := unix.Fstatat(dirfd, aside, &st, unix.AT_SYMLINK_NOFOLLOW); err == nil {
			continue
		}
		if err := unix.Renameat(dirfd, name, dirfd, aside); err != nil {
			if err == unix.ENOENT {
				return "", nil // gone meanwhile: nothing in the way
			}
			return "", &fs.PathError{Op: "move aside", Path: full, Err: err}
		}
		return aside, nil
	}
	return "", fmt.Errorf("move aside %s: no free name", full)
}

// parent opens the directory of rel beneath root and returns it with rel's last name.
func parent(root, rel string, make bool, perm fs.FileMode) (dirfd int, name, full string, err error) {
	comps, err := split(root, rel)
	if err != nil {
		return -1, "", "", err
	}
	fd, err := walker{root: root, make: make, perm: uint32(perm.Perm())}.dir(comps[:len(comps)-1])
	if err != nil {
		return -1, "", "", err
	}
	return fd, comps[len(comps)-1], filepath.Join(root, rel), nil
}

// MkdirAll makes the directory rel beneath root and those on its way (perm), moving
// aside a symlink or non-directory where one of them should be.
func MkdirAll(root, rel string, perm fs.FileMode) error {
	comps, err := split(root, rel)
	if err != nil {
		return err
	}
	fd, err := walker{root: root, make: true, perm: uint32(perm.Perm())}.dir(comps)
	if err != nil {
		return err
	}
	unix.Close(fd)
	return nil
}

// Open opens the regular file rel beneath root for reading.
func Open(root, rel string) (*os.File, error) {
	dirfd, name, full, err := parent(root, rel, false, 0)
	if err != nil {
		return nil, err
	}
	defer unix.Close(dirfd)
	return openRegular(dirfd, name, full, unix.O_RDONLY)
}

// openRegular opens the regular file name in dirfd with flag (its access mode and
// O_APPEND), never creating it nor following a symlink, nor blocking on a FIFO.
func openRegular(dirfd int, name, full string, flag int) (*os.File, error) {
	var fd int
	var err error
	for {
		fd, err = unix.Openat(dirfd, name, flag&(unix.O_RDONLY|unix.O_WRONLY|unix.O_RDWR|unix.O_APPEND)|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
		if err != unix.EINTR {
			break
		}
	}
	if err == unix.ELOOP || err == unix.EMLINK {
		return nil, &WayError{Path: full, Mode: fs.ModeSymlink}
	}
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: full, Err: err}
	}
	f := os.NewFile(uintptr(fd), full)
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if !st.Mode().IsRegular() {
		f.Close()
		return nil, &WayError{Path: full, Mode: st.Mode().Type()}
	}
	return f, nil
}

// ReadFile reads the regular file rel beneath root, at most max bytes: a larger one is
// a *TooLargeError, none of it returned.
func ReadFile(root, rel string, max int64) ([]byte, error) {
	f, err := Open(root, rel)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > max {
		return nil, &TooLargeError{Path: filepath.Join(root, rel), Max: max}
	}
	return data, nil
}

// Lstat describes rel beneath root, not following it (nor anything on its way).
func Lstat(root, rel string) (fs.FileInfo, error) {
	dirfd, name, full, err := parent(root, rel, false, 0)
	if err != nil {
		return nil, err
	}
	defer unix.Close(dirfd)
	var st unix.Stat_t
	if err := unix.Fstatat(dirfd, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return nil, &fs.PathError{Op: "lstat", Path: full, Err: err}
	}
	return newInfo(name, &st), nil
}

// Readlink returns the target of the symlink rel beneath root.
func Readlink(root, rel string) (string, error) {
	dirfd, name, full, err := parent(root, rel, false, 0)
	if err != nil {
		return "", err
	}
	defer unix.Close(dirfd)
	for n := 256; n <= 1<<16; n *= 4 {
		buf := make([]byte, n)
		m, err := unix.Readlinkat(dirfd, name, buf)
		if err != nil {
			return "", &fs.PathError{Op: "readlink", Path: full, Err: err}
		}
		if m < n {
			return string(buf[:m]), nil
		}
	}
	return "", &fs.PathError{Op: "readlink", Path: full, Err: syscall.ENAMETOOLONG}
}

// ReadDir lists the directory rel beneath root ("." for root itself), each entry's type
// as it is (a symlink is a symlink), sorted by name.
func ReadDir(root, rel string) ([]fs.DirEntry, error) {
	var fd int
	var err error
	if filepath.Clean(rel) == "." {
		fd, err = openRoot(root)
	} else {
		var comps []string
		if comps, err = split(root, rel); err == nil {
			fd, err = walker{root: root}.dir(comps)
		}
	}
	if err != nil {
		return nil, err
	}
	dir := os.NewFile(uintptr(fd), filepath.Join(root, rel))
	defer dir.Close()
	names, err := dir.Readdirnames(-1)
	if err != nil {
		return nil, err
	}
	out := make([]fs.DirEntry, 0, len(names))
	for _, n := range names {
		var st unix.Stat_t
		if err := unix.Fstatat(fd, n, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
			continue // gone meanwhile
		}
		out = append(out, fs.FileInfoToDirEntry(newInfo(n, &st)))
	}
	sortEntries(out)
	return out, nil
}

// WriteFile puts data at rel beneath root, whole or not at all: written to a new
// temporary file beside it (O_EXCL|O_NOFOLLOW, perm less the umask), synced, then
// renamed over whatever is there (a symlink there is replaced, never written through;
// a directory there is moved aside first). Missing directories on the way are made
// (0755), a symlink or non-directory where one should be moved aside.
func WriteFile(root, rel string, data []byte, perm fs.FileMode) error {
	return write(root, rel, data, perm, false)
}

// WriteFileMode is WriteFile with the file's mode exactly perm, past the umask (a hook
// put back as it was recorded).
func WriteFileMode(root, rel string, data []byte, perm fs.FileMode) error {
	return write(root, rel, data, perm, true)
}

// WriteFileUnsynced is WriteFile without the fsync: what it writes is whole or absent
// for every later reader, but may be gone after a power loss (a running process's pid,
// which no power loss leaves running).
func WriteFileUnsynced(root, rel string, data []byte, perm fs.FileMode) error {
	f, commit, err := create(root, rel, perm, false)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	return commit(err, false)
}

func write(root, rel string, data []byte, perm fs.FileMode, exact bool) error {
	return WriteWith(root, rel, perm, exact, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

// WriteWith is WriteFile with the content written by fill (a report rendered as it
// goes); exact sets the mode past the umask. Nothing is at rel until fill succeeded.
func WriteWith(root, rel string, perm fs.FileMode, exact bool, fill func(w io.Writer) error) error {
	f, commit, err := create(root, rel, perm, exact)
	if err != nil {
		return err
	}
	err = fill(f)
	if err == nil {
		err = f.Sync()
	}
	return commit(err, false)
}

// Create makes a new, empty regular file at rel beneath root and returns it open for
// writing: whatever was at that name is replaced (a symlink, a file) or moved aside (a
// directory), never written through.
func Create(root, rel string, perm fs.FileMode) (*os.File, error) {
	f, commit, err := create(root, rel, perm, false)
	if err != nil {
		return nil, err
	}
	if err := commit(nil, true); err != nil {
		return nil, err
	}
	return f, nil
}

// create opens a new temporary file beside rel and returns it with the function that
// puts it in place, given the writer's error (or removes it on an error), and closes it
// unless keepOpen.
func create(root, rel string, perm fs.FileMode, exact bool) (*os.File, func(werr error, keepOpen bool) error, error) {
	dirfd, name, full, err := parent(root, rel, true, 0o755)
	if err != nil {
		return nil, nil, err
	}
	tmp, fd, err := tempIn(dirfd, name, perm)
	if err != nil {
		unix.Close(dirfd)
		return nil, nil, &fs.PathError{Op: "create", Path: full, Err: err}
	}
	if exact {
		if err := unix.Fchmod(fd, uint32(perm.Perm())); err != nil {
			unix.Close(fd)
			_ = unix.Unlinkat(dirfd, tmp, 0)
			unix.Close(dirfd)
			return nil, nil, &fs.PathError{Op: "chmod", Path: full, Err: err}
		}
	}
	f := os.NewFile(uintptr(fd), full)
	return f, func(werr error, keepOpen bool) error {
		defer unix.Close(dirfd)
		if werr == nil {
			werr = renameInto(dirfd, tmp, name, full)
		}
		if werr != nil {
			f.Close()
			_ = unix.Unlinkat(dirfd, tmp, 0)
			return werr
		}
		if keepOpen {
			return nil
		}
		return f.Close()
	}, nil
}

// tempIn creates a new file beside name in dirfd (O_EXCL|O_NOFOLLOW) and returns its
// name and descriptor.
func tempIn(dirfd int, name string, perm fs.FileMode) (string, int, error) {
	var b [6]byte
	for tries := 0; tries < 100; tries++ {
		_, _ = rand.Read(b[:])
		tmp := "." + trim(name) + ".ralph-" + hex.EncodeToString(b[:])
		fd, err := unix.Openat(dirfd, tmp, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, uint32(perm.Perm()))
		if err == unix.EEXIST || err == unix.EINTR {
			continue
		}
		return tmp, fd, err
	}
	return "", -1, unix.EEXIST
}

// trim keeps a temporary name within the system's limit.
func trim(name string) string {
	if len(name) > 200 {
		return name[:200]
	}
	return name
}

// renameInto renames tmp to name in dirfd, moving aside a directory in the way.
func renameInto(dirfd int, tmp, name, full string) error {
	err := unix.Renameat(dirfd, tmp, dirfd, name)
	if err == unix.EISDIR || err == unix.ENOTEMPTY || err == unix.EEXIST || err == unix.ENOTDIR {
		if _, merr := moveAside(dirfd, name, full); merr != nil {
			return merr
		}
		err = unix.Renameat(dirfd, tmp, dirfd, name)
	}
	if err != nil {
		return &fs.PathError{Op: "rename", Path: full, Err: err}
	}
	return nil
}

// Symlink makes rel beneath root a symlink to target (replacing what is there as
// WriteFile does). The link is made, never followed.
func Symlink(target, root, rel string) error {
	dirfd, name, full, err := parent(root, rel, true, 0o755)
	if err != nil {
		return err
	}
	defer unix.Close(dirfd)
	var b [6]byte
	for tries := 0; tries < 100; tries++ {
		_, _ = rand.Read(b[:])
		tmp := "." + trim(name) + ".ralph-" + hex.EncodeToString(b[:])
		err := unix.Symlinkat(target, dirfd, tmp)
		if err == unix.EEXIST {
			continue
		}
		if err != nil {
			return &fs.PathError{Op: "symlink", Path: full, Err: err}
		}
		if err := renameInto(dirfd, tmp, name, full); err != nil {
			_ = unix.Unlinkat(dirfd, tmp, 0)
			return err
		}
		return nil
	}
	return &fs.PathError{Op: "symlink", Path: full, Err: unix.EEXIST}
}

// OpenLock opens the lock file rel beneath root for reading and writing, creating it
// when missing (O_NOFOLLOW: a symlink, a FIFO or a directory at that name is moved
// aside and a file made). Unlike Create it keeps a regular file that is there: two
// processes must lock the same one.
func OpenLock(root, rel string) (*os.File, error) {
	dirfd, name, full, err := parent(root, rel, true, 0o755)
	if err != nil {
		return nil, err
	}
	defer unix.Close(dirfd)
	for tries := 0; ; tries++ {
		fd, err := unix.Openat(dirfd, name, unix.O_RDWR|unix.O_CREAT|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0o644)
		if err == unix.EINTR {
			continue
		}
		if err == nil {
			f := os.NewFile(uintptr(fd), full)
			if st, serr := f.Stat(); serr == nil && st.Mode().IsRegular() {
				return f, nil
			}
			f.Close()
		} else if err != unix.ELOOP && err != unix.EMLINK && err != unix.EISDIR && err != unix.ENXIO {
			return nil, &fs.PathError{Op: "open", Path: full, Err: err}
		}
		if tries >= 3 {
			return nil, &fs.PathError{Op: "open", Path: full, Err: unix.ELOOP}
		}
		if _, err := moveAside(dirfd, name, full); err != nil {
			return nil, err
		}
	}
}

// OpenExisting opens the regular file rel beneath root with flag (O_RDONLY, O_WRONLY
// or O_RDWR, and O_APPEND), never creating it nor following a symlink.
func OpenExisting(root, rel string, flag int) (*os.File, error) {
	dirfd, name, full, err := parent(root, rel, false, 0)
	if err != nil {
		return nil, err
	}
	defer unix.Close(dirfd)
	return openRegular(dirfd, name, full, flag)
}

// Remove removes rel beneath root: a file, a symlink (not what it leads to) or an empty
// directory. What is on its way is not followed: a symlink there means nothing to
// remove (a *WayError, fs.ErrNotExist).
func Remove(root, rel string) error {
	dirfd, name, full, err := parent(root, rel, false, 0)
	if err != nil {
		return err
	}
	defer unix.Close(dirfd)
	err = unix.Unlinkat(dirfd, name, 0)
	if err == unix.EISDIR || err == unix.EPERM {
		if lmode(dirfd, name).IsDir() {
			err = unix.Unlinkat(dirfd, name, unix.AT_REMOVEDIR)
		}
	}
	if err != nil {
		return &fs.PathError{Op: "remove", Path: full, Err: err}
	}
	return nil
}

// Rename moves what is at fromRel beneath fromRoot (a file, a symlink, a directory with
// all it holds, never followed) to toRel beneath toRoot, which must be free; the
// directories on the way to it are made. Both must be on one file system
// (syscall.EXDEV otherwise).
func Rename(fromRoot, fromRel, toRoot, toRel string) error {
	from, fname, ffull, err := parent(fromRoot, fromRel, false, 0)
	if err != nil {
		return err
	}
	defer unix.Close(from)
	to, tname, tfull, err := parent(toRoot, toRel, true, 0o755)
	if err != nil {
		return err
	}
	defer unix.Close(to)
	var st unix.Stat_t
	if err := unix.Fstatat(to, tname, &st, unix.AT_SYMLINK_NOFOLLOW); err == nil {
		return &fs.PathError{Op: "rename", Path: tfull, Err: unix.EEXIST}
	}
	if err := unix.Renameat(from, fname, to, tname); err != nil {
		return &os.LinkError{Op: "rename", Old: ffull, New: tfull, Err: err}
	}
	return nil
}

// MoveAside renames rel beneath root (whatever it is, not followed) to a free name
// beside it, rel.ralph-aside-N, and returns that name relative to root; "" when nothing
// was there.
func MoveAside(root, rel string) (string, error) {
	dirfd, name, full, err := parent(root, rel, false, 0)
	if err != nil {
		return "", err
	}
	defer unix.Close(dirfd)
	aside, err := moveAside(dirfd, name, full)
	if err != nil || aside == "" {
		return "", err
	}
	return filepath.Join(filepath.Dir(filepath.Clean(rel)), aside), nil
}

// info is an fs.FileInfo from a stat.
type info struct {
	name string
	size int64
	mode fs.FileMode
	mod  time.Time
	sys  *unix.Stat_t
}

func newInfo(name string, st *unix.Stat_t) *info {
	return &info{name: name, size: st.Size, mode: fileMode(uint32(st.Mode)), mod: mtime(st), sys: st}
}

func (i *info) Name() string       { return i.name }
func (i *info) Size() int64        { return i.size }
func (i *info) Mode() fs.FileMode  { return i.mode }
func (i *info) ModTime() time.Time { return i.mod }
func (i *info) IsDir() bool        { return i.mode.IsDir() }
func (i *info) Sys() any           { return i.sys }

// SameFile reports whether a and b (from Lstat here, or from package os) describe the
// same file: its device and inode.
func SameFile(a, b fs.FileInfo) bool {
	da, ia, ok1 := devIno(a)
	db, ib, ok2 := devIno(b)
	return ok1 && ok2 && da == db && ia == ib
}

func devIno(fi fs.FileInfo) (dev, ino uint64, ok bool) {
	switch st := fi.Sys().(type) {
	case *unix.Stat_t:
		return uint64(st.Dev), uint64(st.Ino), true
	case *syscall.Stat_t:
		return uint64(st.Dev), uint64(st.Ino), true
	}
	return 0, 0, false
}

// FileMode converts a stat's st_mode as package os does.
func FileMode(m uint32) fs.FileMode { return fileMode(m) }

func fileMode(m uint32) fs.FileMode {
	mode := fs.FileMode(m & 0o777)
	switch m & unix.S_IFMT {
	case unix.S_IFBLK:
		mode |= fs.ModeDevice
	case unix.S_IFCHR:
		mode |= fs.ModeDevice | fs.ModeCharDevice
	case unix.S_IFDIR:
		mode |= fs.ModeDir
	case unix.S_IFIFO:
		mode |= fs.ModeNamedPipe
	case unix.S_IFLNK:
		mode |= fs.ModeSymlink
	case unix.S_IFSOCK:
		mode |= fs.ModeSocket
	}
	if m&unix.S_ISGID != 0 {
		mode |= fs.ModeSetgid
	}
	if m&unix.S_ISUID != 0 {
		mode |= fs.ModeSetuid
	}
	if m&unix.S_ISVTX != 0 {
		mode |= fs.ModeSticky
	}
	return mode
}

func size(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

func sortEntries(es []fs.DirEntry) {
	slices.SortFunc(es, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
}
