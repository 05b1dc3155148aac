package beneath

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// setup makes a root with a/b/c/ below it and, outside it, a home whose files must
// never be read, written or removed through the root: secret and .bashrc.
func setup(t *testing.T) (root, home string) {
	t.Helper()
	top := t.TempDir()
	root, home = filepath.Join(top, "root"), filepath.Join(top, "home")
	for _, d := range []string{filepath.Join(root, "a", "b", "c"), home} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	put(t, filepath.Join(home, "secret"), "the key\n")
	put(t, filepath.Join(home, ".bashrc"), "the user's shell\n")
	return root, home
}

func put(t *testing.T, path, data string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
}

// untouched asserts home holds exactly what setup put there.
func untouched(t *testing.T, home string) {
	t.Helper()
	entries, err := os.ReadDir(home)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if strings.Join(names, " ") != ".bashrc secret" {
		t.Errorf("home holds %v, want .bashrc and secret alone", names)
	}
	for name, want := range map[string]string{"secret": "the key\n", ".bashrc": "the user's shell\n"} {
		if got, err := os.ReadFile(filepath.Join(home, name)); err != nil || string(got) != want {
			t.Errorf("home/%s = %q, %v; want %q", name, got, err, want)
		}
	}
}

// link replaces the directory or file at path by a symlink to target.
func link(t *testing.T, target, path string) {
	t.Helper()
	if err := os.RemoveAll(path); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, path); err != nil {
		t.Fatal(err)
	}
}

