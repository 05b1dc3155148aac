package loop

import (
	"errors"
	"github.com/git-ralph/git-ralph/internal/tell"
	"os"
	"path/filepath"

	"github.com/git-ralph/git-ralph/internal/gitdir"
	"github.com/git-ralph/git-ralph/internal/surface"
)

// An in-place run's git directory lies inside the working tree the agent writes, where
// Landlock cannot take the right to write it back. While the run works it is moved out
// of the tree (internal/gitdir), .git left as a link to it, so that the kernel refuses
// the agent's writes there as in a --worktree run; it goes back when the run ends.

// moveGitDir moves the git directory out of the working tree when the run's level says
// it can (preflight.SandboxLevel), and returns what puts it back. Where the move fails, the run
// goes on with the git directory writable and checked after each attempt, the level
// saying why, unless the user asked for the sandbox (--sandbox=on).
func (l *Loop) moveGitDir(r *Resolved) (putBack func(), err error) {
	lvl := &r.Sandbox.Level
	if !lvl.Moved {
		return func() {}, nil
	}
	m, err := gitdir.Move(l.Repo.Root)
	if errors.Is(err, gitdir.ErrBusy) {
		return nil, tell.UserErr("wait for it to end ('git ralph status' shows it), or stop it with Ctrl-C in its terminal", "another git-ralph run works in this checkout")
	}
	if err != nil {
		if lvl.Required {
			return nil, &tell.Error{Msg: "cannot make the git directory read-only to the agent: " + err.Error(),
				Hint: "run the change in a worktree of its own (--worktree), or let the git directory stay writable, checked after each attempt (--sandbox=auto)", Err: err}
		}
		lvl.Moved, lvl.InPlace, lvl.Stays = false, true, err.Error()
		return func() {}, nil
	}
	l.relocate(m.Dir)
	l.moved = m
	return func() { l.putBackGitDir() }, nil
}

// putBackGitDir puts the moved git directory back in the working tree. One that cannot
// go back stays where it is, .git linking to it, and the next git-ralph command tries
// again (gitdir.Recover).
func (l *Loop) putBackGitDir() {
	m := l.moved
	if m == nil {
		return
	}
	l.moved = nil
	note, err := m.Restore()
	if note != "" {
		l.Report.Warn(note)
	}
	if err != nil {
		l.Report.Warn(err.Error() + "; .git links to it meanwhile, and the next git-ralph command in this repository puts it back")
		return
	}
	l.relocate(filepath.Join(l.Repo.Root, ".git"))
}

// relocate points the repository and the run store at the git directory in dir.
func (l *Loop) relocate(dir string) {
	l.Repo.Relocate(dir)
	l.Store.Relocate(dir)
}

// checkGitLink puts back .git, the link to the moved git directory, when the agent
// removed or replaced it (what it left is kept under keep), and says what it found.
func (l *Loop) checkGitLink(keep string) (string, error) {
	if l.moved == nil {
		return "", nil
	}
	shown := l.Repo.Shown(keep)
	if rel, err := filepath.Rel(l.Repo.Root, shown); err == nil {
		shown = rel
	}
	return l.moved.Link(keep, shown)
}

// Refresh points the loop back at the working tree's .git when the git directory it
// opened had been moved out of the tree by an in-place run (another process) that has
// put it back since: a command that waited for that run to end (export) goes on there.
func (l *Loop) Refresh() {
	if l == nil || l.Repo == nil || l.Store == nil {
		return
	}
	home := filepath.Join(l.Repo.Root, ".git")
	if l.moved != nil || l.Repo.CommonDir == home || l.Repo.GitDir != l.Repo.CommonDir {
		return
	}
	if fi, err := os.Lstat(l.Repo.CommonDir); err == nil && fi.IsDir() {
		return // still moved
	}
	if fi, err := os.Lstat(home); err == nil && fi.IsDir() {
		l.relocate(home)
	}
}

// movedSnapshot rewrites a snapshot a killed run saved while the git directory was
// elsewhere (moved out of the tree, or in it) to where it is now: the same files, by
// their path now. A main worktree's only: a linked one's git directory never moves.
func (l *Loop) movedSnapshot(snap *surface.Snapshot) {
	if l.Repo.GitDir != l.Repo.CommonDir {
		return
	}
	for _, home := range gitdir.Homes(l.Repo.Root) {
		snap.Moved(filepath.Join(home, ".git"), l.Repo.CommonDir)
	}
	snap.Moved(filepath.Join(l.Repo.Root, ".git"), l.Repo.CommonDir)
}
