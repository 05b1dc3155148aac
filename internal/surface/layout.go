//go:build linux

package surface

import (
	"compress/zlib"
	"context"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/git-ralph/git-ralph/internal/beneath"
	"github.com/git-ralph/git-ralph/internal/git"
)

// What Landlock does not govern (modes) and, where the agent could write the git
// directory, what it planted there (links git would follow, objects rewritten under
// their ids) is found by a walk that follows no link: docs/SANDBOX.md, "The git
// directory".

// Layout is a git directory's entries as a walk that follows no link saw them.
type Layout struct {
	Root    string
	Entries map[string]Entry // by path relative to Root
}

// Entry is one entry of a Layout: its type and permission bits, and for an object
// file its identity (inode, size, change time: what a rewrite cannot keep).
type Entry struct {
	Mode  fs.FileMode
	Ino   uint64
	Size  int64
	Ctime int64
}

// skipped are the top-level names a Layout does not walk: Git LFS's content store
// (large, and not git's). git-ralph's store (ralph/) is walked for modes alone: it is
// read and written following no link, and the links moved aside are kept in it.
var skipped = []string{"lfs"}

func inStore(rel string) bool { return rel == "ralph" || strings.HasPrefix(rel, "ralph/") }

// ReadLayout walks the git directory root, following no link.
func ReadLayout(root string) (*Layout, error) {
	l := &Layout{Root: root, Entries: map[string]Entry{}}
	err := walk(root, func(rel string, st *unix.Stat_t, _ int, _ string) bool {
		l.Entries[rel] = entryOf(rel, st)
		return true
	})
	return l, err
}

func entryOf(rel string, st *unix.Stat_t) Entry {
	e := Entry{Mode: beneath.FileMode(st.Mode)}
	if isObject(rel) {
		e.Ino, e.Size, e.Ctime = st.Ino, st.Size, ctime(st)
	}
	return e
}

// walk calls visit for every entry beneath root (not root itself), parents first,
// with the directory it is in open as dirfd; it descends into a directory when visit
// says so. No link is followed: each directory is opened with O_NOFOLLOW from its
// parent.
func walk(root string, visit func(rel string, st *unix.Stat_t, dirfd int, name string) bool) error {
	fd, err := unix.Open(root, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return &fs.PathError{Op: "open", Path: root, Err: err}
	}
	return walkDir(fd, "", visit)
}

