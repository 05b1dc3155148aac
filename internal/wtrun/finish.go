package wtrun

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/git-ralph/git-ralph/internal/git"
	"github.com/git-ralph/git-ralph/internal/loop"
	"github.com/git-ralph/git-ralph/internal/run"
	"github.com/git-ralph/git-ralph/internal/tell"
)

// squashWorktree is finish --squash of a worktree run from the moment rec.Finishing
// and its backup ref exist: set the carried files aside, squash-merge the branch in
// the checkout the run started from, unstage, remove the worktree, delete the branch
// and forget the run. merged says the squash is in that checkout already (a finish
// killed after its merge).
func squashWorktree(ctx context.Context, l *loop.Loop, rec *run.Record, origin *git.Repo, res *run.FinishResult, merged bool) (*run.FinishResult, error) {
	f := rec.Finishing
	if !merged {
		if err := origin.DropPaths(ctx, f.Carried); err != nil {
			return nil, err
		}
		if err := origin.MergeSquash(ctx, rec.Branch); err != nil {
			return nil, undoWorktreeSquash(ctx, l, rec, origin, res, err)
		}
	}
	var err error
	if !f.OriginDirty {
		err = origin.MixedReset(ctx)
	} else {
		// Leave the user's own staged changes staged.
		var touched []string
		if touched, err = origin.ChangedPaths(ctx, f.Target+"..."+f.Tip); err == nil {
			err = origin.ResetPaths(ctx, touched)
		}
	}
	if err != nil {
		return nil, err
	}
	if after, err := origin.Status(ctx); err == nil {
		res.Files = len(after)
	}
	dirty, present, err := worktreeDirty(ctx, l, rec)
	if err != nil {
		return nil, err
	}
	if err := removeWorktree(ctx, l, rec, dirty, present, res); err != nil {
		return nil, err
	}
	if err := l.Repo.DeleteBranch(ctx, rec.Branch); err != nil {
		return nil, err
	}
	l.SaveFinished(run.Finished{Change: rec.Change, Branch: rec.Branch, How: "squash", Target: run.SquashTarget(rec), Backup: res.Backup, At: l.Time()})
	return res, l.Store.Remove(rec.Change)
}

// undoWorktreeSquash undoes a merge --squash in origin that failed (err) and returns the
// error, which says what is kept and where the user is: each step of the undo is
// checked, and one that failed is named. When origin (clean before) cannot be put back,
// the record keeps its finish under way, so that the next finish finds it.
func undoWorktreeSquash(ctx context.Context, l *loop.Loop, rec *run.Record, origin *git.Repo, res *run.FinishResult, err error) error {
	f := rec.Finishing
	var notes []string
	save := func() {
		if serr := l.Save(rec); serr != nil {
			notes = append(notes, fmt.Sprintf("the run record still says a squash is under way (%v): the next finish checks what git shows and goes on from there", serr))
		}
	}
	if len(f.Carried) > 0 {
		rec.Finishing = nil
		save()
		hint := fmt.Sprintf("your uncommitted changes to %s are kept in %s (its \"initial state\" commit %s); git said:\n%s", strings.Join(f.Carried, ", "), f.Backup, loop.Short(rec.Initial), err)
		return tell.UserErr(strings.Join(append([]string{hint}, notes...), "\n"), "squashing %s onto %s in %s failed", rec.Branch, res.Target, origin.Root).WithCause(err)
	}
	if !f.OriginDirty {
		if rerr := origin.HardReset(ctx, "HEAD"); rerr != nil { // it was clean: put it back exactly
			return &tell.Error{Msg: fmt.Sprintf("squashing %s onto %s in %s failed, and putting %s back failed too: %v", rec.Branch, res.Target, origin.Root, res.Target, rerr),
				Hint: fmt.Sprintf("the squash failed with: %v\n%s holds what the merge left; %s and its worktree are intact, its tip kept as %s\n"+
					"once git works again, 'git reset --hard' in %s puts %s back (only the merge's leftovers go); then 'git ralph finish %s --squash' tries again",
					err, origin.Root, rec.Branch, f.Backup, origin.Root, res.Target, rec.Change),
				Err: errors.Join(err, rerr)}
		}
	}
	rec.Finishing = nil
	if derr := l.Repo.DeleteRef(ctx, f.Backup); derr != nil {
		notes = append(notes, fmt.Sprintf("the backup ref %s is left (%v); 'git update-ref -d %s' removes it", f.Backup, derr, f.Backup))
	}
	save()
	se := loop.SquashError(err, rec.Branch, res.Target, "so is its worktree", "in "+origin.Root+": git merge --squash "+rec.Branch, "git ralph finish "+rec.Change+" --keep")
	if e, ok := se.(*tell.Error); ok && len(notes) > 0 {
		e.Hint += "\n" + strings.Join(notes, "\n")
	}
	return se
}

