package finish

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/git-ralph/git-ralph/internal/loop"
	"github.com/git-ralph/git-ralph/internal/run"
	"github.com/git-ralph/git-ralph/internal/tell"
)

// startSquash is finish --squash from a clean checkout: the original branch (or commit)
// must still be there; the record says a squash is under way, the branch's tip is kept
// under refs/ralph/<change>/backup/, and HEAD goes to the target for squash.
func startSquash(ctx context.Context, l *loop.Loop, rec *run.Record, res *run.FinishResult) (*run.FinishResult, error) {
	target := rec.Original
	if target != "" {
		if ok, err := l.Repo.BranchExists(ctx, target); err != nil {
			return nil, err
		} else if !ok {
			return nil, tell.UserErr(fmt.Sprintf("recreate it (git branch %s %s) and run 'git ralph finish --squash' again, or keep the work on %s with 'git ralph finish --keep'", target, loop.Short(rec.OriginalCommit), rec.Branch),
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
	backup := loop.BackupRef(res.Change, l.Time())
	res.Backup, res.Target = backup, loop.BranchOrDetached(rec.Original, rec.OriginalCommit)
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
	return squash(ctx, l, rec, res)
}

// squash is finish --squash from the moment HEAD is on the target, clean: merge, unstage,
// delete the branch, forget the run.
func squash(ctx context.Context, l *loop.Loop, rec *run.Record, res *run.FinishResult) (*run.FinishResult, error) {
	if err := l.Repo.MergeSquash(ctx, rec.Branch); err != nil {
		return nil, undoSquash(ctx, l, rec, res, err)
	}
	return squashed(ctx, l, rec, res)
}

// undoSquash puts the target back as it was (it was clean) after the merge --squash
// failed (err) and returns to the run's branch, then returns the error, which says
// where the user is: each step of the undo is checked, and one that failed is named.
// When the target cannot be put back, the record keeps its finish under way, so that
// the next finish finds it.
func undoSquash(ctx context.Context, l *loop.Loop, rec *run.Record, res *run.FinishResult, err error) error {
	if rerr := l.Repo.HardReset(ctx, "HEAD"); rerr != nil {
		return &tell.Error{Msg: fmt.Sprintf("squashing %s onto %s failed, and putting %s back failed too: %v", rec.Branch, res.Target, res.Target, rerr),
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
	se := loop.SquashError(err, rec.Branch, res.Target, intact, "git switch "+res.Target+" && git merge --squash "+rec.Branch, "git ralph finish --keep")
	if e, ok := se.(*tell.Error); ok && len(notes) > 0 {
		e.Hint += "\n" + strings.Join(notes, "\n")
	}
	return se
}

// squashed ends finish --squash once the squash is in the worktree.
func squashed(ctx context.Context, l *loop.Loop, rec *run.Record, res *run.FinishResult) (*run.FinishResult, error) {
	if err := l.Repo.MixedReset(ctx); err != nil {
		return nil, err
	}
	if err := l.Repo.DeleteBranch(ctx, rec.Branch); err != nil {
		return nil, err
	}
	if st, err := l.Repo.Status(ctx); err == nil {
		res.Files = len(st)
	}
	l.SaveFinished(run.Finished{Change: rec.Change, Branch: rec.Branch, How: "squash", Target: run.SquashTarget(rec), Backup: res.Backup, At: l.Time()})
	return res, l.Store.Remove(rec.Change)
}

// resumeSquash completes a finish --squash that was killed half-way, from what git
// shows: before the switch to the target nothing moved (it returns nil, nil and Run
// starts over); after it, the squash is completed when the worktree holds the target
// and nothing else (killed before the merge) or exactly the squashed work (killed after
// the merge, the unstaging or the branch's deletion). Anything else is refused with
// nothing changed.
func resumeSquash(ctx context.Context, l *loop.Loop, rec *run.Record, mode run.FinishMode) (*run.FinishResult, error) {
	f := rec.Finishing
	res := &run.FinishResult{Change: rec.Change, Branch: rec.Branch, Backup: f.Backup, Target: loop.BranchOrDetached(rec.Original, rec.OriginalCommit)}
	pending := func(format string, args ...any) error {
		return tell.UserErr("the branch's work is kept as "+f.Backup+"; look at 'git status', then run 'git ralph finish "+rec.Change+" --squash' again",
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
		return nil, undoCutSwitch(ctx, l, rec, res.Target, pending)
	}
	head, err := l.Repo.Head(ctx)
	if err != nil {
		return nil, err
	}
	if cur != rec.Original || head != f.Target {
		return nil, pending("HEAD is no longer where it left it (%s)", loop.BranchOrDetached(rec.Original, f.Target))
	}
	if mode == run.Keep {
		return nil, tell.UserErr("run 'git ralph finish "+rec.Change+" --squash' to complete it",
			"an interrupted 'git ralph finish --squash' of %q is pending", rec.Change)
	}
	if !exists {
		// Killed after the branch was deleted: only the record was left.
		if st, err := l.Repo.Status(ctx); err == nil {
			res.Files = len(st)
		}
		l.SaveFinished(run.Finished{Change: rec.Change, Branch: rec.Branch, How: "squash", Target: run.SquashTarget(rec), Backup: res.Backup, At: l.Time()})
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
		return squash(ctx, l, rec, res) // killed between the switch and the merge
	}
	if merged, err := isSquashed(ctx, l, rec, res.Target, pending); err != nil {
		return nil, err
	} else if !merged {
		if rec.Original == "" {
			return nil, pending("%s has changes other than the work of %s", res.Target, rec.Branch)
		}
		// A merge cut short: part of the squash is in the worktree. Keep it, put the
		// target back as it was (clean) and squash again.
		if err := l.RestoreAfterCutShort(ctx, rec, rec.Original, f.Target, "squash"); err != nil {
			return nil, err
		}
		return squash(ctx, l, rec, res)
	}
	return squashed(ctx, l, rec, res)
}

// undoCutSwitch meets a squash killed before the switch to target, or inside it: a
// checkout cut short leaves HEAD on the branch and part of the target's files in the
// worktree, which was clean when finish began. Keep that, put the branch's tip back,
// and forget the squash: the finish starts over.
func undoCutSwitch(ctx context.Context, l *loop.Loop, rec *run.Record, target string, pending func(string, ...any) error) error {
	f := rec.Finishing
	st, err := l.Repo.Status(ctx)
	if err != nil {
		return err
	}
	if len(st) > 0 {
		if tip, _, err := l.Repo.ResolveRef(ctx, "refs/heads/"+rec.Branch); err != nil {
			return err
		} else if tip != f.Tip {
			return pending("%s moved since", rec.Branch)
		}
		if err := l.RestoreAfterCutShort(ctx, rec, rec.Branch, f.Tip, "switch to "+target); err != nil {
			return err
		}
	}
	rec.Finishing = nil
	return l.Save(rec)
}

// isSquashed reports whether the worktree on target holds exactly the squashed work:
// the squash of a branch onto the commit it grew from is the branch's tip tree (a
// branch that moved on is refused).
func isSquashed(ctx context.Context, l *loop.Loop, rec *run.Record, target string, pending func(string, ...any) error) (bool, error) {
	f := rec.Finishing
	if ok, err := l.Repo.IsAncestor(ctx, f.Target, f.Tip); err != nil {
		return false, err
	} else if !ok {
		return false, pending("%s has changes git-ralph cannot tell from a squash onto a branch that moved on", target)
	}
	want, err := l.Repo.TreeOf(ctx, f.Tip)
	if err != nil {
		return false, err
	}
	have, err := l.Repo.WorktreeTree(ctx)
	if err != nil {
		return false, err
	}
	return have == want, nil
}
