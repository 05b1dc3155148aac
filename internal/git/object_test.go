package git

import (
	"slices"
	"strings"
	"testing"
)

// CommitShape reads a fresh commit from its loose object and a packed one through git;
// git's own answer is the reference either way.
func TestCommitShape(t *testing.T) {
	dir, r := newRepo(t)
	ctx := t.Context()
	base := gitT(t, dir, "rev-parse", "HEAD")
	gitT(t, dir, "checkout", "-q", "-b", "side")
	side := commitFile(t, dir, "s.txt", "s\n", "side")
	gitT(t, dir, "checkout", "-q", "-")
	commitFile(t, dir, "m.txt", "m\n", "main")
	gitT(t, dir, "merge", "-q", "--no-edit", "side")
	merge := gitT(t, dir, "rev-parse", "HEAD")
	check := func(id string, wantParents int) {
		t.Helper()
		tree, parents, err := r.CommitShape(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if want := gitT(t, dir, "rev-parse", id+"^{tree}"); tree != want {
			t.Errorf("tree of %s = %q, git says %q", id, tree, want)
		}
		want := strings.Fields(gitT(t, dir, "log", "-1", "--format=%P", id))
		if !slices.Equal(parents, want) || len(parents) != wantParents {
			t.Errorf("parents of %s = %q, git says %q", id, parents, want)
		}
	}
	if _, _, ok := r.looseCommit(merge); !ok {
		t.Fatal("a fresh merge commit is not read as a loose object")
	}
	check(merge, 2)
	check(base, 0)
	check(side, 1)
	gitT(t, dir, "gc", "-q", "--prune=now")
	if _, _, ok := r.looseCommit(merge); ok {
		t.Fatal("gc left the commit loose; the test proves nothing about the packed case")
	}
	calls := r.Calls.Load()
	check(merge, 2)
	if r.Calls.Load() == calls {
		t.Error("a packed commit was answered without git")
	}
}
