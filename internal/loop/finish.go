package loop

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/git-ralph/git-ralph/internal/git"
	"github.com/git-ralph/git-ralph/internal/run"
	"github.com/git-ralph/git-ralph/internal/surface"
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

// ResolveRun picks the change a command means: the named one, or the only one with a run.
// A name is accepted only if it is one of the runs listed (never joined into a path).
func (l *Loop) ResolveRun(name string) (string, error) {
	return ResolveRunIn(l.Repo.Root, l.Store, name)
}

// ResolveRunIn is ResolveRun in the repository whose top level is root and whose run
// records store holds, for the workflows that look at runs without a Loop
// (githubflow.Remote).
func ResolveRunIn(root string, store *run.Store, name string) (string, error) {
	names, err := store.Changes()
	if err != nil {
		return "", err
	}
	return PickRun(names, runNameIn(root, store, name), "status")
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
		return "", UserErr(hint, "no run for change %q", name)
	}
	switch len(names) {
	case 0:
		return "", UserErr("start one with 'git ralph start <change>'; 'git ralph list' shows the changes", "no run in this repository")
	case 1:
		return names[0], nil
	}
	return "", &Error{Msg: "more than one run: " + strings.Join(names, ", "), Hint: "name the change, e.g. 'git ralph " + command + " " + names[0] + "'", Code: 2}
}

// Finish ends the run of change (or of the only run) the way mode says: the finish
// pipeline (FinishWith) with squash or keep as its last step, here or, for a worktree
// run, in Loop.Worktrees. No step is cut short by Ctrl-C.
func (l *Loop) Finish(ctx context.Context, change string, mode FinishMode) (res *FinishResult, err error) {
	err = l.FinishWith(context.WithoutCancel(ctx), change, FinishStrategy{
		Command: func(change string) string { return FinishCommand(change, mode) },
		Resumes: true,
		Act: func(ctx context.Context, f *FinishRun) (err error) {
			if f.Rec.Worktree != nil {
				res, err = f.Loop.Worktrees.Finish(ctx, f.Loop, f.Rec, mode)
			} else {
				res, err = f.Loop.finishHere(ctx, f.Rec, mode)
			}
			return err
		},
	})
	return res, err
}

// finishHere is the last step of an in-place finish: finish's own git (checkout, merge,
// reset) reads the config and runs hooks and filters, so what it leaves of the trust
// surface must be what it found; a pending squash is completed (resumeSquash) first.
func (l *Loop) finishHere(ctx context.Context, rec *run.Record, mode FinishMode) (res *FinishResult, err error) {
	snap, err := surface.Take(ctx, l.Repo, surface.Options{Change: rec.Change, Others: l.runStamps})
	if err != nil {
		return nil, fmt.Errorf("record the trust surface: %w", err)
	}
	defer func() {
		if cerr := l.finishCheck(ctx, snap, rec); cerr != nil && err == nil {
			res, err = nil, cerr
		}
	}()
	if rec.Finishing != nil {
		if res, err := l.resumeSquash(ctx, rec, mode); res != nil || err != nil {
			return res, err
		}
	}
	return l.finish(ctx, rec.Change, rec, mode)
}

// finish is Finish of change (rec) once its checks are made and no finish --squash is
// pending: the branch must exist and the original branch be where the run recorded it
// (or --keep warns), then --keep switches to the branch and --squash starts the squash.
func (l *Loop) finish(ctx context.Context, change string, rec *run.Record, mode FinishMode) (*FinishResult, error) {
	if ok, err := l.Repo.BranchExists(ctx, rec.Branch); err != nil {
		return nil, err
	} else if !ok {
		return nil, BranchGone(rec)
	}
	cur, err := l.Repo.Branch(ctx)
	if err != nil {
		return nil, err
	}
	st, err := l.Repo.Status(ctx)
	if err != nil {
		return nil, err
	}
	res := &FinishResult{Change: change, Branch: rec.Branch}
	if err := l.CheckOriginal(ctx, l.Repo, rec, mode == Keep, FinishCommand(change, mode)); err != nil {
		return nil, err
	}
	if mode == Keep {
		return l.keep(ctx, rec, cur, len(st) > 0, res)
	}
	if len(st) > 0 {
		return nil, UserErr(fmt.Sprintf("commit them on %s (they will be squashed too) or stash them, then run 'git ralph finish --squash' again", rec.Branch),
			"the working tree has %d uncommitted change(s)", len(st))
	}
	return l.startSquash(ctx, rec, res)
}

