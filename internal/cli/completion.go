package cli

import (
	"embed"
	"fmt"
	"slices"
	"strings"

	"github.com/alecthomas/kong"

	"github.com/git-ralph/git-ralph/hooks"
	"github.com/git-ralph/git-ralph/internal/agents"
	"github.com/git-ralph/git-ralph/internal/openspec"
	"github.com/git-ralph/git-ralph/internal/report"
	"github.com/git-ralph/git-ralph/internal/speckit"
)

//go:embed completions/*
var completions embed.FS

// completionFiles maps a shell to its script in completions/.
var completionFiles = map[string]string{"bash": "git-ralph.bash", "zsh": "_git-ralph", "fish": "git-ralph.fish"}

type completionCmd struct {
	Shell string `arg:"" enum:"bash,zsh,fish" help:"The shell: bash, zsh or fish."`
}

// Help is the long help of completion.
func (c *completionCmd) Help() string {
	return `Prints the completion script of a shell. install.sh installs all three where the
shells look under $PREFIX/share. To enable one by hand:
  bash:  git ralph completion bash > ~/.local/share/bash-completion/completions/git-ralph
         (git's own bash completion must be loaded; it calls _git_ralph)
  zsh:   git ralph completion zsh > ~/.zfunc/_git-ralph, with fpath=(~/.zfunc $fpath)
         before compinit in ~/.zshrc
  fish:  git ralph completion fish > ~/.config/fish/completions/git-ralph.fish`
}

func (c *completionCmd) Run(e *env) error {
	data, err := completions.ReadFile("completions/" + completionFiles[c.Shell])
	if err != nil {
		return err
	}
	_, err = e.s.Out.Write(data)
	return err
}

// completeCmd prints the candidates the completion scripts offer, one per line. It is
// quiet and succeeds whatever happens: a completion must never print an error.
type completeCmd struct {
	What    string `arg:"" enum:"commands,flags,changes,runs,reports,agents,hooks" help:"What to list."`
	Command string `arg:"" optional:"" help:"For flags: the command whose flags to list."`
}

func (c *completeCmd) Run(e *env) error {
	for _, w := range c.words(e) {
		fmt.Fprintln(e.s.Out, w)
	}
	return nil
}

func (c *completeCmd) words(e *env) []string {
	switch c.What {
	case "commands":
		var out []string
		for _, n := range e.parser.Model.Children {
			if !n.Hidden {
				out = append(out, n.Name)
			}
		}
		return out
	case "flags":
		node := e.parser.Model.Node
		if i := slices.IndexFunc(node.Children, func(n *kong.Node) bool { return n.Name == c.Command }); i >= 0 {
			node = node.Children[i]
		}
		var out []string
		for _, group := range node.AllFlags(true) {
			for _, f := range group {
				out = append(out, "--"+f.Name)
			}
		}
		return out
	case "agents":
		return agents.Names()
	case "hooks":
		return hooks.Names()
	}
	// The rest needs the repository; outside one there is nothing to offer.
	l, err := e.loop()
	if err != nil {
		return nil
	}
	var names []string
	switch c.What {
	case "changes": // what start takes by name: changes and spec-kit features
		names, _ = openspec.ListChanges(l.Repo.Root)
		features, _ := speckit.ListFeatures(l.Repo.Root)
		for _, f := range features {
			if !slices.Contains(names, f) {
				names = append(names, f)
			}
		}
	case "runs":
		names, _ = l.Store.Changes()
	case "reports":
		names, _ = report.Runs(e.ctx, l.Repo, l.Store)
	}
	return slices.DeleteFunc(names, func(n string) bool { return strings.ContainsAny(n, " \t\n") })
}
