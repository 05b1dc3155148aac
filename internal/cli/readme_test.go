package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/alecthomas/kong"

	"github.com/git-ralph/git-ralph/internal/git"
	"github.com/git-ralph/git-ralph/internal/term"
)

// TestReadmeCoversTheCLI: the README's command table has a row for every visible
// command (hooks' subcommands included), and the README names every visible flag, its
// --no- form and its short form, so that a new command or flag cannot ship undocumented.
func TestReadmeCoversTheCLI(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(testdata, "..", "..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	readme := string(data)
	var rows []string
	for _, l := range strings.Split(readme, "\n") {
		if strings.HasPrefix(l, "| `git ralph ") {
			rows = append(rows, l)
		}
	}
	s, _, _ := term.Test()
	var r root
	p, err := newParser(&r, s, func(int) {}, func() (*git.Repo, error) { return nil, nil })
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range append([]*kong.Node{p.Model.Node}, p.Model.Leaves(true)...) {
		if n.Type == kong.CommandNode {
			words := strings.Fields(n.Path())
			found := false
			for _, row := range rows {
				cmd, _, _ := strings.Cut(strings.TrimPrefix(row, "| `git ralph "), "|")
				if strings.HasPrefix(cmd, words[0]) && containsAll(row, words[1:]) {
					found = true
				}
			}
			if !found {
				t.Errorf("the README's command table has no row for 'git ralph %s'", n.Path())
			}
		}
		for _, f := range n.Flags {
			if f.Hidden || f.Name == "help" {
				continue
			}
			want := []string{"--" + f.Name}
			if f.Tag.Negatable == "_" {
				want = append(want, "--no-"+f.Name)
			}
			if f.Short != 0 {
				want = append(want, "-"+string(f.Short)+" ")
			}
			for _, w := range want {
				if !strings.Contains(readme, w) {
					t.Errorf("the README does not mention %q (of 'git ralph %s')", strings.TrimSpace(w), n.Path())
				}
			}
		}
	}
}

func containsAll(s string, words []string) bool {
	for _, w := range words {
		if !strings.Contains(s, w) {
			return false
		}
	}
	return true
}