// keep is finish --keep of res.Change (rec): the checkout goes to the run's branch (from
// cur, dirty when it has uncommitted changes), and the run is forgotten.
func (l *Loop) keep(ctx context.Context, rec *run.Record, cur string, dirty bool, res *FinishResult) (*FinishResult, error) {
	if cur != rec.Branch {
		if dirty && rec.Busy != "" && cur != "" {
			// A switch to the branch was killed half-way (the worktree was clean):
			// keep what it left, put cur back as it was, and switch again.
			head, err := l.Repo.Head(ctx)
			if err != nil {
				return nil, err
			}
			if err := l.RestoreAfterCutShort(ctx, rec, cur, head, "switch to "+rec.Branch); err != nil {
				return nil, err
			}
		} else if dirty {
			return nil, UserErr("commit or stash them, then run 'git ralph finish --keep' again", "you have uncommitted changes on %s", BranchOrDetached(cur, ""))
		}
		if err := l.Busy(rec, "finish --keep", func() error { return l.Repo.Checkout(ctx, rec.Branch) }); err != nil {
			return nil, err
		}
	}
	l.SaveFinished(run.Finished{Change: res.Change, Branch: rec.Branch, How: "keep", At: l.Time()})
	return res, l.Store.Remove(res.Change)
}

// startSquash is finish --squash from a clean checkout: the original branch (or commit)
// must still be there; the record says a squash is under way, the branch's tip is kept
// under refs/ralph/<change>/backup/, and HEAD goes to the target for squash.
func (l *Loop) startSquash(ctx context.Context, rec *run.Record, res *FinishResult) (*FinishResult, error) {
	target := rec.Original
	if target != "" {
		if ok, err := l.Repo.BranchExists(ctx, target); err != nil {
			return nil, err
		} else if !ok {
			return nil, UserErr(fmt.Sprintf("recreate it (git branch %s %s) and run 'git ralph finish --squash' again, or keep the work on %s with 'git ralph finish --keep'", target, Short(rec.OriginalCommit), rec.Branch),
				"the original branch %s no longer exists", target)
		}
	} else {
		target = rec.OriginalCommit
	}
	targetHead := rec.OriginalCommit
	if rec.Original != "" {
		var err error
		if targetHead, _, err = l.Repo.ResolveRef(ctx, "refs/heads/"+target); err != nil {
			return nil, err
		}
	}
	tip, _, err := l.Repo.ResolveRef(ctx, "refs/heads/"+rec.Branch)
	if err != nil {
		return nil, err
	}
	// From here on a kill leaves the work half-way between the branches: the record
	// says so, and the next finish completes it (resumeSquash). It is written before
	// the backup, so that a git killed in any step of finish is met by a crash-resume.
	backup := BackupRef(res.Change, l.Time())
	res.Backup, res.Target = backup, BranchOrDetached(rec.Original, rec.OriginalCommit)
	rec.Finishing = &run.Finishing{Tip: tip, Target: targetHead, Backup: backup}
	if err := l.Save(rec); err != nil {
		return nil, err
	}
	// Keep the checkpoints reachable whatever happens next.
	if err := l.Repo.UpdateRef(ctx, backup, tip); err != nil {
		return nil, err
	}
	if err := l.Repo.Checkout(ctx, target); err != nil {
		return nil, fmt.Errorf("switch to %s: %w", res.Target, err)
	}
	return l.squash(ctx, rec, res)
}

// finishCheck compares the trust surface with snap, taken when finish began, and puts
// back what differs: only finish's own git ran meanwhile, and a program of the agent's
// it ran (or a process the agent left running) is what changed it.
func (l *Loop) finishCheck(ctx context.Context, snap *surface.Snapshot, rec *run.Record) error {
	changes, err := l.restoreSurface(ctx, snap, rec, "finish", false)
	if err != nil || len(changes) == 0 {
		return err
	}
	l.Report.Warn(strings.TrimPrefix(surface.Reason(changes, l.Repo.Root), "tampered: ") + " while finish ran (a program of the agent's that git ran, " +
		"or a process the agent left running): put back as listed above")
	return nil
}

// squash is finish --squash from the moment HEAD is on the target, clean: merge, unstage,
// delete the branch, forget the run.
func (l *Loop) squash(ctx context.Context, rec *run.Record, res *FinishResult) (*FinishResult, error) {
	if err := l.Repo.MergeSquash(ctx, rec.Branch); err != nil {
		return nil, l.undoSquash(ctx, rec, res, err)
	}
	return l.squashed(ctx, rec, res)
}

