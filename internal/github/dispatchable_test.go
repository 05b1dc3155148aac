package github_test

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/git-ralph/git-ralph/internal/github"
	"github.com/git-ralph/git-ralph/internal/github/githubtest"
)

// TestDispatchable reads on: in each form workflow files use it.
func TestDispatchable(t *testing.T) {
	for _, c := range []struct {
		name, src string
		want      bool
	}{
		{"string", "on: workflow_dispatch\njobs: {}\n", true},
		{"flow list", "on: [push, workflow_dispatch]\n", true},
		{"block list", "on:\n  - push\n  - workflow_dispatch\n", true},
		{"map with inputs", "name: ralph\non:\n  workflow_dispatch:\n    inputs:\n      change: {required: true}\n", true},
		{"map, empty trigger", "on:\n  push:\n  workflow_dispatch:\n", true},
		{"quoted key", "\"on\":\n  workflow_dispatch: {}\n", true},
		{"push only", "on: push\n", false},
		{"push map", "on:\n  push:\n    branches: [main]\n", false},
		{"dispatch named elsewhere", "on: push\njobs:\n  workflow_dispatch:\n    runs-on: ubuntu-latest\n", false},
		{"repository_dispatch", "on: [repository_dispatch]\n", false},
		{"no on", "jobs: {}\n", false},
		{"comment only", "# on: workflow_dispatch\non: push\n", false},
	} {
		got, err := github.Dispatchable([]byte(c.src))
		if err != nil || got != c.want {
			t.Errorf("%s: Dispatchable = %v, %v; want %v", c.name, got, err, c.want)
		}
	}
	if _, err := github.Dispatchable([]byte("on: [push\n")); err == nil {
		t.Error("broken YAML: no error")
	}
}

// TestWorkflowAtRef reads a workflow at a ref through the contents API of the fake,
// which also refuses, as GitHub does, to dispatch a ref whose copy lacks the trigger.
func TestWorkflowAtRef(t *testing.T) {
	srv, c, repo := fixture(t)
	ctx := t.Context()
	var bare string
	srv.State(func(st *githubtest.State) { bare = st.Repos["acme/widgets"].GitDir })
	work := t.TempDir()
	global := emptyConfig(t)
	git := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = work
		cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL="+global,
			"GIT_AUTHOR_NAME=A", "GIT_AUTHOR_EMAIL=a@example.com", "GIT_COMMITTER_NAME=A", "GIT_COMMITTER_EMAIL=a@example.com")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	git("clone", "-q", bare, ".")
	if err := os.MkdirAll(filepath.Join(work, ".github/workflows"), 0o755); err != nil {
		t.Fatal(err)
	}
	src := "on:\n  push:\njobs: {}\n"
	if err := os.WriteFile(filepath.Join(work, ".github/workflows/ralph.yml"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	git("add", "-A")
	git("commit", "-q", "-m", "push only")
	git("push", "-q", "origin", "HEAD:refs/heads/push-only")
	srv.AddWorkflow("acme", "widgets", "ralph.yml", "")

	got, err := c.FileAt(ctx, repo, ".github/workflows/ralph.yml", "push-only")
	if err != nil || string(got) != src {
		t.Fatalf("FileAt = %q, %v", got, err)
	}
	if _, err := c.FileAt(ctx, repo, ".github/workflows/ralph.yml", "main"); github.StatusOf(err) != 404 {
		t.Fatalf("FileAt of a ref without the file: %v", err)
	}
	_, err = c.DispatchWorkflow(ctx, repo, "ralph.yml", github.Dispatch{Ref: "push-only", Inputs: map[string]string{"change": "x"}})
	var ge *github.Error
	if !errors.As(err, &ge) || ge.StatusCode != 422 || !strings.Contains(ge.Error()+ge.Text(), "workflow_dispatch") {
		t.Fatalf("dispatch of a ref without the trigger: %v", err)
	}
	if runs := srv.Runs(); len(runs) != 0 {
		t.Fatalf("runs = %+v", runs)
	}
}
