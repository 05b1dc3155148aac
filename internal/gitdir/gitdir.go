// Package gitdir keeps an in-place run's git directory out of the working tree its
// agent writes. Landlock grants a directory with everything beneath it, so while
// <tree>/.git is a directory inside the writable tree the kernel cannot refuse the
// agent's writes to it. For the run, the git directory moves to a home of its own on
// the same file system and <tree>/.git becomes a symbolic link to it, in one atomic
// exchange: every git (the agent's, the user's editor, other worktrees) goes on through
// the link, and Landlock, which judges the resolved path, refuses the agent's writes.
// It goes back when the run ends; a git-ralph command that finds it left moved by a
// killed run puts it back first (Recover). docs/SANDBOX.md, "The git directory", has the design.
package gitdir

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
)

const (
	// lockName is the file whose flock the run holds while the git directory is away:
	// free, the move is a killed run's, and Recover may undo it.
	lockName = ".ralph-lock"
	// treeName holds the working tree's path, so that Recover undoes only the move of
	// the tree it looks at.
	treeName = ".ralph-tree"
	// linkName is the link left in the working tree.
	linkName = ".git"
)

// ErrBusy is Move's answer when another git-ralph process holds the moved git
// directory of the same working tree.
var ErrBusy = errors.New("another git-ralph run has this repository's git directory moved")

// Moved is a git directory moved out of its working tree for a run.
type Moved struct {
	Tree string // the working tree
	Home string // the directory holding the moved git directory, outside Tree
	Dir  string // the git directory now: Home/.git
	// Links are the names of Tree's entries linked from Home, so that a submodule's
	// core.worktree (relative to its git directory) still finds its working tree.
	Links []string
	lock  *os.File
}

// Homes are the places the git directory of tree may move to, in order of preference:
// git-ralph's own state directory (out of the user's sight), then beside the tree.
// Only one on the tree's file system is used.
func Homes(tree string) []string { return HomesIn(stateDir(), tree) }

// HomesIn are Homes with state as the state directory ("": none).
func HomesIn(state, tree string) []string {
	tree = filepath.Clean(tree)
	var out []string
	if state != "" {
		sum := sha256.Sum256([]byte(tree))
		out = append(out, filepath.Join(state, "git-ralph", "moved", filepath.Base(tree)+"-"+hex.EncodeToString(sum[:4])))
	}
	return append(out, filepath.Join(filepath.Dir(tree), "."+filepath.Base(tree)+".git-ralph"))
}

// stateDir is $XDG_STATE_HOME, or ~/.local/state; "" without a home.
func stateDir() string {
	if d := os.Getenv("XDG_STATE_HOME"); filepath.IsAbs(d) {
		return filepath.Clean(d)
	}
	if h := os.Getenv("HOME"); filepath.IsAbs(h) {
		return filepath.Join(h, ".local", "state")
	}
	return ""
}

// NotMovedError says why a git directory stays where it is.
type NotMovedError struct{ Why string }

func (e *NotMovedError) Error() string { return e.Why }

// Where is the home the git directory gitDir of tree would move to, or why it cannot
// move (a *NotMovedError): it is not tree/.git as a directory of its own, or no home
// lies on the tree's file system. It changes nothing.
func Where(tree, gitDir string) (string, error) {
	return where(tree, gitDir)
}
