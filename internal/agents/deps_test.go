package agents

import (
	"go/build"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/git-ralph/git-ralph/"

// imports returns the module's packages that dir's non-test files import.
func imports(t *testing.T, dir string) []string {
	t.Helper()
	p, err := build.ImportDir(dir, 0)
	if err != nil {
		t.Fatalf("%s: %v", dir, err)
	}
	var out []string
	for _, imp := range p.Imports {
		if rest, ok := strings.CutPrefix(imp, module); ok {
			out = append(out, rest)
		}
	}
	return out
}

// TestLayout keeps one package per agent over a core: internal/agent imports
// nothing of this module but internal/sandbox, a leaf that imports nothing of it; a driver imports internal/agent and, to decode Claude
// Code's stream-json, internal/agent/claude, nothing else of it; every driver is
// on the list; no package but this one imports more than one driver.
func TestLayout(t *testing.T) {
	root := filepath.Join("..", "..")
	if imps := imports(t, filepath.Join(root, "internal", "agent")); !slices.Equal(imps, []string{"internal/sandbox"}) {
		t.Errorf("internal/agent imports %v, want only internal/sandbox", imps)
	}
	if imps := imports(t, filepath.Join(root, "internal", "sandbox")); len(imps) > 0 {
		t.Errorf("internal/sandbox imports %v", imps)
	}
	entries, err := os.ReadDir(filepath.Join(root, "internal", "agent"))
	if err != nil {
		t.Fatal(err)
	}
	var drivers []string
	for _, e := range entries {
		if !e.IsDir() || e.Name() == "testdata" || e.Name() == "agenttest" {
			continue
		}
		pkg := "internal/agent/" + e.Name()
		drivers = append(drivers, pkg)
		for _, imp := range imports(t, filepath.Join(root, pkg)) {
			if imp != "internal/agent" && (imp != "internal/agent/claude" || pkg == imp) {
				t.Errorf("%s imports %s", pkg, imp)
			}
		}
	}
	mine := imports(t, ".")
	for _, d := range drivers {
		if !slices.Contains(mine, d) {
			t.Errorf("%s is not on the list of agents", d)
		}
	}
	if len(drivers) != len(Names()) {
		t.Errorf("%d driver packages, %d agents on the list (%v)", len(drivers), len(Names()), Names())
	}
	err = filepath.WalkDir(filepath.Join(root, "internal"), func(path string, e os.DirEntry, err error) error {
		if err != nil || !e.IsDir() {
			return err
		}
		if e.Name() == "testdata" {
			return filepath.SkipDir
		}
		rel, _ := filepath.Rel(root, path)
		if rel == "internal/agents" {
			return nil
		}
		p, err := build.ImportDir(path, 0)
		if err != nil {
			return nil // no Go files of its own
		}
		var n []string
		for _, imp := range p.Imports {
			if d, ok := strings.CutPrefix(imp, module); ok && slices.Contains(drivers, d) && d != "internal/agent/claude" {
				n = append(n, d)
			}
		}
		if len(n) > 1 {
			t.Errorf("%s imports the drivers %v: only internal/agents may import more than one", rel, n)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
