package loop

import (
	"go/build"
	"io/fs"
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

// workflows are the packages built on internal/loop, which the loop reaches only
// through an interface the CLI sets.
var workflows = []string{"internal/finish", "internal/githubflow", "internal/parallel", "internal/wtrun"}

// TestLayout keeps the split of issue 17: internal/loop depends on nothing of GitHub
// and on no workflow package, not even through another package; internal/status on
// neither the loop nor GitHub; only the CLI imports the GitHub workflows, and no
// package but the CLI imports more than one workflow.
func TestLayout(t *testing.T) {
	root := filepath.Join("..", "..")
	seen := map[string]bool{}
	var walk func(pkg string)
	walk = func(pkg string) {
		if seen[pkg] {
			return
		}
		seen[pkg] = true
		if strings.HasPrefix(pkg, "internal/github") {
			t.Errorf("internal/loop depends on %s", pkg)
		}
		if slices.Contains(workflows, pkg) {
			t.Errorf("internal/loop depends on the workflow package %s", pkg)
		}
		for _, imp := range imports(t, filepath.Join(root, pkg)) {
			walk(imp)
		}
	}
	walk("internal/loop")

	// internal/status reads runs from outside: it depends neither on the loop nor on
	// anything of GitHub, not even through another package.
	seenStatus := map[string]bool{}
	var walkStatus func(pkg string)
	walkStatus = func(pkg string) {
		if seenStatus[pkg] {
			return
		}
		seenStatus[pkg] = true
		if pkg == "internal/loop" || strings.HasPrefix(pkg, "internal/github") {
			t.Errorf("internal/status depends on %s", pkg)
		}
		for _, imp := range imports(t, filepath.Join(root, pkg)) {
			walkStatus(imp)
		}
	}
	walkStatus("internal/status")

	// The packages under the loop that it and the workflows share import only what lies
	// below them: internal/judge runs an agent on an attempt's diff and reads its
	// result into a run's record; internal/preflight checks before anything changes;
	// internal/start and internal/tell are what the CLI and the loop pass each other.
	floors := map[string][]string{
		"internal/judge":     {"internal/agent", "internal/git", "internal/prompt", "internal/run", "internal/sandbox", "internal/tasklist", "internal/tell"},
		"internal/preflight": {"internal/agent", "internal/agents", "internal/git", "internal/gitdir", "internal/repofile", "internal/run", "internal/sandbox", "internal/source", "internal/tell"},
		"internal/start":     {"internal/sandbox"},
		"internal/tell":      nil,
	}
	for pkg, may := range floors {
		for _, imp := range imports(t, filepath.Join(root, pkg)) {
			if !slices.Contains(may, imp) {
				t.Errorf("%s imports %s: only %v", pkg, imp, may)
			}
		}
	}

	// Every package under internal, nested ones too (internal/agent/<name>,
	// internal/github/githubtest).
	var pkgs []string
	err := filepath.WalkDir(filepath.Join(root, "internal"), func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return err
		}
		if d.Name() == "testdata" {
			return filepath.SkipDir
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		pkgs = append(pkgs, filepath.ToSlash(rel))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(pkgs, "internal/github/githubtest") {
		t.Fatalf("the walk of internal found %d packages, not internal/github/githubtest", len(pkgs))
	}
	for _, pkg := range pkgs {
		if pkg == "internal/cli" {
			continue
		}
		if _, err := build.ImportDir(filepath.Join(root, pkg), 0); err != nil {
			continue // no Go files of its own
		}
		imps := imports(t, filepath.Join(root, pkg))
		if slices.Contains(imps, "internal/githubflow") {
			t.Errorf("%s imports internal/githubflow: only internal/cli may", pkg)
		}
		var wf []string
		for _, imp := range imps {
			if slices.Contains(workflows, imp) {
				wf = append(wf, imp)
			}
		}
		if len(wf) > 1 {
			t.Errorf("%s imports the workflow packages %v: only internal/cli may import more than one", pkg, wf)
		}
	}
}