// Every component below the root, and the file itself, may be a planted symlink to
// the user's home: no operation goes through it.
func TestSymlinkInEachComponent(t *testing.T) {
	for _, comp := range []string{"a", "a/b", "a/b/c", "a/b/c/secret", "a/b/c/.bashrc"} {
		t.Run(strings.ReplaceAll(comp, "/", "_"), func(t *testing.T) {
			root, home := setup(t)
			target := home
			if strings.HasSuffix(comp, "secret") || strings.HasSuffix(comp, ".bashrc") {
				target = filepath.Join(home, filepath.Base(comp))
			}
			link(t, target, filepath.Join(root, comp))
			// reads: nothing there
			for _, name := range []string{"secret", ".bashrc"} {
				rel := filepath.Join("a", "b", "c", name)
				if data, err := ReadFile(root, rel, 1<<20); err == nil || !errors.Is(err, fs.ErrNotExist) {
					t.Errorf("ReadFile %s = %q, %v; want nothing there", rel, data, err)
				}
				if f, err := Open(root, rel); err == nil {
					f.Close()
					t.Errorf("Open %s opened it", rel)
				}
				if f, err := OpenExisting(root, rel, os.O_RDWR); err == nil {
					f.Close()
					t.Errorf("OpenExisting %s opened it", rel)
				}
			}
			if _, err := ReadDir(root, "a/b/c"); comp != "a/b/c/secret" && comp != "a/b/c/.bashrc" && err == nil {
				t.Errorf("ReadDir a/b/c listed the link's target")
			}
			// removal: nothing removed through the link
			if err := Remove(root, "a/b/c/secret"); err != nil && !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("Remove: %v", err)
			}
			untouched(t, home)
			if comp == "a/b/c/secret" {
				if _, err := os.Lstat(filepath.Join(root, comp)); !errors.Is(err, fs.ErrNotExist) {
					t.Errorf("the link itself should be removed: %v", err)
				}
			}
			// writes: the link is replaced or moved aside, never written through
			if err := WriteFile(root, "a/b/c/.bashrc", []byte("git-ralph's\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			f, err := Create(root, "a/b/c/secret", 0o600)
			if err != nil {
				t.Fatal(err)
			}
			f.WriteString("a log\n")
			f.Close()
			lock, err := OpenLock(root, "a/b/c/lock")
			if err != nil {
				t.Fatal(err)
			}
			lock.Close()
			if err := Symlink("../elsewhere", root, "a/b/c/kept-link"); err != nil {
				t.Fatal(err)
			}
			untouched(t, home)
			for rel, want := range map[string]string{"a/b/c/.bashrc": "git-ralph's\n", "a/b/c/secret": "a log\n"} {
				if got, err := ReadFile(root, rel, 1<<20); err != nil || string(got) != want {
					t.Errorf("%s = %q, %v; want %q", rel, got, err, want)
				}
			}
			if fi, err := os.Lstat(filepath.Join(root, "a/b/c/kept-link")); err != nil || fi.Mode()&fs.ModeSymlink == 0 {
				t.Errorf("kept-link: %v %v", fi, err)
			}
			// the planted link is kept aside, as a link
			if !strings.HasSuffix(comp, "secret") && !strings.HasSuffix(comp, ".bashrc") {
				aside := filepath.Join(root, comp+".ralph-aside-1")
				if got, err := os.Readlink(aside); err != nil || got != target {
					t.Errorf("%s -> %q, %v; want the planted link to %s", aside, got, err, target)
				}
			}
		})
	}
}

// A FIFO where a file is read, written or locked blocks nothing and is never taken for
// the file.
func TestFIFO(t *testing.T) {
	root, home := setup(t)
	fifo := filepath.Join(root, "a", "f")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skip("no FIFO here:", err)
	}
	if _, err := ReadFile(root, "a/f", 10); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("ReadFile of a FIFO: %v", err)
	}
	var way *WayError
	if _, err := Open(root, "a/f"); !errors.As(err, &way) || way.Mode&fs.ModeNamedPipe == 0 {
		t.Errorf("Open of a FIFO: %v", err)
	}
	if _, err := Lstat(root, "a/f"); err != nil {
		t.Errorf("Lstat: %v", err)
	}
	lock, err := OpenLock(root, "a/f")
	if err != nil {
		t.Fatal(err)
	}
	if st, _ := lock.Stat(); !st.Mode().IsRegular() {
		t.Errorf("the lock is %v", st.Mode())
	}
	lock.Close()
	if fi, err := os.Lstat(filepath.Join(root, "a", "f.ralph-aside-1")); err != nil || fi.Mode()&fs.ModeNamedPipe == 0 {
		t.Errorf("the FIFO is not kept aside: %v %v", fi, err)
	}
	// a FIFO where a directory should be
	if err := syscall.Mkfifo(filepath.Join(root, "a", "d"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadFile(root, "a/d/x", 10); !errors.As(err, &way) {
		t.Errorf("read through a FIFO: %v", err)
	}
	if err := WriteFile(root, "a/d/x", []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	untouched(t, home)
}

// A directory (not empty) where a file goes is moved aside whole, never removed; a
// file where a directory goes likewise.
func TestDirectoryInTheWay(t *testing.T) {
	root, home := setup(t)
	put(t, filepath.Join(root, "a", "b", "c", "inner"), "the agent's\n")
	if err := WriteFile(root, "a/b/c", []byte("a file now\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(filepath.Join(root, "a", "b", "c")); string(got) != "a file now\n" {
		t.Errorf("a/b/c = %q", got)
	}
	if got, _ := os.ReadFile(filepath.Join(root, "a", "b", "c.ralph-aside-1", "inner")); string(got) != "the agent's\n" {
		t.Errorf("the directory was not kept aside: %q", got)
	}
	// now a/b/c is a file where a directory goes
	if err := WriteFile(root, "a/b/c/d/e", []byte("deep\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(filepath.Join(root, "a", "b", "c.ralph-aside-2")); string(got) != "a file now\n" {
		t.Errorf("the file in the way was not kept aside: %q", got)
	}
	if err := Remove(root, "a/b/c/d"); err == nil {
		t.Errorf("Remove of a non-empty directory succeeded")
	}
	untouched(t, home)
}

// Rename moves a file, a symlink or a directory without following it; it never
// replaces what is at the destination.
func TestRename(t *testing.T) {
	root, home := setup(t)
	link(t, home, filepath.Join(root, "a", "b"))
	if err := Rename(root, "a/b", root, "keep/1/b"); err != nil {
		t.Fatal(err)
	}
	if got, err := os.Readlink(filepath.Join(root, "keep", "1", "b")); err != nil || got != home {
		t.Errorf("kept link -> %q, %v", got, err)
	}
	put(t, filepath.Join(root, "a", "x"), "x")
	put(t, filepath.Join(root, "a", "y"), "y")
	if err := Rename(root, "a/x", root, "a/y"); err == nil {
		t.Errorf("Rename replaced a file")
	}
	// a link where a directory of the destination goes is moved aside, not followed
	link(t, home, filepath.Join(root, "keep2"))
	if err := Rename(root, "a/x", root, "keep2/x"); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(filepath.Join(root, "keep2", "x")); string(got) != "x" {
		t.Errorf("keep2/x = %q", got)
	}
	if got, _ := os.Readlink(filepath.Join(root, "keep2.ralph-aside-1")); got != home {
		t.Errorf("the planted link was not kept aside")
	}
	untouched(t, home)
}

// WriteFileMode sets the mode past the umask; ReadFile refuses a file over its bound
// without reading it whole.
func TestModeAndBound(t *testing.T) {
	root, _ := setup(t)
	old := syscall.Umask(0o077)
	defer syscall.Umask(old)
	if err := WriteFileMode(root, "a/hook", []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(filepath.Join(root, "a", "hook")); fi.Mode().Perm() != 0o755 {
		t.Errorf("mode %v", fi.Mode())
	}
	if err := WriteFile(root, "a/big", bytes.Repeat([]byte("x"), 100), 0o644); err != nil {
		t.Fatal(err)
	}
	var big *TooLargeError
	if _, err := ReadFile(root, "a/big", 99); !errors.As(err, &big) {
		t.Errorf("ReadFile over the bound: %v", err)
	}
	if data, err := ReadFile(root, "a/big", 100); err != nil || len(data) != 100 {
		t.Errorf("ReadFile at the bound: %d, %v", len(data), err)
	}
	for _, bad := range []string{"", ".", "..", "../x", "/etc/passwd", "a/../../x"} {
		if _, err := ReadFile(root, bad, 10); err == nil {
			t.Errorf("ReadFile %q accepted", bad)
		}
	}
	// nothing is left beside the files: the temporary names are renamed or removed
	entries, _ := os.ReadDir(filepath.Join(root, "a"))
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".") {
			t.Errorf("left behind: %s", e.Name())
		}
	}
}

// SameFile compares what Lstat here and package os say of a file.
func TestSameFile(t *testing.T) {
	root, _ := setup(t)
	put(t, filepath.Join(root, "a", "x"), "x")
	put(t, filepath.Join(root, "a", "y"), "y")
	mine, err := Lstat(root, "a/x")
	if err != nil {
		t.Fatal(err)
	}
	theirs, _ := os.Lstat(filepath.Join(root, "a", "x"))
	other, _ := os.Lstat(filepath.Join(root, "a", "y"))
	if !SameFile(mine, theirs) || SameFile(mine, other) {
		t.Errorf("SameFile: same %v, other %v", SameFile(mine, theirs), SameFile(mine, other))
	}
	if !mine.ModTime().Equal(theirs.ModTime()) || mine.Size() != 1 || !mine.Mode().IsRegular() {
		t.Errorf("Lstat: %v %v %v, os says %v", mine.ModTime(), mine.Size(), mine.Mode(), theirs.ModTime())
	}
}
