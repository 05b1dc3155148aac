package git

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// nestRepo makes a repository at dir/sub with one commit holding file, and returns
// its HEAD.
func nestRepo(t *testing.T, dir, sub string, init ...string) string {
	t.Helper()
	d := filepath.Join(dir, sub)
	gitT(t, dir, append(append([]string{"init", "-q"}, init...), sub)...)
	write(t, d, "file", "a\n")
	gitT(t, d, "add", "-A")
	gitT(t, d, "commit", "-q", "-m", "sub")
	return gitT(t, d, "rev-parse", "HEAD")
}

// The index is read in every format git writes; what git's own ls-files says is the
// answer, so the reader cannot drift from git.
func TestIndexFormats(t *testing.T) {
	for _, tc := range []struct {
		name  string
		init  []string
		setup func(t *testing.T, dir string)
	}{
		{name: "v2", setup: func(t *testing.T, dir string) {}},
		{name: "v3 extended flags", setup: func(t *testing.T, dir string) {
			write(t, dir, "ita.txt", "x\n")
			gitT(t, dir, "add", "--intent-to-add", "ita.txt") // the extended flag, so version 3
		}},
		{name: "v4 compressed paths", setup: func(t *testing.T, dir string) {
			gitT(t, dir, "update-index", "--index-version", "4")
		}},
		{name: "sha256", init: []string{"--object-format=sha256"}, setup: func(t *testing.T, dir string) {}},
		{name: "split index", setup: func(t *testing.T, dir string) {
			gitT(t, dir, "update-index", "--split-index")
			write(t, dir, "later.txt", "l\n")
			gitT(t, dir, "add", "later.txt")
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			isolate(t)
			dir := realDir(t, t.TempDir())
			gitT(t, dir, append([]string{"init", "-q"}, tc.init...)...)
			// Names whose order tells a directory ("a/", sorting as its name and a
			// '/') from the files around it.
			for _, p := range []string{"a.txt", "a-b", "a/c", "a0", "deep/er/b.txt", "deep/er/c.txt", "deep/er.x", strings.Repeat("long/", 40) + "d.txt", "sp ace/é"} {
				write(t, dir, p, p+"\n")
			}
			write(t, dir, "run.sh", "#!/bin/sh\n")
			if err := os.Chmod(filepath.Join(dir, "run.sh"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink("a.txt", filepath.Join(dir, "link")); err != nil {
				t.Fatal(err)
			}
			nestRepo(t, dir, "deep/sub", tc.init...)
			nestRepo(t, dir, "zz", tc.init...)
			gitT(t, dir, "add", "-A")
			tc.setup(t, dir)
			r := open(t, dir)
			got, err := r.gitlinks(t.Context(), "")
			if err != nil {
				t.Fatal(err)
			}
			var want []string
			for _, line := range strings.Split(gitT(t, dir, "ls-files", "-s"), "\n") {
				if meta, path, ok := strings.Cut(line, "\t"); ok && strings.HasPrefix(meta, "160000 ") {
					want = append(want, path)
				}
			}
			if len(want) != 2 || !slices.Equal(got, want) {
				t.Errorf("gitlinks = %q, git says %q", got, want)
			}
			_, err = readIndex(filepath.Join(r.GitDir, "index"))
			if tc.name == "split index" {
				if !errors.Is(err, errIndexFormat) {
					t.Errorf("a split index read alone: %v", err)
				}
			} else if err != nil {
				t.Errorf("read without git: %v", err)
			}
			// The tree: what git write-tree writes, computed or asked.
			calls := r.Calls.Load()
			tree, links, err := r.StagedTree(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			if want := gitT(t, dir, "write-tree"); tree != want {
				t.Errorf("StagedTree = %s, git write-tree says %s", tree, want)
			}
			if !slices.Equal(links, want) {
				t.Errorf("StagedTree's gitlinks = %q, git says %q", links, want)
			}
			if computed := tc.name != "split index" && tc.name != "v3 extended flags"; computed && r.Calls.Load() != calls {
				t.Errorf("StagedTree ran git for a plain index")
			}
		})
	}
}

// The attack: a repository nested in the work tree, staged as a gitlink, with a clean
// filter in its own config. Plain git add -A runs the filter (the control); git-ralph's
// AddAll and the tree of a failed attempt run nothing and still record the gitlink.
func TestAddAllRunsNothingInNestedRepo(t *testing.T) {
	dir, r := newRepo(t)
	evil := t.TempDir()
	head := nestRepo(t, dir, "sub")
	sub := filepath.Join(dir, "sub")
	write(t, sub, ".gitattributes", "* filter=evil\n")
	gitT(t, sub, "config", "filter.evil.clean", planted(t, evil, "clean")+" %f")
	write(t, sub, "file", "b\n") // the same size: git must read it, through the filter
	gitT(t, dir, "add", "sub")
	write(t, dir, "x.txt", "x\n")
	gitT(t, dir, "add", "-A") // control
	if ran(t, evil) == "" {
		t.Fatal("control: git add -A did not run the nested repository's filter; the test proves nothing")
	}
	_ = os.Remove(filepath.Join(evil, "ran"))

	ctx := t.Context()
	write(t, dir, "y.txt", "y\n")
	if _, err := r.WorktreeTree(ctx); err != nil {
		t.Fatal(err)
	}
	if err := r.AddAll(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Status(ctx); err != nil {
		t.Fatal(err)
	}
	if got := ran(t, evil); got != "" {
		t.Errorf("git-ralph's git ran the nested repository's filter: %q", got)
	}
	if got := gitT(t, dir, "ls-files", "-s", "sub"); !strings.HasPrefix(got, "160000 "+head+" ") {
		t.Errorf("sub in the index: %q, want a gitlink at %s", got, head)
	}
	if got := gitT(t, dir, "ls-files", "y.txt"); got != "y.txt" {
		t.Errorf("y.txt not staged: %q", got)
	}
}
