// Command git-ralph is the git subcommand `git ralph`: it runs a coding agent over an
// OpenSpec change, story by story, with a checkpoint commit per finished story.
package main

import (
	"os"

	"github.com/git-ralph/git-ralph/internal/cli"
	"github.com/git-ralph/git-ralph/internal/term"
)

func main() { os.Exit(cli.Main(os.Args[1:], term.System())) }