// undoSquash puts the target back as it was (it was clean) after the merge --squash
// failed (err) and returns to the run's branch, then returns the error, which says
// where the user is: each step of the undo is checked, and one that failed is named.
// When the target cannot be put back, the record keeps its finish under way, so that
// the next finish finds it.
func (l *Loop) undoSquash(ctx context.Context, rec *run.Record, res *FinishResult, err error) error {
	if rerr := l.Repo.HardReset(ctx, "HEAD"); rerr != nil {
		return &Error{Msg: fmt.Sprintf("squashing %s onto %s failed, and putting %s back failed too: %v", rec.Branch, res.Target, res.Target, rerr),
			Hint: fmt.Sprintf("the squash failed with: %v\nyou are on %s with what the merge left in the working tree; %s is intact, its tip kept as %s\n"+
				"once git works again, 'git reset --hard' puts %s back (only the merge's leftovers go); then 'git ralph finish %s --squash' tries again, "+
				"or 'git switch %s' and 'git ralph finish %s --keep' keeps the branch",
				err, res.Target, rec.Branch, res.Backup, res.Target, rec.Change, rec.Branch, rec.Change),
			Err: errors.Join(err, rerr)}
	}
	intact := "you are back on it"
	if cerr := l.Repo.Checkout(ctx, rec.Branch); cerr != nil {
		intact = fmt.Sprintf("you are on %s, as it was: switching back to %s failed (%v); 'git switch %s' goes back", res.Target, rec.Branch, cerr, rec.Branch)
	}
	var notes []string
	if derr := l.Repo.DeleteRef(ctx, res.Backup); derr != nil {
		notes = append(notes, fmt.Sprintf("the backup ref %s is left (%v); 'git update-ref -d %s' removes it", res.Backup, derr, res.Backup))
	}
	rec.Finishing = nil
	if serr := l.Save(rec); serr != nil {
		notes = append(notes, fmt.Sprintf("the run record still says a squash is under way (%v): the next finish checks what git shows and goes on from there", serr))
	}
	se := SquashError(err, rec.Branch, res.Target, intact, "git switch "+res.Target+" && git merge --squash "+rec.Branch, "git ralph finish --keep")
	if e, ok := se.(*Error); ok && len(notes) > 0 {
		e.Hint += "\n" + strings.Join(notes, "\n")
	}
	return se
}

// SquashError is the error of a merge --squash of branch onto target that failed (err)
// and was undone: a conflict only when git reported one (a *git.ConflictError), with
// how to merge by hand (merge, a command line) and how to keep the branch instead (keep);
// else git's own failure. intact says where the user is now.
func SquashError(err error, branch, target, intact, merge, keep string) error {
	var conflict *git.ConflictError
	if errors.As(err, &conflict) {
		return &Error{Msg: fmt.Sprintf("squashing %s onto %s conflicts", branch, target),
			Hint: fmt.Sprintf("%s moved on since the run started: git reported conflicts in %s\n%s is intact and %s\nmerge by hand: %s, resolve the conflicts, then git reset\nor keep the branch: %s",
				target, strings.Join(conflict.Paths, ", "), branch, intact, merge, keep),
			Err: err}
	}
	return &Error{Msg: fmt.Sprintf("squashing %s onto %s failed: %v", branch, target, err),
		Hint: fmt.Sprintf("%s is as it was, %s is intact and %s\nor keep the branch: %s", target, branch, intact, keep),
		Err:  err}
}

// squashed ends finish --squash once the squash is in the worktree.
func (l *Loop) squashed(ctx context.Context, rec *run.Record, res *FinishResult) (*FinishResult, error) {
	if err := l.Repo.MixedReset(ctx); err != nil {
		return nil, err
	}
	if err := l.Repo.DeleteBranch(ctx, rec.Branch); err != nil {
		return nil, err
	}
	if st, err := l.Repo.Status(ctx); err == nil {
		res.Files = len(st)
	}
	l.SaveFinished(run.Finished{Change: rec.Change, Branch: rec.Branch, How: "squash", Target: SquashTarget(rec), Backup: res.Backup, At: l.Time()})
	return res, l.Store.Remove(rec.Change)
}

