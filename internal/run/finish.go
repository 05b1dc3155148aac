package run

import (
	"slices"
	"strings"

	"github.com/git-ralph/git-ralph/internal/tell"
)

// FinishMode says how a run ends.
type FinishMode int

// The two ways to finish.
const (
	Squash FinishMode = iota + 1 // back to the original branch, all work uncommitted, branch deleted
	Keep                         // stay on ralph/<change> with its checkpoint commits
)

// FinishResult says what finish did.
type FinishResult struct {
	Change, Branch string
	Target         string // the branch (or commit) the work landed on, for Squash
	Backup         string // ref keeping the branch tip, for Squash
	Files          int    // paths with changes after a squash

	// For a worktree run.
	Worktree        string // its path
	RemovedWorktree bool   // it was clean and is gone
	KeptWorktree    bool   // it had uncommitted changes and was kept
	KeptChanges     int    // how many
}

// FinishCommand is the finish command line for a hint.
func FinishCommand(change string, mode FinishMode) string {
	if mode == Keep {
		return "git ralph finish " + change + " --keep"
	}
	return "git ralph finish " + change + " --squash"
}

// SquashTarget is where finish --squash lands the work, as finished.json records it:
// the original branch, or the commit (in full) after a detached start.
func SquashTarget(rec *Record) string {
	if rec.Original != "" {
		return rec.Original
	}
	return rec.OriginalCommit
}

// PickRun picks the change a command means among the changes with a run (names): the
// named one, or the only one. command is the git ralph command the hint of "more than
// one run" suggests. A name is accepted only if it is one of names.
func PickRun(names []string, name, command string) (string, error) {
	if name != "" {
		if slices.Contains(names, name) {
			return name, nil
		}
		hint := "no run exists in this repository; 'git ralph list' shows the changes"
		if len(names) > 0 {
			hint = "runs here: " + strings.Join(names, ", ")
		}
		return "", tell.UserErr(hint, "no run for change %q", name)
	}
	switch len(names) {
	case 0:
		return "", tell.UserErr("start one with 'git ralph start <change>'; 'git ralph list' shows the changes", "no run in this repository")
	case 1:
		return names[0], nil
	}
	return "", &tell.Error{Msg: "more than one run: " + strings.Join(names, ", "), Hint: "name the change, e.g. 'git ralph " + command + " " + names[0] + "'", Code: 2}
}
