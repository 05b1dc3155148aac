package wtrun

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/git-ralph/git-ralph/internal/git"
	"github.com/git-ralph/git-ralph/internal/loop"
	"github.com/git-ralph/git-ralph/internal/run"
	"github.com/git-ralph/git-ralph/internal/source"
	"github.com/git-ralph/git-ralph/internal/start"
	"github.com/git-ralph/git-ralph/internal/tell"
)

// checkNewWorktreePath refuses a path for a new worktree run that is inside a work
// tree of the repository, or exists and is not an empty directory.
func checkNewWorktreePath(ctx context.Context, l *loop.Loop, path, change string) error {
	again := "git ralph start " + change + " --worktree=PATH"
	wts, err := l.Repo.Worktrees(ctx)
	if err != nil {
		return err
	}
	roots := []string{l.Repo.Root, l.Repo.CommonDir}
	for _, w := range wts {
		roots = append(roots, w.Path)
	}
	for _, root := range roots {
		if within(path, root) {
			return tell.UserErr("pick a directory outside the repository: "+again+", or 'git config "+WorktreeDirConfig+" DIR'",
				"the worktree %s would be inside %s", path, root)
		}
	}
	entries, err := os.ReadDir(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		if _, serr := os.Stat(path); serr == nil {
			return tell.UserErr("remove it, or pick another path: "+again, "%s exists and is not a directory", path)
		}
		return fmt.Errorf("read %s: %w", path, err)
	case len(entries) > 0:
		return tell.UserErr("remove it, or pick another path: "+again+" (or 'git config "+WorktreeDirConfig+" DIR')",
			"%s exists and is not empty", path)
	}
	return nil
}