// resumeSquash completes a finish --squash that was killed half-way, from what git
// shows: before the switch to the target nothing moved (it returns nil, nil and Finish
// starts over); after it, the squash is completed when the worktree holds the target
// and nothing else (killed before the merge) or exactly the squashed work (killed after
// the merge, the unstaging or the branch's deletion). Anything else is refused with
// nothing changed.
func (l *Loop) resumeSquash(ctx context.Context, rec *run.Record, mode FinishMode) (*FinishResult, error) {
	f := rec.Finishing
	res := &FinishResult{Change: rec.Change, Branch: rec.Branch, Backup: f.Backup, Target: BranchOrDetached(rec.Original, rec.OriginalCommit)}
	pending := func(format string, args ...any) error {
		return UserErr("the branch's work is kept as "+f.Backup+"; look at 'git status', then run 'git ralph finish "+rec.Change+" --squash' again",
			"an interrupted 'git ralph finish --squash' of %q is pending, but "+format, append([]any{rec.Change}, args...)...)
	}
	exists, err := l.Repo.BranchExists(ctx, rec.Branch)
	if err != nil {
		return nil, err
	}
	cur, err := l.Repo.Branch(ctx)
	if err != nil {
		return nil, err
	}
	if exists && cur == rec.Branch {
		// Killed before the switch, or inside it: a checkout cut short leaves HEAD on
		// the branch and part of the target's files in the worktree, which was clean
		// when finish began. Keep that, put the branch's tip back, and start over.
		st, err := l.Repo.Status(ctx)
		if err != nil {
			return nil, err
		}
		if len(st) > 0 {
			if tip, _, err := l.Repo.ResolveRef(ctx, "refs/heads/"+rec.Branch); err != nil {
				return nil, err
			} else if tip != f.Tip {
				return nil, pending("%s moved since", rec.Branch)
			}
			if err := l.RestoreAfterCutShort(ctx, rec, rec.Branch, f.Tip, "switch to "+res.Target); err != nil {
				return nil, err
			}
		}
		rec.Finishing = nil
		return nil, l.Save(rec)
	}
	head, err := l.Repo.Head(ctx)
	if err != nil {
		return nil, err
	}
	if cur != rec.Original || head != f.Target {
		return nil, pending("HEAD is no longer where it left it (%s)", BranchOrDetached(rec.Original, f.Target))
	}
	if mode == Keep {
		return nil, UserErr("run 'git ralph finish "+rec.Change+" --squash' to complete it",
			"an interrupted 'git ralph finish --squash' of %q is pending", rec.Change)
	}
	if !exists {
		// Killed after the branch was deleted: only the record was left.
		if st, err := l.Repo.Status(ctx); err == nil {
			res.Files = len(st)
		}
		l.SaveFinished(run.Finished{Change: rec.Change, Branch: rec.Branch, How: "squash", Target: SquashTarget(rec), Backup: res.Backup, At: l.Time()})
		return res, l.Store.Remove(rec.Change)
	}
	if tip, _, err := l.Repo.ResolveRef(ctx, "refs/heads/"+rec.Branch); err != nil {
		return nil, err
	} else if tip != f.Tip {
		return nil, pending("%s moved since", rec.Branch)
	}
	st, err := l.Repo.Status(ctx)
	if err != nil {
		return nil, err
	}
	if len(st) == 0 {
		return l.squash(ctx, rec, res) // killed between the switch and the merge
	}
	// The squash of a branch onto the commit it grew from is the branch's tip tree.
	if ok, err := l.Repo.IsAncestor(ctx, f.Target, f.Tip); err != nil {
		return nil, err
	} else if !ok {
		return nil, pending("%s has changes git-ralph cannot tell from a squash onto a branch that moved on", res.Target)
	}
	want, err := l.Repo.TreeOf(ctx, f.Tip)
	if err != nil {
		return nil, err
	}
	have, err := l.Repo.WorktreeTree(ctx)
	if err != nil {
		return nil, err
	}
	if have != want {
		if rec.Original == "" {
			return nil, pending("%s has changes other than the work of %s", res.Target, rec.Branch)
		}
		// A merge cut short: part of the squash is in the worktree. Keep it, put the
		// target back as it was (clean) and squash again.
		if err := l.RestoreAfterCutShort(ctx, rec, rec.Original, f.Target, "squash"); err != nil {
			return nil, err
		}
		return l.squash(ctx, rec, res)
	}
	return l.squashed(ctx, rec, res)
}

// RestoreAfterCutShort keeps what a git step killed half-way left in the worktree
// (clean before it) under refs/ralph/<change>/backup/, then puts branch back at id,
// worktree and index included.
func (l *Loop) RestoreAfterCutShort(ctx context.Context, rec *run.Record, branch, id, step string) error {
	ref, err := l.freeRef(ctx, BackupRef(rec.Change, l.Time())+"-worktree")
	if err != nil {
		return err
	}
	if _, err := l.Repo.SaveAttempt(ctx, id, ref, "left over from an interrupted "+step+" of git ralph finish"); err != nil {
		return fmt.Errorf("keep the worktree an interrupted finish left: %w", err)
	}
	rec.Backups = append(rec.Backups, ref)
	l.Report.Step(fmt.Sprintf("kept what an interrupted %s left in the worktree as %s", step, ref))
	if err := l.Repo.Restore(ctx, branch, id); err != nil {
		return fmt.Errorf("restore %s: %w", branch, err)
	}
	return l.Save(rec)
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
func SquashTarget(rec *run.Record) string {
	if rec.Original != "" {
		return rec.Original
	}
	return rec.OriginalCommit
}