// resumeWorktreeSquash completes a finish --squash of a worktree run killed half-way,
// from what git shows in the checkout the run started from (still on the original branch at
// its commit): each file the squash touches is either as before the merge (all: squash
// again) or the branch tip's (all: unstage and go on). A merge cut short between is redone
// when that checkout was clean (what it left kept as a backup), refused otherwise.
func resumeWorktreeSquash(ctx context.Context, l *loop.Loop, rec *run.Record, mode run.FinishMode, res *run.FinishResult) (*run.FinishResult, error) {
	f := rec.Finishing
	res.Backup, res.Target = f.Backup, loop.BranchOrDetached(rec.Original, rec.OriginalCommit)
	origin, err := originRepo(ctx, l, rec)
	if err != nil {
		return nil, err
	}
	pending := func(format string, args ...any) error {
		return tell.UserErr("the branch's work is kept as "+f.Backup+"; look at 'git status' in "+origin.Root+", then run 'git ralph finish "+rec.Change+" --squash' again",
			"an interrupted 'git ralph finish --squash' of %q is pending, but "+format, append([]any{rec.Change}, args...)...)
	}
	if mode == run.Keep {
		return nil, tell.UserErr("run 'git ralph finish "+rec.Change+" --squash' to complete it",
			"an interrupted 'git ralph finish --squash' of %q is pending", rec.Change)
	}
	exists, err := checkResumable(ctx, l, rec, origin, pending)
	if err != nil {
		return nil, err
	}
	if !exists {
		// Killed after the branch was deleted (the worktree went before it): only the
		// record was left.
		if st, err := origin.Status(ctx); err == nil {
			res.Files = len(st)
		}
		if rec.WorktreeState().Missing {
			_ = l.Repo.PruneWorktrees(ctx)
		}
		l.SaveFinished(run.Finished{Change: rec.Change, Branch: rec.Branch, How: "squash", Target: run.SquashTarget(rec), Backup: res.Backup, At: l.Time()})
		return res, l.Store.Remove(rec.Change)
	}
	p, err := squashProgress(ctx, origin, rec)
	if err != nil {
		return nil, err
	}
	switch {
	case p.merged:
		return squashWorktree(ctx, l, rec, origin, res, true)
	case p.before:
		return squashWorktree(ctx, l, rec, origin, res, false)
	case f.OriginDirty:
		return nil, p.byHand(rec, origin.Root)
	case rec.Original == "":
		return nil, pending("%s holds part of the squash on a detached HEAD", origin.Root)
	}
	// A merge cut short in a checkout that was clean: keep what it left, put the
	// original branch back as it was and squash again.
	ol := *l
	ol.Repo = origin
	if err := ol.RestoreAfterCutShort(ctx, rec, rec.Original, f.Target, "squash"); err != nil {
		return nil, err
	}
	return squashWorktree(ctx, l, rec, origin, res, false)
}