func walkDir(fd int, rel string, visit func(string, *unix.Stat_t, int, string) bool) error {
	dir := os.NewFile(uintptr(fd), rel)
	defer dir.Close()
	names, err := dir.Readdirnames(-1)
	if err != nil {
		return err
	}
	slices.Sort(names)
	for _, n := range names {
		if rel == "" && slices.Contains(skipped, n) {
			continue
		}
		var st unix.Stat_t
		if err := unix.Fstatat(fd, n, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
			continue // gone meanwhile
		}
		r := filepath.Join(rel, n)
		if !visit(r, &st, fd, n) || st.Mode&unix.S_IFMT != unix.S_IFDIR {
			continue
		}
		sub, err := unix.Openat(fd, n, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err != nil {
			continue // unreadable still (another owner's), or replaced meanwhile
		}
		if err := walkDir(sub, r, visit); err != nil {
			return err
		}
	}
	return nil
}

// isObject reports whether rel is an object file: a loose object (objects/ab/cdef…)
// or a pack's data or index (objects/pack/pack-….pack, .idx).
func isObject(rel string) bool {
	parts := strings.Split(rel, string(filepath.Separator))
	if len(parts) != 3 || parts[0] != "objects" {
		return false
	}
	if parts[1] == "pack" {
		return strings.HasSuffix(parts[2], ".pack") || strings.HasSuffix(parts[2], ".idx")
	}
	return len(parts[1]) == 2 && isHex(parts[1]) && (len(parts[2]) == 38 || len(parts[2]) == 62) && isHex(parts[2])
}

func isHex(s string) bool {
	_, err := hex.DecodeString(strings.Repeat("0", len(s)%2) + s)
	return err == nil
}

// LayoutCheck is what CheckLayout found and did.
type LayoutCheck struct {
	Lines   []string // one per thing put back or moved aside, for the reporter
	Changes []string // the attempt's reason: "<name> <what>"
	// Rewritten are the objects that do not hold what their names say, or packs that do
	// not verify: history the agent rewrote under its own ids, which git-ralph cannot
	// put back.
	Rewritten []string
	// After is the git directory as the check leaves it: the next attempt's Layout,
	// without a walk of its own.
	After *Layout
}

// CheckLayout compares the git directory with before, following no link: it puts
// modes back; with writable, it moves new links into keep and verifies new or changed
// object files. show names a path for the user; snap's watched files are left to it.
// It runs once the attempt's processes are gone, before any git.
func CheckLayout(ctx context.Context, repo *git.Repo, before *Layout, writable bool, keep string, show func(string) string, snap *Snapshot) (*LayoutCheck, error) {
	res := &LayoutCheck{After: &Layout{Root: before.Root, Entries: make(map[string]Entry, len(before.Entries))}}
	var loose, packs []string
	var firstErr error
	watched := snap.watchedPaths()
	keepRoot, keepRel := keepPlace(repo, keep)
	err := walk(before.Root, func(rel string, st *unix.Stat_t, dirfd int, name string) bool {
		then, had := before.Entries[rel]
		now := entryOf(rel, st)
		full := filepath.Join(before.Root, rel)
		res.After.Entries[rel] = now
		if watched[full] {
			return now.Mode.IsDir() // the trust surface's, with its own words
		}
		// A link git would follow, or a FIFO, socket or device where git reads a file
		// (a FIFO index blocks every git for good): the agent's, moved aside.
		odd := now.Mode.Type()&^(fs.ModeDir|fs.ModeSymlink) != 0
		planted := (now.Mode&fs.ModeSymlink != 0 || odd) && (!had || then.Mode.Type() != now.Mode.Type())
		if planted && !inStore(rel) {
			if !writable {
				return false // not the agent's to make: a link of the user's or of git's
			}
			// Into the keep, following no link on the way there either: the keep lies
			// in the git directory the agent could write.
			dst := filepath.Join(keep, rel)
			if err := beneath.Rename(before.Root, rel, keepRoot, filepath.Join(keepRel, rel)); err != nil {
				firstErr = cmpErr(firstErr, fmt.Errorf("move the link %s aside: %w", full, err))
				return false
			}
			delete(res.After.Entries, rel)
			what := "link"
			if odd {
				what = "special file"
			}
			res.Lines = append(res.Lines, fmt.Sprintf("moved the %s %s aside (the agent made it; kept as %s, never followed)", what, Quote(show(full)), Quote(show(dst))))
			res.Changes = append(res.Changes, show(full)+" (a "+what+") created")
			return false
		}
		if had && then.Mode.Type() == now.Mode.Type() && then.Mode != now.Mode && now.Mode&fs.ModeSymlink == 0 {
			if err := unix.Fchmodat(dirfd, name, uint32(then.Mode.Perm())|special(then.Mode), 0); err != nil {
				firstErr = cmpErr(firstErr, fmt.Errorf("put back the mode of %s: %w", full, err))
			} else {
				res.After.Entries[rel] = Entry{Mode: then.Mode, Ino: now.Ino, Size: now.Size, Ctime: now.Ctime}
				res.Lines = append(res.Lines, fmt.Sprintf("put back the mode of %s to %s (the agent had made it %s)", Quote(show(full)), perm(then.Mode), perm(now.Mode)))
				res.Changes = append(res.Changes, show(full)+" mode changed")
			}
		}
		if now.Mode&fs.ModeSymlink != 0 {
			return false
		}
		if writable && isObject(rel) && now.Mode.IsRegular() && (!had || then.Ino != now.Ino || then.Size != now.Size || then.Ctime != now.Ctime) {
			if strings.HasSuffix(rel, ".pack") {
				packs = append(packs, full)
			} else if !strings.HasSuffix(rel, ".idx") {
				loose = append(loose, full)
			}
		}
		return true
	})
	if err == nil {
		err = firstErr
	}
	if err != nil {
		return res, err
	}
	for _, p := range loose {
		ok, err := looseObjectSound(ctx, p)
		if ctx.Err() != nil {
			return res, ctx.Err()
		}
		if err != nil || !ok {
			res.Rewritten = append(res.Rewritten, show(p))
		}
	}
	for _, p := range packs {
		if err := repo.VerifyPack(ctx, p); err != nil {
			if ctx.Err() != nil {
				return res, ctx.Err()
			}
			res.Rewritten = append(res.Rewritten, show(p))
		}
	}
	return res, nil
}

// watchedPaths are the files and directories s watches, which its Compare and Restore
// put back (types, contents and modes), not the layout's check.
func (s *Snapshot) watchedPaths() map[string]bool {
	w := map[string]bool{}
	if s == nil {
		return w
	}
	for _, f := range s.Files {
		w[f.Path] = true
	}
	for _, f := range s.DirStates {
		w[f.Path] = true
	}
	for _, d := range s.Dirs {
		w[d] = true
	}
	return w
}

func cmpErr(first, err error) error {
	if first != nil {
		return first
	}
	return err
}

func special(m fs.FileMode) uint32 {
	var s uint32
	if m&fs.ModeSetuid != 0 {
		s |= unix.S_ISUID
	}
	if m&fs.ModeSetgid != 0 {
		s |= unix.S_ISGID
	}
	if m&fs.ModeSticky != 0 {
		s |= unix.S_ISVTX
	}
	return s
}

func perm(m fs.FileMode) string {
	return "0" + strconv.FormatUint(uint64(m.Perm())|uint64(special(m)), 8)
}

// looseObjectSound reports whether the loose object at path holds the object its
// name says: its inflated content hashes (SHA-1, or SHA-256 for a 64-digit name) to
// the directory and file name.
func looseObjectSound(ctx context.Context, path string) (bool, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK, 0)
	if err != nil {
		return false, err
	}
	defer f.Close()
	want := filepath.Base(filepath.Dir(path)) + filepath.Base(path)
	var h hash.Hash = sha1.New()
	if len(want) == 64 {
		h = sha256.New()
	}
	z, err := zlib.NewReader(f)
	if err != nil {
		return false, nil
	}
	// A MiB at a time, so that a second Ctrl-C stops an agent's zlib bomb; an
	// object is no larger than its file inflated as far as zlib can (1032 to 1).
	fi, err := f.Stat()
	if err != nil {
		return false, err
	}
	left := fi.Size()*1032 + 1
	for left > 0 {
		if ctx.Err() != nil {
			return false, ctx.Err()
		}
		n, err := io.CopyN(h, z, min(left, 1<<20))
		left -= n
		if err == io.EOF {
			break
		}
		if err != nil {
			return false, nil
		}
	}
	if left <= 0 {
		return false, nil // more than zlib can make of the file: not an object
	}
	got := hex.EncodeToString(h.Sum(nil))
	return got == want, nil
}