// within reports whether path is root or below it.
func within(path, root string) bool {
	rel, err := filepath.Rel(resolve(root), resolve(path))
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// resolve returns path with the symlinks of its longest existing prefix resolved.
func resolve(path string) string {
	path = filepath.Clean(path)
	var rest []string
	for p := path; ; p = filepath.Dir(p) {
		if r, err := filepath.EvalSymlinks(p); err == nil {
			return filepath.Join(append([]string{r}, rest...)...)
		}
		if filepath.Dir(p) == p {
			return path
		}
		rest = append([]string{filepath.Base(p)}, rest...)
	}
}

// startWorktree runs the loop of a worktree run (r, what Start resolved), with the
// change's lock held: it makes the run (or completes a start a crash cut short),
// re-creates a deleted worktree from the branch, locks the worktree and runs the loop
// there.
func startWorktree(ctx context.Context, l *loop.Loop, r *loop.Resolved, path string) (*start.Summary, error) {
	gctx := context.WithoutCancel(ctx)
	wl, rec, err := setUpWorktree(gctx, l, r, path)
	if err != nil {
		return nil, err
	}
	wtPath := rec.Worktree.Path // rec is nil after a refused resume
	defer func() {
		if wlock, err := l.Store.LockWorktrees(); err == nil {
			_ = l.Repo.UnlockWorktree(gctx, wtPath)
			wlock.Unlock()
		}
	}()
	return wl.RunInWorktree(ctx, r)
}

// setUpWorktree makes or completes the run, re-creates a deleted worktree and locks it,
// holding the worktrees lock; it returns a Loop working in the worktree.
func setUpWorktree(ctx context.Context, l *loop.Loop, r *loop.Resolved, path string) (*loop.Loop, *run.Record, error) {
	wlock, err := l.Store.LockWorktrees()
	if err != nil {
		return nil, nil, err
	}
	defer wlock.Unlock()
	rec, err := startedWorktreeRun(ctx, l, r, path)
	if err != nil {
		return nil, nil, err
	}
	wl, err := l.In(ctx, rec.Worktree.Path)
	if err != nil {
		return nil, nil, err
	}
	reason := fmt.Sprintf("git-ralph %s pid %d", r.Change, os.Getpid())
	if err := l.Repo.LockWorktree(ctx, rec.Worktree.Path, reason); err != nil {
		return nil, nil, fmt.Errorf("lock worktree %s: %w", rec.Worktree.Path, err)
	}
	return wl, rec, nil
}

// startedWorktreeRun returns the run's record once its branch and worktree exist.
func startedWorktreeRun(gctx context.Context, l *loop.Loop, r *loop.Resolved, path string) (*run.Record, error) {
	rec, err := l.Store.Load(r.Change)
	switch {
	case errors.Is(err, run.ErrNoRun):
		if rec, err = newWorktreeRun(gctx, l, r, path); err != nil {
			return nil, err
		}
	case err != nil:
		return nil, err
	case rec.Status == run.Starting:
		if err := makeWorktreeRun(gctx, l, rec); err != nil {
			return nil, err
		}
	}
	if ok, err := l.Repo.BranchExists(gctx, rec.Branch); err != nil {
		return nil, err
	} else if !ok {
		return nil, tell.UserErr("forget the run with 'git ralph finish "+r.Change+" --keep', then start over",
			"the run of %q has lost its branch %s", r.Change, rec.Branch)
	}
	if err := ensureWorktree(gctx, l, rec); err != nil {
		return nil, err
	}
	return rec, nil
}

// newWorktreeRun records a new worktree run and makes it: the record first, so that a
// crash anywhere is completed by the next start.
func newWorktreeRun(ctx context.Context, l *loop.Loop, r *loop.Resolved, path string) (*run.Record, error) {
	if err := checkNewWorktreePath(ctx, l, path, r.Change); err != nil {
		return nil, err
	}
	branch := loop.BranchName(r.Change)
	cur, head, err := l.StartPoint(ctx, branch, "switch to the branch the work should come back to (e.g. 'git switch main'), then run 'git ralph start "+r.Change+" --worktree' again")
	if err != nil {
		return nil, err
	}
	rec := &run.Record{
		Change: r.Change, Branch: branch, Original: cur, OriginalCommit: head,
		Status: run.Starting, Agent: r.Agent, Model: r.Model, Started: l.Time(), PID: os.Getpid(),
		Worktree: &run.Worktree{Path: path, Created: true, Origin: l.Repo.Root},
	}
	source.Record(rec, r.Source)
	if err := l.Save(rec); err != nil {
		return nil, err
	}
	if err := makeWorktreeRun(ctx, l, rec); err != nil {
		rollbackWorktreeStart(ctx, l, rec)
		return nil, err
	}
	return rec, nil
}

// makeWorktreeRun brings a starting worktree run to running, step by step, each step
// skipped when a crashed start already made it: the "initial state" commit from the
// user's checkout (built in a temporary index: the checkout is not touched), the backup
// of an existing ralph/<change>, the branch, the worktree.
func makeWorktreeRun(ctx context.Context, l *loop.Loop, rec *run.Record) error {
	if rec.Initial == "" {
		id, err := l.Repo.CommitWorktree(ctx, "initial state")
		if err != nil {
			return fmt.Errorf("commit the initial state: %w", err)
		}
		rec.Initial = id
		if err := l.Save(rec); err != nil {
			return err
		}
	}
	tip, ok, err := l.Repo.ResolveRef(ctx, "refs/heads/"+rec.Branch)
	if err != nil {
		return err
	}
	if !ok || tip != rec.Initial {
		if wts, err := l.Repo.WorktreeBranches(ctx); err != nil {
			return err
		} else if p, busy := wts[rec.Branch]; busy {
			return tell.UserErr("finish or remove that worktree first (git worktree remove "+p+")",
				"branch %s is checked out in another worktree: %s", rec.Branch, p)
		}
		if err := l.BackupBranch(ctx, rec); err != nil {
			return err
		}
		if err := l.Repo.UpdateRef(ctx, "refs/heads/"+rec.Branch, rec.Initial); err != nil {
			return fmt.Errorf("create branch %s: %w", rec.Branch, err)
		}
	}
	if err := ensureWorktree(ctx, l, rec); err != nil {
		return err
	}
	rec.Checkpoint, rec.Status = rec.Initial, run.Running
	if err := l.Save(rec); err != nil {
		return err
	}
	from := rec.Original
	if from == "" {
		from = loop.Short(rec.OriginalCommit)
	}
	l.Report.Step(fmt.Sprintf("worktree %s on branch %s from %s; initial state %s", rec.Worktree.Path, rec.Branch, from, loop.Short(rec.Initial)))
	return nil
}

// rollbackWorktreeStart undoes a new worktree run that could not be made: the branch
// goes back to what it was, the record goes. The user's checkout was never touched.
func rollbackWorktreeStart(ctx context.Context, l *loop.Loop, rec *run.Record) {
	if tip, ok, _ := l.Repo.ResolveRef(ctx, "refs/heads/"+rec.Branch); ok && tip == rec.Initial {
		l.DropNewRun(ctx, rec)
		return
	}
	if err := l.Store.Remove(rec.Change); err != nil {
		l.Report.Warn(fmt.Sprintf("could not remove the record of the run that was not made (%v)", err))
	}
}

// ensureWorktree makes sure the run's worktree exists on its branch: a directory
// deleted by hand is pruned from git's list and added again from the branch, which
// (with the record) holds everything the run made.
func ensureWorktree(ctx context.Context, l *loop.Loop, rec *run.Record) error {
	path := rec.Worktree.Path
	wts, err := l.Repo.Worktrees(ctx)
	if err != nil {
		return err
	}
	for _, w := range wts {
		if git.SamePath(w.Path, path) {
			if !w.Prunable {
				if w.Branch != rec.Branch {
					return tell.UserErr("switch it back with 'git -C "+path+" switch "+rec.Branch+"', then run 'git ralph start "+rec.Change+"' again",
						"the worktree %s is not on %s", path, rec.Branch)
				}
				return nil
			}
			if w.Locked {
				if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
					if err := l.Repo.UnlockWorktree(ctx, w.Path); err != nil {
						return err
					}
				}
			}
		}
	}
	if _, err := os.Stat(filepath.Join(path, ".git")); err == nil {
		return tell.UserErr("look at it and move it away, then run 'git ralph start "+rec.Change+"' again: the run's worktree is re-created there from "+rec.Branch, "%s holds a checkout git does not list as a worktree of this repository", path)
	}
	if err := l.Repo.PruneWorktrees(ctx); err != nil {
		return err
	}
	if err := checkNewWorktreePath(ctx, l, path, rec.Change); err != nil {
		var ue *tell.Error
		if _, serr := os.Stat(path); serr == nil && rec.Status != run.Starting && errors.As(err, &ue) {
			// The run resumes at its recorded path whatever --worktree says.
			ue.Hint = "move it away, then run 'git ralph start " + rec.Change + "' again: the run's worktree is re-created there from " + rec.Branch
		}
		return err
	}
	// A new run's branch holds your work; one made again, the agent's: no hook runs
	// over that (git.Repo.Restore).
	if err := l.Repo.AddWorktree(ctx, path, rec.Branch, rec.Status == run.Starting); err != nil {
		return fmt.Errorf("add worktree %s: %w", path, err)
	}
	if rec.Status != run.Starting {
		l.Report.Step(fmt.Sprintf("worktree %s was missing; re-created it from %s", path, rec.Branch))
	}
	return nil
}

