package sandbox

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// Behind the supervisor: where it does not hold (no sandbox, a 32-bit utime), the
// files of the home the user relies on are marked before each attempt and what changed
// is put back after it and named: found and undone, not prevented.
// See docs/SANDBOX.md, "What else it is denied".

// MarkedHome are the paths in a home directory whose mode, owner and times are marked:
// the directory itself, the ssh and gpg directories and their entries, the shell's
// start-up files, the user's bin directories and their entries.
var MarkedHome = []string{
	"", ".ssh", ".ssh/*", ".gnupg", ".gnupg/*",
	".profile", ".bashrc", ".bash_profile", ".bash_login", ".bash_logout", ".zshrc", ".zshenv",
	".zprofile", ".zlogin", ".zlogout", ".config/fish/config.fish", ".cshrc", ".tcshrc", ".kshrc",
	"bin", "bin/*", ".local/bin", ".local/bin/*",
}

// mark is what one path was: its identity, mode, owner and modification time.
type mark struct {
	path        string
	dev, ino    uint64
	mode        uint32
	uid, gid    uint32
	mtime       unix.Timespec
	link, isDir bool
}

// HomeMarks are the marks of a home directory taken before an attempt.
type HomeMarks struct {
	home  string
	marks []mark
}

// MarkHome marks MarkedHome in home (nil when home is not an absolute path). Missing
// paths are left out: what appears during the attempt has nothing to go back to.
func MarkHome(home string) *HomeMarks {
	if !filepath.IsAbs(home) {
		return nil
	}
	h := &HomeMarks{home: filepath.Clean(home)}
	for _, rel := range MarkedHome {
		dir, base := filepath.Split(rel)
		if base != "*" {
			h.add(filepath.Join(home, rel))
			continue
		}
		d := filepath.Join(home, dir)
		var st unix.Stat_t
		if unix.Lstat(d, &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFDIR {
			continue // a link to a directory is not followed
		}
		entries, err := os.ReadDir(d)
		if err != nil {
			continue
		}
		for _, e := range entries {
			h.add(filepath.Join(d, e.Name()))
		}
	}
	return h
}

func (h *HomeMarks) add(path string) {
	var st unix.Stat_t
	if unix.Lstat(path, &st) != nil {
		return
	}
	h.marks = append(h.marks, mark{path: path, dev: uint64(st.Dev), ino: st.Ino, mode: st.Mode,
		uid: st.Uid, gid: st.Gid, mtime: st.Mtim,
		link: st.Mode&unix.S_IFMT == unix.S_IFLNK, isDir: st.Mode&unix.S_IFMT == unix.S_IFDIR})
}

// PutBack puts back each marked path that changed, through the very file marked (a path
// that is another file now is named, not touched), and returns one line for each:
// "the mode of ~/.ssh/id_ed25519 (0644, was 0600) put back". A modification time counts
// only when it was set (it then differs from the change time), not when written.
func (h *HomeMarks) PutBack() []string {
	if h == nil {
		return nil
	}
	var said []string
	for _, m := range h.marks {
		said = append(said, m.putBack(h.short(m.path))...)
	}
	return said
}

// short is path with the home directory said as ~.
func (h *HomeMarks) short(path string) string {
	if path == h.home {
		return "~"
	}
	if strings.HasPrefix(path, h.home+"/") {
		return "~" + strings.TrimPrefix(path, h.home)
	}
	return path
}

func (m mark) putBack(name string) []string {
	fd, err := unix.Open(m.path, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if errors.Is(err, unix.ENOENT) {
		return nil // removed: not a mode, owner or time (and not this check's to restore)
	}
	if err != nil {
		return []string{fmt.Sprintf("%s cannot be checked (%v)", name, err)}
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return []string{fmt.Sprintf("%s cannot be checked (%v)", name, err)}
	}
	if uint64(st.Dev) != m.dev || st.Ino != m.ino {
		return []string{fmt.Sprintf("%s is another file now (not put back)", name)}
	}
	if m.link {
		return nil // a link has no mode of its own, and its times are nobody's concern
	}
	self := "/proc/self/fd/" + strconv.Itoa(fd) // the marked file itself, whatever its name
	var said []string
	put := func(what string, err error) {
		if err != nil {
			what += " could not be put back (" + err.Error() + ")"
		} else {
			what += " put back"
		}
		said = append(said, what)
	}
	if st.Uid != m.uid || st.Gid != m.gid {
		put(fmt.Sprintf("the owner of %s (%d:%d, was %d:%d)", name, st.Uid, st.Gid, m.uid, m.gid),
			unix.Fchownat(unix.AT_FDCWD, self, int(m.uid), int(m.gid), 0))
	}
	if st.Mode != m.mode {
		put(fmt.Sprintf("the mode of %s (%#o, was %#o)", name, st.Mode&0o7777, m.mode&0o7777),
			unix.Chmod(self, m.mode&0o7777))
	}
	if st.Mtim != m.mtime && st.Mtim != st.Ctim && !m.isDir {
		ts := []unix.Timespec{{Nsec: unix.UTIME_OMIT}, m.mtime}
		put(fmt.Sprintf("the modification time of %s (set to %s)", name, timeText(st.Mtim)),
			unix.UtimesNanoAt(unix.AT_FDCWD, self, ts, 0))
	}
	return said
}

func timeText(t unix.Timespec) string {
	sec, nsec := t.Unix()
	return time.Unix(sec, nsec).UTC().Format("2006-01-02 15:04:05 UTC")
}
