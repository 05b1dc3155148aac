package git

import (
	"bytes"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestCommitsDiffsReadFile: the three reads the report is built from, against a real
// repository: commits in the order asked, each commit's diff against its first parent
// (also for an attempt saved as a merge), cut at the limit, and a file at a revision.
func TestCommitsDiffsReadFile(t *testing.T) {
	dir, r := newRepo(t)
	ctx := t.Context()
	base := gitT(t, dir, "rev-parse", "HEAD")
	write(t, dir, "new.txt", "one\ntwo\nthree\n")
	if err := r.AddAll(ctx); err != nil {
		t.Fatal(err)
	}
	one, err := r.Commit(ctx, "checkpoint: 1\n\nRalph-Story: 1\n", CommitOptions{})
	if err != nil {
		t.Fatal(err)
	}
	empty, err := r.Commit(ctx, "checkpoint: 2\n", CommitOptions{AllowEmpty: true})
	if err != nil {
		t.Fatal(err)
	}
	// An attempt whose agent committed: saved with the agent's commit as a second parent.
	write(t, dir, "b.txt", "agent\n")
	gitT(t, dir, "add", "b.txt")
	gitT(t, dir, "commit", "-q", "-m", "agent's own")
	write(t, dir, "c.txt", "more\n")
	att, err := r.SaveAttempt(ctx, empty, "refs/ralph/x/attempts/3-1", "ralph attempt 3-1: failed\n\nRalph-Outcome: failed\n")
	if err != nil {
		t.Fatal(err)
	}

	cs, err := r.Commits(ctx, []string{empty, "refs/ralph/x/attempts/3-1", one})
	if err != nil {
		t.Fatal(err)
	}
	if len(cs) != 3 || cs[0].ID != empty || cs[1].ID != att || cs[2].ID != one || cs[1].Trailers["Ralph-Outcome"] != "failed" {
		t.Fatalf("Commits = %+v", cs)
	}

	ds, err := r.Diffs(ctx, cs, 0)
	if err != nil {
		t.Fatal(err)
	}
	if d := ds[one]; !strings.Contains(d.Stat, "new.txt | 3 +++") || !strings.HasPrefix(d.Patch, "diff --git a/new.txt b/new.txt\n") || d.Cut != 0 {
		t.Errorf("diff of %s = %+v", one, d)
	}
	if d, ok := ds[empty]; !ok || d.Stat != "" || d.Patch != "" {
		t.Errorf("diff of an empty commit = %+v", d)
	}
	if d := ds[att]; !strings.Contains(d.Patch, "b/b.txt") || !strings.Contains(d.Patch, "b/c.txt") {
		t.Errorf("attempt diff against its first parent lacks the agent's and the worktree's files: %+v", d)
	}

	ds, err = r.Diffs(ctx, cs[2:], 40)
	if err != nil {
		t.Fatal(err)
	}
	if d := ds[one]; len(d.Patch) > 40 || d.Cut == 0 || !strings.HasSuffix(d.Patch, "\n") {
		t.Errorf("cut diff = %+v", d)
	}

	data, size, ok, err := r.ReadFile(ctx, one, "new.txt", 1<<20)
	if err != nil || !ok || string(data) != "one\ntwo\nthree\n" || size != 14 {
		t.Errorf("ReadFile = %q %d %v %v", data, size, ok, err)
	}
	data, size, ok, err = r.ReadFile(ctx, one, "new.txt", 5)
	if err != nil || !ok || string(data) != "one\nt" || size != 14 {
		t.Errorf("ReadFile cut at 5 = %q %d %v %v", data, size, ok, err)
	}
	if _, _, ok, err := r.ReadFile(ctx, base, "new.txt", 1<<20); ok || err != nil {
		t.Errorf("ReadFile of a missing file: ok %v, err %v", ok, err)
	}
	if _, _, ok, err := r.ReadFile(ctx, one, "", 1<<20); ok || err != nil {
		t.Errorf("ReadFile of a tree: ok %v, err %v", ok, err)
	}
}

// TestReadFileBounded: a blob of 24 MiB is read to the limit and no further: what the
// process holds stays near the limit, and git, whose output stops being read, ends.
func TestReadFileBounded(t *testing.T) {
	dir, r := newRepo(t)
	ctx := t.Context()
	big := bytes.Repeat([]byte("0123456789abcde\n"), 3<<19) // 24 MiB
	if err := os.WriteFile(filepath.Join(dir, "big.txt"), big, 0o644); err != nil {
		t.Fatal(err)
	}
	gitT(t, dir, "add", "big.txt")
	gitT(t, dir, "commit", "-q", "-m", "big")
	big = nil
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	data, size, ok, err := r.ReadFile(ctx, "HEAD", "big.txt", 1<<20)
	runtime.ReadMemStats(&after)
	if err != nil || !ok || len(data) != 1<<20 || size != 24<<20 || string(data[:16]) != "0123456789abcde\n" {
		t.Fatalf("ReadFile = %d bytes of %d, %v, %v", len(data), size, ok, err)
	}
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 16<<20 {
		t.Errorf("reading 1 MiB of a 24 MiB blob allocated %d MiB", grew>>20)
	}
}

// TestDiffsBoundedWhileStreaming: a diff of megabytes is cut at the limit as it
// streams in (what is left out is counted), and the diffs after it are whole.
func TestDiffsBoundedWhileStreaming(t *testing.T) {
	dir, r := newRepo(t)
	ctx := t.Context()
	write(t, dir, "big.txt", strings.Repeat("a line of a generated file\n", 200_000)) // 5.4 MB
	if err := r.AddAll(ctx); err != nil {
		t.Fatal(err)
	}
	big, err := r.Commit(ctx, "big", CommitOptions{})
	if err != nil {
		t.Fatal(err)
	}
	write(t, dir, "small.txt", "small\n")
	if err := r.AddAll(ctx); err != nil {
		t.Fatal(err)
	}
	small, err := r.Commit(ctx, "small", CommitOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cs, err := r.Commits(ctx, []string{big, small})
	if err != nil {
		t.Fatal(err)
	}
	ds, err := r.Diffs(ctx, cs, 4096)
	if err != nil {
		t.Fatal(err)
	}
	d := ds[big]
	if len(d.Patch) > 4096 || !strings.HasPrefix(d.Patch, "diff --git a/big.txt b/big.txt\n") || !strings.Contains(d.Stat, "big.txt") {
		t.Errorf("big diff: %d bytes of patch, stat %q", len(d.Patch), d.Stat)
	}
	if total := len(d.Patch) + d.Cut; total < 5_000_000 {
		t.Errorf("kept %d + cut %d = %d bytes, want the whole patch's size counted", len(d.Patch), d.Cut, total)
	}
	if d := ds[small]; !strings.Contains(d.Patch, "+small\n") || d.Cut != 0 {
		t.Errorf("the diff after a cut one: %+v", d)
	}
}
