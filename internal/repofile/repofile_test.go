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
	must(os.MkdirAll(filepath.Join(root, ".git"), 0o755))
	must(os.WriteFile(filepath.Join(root, ".git", "config"), []byte("[remote]\n\turl = https://token@x/y\n"), 0o644))
	must(os.Symlink(".git/config", filepath.Join(root, "config.md")))
	must(os.MkdirAll(filepath.Join(root, "nested", ".git"), 0o755))
	must(os.WriteFile(filepath.Join(root, "nested", ".git", "HEAD"), []byte("ref: refs/heads/main\n"), 0o644))
	must(os.WriteFile(filepath.Join(root, ".env"), []byte("TOKEN=x"), 0o644))
	must(os.Symlink(".env", filepath.Join(root, "env.md")))
	must(os.Symlink("sub", filepath.Join(root, "subdir")))
	must(os.Mkdir(filepath.Join(root, "ignored"), 0o755))
	must(os.WriteFile(filepath.Join(root, "ignored", "notes.md"), []byte("notes"), 0o644))
	must(os.Symlink("ignored", filepath.Join(root, "via")))
	asked := map[string]bool{}
	SetTracked(func(r, rel string) (bool, error) {
		if r != root {
			t.Errorf("asked about %s in %s, not in %s", rel, r, root)
		}
		asked[rel] = true
		return rel == "plain.md" || rel == "sub/inside.md", nil
	})
	t.Cleanup(func() { tracked.Store(nil) })

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
		{"config.md", "", false, "a symlink to .git/config, inside the git directory"},
		{".git/config", "", false, "inside the git directory"},
		{"nested/.git/HEAD", "", false, "inside the git directory"},
		{"env.md", "", false, "a symlink to .env, which git does not track"},
		{".env", "TOKEN=x", true, ""}, // not a symlink: a change's own untracked file is read
		{"subdir/inside.md", "plain", true, ""},
		{"via/notes.md", "", false, "a symlink to ignored/notes.md, which git does not track"},
		{"ignored/notes.md", "notes", true, ""},
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
	// Asked only about the targets of symlinks.
	if !asked["plain.md"] || !asked[".env"] || !asked["ignored/notes.md"] || len(asked) != 3 {
		t.Errorf("git was asked about %v", asked)
	}
	// No way to ask git: no symlink is followed.
	tracked.Store(nil)
	if _, _, err := Read(root, filepath.Join(root, "sub", "inside.md")); err == nil {
		t.Errorf("a symlink was followed with nobody to ask whether git tracks its target")
	}
}

// TestLimits: Read refuses a file over MaxFile by name and size without reading it;
// ReadHead reads MaxDoc of a document and says it cut it; ReadEnd reads the end, from
// the start of a line. The files are sparse: none of this reads gigabytes.
func TestLimits(t *testing.T) {
	root := t.TempDir()
	big := filepath.Join(root, "tasks.md")
	f, err := os.Create(big)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString("## 1. One\n- [ ] 1.1 do it\n"); err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(512 << 20); err != nil {
		t.Fatal(err)
	}
	f.Close()
	_, ok, err := Read(root, big)
	var re *RefusedError
	if !errors.As(err, &re) || ok || re.Rel != "tasks.md" || re.Why != "512 MiB" || !strings.Contains(err.Error(), "at most 4 MiB") {
		t.Errorf("Read of 512 MiB = %v, %v; want refused naming the file and its size", ok, err)
	}
	h, ok, err := ReadHead(root, big)
	if err != nil || !ok || len(h.Data) != MaxDoc || h.Size != 512<<20 || !h.Cut() || !strings.HasPrefix(string(h.Data), "## 1. One") {
		t.Errorf("ReadHead = %d bytes of %d, cut %v, %v, %v", len(h.Data), h.Size, h.Cut(), ok, err)
	}
	small := filepath.Join(root, "small.md")
	if err := os.WriteFile(small, []byte("first\nsecond\nthird\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if h, ok, err := ReadHead(root, small); err != nil || !ok || h.Cut() || string(h.Data) != "first\nsecond\nthird\n" {
		t.Errorf("ReadHead of a small file = %q, cut %v, %v, %v", h.Data, h.Cut(), ok, err)
	}
	if data, cut, ok, err := ReadEnd(root, small, 9); err != nil || !ok || string(data) != "third\n" || cut != 13 {
		t.Errorf("ReadEnd = %q, %d, %v, %v; want the last line, 13 bytes left out", data, cut, ok, err)
	}
	if data, cut, ok, err := ReadEnd(root, small, 100); err != nil || !ok || string(data) != "first\nsecond\nthird\n" || cut != 0 {
		t.Errorf("ReadEnd of all = %q, %d, %v, %v", data, cut, ok, err)
	}
}

// A case-insensitive file system's .GIT is the git directory too.
func TestInGitDir(t *testing.T) {
	for rel, want := range map[string]bool{".git/config": true, ".GIT/config": true, "sub/.Git/HEAD": true,
		".gitignore": false, "docs/.github/x.md": false, "a.git/b": false} {
		if inGitDir(rel) != want {
			t.Errorf("inGitDir(%q) = %v", rel, !want)
		}
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