// finishWorktree is the last step of finish --squash or --keep of a worktree run, which
// loop.FinishWith has located (l works outside the worktree) and recovered. --squash
// lands the work uncommitted on the original branch in the checkout the run started
// from, then removes the (clean) worktree and the branch; --keep removes the clean
// worktree and keeps the branch. Nothing is removed with --force: a worktree with
// changes is kept and named. A --squash killed half-way is completed
// (resumeWorktreeSquash).
func finishWorktree(ctx context.Context, l *loop.Loop, rec *run.Record, mode run.FinishMode) (*run.FinishResult, error) {
	res := &run.FinishResult{Change: rec.Change, Branch: rec.Branch, Worktree: rec.Worktree.Path}
	if rec.Finishing != nil {
		return resumeWorktreeSquash(ctx, l, rec, mode, res)
	}
	dirty, present, err := worktreeDirty(ctx, l, rec)
	if err != nil {
		return nil, err
	}
	if ok, err := l.Repo.BranchExists(ctx, rec.Branch); err != nil {
		return nil, err
	} else if !ok {
		return nil, loop.BranchGone(rec)
	}
	if mode == run.Keep {
		return keepWorktree(ctx, l, rec, dirty, present, res)
	}
	if len(dirty) > 0 {
		path := rec.Worktree.Path
		return nil, tell.UserErr(fmt.Sprintf("commit them on %s in %s (they will be squashed too) or discard them, then run 'git ralph finish %s --squash' again", rec.Branch, path, rec.Change),
			"the worktree %s has %d uncommitted change(s)", path, len(dirty))
	}
	origin, err := originRepo(ctx, l, rec)
	if err != nil {
		return nil, err
	}
	if err := l.CheckOriginal(ctx, origin, rec, false, "git ralph finish "+rec.Change+" --squash"); err != nil {
		return nil, err
	}
	return startWorktreeSquash(ctx, l, rec, origin, res)
}

// keepWorktree is finish --keep of a worktree run: a moved original branch is only
// warned of, the worktree goes when clean (dirty, present: worktreeDirty's), the branch
// stays and the run is forgotten.
func keepWorktree(ctx context.Context, l *loop.Loop, rec *run.Record, dirty []git.StatusEntry, present bool, res *run.FinishResult) (*run.FinishResult, error) {
	if origin, err := originRepo(ctx, l, rec); err == nil {
		_ = l.CheckOriginal(ctx, origin, rec, true, "")
	}
	if err := l.Busy(rec, "finish --keep", func() error { return removeWorktree(ctx, l, rec, dirty, present, res) }); err != nil {
		return nil, err
	}
	l.SaveFinished(run.Finished{Change: rec.Change, Branch: rec.Branch, How: "keep", At: l.Time()})
	return res, l.Store.Remove(rec.Change)
}

