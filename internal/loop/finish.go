package loop

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/git-ralph/git-ralph/internal/git"
	"github.com/git-ralph/git-ralph/internal/run"
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
}

// ResolveRun picks the change a command means: the named one, or the only one with a run.
// A name is accepted only if it is one of the runs listed (never joined into a path).
func (l *Loop) ResolveRun(name string) (string, error) {
	names, err := l.Store.Changes()
	if err != nil {
		return "", err
	}
	if name != "" {
		if slices.Contains(names, name) {
			return name, nil
		}
		hint := "no run exists in this repository; 'git ralph list' shows the changes"
		if len(names) > 0 {
			hint = "runs here: " + strings.Join(names, ", ")
		}
		return "", userErr(hint, "no run for change %q", name)
	}
	switch len(names) {
	case 0:
		return "", userErr("start one with 'git ralph start <change>'; 'git ralph list' shows the changes", "no run in this repository")
	case 1:
		return names[0], nil
	}
	return "", &Error{Msg: "more than one run: " + strings.Join(names, ", "), Hint: "name the change, e.g. 'git ralph status " + names[0] + "'", Code: 2}
}

// Finish ends the run of change (or of the only run) the way mode says.
func (l *Loop) Finish(ctx context.Context, change string, mode FinishMode) (*FinishResult, error) {
	change, err := l.ResolveRun(change)
	if err != nil {
		return nil, err
	}
	rec, err := l.Store.Load(change)
	if err != nil {
		return nil, err
	}
	lock, err := l.Store.Lock(change)
	if errors.Is(err, run.ErrLocked) {
		return nil, userErr("wait for it to end, or stop it with Ctrl-C in its terminal", "a loop is running for change %q", change)
	}
	if err != nil {
		return nil, err
	}
	defer lock.Unlock()
	ctx = context.WithoutCancel(ctx)
	if rec.Status == run.Starting {
		return nil, userErr("run 'git ralph start "+change+"' to complete it, or 'git ralph start "+change+" --fresh'",
			"the run of %q never finished starting", change)
	}
	if ok, err := l.Repo.BranchExists(ctx, rec.Branch); err != nil {
		return nil, err
	} else if !ok {
		return nil, userErr("nothing is left to finish; remove the record with 'git ralph start "+change+" --fresh' or start over",
			"branch %s no longer exists", rec.Branch)
	}
	cur, err := l.Repo.CurrentBranch(ctx)
	if errors.Is(err, git.ErrDetachedHead) {
		cur, err = "", nil
	}
	if err != nil {
		return nil, err
	}
	st, err := l.Repo.Status(ctx)
	if err != nil {
		return nil, err
	}
	res := &FinishResult{Change: change, Branch: rec.Branch}
	if mode == Keep {
		if cur != rec.Branch {
			if len(st) > 0 {
				return nil, userErr("commit or stash them, then run 'git ralph finish --keep' again", "you have uncommitted changes on %s", orDetachedName(cur, ""))
			}
			if err := l.Repo.Checkout(ctx, rec.Branch); err != nil {
				return nil, err
			}
		}
		return res, l.Store.Remove(change)
	}

	if len(st) > 0 {
		return nil, userErr(fmt.Sprintf("commit them on %s (they will be squashed too) or stash them, then run 'git ralph finish --squash' again", rec.Branch),
			"the working tree has %d uncommitted change(s)", len(st))
	}
	target := rec.Original
	if target != "" {
		if ok, err := l.Repo.BranchExists(ctx, target); err != nil {
			return nil, err
		} else if !ok {
			return nil, userErr(fmt.Sprintf("recreate it (git branch %s %s) and run 'git ralph finish --squash' again, or keep the work on %s with 'git ralph finish --keep'", target, short(rec.OriginalCommit), rec.Branch),
				"the original branch %s no longer exists", target)
		}
	} else {
		target = rec.OriginalCommit
	}
	tip, _, err := l.Repo.ResolveRef(ctx, "refs/heads/"+rec.Branch)
	if err != nil {
		return nil, err
	}
	// Keep the checkpoints reachable whatever happens next.
	backup := backupRef(change, l.now())
	if err := l.Repo.UpdateRef(ctx, backup, tip); err != nil {
		return nil, err
	}
	res.Backup, res.Target = backup, orDetachedName(rec.Original, rec.OriginalCommit)
	if err := l.Repo.Checkout(ctx, target); err != nil {
		return nil, fmt.Errorf("switch to %s: %w", res.Target, err)
	}
	if err := l.Repo.MergeSquash(ctx, rec.Branch); err != nil {
		// Put the original branch back exactly as it was (it was clean) and return to the run's branch.
		_ = l.Repo.HardReset(ctx, "HEAD")
		_ = l.Repo.Checkout(ctx, rec.Branch)
		_ = l.Repo.DeleteRef(ctx, backup)
		return nil, userErr(fmt.Sprintf("%s moved on since the run started; %s is intact and you are back on it\nmerge by hand: git switch %s && git merge --squash %s, resolve the conflicts, then git reset\nor keep the branch: git ralph finish --keep",
			res.Target, rec.Branch, res.Target, rec.Branch),
			"squashing %s onto %s conflicts", rec.Branch, res.Target)
	}
	if err := l.Repo.MixedReset(ctx); err != nil {
		return nil, err
	}
	if err := l.Repo.DeleteBranch(ctx, rec.Branch); err != nil {
		return nil, err
	}
	if st, err := l.Repo.Status(ctx); err == nil {
		res.Files = len(st)
	}
	return res, l.Store.Remove(change)
}
