package github_test

import (
	"testing"

	"github.com/git-ralph/git-ralph/internal/github"
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