// startWorktreeSquash is finish --squash of a worktree run from a clean worktree: the
// checkout the run started from (origin) must be on the original branch where it was,
// with no uncommitted change of its own in the squash's way (squashable); then the
// record says a squash is under way, the branch's tip is kept as a backup ref, and the
// squash runs.
func startWorktreeSquash(ctx context.Context, l *loop.Loop, rec *run.Record, origin *git.Repo, res *run.FinishResult) (*run.FinishResult, error) {
	target := loop.BranchOrDetached(rec.Original, rec.OriginalCommit)
	cur, err := origin.Branch(ctx)
	if err != nil {
		return nil, err
	}
	head, err := origin.Head(ctx)
	if err != nil {
		return nil, err
	}
	if cur != rec.Original || (rec.Original == "" && head != rec.OriginalCommit) {
		return nil, tell.UserErr(fmt.Sprintf("switch %s back to %s, then run 'git ralph finish %s --squash' again\nor keep the work on %s with 'git ralph finish %s --keep'", origin.Root, target, rec.Change, rec.Branch, rec.Change),
			"the work goes back onto %s in %s, which is on %s now", target, origin.Root, loop.BranchOrDetached(cur, head))
	}
	tip, _, err := l.Repo.ResolveRef(ctx, "refs/heads/"+rec.Branch)
	if err != nil {
		return nil, err
	}
	dirty, carried, err := squashable(ctx, origin, rec, target, head, tip)
	if err != nil {
		return nil, err
	}
	// From here on a kill leaves the work half-way between the branch and the checkout:
	// the record says so before the first change, and the next finish completes it
	// (resumeWorktreeSquash).
	backup := loop.BackupRef(rec.Change, l.Time())
	res.Backup, res.Target = backup, target
	rec.Finishing = &run.Finishing{Tip: tip, Target: head, Backup: backup, Carried: carried, OriginDirty: dirty}
	if err := l.Save(rec); err != nil {
		return nil, err
	}
	if err := l.Repo.UpdateRef(ctx, backup, tip); err != nil {
		return nil, err
	}
	return squashWorktree(ctx, l, rec, origin, res, false)
}

// squashable checks the uncommitted changes of origin (dirty says there are some)
// against a squash of tip onto head (target): only when head is an ancestor of tip,
// and only those of the files the squash touches that are still what the run started
// from (carried: its "initial state" brings them back) may be replaced.
func squashable(ctx context.Context, origin *git.Repo, rec *run.Record, target, head, tip string) (dirty bool, carried []string, err error) {
	st, err := origin.Status(ctx)
	if err != nil || len(st) == 0 {
		return false, nil, err
	}
	if ff, err := origin.IsAncestor(ctx, head, tip); err != nil {
		return false, nil, err
	} else if !ff {
		return false, nil, tell.UserErr(fmt.Sprintf("%s moved on since the run started, so the squash may conflict: commit or stash your changes in %s, then run 'git ralph finish %s --squash' again", target, origin.Root, rec.Change),
			"%s has %d uncommitted change(s)", origin.Root, len(st))
	}
	touched, err := origin.ChangedPaths(ctx, head+"..."+tip)
	if err != nil {
		return false, nil, err
	}
	var both []string
	for _, e := range st {
		for _, p := range []string{e.Path, e.Orig} {
			if p != "" && slices.Contains(touched, p) && !slices.Contains(both, p) {
				both = append(both, p)
			}
		}
	}
	// Uncommitted changes the run started from are in "initial state", so the
	// squash brings them back: those files may be replaced. Changes made since may not.
	if carried, err = carriedPaths(ctx, origin, rec.Initial, both); err != nil {
		return false, nil, err
	}
	if len(carried) < len(both) {
		var later []string
		for _, p := range both {
			if !slices.Contains(carried, p) {
				later = append(later, p)
			}
		}
		return false, nil, tell.UserErr(fmt.Sprintf("commit or stash them in %s, then run 'git ralph finish %s --squash' again", origin.Root, rec.Change),
			"the squash would touch %d file(s) changed in %s since the run started: %s", len(later), origin.Root, strings.Join(later, ", "))
	}
	return true, carried, nil
}

// carriedPaths returns those of paths whose file in the checkout is still what the
// run's "initial state" commit holds (or is missing from both).
func carriedPaths(ctx context.Context, origin *git.Repo, initial string, paths []string) ([]string, error) {
	now, err := origin.HashFiles(ctx, paths)
	if err != nil {
		return nil, err
	}
	then, err := origin.BlobIDs(ctx, initial, paths)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, p := range paths {
		if now[p] == then[p] {
			out = append(out, p)
		}
	}
	return out, nil
}
