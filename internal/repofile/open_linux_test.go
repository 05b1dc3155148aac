package repofile

import (
	"os"
	"path/filepath"
	"testing"
)

// open says where the file it opened is, as the system sees it (so that Read can refuse
// one reached through a directory swapped for a symlink after EvalSymlinks), and does
// not follow a final symlink.
func TestOpenWhere(t *testing.T) {
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "a.md")
	if err := os.WriteFile(path, []byte("a"), 0o644); err != nil {
		t.Fatal(err)
	}
	f, where, err := openFile(path)
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	if where != path {
		t.Errorf("openFile(%s) says it is %q", path, where)
	}
	link := filepath.Join(dir, "link.md")
	if err := os.Symlink(path, link); err != nil {
		t.Fatal(err)
	}
	if f, _, err := openFile(link); err == nil {
		f.Close()
		t.Errorf("openFile(a symlink) followed it")
	}
}
