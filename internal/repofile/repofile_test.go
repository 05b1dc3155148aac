package repofile

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

func TestRead(t *testing.T) {
	root := t.TempDir()
	outside := t.TempDir()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.WriteFile(filepath.Join(root, "plain.md"), []byte("plain"), 0o644))
	must(os.WriteFile(filepath.Join(outside, "secret"), []byte("secret"), 0o644))
	must(os.Mkdir(filepath.Join(root, "sub"), 0o755))
	must(os.Symlink("../plain.md", filepath.Join(root, "sub", "inside.md")))
	must(os.Symlink(filepath.Join(outside, "secret"), filepath.Join(root, "out.md")))
	must(os.Symlink("/proc/self/environ", filepath.Join(root, "environ.md")))
	must(os.Symlink(outside, filepath.Join(root, "outdir")))
	must(os.Symlink("nowhere", filepath.Join(root, "dangling.md")))
	must(syscall.Mkfifo(filepath.Join(root, "fifo.md"), 0o644))
	must(os.Symlink("/dev/zero", filepath.Join(root, "zero.md")))
	must(os.Mkdir(filepath.Join(root, "dir.md"), 0o755))
	must(os.Link(filepath.Join(outside, "secret"), filepath.Join(root, "hard.md")))

	for _, tc := range []struct {
		name    string
		data    string
		ok      bool
		refused string // the RefusedError's Why, "" when not refused
	}{
		{"plain.md", "plain", true, ""},
		{"sub/inside.md", "plain", true, ""},
		{"missing.md", "", false, ""},
		{"dangling.md", "", false, ""},
		{"dir.md", "", false, ""},
		{"out.md", "", false, "a symlink to " + filepath.Join(outside, "secret") + ", outside the repository"},
		{"environ.md", "", false, "outside the repository"},
		{"outdir/secret", "", false, "outside the repository"},
		{"fifo.md", "", false, "a FIFO"},
		{"zero.md", "", false, "outside the repository"},
		{"hard.md", "", false, "a hard link (2 names)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data, ok, err := Read(root, filepath.Join(root, filepath.FromSlash(tc.name)))
			var re *RefusedError
			if tc.refused != "" {
				if !errors.As(err, &re) || !strings.Contains(re.Why, tc.refused) || re.Rel != tc.name {
					t.Fatalf("Read = %q, %v, %v; want refused (%s) naming %s", data, ok, err, tc.refused, tc.name)
				}
				if data != nil || ok {
					t.Errorf("refused, yet returned %q, %v", data, ok)
				}
				return
			}
			if err != nil || ok != tc.ok || string(data) != tc.data {
				t.Errorf("Read = %q, %v, %v; want %q, %v", data, ok, err, tc.data, tc.ok)
			}
		})
	}
}

// A device inside the repository is refused too (the repository here is /dev).
func TestReadDevice(t *testing.T) {
	_, _, err := Read("/dev", "/dev/null")
	var re *RefusedError
	if !errors.As(err, &re) || re.Why != "a device" {
		t.Errorf("Read(/dev/null) = %v, want refused as a device", err)
	}
}

func TestInside(t *testing.T) {
	for _, tc := range []struct {
		root, path string
		want       bool
	}{
		{"/r", "/r", true},
		{"/r", "/r/a", true},
		{"/r", "/r/..a", true},
		{"/r", "/ra", false},
		{"/r", "/", false},
		{"/r", "/r/../s", false},
	} {
		if got := Inside(tc.root, filepath.Clean(tc.path)); got != tc.want {
			t.Errorf("Inside(%q, %q) = %v", tc.root, tc.path, got)
		}
	}
}