// checkResumable checks what a pending squash left against the record before it goes
// on: origin still where the squash began, the branch (exists says whether it is still
// there) at the tip it had, and the worktree clean. pending makes the refusal.
func checkResumable(ctx context.Context, l *loop.Loop, rec *run.Record, origin *git.Repo, pending func(string, ...any) error) (exists bool, err error) {
	f := rec.Finishing
	cur, err := origin.Branch(ctx)
	if err != nil {
		return false, err
	}
	head, err := origin.Head(ctx)
	if err != nil {
		return false, err
	}
	if cur != rec.Original || head != f.Target {
		return false, pending("%s is no longer where it left it (%s)", origin.Root, loop.BranchOrDetached(rec.Original, f.Target))
	}
	if exists, err = l.Repo.BranchExists(ctx, rec.Branch); err != nil || !exists {
		return false, err
	}
	if tip, _, err := l.Repo.ResolveRef(ctx, "refs/heads/"+rec.Branch); err != nil {
		return false, err
	} else if tip != f.Tip {
		return false, pending("%s moved since", rec.Branch)
	}
	// The worktree was clean when the finish began; changes there now are someone's.
	if dirty, _, err := worktreeDirty(ctx, l, rec); err != nil {
		return false, err
	} else if len(dirty) > 0 {
		return false, tell.UserErr(fmt.Sprintf("look at them and discard them (the branch's work is kept as %s), then run 'git ralph finish %s --squash' again", f.Backup, rec.Change),
			"an interrupted 'git ralph finish --squash' of %q is pending, but the worktree %s has %d uncommitted change(s)", rec.Change, rec.Worktree.Path, len(dirty))
	}
	return true, nil
}

// progress is how far a squash a kill cut short got in the checkout: merged (every
// file it touches is the branch tip's), before (every one is as before the merge, or
// a carried file as the run started), else restore and remove are what completes it.
type progress struct {
	merged, before  bool
	restore, remove []string
	backup          string
}

// squashProgress compares the files the pending squash of rec touches in origin with
// the branch's tip, the target and the "initial state".
func squashProgress(ctx context.Context, origin *git.Repo, rec *run.Record) (*progress, error) {
	f := rec.Finishing
	touched, err := origin.ChangedPaths(ctx, f.Target+"..."+f.Tip)
	if err != nil {
		return nil, err
	}
	now, err := origin.HashFiles(ctx, touched)
	if err != nil {
		return nil, err
	}
	atTip, err := origin.BlobIDs(ctx, f.Tip, touched)
	if err != nil {
		return nil, err
	}
	atTarget, err := origin.BlobIDs(ctx, f.Target, touched)
	if err != nil {
		return nil, err
	}
	atInitial, err := origin.BlobIDs(ctx, rec.Initial, f.Carried)
	if err != nil {
		return nil, err
	}
	p := &progress{merged: true, before: true, backup: f.Backup}
	for _, path := range touched {
		if now[path] != atTip[path] {
			p.merged = false
			if _, ok := atTip[path]; ok {
				p.restore = append(p.restore, path)
			} else {
				p.remove = append(p.remove, path)
			}
		}
		if now[path] != atTarget[path] && !(slices.Contains(f.Carried, path) && now[path] == atInitial[path]) {
			p.before = false
		}
	}
	return p, nil
}

// byHand is the refusal of a squash cut short among the user's own changes in the
// checkout at root (resetting would touch them): it says how to complete the squash.
func (p *progress) byHand(rec *run.Record, root string) error {
	var steps []string
	if len(p.restore) > 0 {
		steps = append(steps, "git -C "+quoteArg(root)+" restore --source="+p.backup+" --worktree -- "+quoteArgs(p.restore))
	}
	if len(p.remove) > 0 {
		steps = append(steps, "(cd "+quoteArg(root)+" && rm -f -- "+quoteArgs(p.remove)+")")
	}
	return tell.UserErr("the branch's work is kept as "+p.backup+"; to complete the squash, bring those files to the branch's version:\n"+
		strings.Join(steps, "\n")+"\nthen run 'git ralph finish "+rec.Change+" --squash' again",
		"an interrupted 'git ralph finish --squash' of %q is pending, but %s holds part of the squash among changes of your own: %d file(s) are not yet the branch's",
		rec.Change, root, len(p.restore)+len(p.remove))
}

// quoteArgs quotes each of args for a shell, joined by spaces.
func quoteArgs(args []string) string {
	q := make([]string, len(args))
	for i, a := range args {
		q[i] = quoteArg(a)
	}
	return strings.Join(q, " ")
}

// quoteArg quotes s for a shell when it needs it, for a command shown in a hint.
func quoteArg(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./:=@%+,") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
