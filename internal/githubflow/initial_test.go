package githubflow

import (
	"strings"
	"testing"
	"time"
)

// TestInitialOf: the initial state commit of a branch is the oldest commit of its
// first-parent line past the original commit, and only when it is an "initial state"
// commit of the change on that commit and no merge is on the line: a branch a runner
// extended with its own "initial state" (under a merge, or above the real one) does
// not choose it.
func TestInitialOf(t *testing.T) {
	dir := newRepo(t)
	fl, _ := newLoop(t, dir, &fakeClock{At: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)})
	git := func(args ...string) string { return strings.TrimSpace(gitOut(t, dir, args...)) }
	base := git("rev-parse", "HEAD")
	tree := git("rev-parse", "HEAD^{tree}")
	commit := func(msg string, parents ...string) string {
		args := []string{"commit-tree", tree, "-m", msg}
		for _, p := range parents {
			args = append(args, "-p", p)
		}
		return git(args...)
	}
	initial := commit("initial state\n\nRalph-Change: x", base)
	one := commit("checkpoint: 1", initial)
	fake := commit("initial state\n\nRalph-Change: x", base) // a runner's, on the same base
	fakeLine := commit("checkpoint: 2", fake)
	merged := commit("merge", fakeLine, one) // descends from the real line too
	above := commit("initial state", one)    // an "initial state" made on the run's work
	other := commit("initial state\n\nRalph-Change: y", base)
	ctx := t.Context()
	for _, tc := range []struct {
		name, tip, original, want string
	}{
		{"the start commit itself", initial, base, initial},
		{"a checkpoint on it", one, base, initial},
		{"a merge on the line", merged, base, ""},
		{"an initial state above the real one", above, base, initial},
		{"another change's", other, base, ""},
		{"a branch begun from another commit", one, initial, ""},
		{"the original commit itself", base, base, ""},
	} {
		got, err := fl.initialOf(ctx, "x", tc.tip, tc.original)
		if err != nil || got != tc.want {
			t.Errorf("%s: initialOf = %q, %v; want %q", tc.name, got, err, tc.want)
		}
	}
}
