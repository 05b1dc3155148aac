package loop

import (
	"slices"
	"testing"

	"github.com/git-ralph/git-ralph/internal/git"
	"github.com/git-ralph/git-ralph/internal/sandbox"
)

// The judge's policy is the agent's with nothing writable but the devices and what the
// user made writable away from the working tree and the git directory: not the tree,
// not the git directory (in place, inside the tree), not a writable path inside the
// tree or holding it, not the learnings file; the hidden paths stay hidden.
func TestJudgePolicy(t *testing.T) {
	tree := t.TempDir()
	elsewhere := t.TempDir()
	set := sandbox.Settings{Level: sandbox.Level{ABI: 7}, Writable: []string{elsewhere, tree + "/node_modules", "/"},
		Hide: []string{"/secret"}}
	learnings := t.TempDir() + "/learnings.md"
	pol, err := sandboxPolicy(set, tree, tree+"/.git", []string{learnings}, false)
	if err != nil {
		t.Fatal(err)
	}
	s := &session{Loop: &Loop{Repo: &git.Repo{Root: tree, GitDir: tree + "/.git", CommonDir: tree + "/.git"}},
		r: &Resolved{Sandbox: set}, policy: pol}
	j := s.judgePolicy()
	for _, w := range j.Write {
		if !slices.Contains(sandbox.Devices, w) && w != elsewhere {
			t.Errorf("the judge may write %s (Write %q)", w, j.Write)
		}
	}
	for _, p := range []string{tree, tree + "/a.go", tree + "/.git/config", learnings} {
		if sandbox.Covers(j.Write, p) {
			t.Errorf("the judge may write %s", p)
		}
	}
	if !sandbox.Covers(j.Write, elsewhere) || !sandbox.Covers(j.Write, "/dev/null") {
		t.Errorf("Write %q lacks %s or /dev/null", j.Write, elsewhere)
	}
	if !slices.Contains(j.Hide, "/secret") {
		t.Errorf("Hide %q lost /secret", j.Hide)
	}
	if !sandbox.Covers(pol.Write, tree) {
		t.Errorf("the agent's own policy changed: %q", pol.Write)
	}
	if (&session{Loop: s.Loop, r: s.r}).judgePolicy() != nil {
		t.Error("an unsandboxed run's judge got a policy")
	}
}
