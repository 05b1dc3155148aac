package source

import (
	"go/build"
	"path/filepath"
	"strings"
	"testing"
)

// TestParsersAreLeaves: the parsers and this package read files (through repofile) and
// nothing else: none imports git, the loop, the agent or GitHub code, and the parsers do
// not import the source package above them.
func TestParsersAreLeaves(t *testing.T) {
	const module = "github.com/git-ralph/git-ralph/internal/"
	allowed := map[string][]string{
		"tasklist": {},
		"openspec": {"tasklist", "repofile"},
		"speckit":  {"tasklist", "repofile"},
		"plan":     {"tasklist"},
		"prd":      {"tasklist"},
		"issue":    {"tasklist"},
		"source":   {"tasklist", "repofile", "openspec", "speckit", "plan", "prd", "run"},
	}
	for pkg, ok := range allowed {
		p, err := build.ImportDir(filepath.Join("..", pkg), 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range p.Imports {
			rest, in := strings.CutPrefix(imp, module)
			if !in {
				continue
			}
			found := false
			for _, a := range ok {
				found = found || rest == a
			}
			if !found {
				t.Errorf("internal/%s imports internal/%s", pkg, rest)
			}
		}
	}
}
