//go:build linux

package surface

import (
	"bytes"
	"compress/zlib"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

func show(p string) string { return p }

// Issue 37, finding 4: the agent chmods the object directories (Landlock governs no
// chmod): the modes are put back and named, read-only git directory or not.
func TestCheckLayoutPutsModesBack(t *testing.T) {
	dir, r := repo(t)
	objects := filepath.Join(dir, ".git", "objects")
	before, err := ReadLayout(r.CommonDir)
	if err != nil {
		t.Fatal(err)
	}
	ents, _ := os.ReadDir(objects)
	var sub string
	for _, e := range ents {
		if len(e.Name()) == 2 {
			sub = filepath.Join(objects, e.Name())
			break
		}
	}
	for _, p := range []string{sub, filepath.Join(dir, ".git", "config")} {
		if err := os.Chmod(p, 0); err != nil {
			t.Fatal(err)
		}
	}
	lc, err := CheckLayout(t.Context(), r, before, false, filepath.Join(t.TempDir(), "keep"), show, nil)
	if err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(sub); fi.Mode().Perm() != 0o755 {
		t.Fatalf("%s is %v", sub, fi.Mode())
	}
	if fi, _ := os.Stat(filepath.Join(dir, ".git", "config")); fi.Mode().Perm() == 0 {
		t.Fatal("config's mode not put back")
	}
	if len(lc.Changes) != 2 || !strings.Contains(strings.Join(lc.Lines, "\n"), "put back the mode of "+sub+" to 0755 (the agent had made it 00)") {
		t.Fatalf("lines %q changes %q", lc.Lines, lc.Changes)
	}
	run(t, dir, "log", "-p", "main")
}

// Issue 37, finding 1: a link planted in refs/ (refs/loop -> .) makes every ref appear
// again beneath it, and deleting one deletes the other. Where the agent could write the
// git directory the link is moved aside before any git; elsewhere it is not the
// agent's, and let be.
func TestCheckLayoutMovesPlantedLinks(t *testing.T) {
	dir, r := repo(t)
	before, err := ReadLayout(r.CommonDir)
	if err != nil {
		t.Fatal(err)
	}
	loop := filepath.Join(dir, ".git", "refs", "loop")
	if err := os.Symlink(".", loop); err != nil {
		t.Fatal(err)
	}
	if out := run(t, dir, "for-each-ref", "--format=%(refname)"); !strings.Contains(out, "refs/loop/heads/main") {
		t.Fatalf("the link makes no phantom refs: %s", out)
	}
	lc, err := CheckLayout(t.Context(), r, before, false, filepath.Join(t.TempDir(), "keep"), show, nil)
	if err != nil || len(lc.Changes) != 0 {
		t.Fatalf("read-only git directory: %v %q", err, lc.Changes)
	}
	keep := filepath.Join(r.CommonDir, "ralph", "x", "tampered", "1-1", "links")
	lc, err = CheckLayout(t.Context(), r, before, true, keep, show, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(loop); !os.IsNotExist(err) {
		t.Fatalf("the link is still there: %v", err)
	}
	if l, err := os.Readlink(filepath.Join(keep, "refs", "loop")); err != nil || l != "." {
		t.Fatalf("the link was not kept: %q %v", l, err)
	}
	if len(lc.Changes) != 1 || lc.Changes[0] != loop+" (a link) created" {
		t.Fatalf("changes %q", lc.Changes)
	}
	if out := run(t, dir, "for-each-ref", "--format=%(refname)"); strings.Contains(out, "refs/loop") {
		t.Fatalf("phantom refs left: %s", out)
	}
	// The next attempt's check: the kept link, in git-ralph's store, is no new link.
	before, _ = ReadLayout(r.CommonDir)
	if lc, err := CheckLayout(t.Context(), r, before, true, keep+"2", show, nil); err != nil || len(lc.Changes) != 0 {
		t.Fatalf("second check: %v %q", err, lc.Changes)
	}
}

// Issue 37, finding 3: an object of the user's history rewritten under its own id is
// found where the agent could write the git directory; one git wrote is not.
func TestCheckLayoutFindsRewrittenObjects(t *testing.T) {
	dir, r := repo(t)
	before, err := ReadLayout(r.CommonDir)
	if err != nil {
		t.Fatal(err)
	}
	// git's own new object: sound.
	write(t, filepath.Join(dir, "b.txt"), "b\n", 0o644)
	id := run(t, dir, "hash-object", "-w", "b.txt")
	lc, err := CheckLayout(t.Context(), r, before, true, t.TempDir(), show, nil)
	if err != nil || len(lc.Rewritten) != 0 {
		t.Fatalf("a sound new object: %v %q", err, lc.Rewritten)
	}
	// a.txt's blob, rewritten with other content under its id.
	blob := run(t, dir, "rev-parse", "main:a.txt")
	path := filepath.Join(dir, ".git", "objects", blob[:2], blob[2:])
	var z bytes.Buffer
	w := zlib.NewWriter(&z)
	w.Write([]byte("blob 5\x00evil\n"))
	w.Close()
	orig, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, z.Bytes(), 0o444); err != nil {
		t.Fatal(err)
	}
	before.Entries[filepath.Join("objects", id[:2], id[2:])] = Entry{} // seen before: not new
	lc, err = CheckLayout(t.Context(), r, before, true, t.TempDir(), show, nil)
	if err != nil || len(lc.Rewritten) != 1 || lc.Rewritten[0] != path {
		t.Fatalf("rewritten: %v %q", err, lc.Rewritten)
	}
	// A repacked history verifies; a pack with a byte changed does not.
	if err := os.WriteFile(path, orig, 0o444); err != nil {
		t.Fatal(err)
	}
	run(t, dir, "repack", "-a", "-d", "-q")
	before, _ = ReadLayout(r.CommonDir)
	packs, _ := filepath.Glob(filepath.Join(dir, ".git", "objects", "pack", "*.pack"))
	if len(packs) != 1 {
		t.Fatalf("packs: %v", packs)
	}
	data, _ := os.ReadFile(packs[0])
	data[20] ^= 0xff
	os.Chmod(packs[0], 0o644)
	if err := os.WriteFile(packs[0], data, 0o444); err != nil {
		t.Fatal(err)
	}
	lc, err = CheckLayout(t.Context(), r, before, true, t.TempDir(), show, nil)
	if err != nil || len(lc.Rewritten) != 1 || lc.Rewritten[0] != packs[0] {
		t.Fatalf("rewritten pack: %v %q", err, lc.Rewritten)
	}
}

// BenchmarkLayout is what an attempt pays for the layout: the walk before it and the
// check after, with 2,000 loose objects (a repository before its first automatic gc
// has up to 6,700).
func BenchmarkLayout(b *testing.B) {
	dir, r := repo(b)
	cmd := exec.Command("git", "fast-import", "--quiet")
	cmd.Dir = dir
	var in strings.Builder
	for i := range 2000 {
		fmt.Fprintf(&in, "blob\ndata %d\nblob %d\n\n", len(fmt.Sprintf("blob %d\n", i)), i)
	}
	cmd.Stdin = strings.NewReader(in.String())
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("%v %s", err, out)
	}
	packs, _ := filepath.Glob(filepath.Join(dir, ".git", "objects", "pack", "*.pack"))
	for _, p := range packs {
		f, _ := os.Open(p)
		c := exec.Command("git", "unpack-objects", "-q")
		c.Dir, c.Stdin = dir, f
		os.Rename(p, p+".bak")
		if out, err := c.CombinedOutput(); err != nil {
			b.Fatalf("%v %s", err, out)
		}
		f.Close()
		os.Remove(p + ".bak")
		os.Remove(strings.TrimSuffix(p, ".pack") + ".idx")
	}
	keepDir := b.TempDir()
	for _, writable := range []bool{false, true} {
		b.Run(fmt.Sprintf("writable=%v", writable), func(b *testing.B) {
			start, n := cpuMs(), 0
			for b.Loop() {
				n++
				before, err := ReadLayout(r.CommonDir)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := CheckLayout(b.Context(), r, before, writable, keepDir, show, nil); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric((cpuMs()-start)/float64(n), "cpu-ms/op")
			b.ReportMetric(float64(len(mustLayout(b, r.CommonDir).Entries)), "entries")
		})
	}
}

func mustLayout(b *testing.B, root string) *Layout {
	l, err := ReadLayout(root)
	if err != nil {
		b.Fatal(err)
	}
	return l
}

// cpuMs is the CPU time (user and system) this process has used, in milliseconds.
func cpuMs() float64 {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e6
}

// The keep lies in the git directory the agent could write: a link it planted on the
// way there (tampered/1-1/links -> a directory of the user's) is not followed, and the
// planted link in .git lands in the keep, not in the user's directory.
func TestCheckLayoutKeepFollowsNoLink(t *testing.T) {
	dir, r := repo(t)
	before, err := ReadLayout(r.CommonDir)
	if err != nil {
		t.Fatal(err)
	}
	outside := t.TempDir()
	tampered := filepath.Join(r.CommonDir, "ralph", "x", "tampered", "1-1")
	if err := os.MkdirAll(tampered, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(tampered, "links")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(dir, "a.txt"), filepath.Join(r.CommonDir, "evil.desktop")); err != nil {
		t.Fatal(err)
	}
	if _, err := CheckLayout(t.Context(), r, before, true, filepath.Join(tampered, "links"), show, nil); err != nil {
		t.Fatal(err)
	}
	if ents, _ := os.ReadDir(outside); len(ents) != 0 {
		t.Fatalf("the link went through the agent's link into %s: %v", outside, ents)
	}
	if _, err := os.Lstat(filepath.Join(tampered, "links", "evil.desktop")); err != nil {
		t.Fatalf("the planted link is not in the keep: %v", err)
	}
}

// A FIFO where git reads a file (the index) would block every git for good, git-ralph's
// and the user's: where the agent could write the git directory, it is moved aside
// before any git runs.
func TestCheckLayoutMovesAFifoAside(t *testing.T) {
	dir, r := repo(t)
	before, err := ReadLayout(r.CommonDir)
	if err != nil {
		t.Fatal(err)
	}
	index := filepath.Join(r.CommonDir, "index")
	if err := os.Remove(index); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(index, 0o644); err != nil {
		t.Fatal(err)
	}
	keep := filepath.Join(r.CommonDir, "ralph", "x", "tampered", "1-1", "links")
	lc, err := CheckLayout(t.Context(), r, before, true, keep, show, nil)
	if err != nil || len(lc.Changes) != 1 || lc.Changes[0] != index+" (a special file) created" {
		t.Fatalf("%q %v", lc.Changes, err)
	}
	if fi, err := os.Lstat(filepath.Join(keep, "index")); err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
		t.Fatalf("the FIFO is not in the keep: %v", err)
	}
	run(t, dir, "status", "--porcelain")
}
