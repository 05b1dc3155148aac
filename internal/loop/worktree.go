package loop

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/git-ralph/git-ralph/internal/agent"
	"github.com/git-ralph/git-ralph/internal/git"
	"github.com/git-ralph/git-ralph/internal/run"
	"github.com/git-ralph/git-ralph/internal/source"
)

// A worktree run (start --worktree) works in a linked worktree of its own on
// ralph/<change>, so that several changes can run at once and the user's checkout is
// never touched. Its record and lock stay in the common dir, like every run's; the
// record names the worktree and the checkout the run came from (where finish --squash
// lands). This file holds everything that differs from a run in the user's checkout,
// so that other ways of running elsewhere (finish --pr, a remote run) can reuse it.

// WorktreeDirConfig is the git config key naming the directory under which worktree
// runs are made, one subdirectory per change.
const WorktreeDirConfig = "ralph.worktreeDir"

// worktreeTarget returns where o's worktree run works: the record's worktree for an
// existing worktree run, else o.WorktreePath, else <ralph.worktreeDir>/<change>, else
// ../<repo>.ralph/<change> next to the main worktree. ok is false for a run in the
// user's checkout.
func (l *Loop) worktreeTarget(ctx context.Context, o Options) (path string, existing *run.Record, ok bool, err error) {
	rec, err := l.Store.Load(o.Change)
	if err != nil && !errors.Is(err, run.ErrNoRun) {
		return "", nil, false, err
	}
	if rec != nil && rec.Worktree != nil {
		return rec.Worktree.Path, rec, true, nil
	}
	if !o.Worktree {
		return "", rec, false, nil
	}
	if rec != nil {
		return "", nil, false, userErr("resume it there with 'git ralph start "+o.Change+"' (without --worktree), or finish it first",
			"change %q already has a run in the checkout %s", o.Change, l.Repo.Root)
	}
	path = o.WorktreePath
	if path == "" {
		main, err := l.mainWorktree(ctx)
		if err != nil {
			return "", nil, false, err
		}
		dir, set, err := l.Repo.ConfigPath(ctx, WorktreeDirConfig)
		if err != nil {
			return "", nil, false, err
		}
		switch {
		case set && dir != "" && !filepath.IsAbs(dir):
			dir = filepath.Join(main, dir)
		case !set || dir == "":
			dir = filepath.Join(filepath.Dir(main), filepath.Base(main)+".ralph")
		}
		path = filepath.Join(dir, o.Change)
	}
	path, err = filepath.Abs(path)
	if err != nil {
		return "", nil, false, err
	}
	return path, nil, true, nil
}

// checkWhere finds where o's loop works (the user's checkout, or the run's worktree)
// and refuses a branch checked out anywhere else, holding the worktrees lock so that
// no other git-ralph is half-way through adding one.
func (l *Loop) checkWhere(ctx context.Context, o Options) (wt string, inWT bool, err error) {
	wlock, err := l.Store.LockWorktrees()
	if err != nil {
		return "", false, err
	}
	defer wlock.Unlock()
	wt, _, inWT, err = l.worktreeTarget(ctx, o)
	if err != nil {
		return "", false, err
	}
	return wt, inWT, l.checkBranchFree(ctx, o.Change, wt, inWT)
}

// worktreeRunRepo returns the repository opened in the worktree of change's run when
// the change has a worktree run whose worktree exists, and true when it has a worktree
// run at all; else l.Repo and false. The name is only used once it is known as a run.
func (l *Loop) worktreeRunRepo(ctx context.Context, change string) (*git.Repo, bool) {
	names, err := l.Store.Changes()
	if err != nil || !slices.Contains(names, change) {
		return l.Repo, false
	}
	rec, err := l.Store.Load(change)
	if err != nil || rec.Worktree == nil {
		return l.Repo, false
	}
	if worktreeState(rec).Missing || samePath(rec.Worktree.Path, l.Repo.Root) {
		return l.Repo, true
	}
	repo, err := git.Open(ctx, rec.Worktree.Path)
	if err != nil {
		return l.Repo, true
	}
	repo.Trace = l.Repo.Trace
	return repo, true
}

// LoadRunChange is LoadChange from where change's run works: its worktree, for a
// worktree run (whose change may exist nowhere else), else this checkout.
func (l *Loop) LoadRunChange(ctx context.Context, change string) (*source.Source, error) {
	repo, _ := l.worktreeRunRepo(ctx, change)
	cwd := repo.Root
	if wd, err := os.Getwd(); err == nil && source.IsPath(change) {
		cwd = wd // a path is taken from where the command runs
	}
	return l.findSource(ctx, repo, cwd, change, source.Options{})
}

// mainWorktree is the path of the repository's main worktree.
func (l *Loop) mainWorktree(ctx context.Context) (string, error) {
	wts, err := l.Repo.Worktrees(ctx)
	if err != nil {
		return "", err
	}
	if len(wts) == 0 {
		return l.Repo.Root, nil
	}
	return wts[0].Path, nil
}

// checkNewWorktreePath refuses a path for a new worktree run that is inside a work
// tree of the repository, or exists and is not an empty directory.
func (l *Loop) checkNewWorktreePath(ctx context.Context, path, change string) error {
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
			return userErr("pick a directory outside the repository: "+again+", or 'git config "+WorktreeDirConfig+" DIR'",
				"the worktree %s would be inside %s", path, root)
		}
	}
	entries, err := os.ReadDir(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		if _, serr := os.Stat(path); serr == nil {
			return userErr("remove it, or pick another path: "+again, "%s exists and is not a directory", path)
		}
		return fmt.Errorf("read %s: %w", path, err)
	case len(entries) > 0:
		return userErr("remove it, or pick another path: "+again+" (or 'git config "+WorktreeDirConfig+" DIR')",
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

// startWorktree runs the loop of a worktree run, with the change's lock held: it makes
// the run (or completes a start a crash cut short), re-creates a deleted worktree from
// the branch, locks the worktree and runs the loop there.
func (l *Loop) startWorktree(ctx context.Context, o Options, drv agent.Driver, path string) (*Summary, error) {
	gctx := context.WithoutCancel(ctx)
	wl, rec, err := l.setUpWorktree(gctx, o, path)
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
	if rec, err = wl.prepare(ctx, o); err != nil {
		return nil, err
	}
	// The stories are read from the worktree: the branch's tasks.md is the one the
	// agent ticks, never the copy in the user's checkout.
	ch, err := wl.reopen(gctx, wl.Repo, o)
	if err != nil {
		return nil, err
	}
	sum, err := wl.work(ctx, o, ch, drv, rec)
	if sum != nil {
		sum.Worktree = rec.Worktree.Path
	}
	return sum, err
}

// setUpWorktree makes or completes the run, re-creates a deleted worktree and locks it,
// holding the worktrees lock; it returns a Loop working in the worktree.
func (l *Loop) setUpWorktree(ctx context.Context, o Options, path string) (*Loop, *run.Record, error) {
	wlock, err := l.Store.LockWorktrees()
	if err != nil {
		return nil, nil, err
	}
	defer wlock.Unlock()
	rec, err := l.startedWorktreeRun(ctx, o, path)
	if err != nil {
		return nil, nil, err
	}
	wl, err := l.in(ctx, rec.Worktree.Path)
	if err != nil {
		return nil, nil, err
	}
	reason := fmt.Sprintf("git-ralph %s pid %d", o.Change, os.Getpid())
	if err := l.Repo.LockWorktree(ctx, rec.Worktree.Path, reason); err != nil {
		return nil, nil, fmt.Errorf("lock worktree %s: %w", rec.Worktree.Path, err)
	}
	return wl, rec, nil
}

// startedWorktreeRun returns the run's record once its branch and worktree exist.
func (l *Loop) startedWorktreeRun(gctx context.Context, o Options, path string) (*run.Record, error) {
	rec, err := l.Store.Load(o.Change)
	switch {
	case errors.Is(err, run.ErrNoRun):
		if rec, err = l.newWorktreeRun(gctx, o, path); err != nil {
			return nil, err
		}
	case err != nil:
		return nil, err
	case rec.Status == run.Starting:
		if err := l.makeWorktreeRun(gctx, rec); err != nil {
			return nil, err
		}
	}
	if ok, err := l.Repo.BranchExists(gctx, rec.Branch); err != nil {
		return nil, err
	} else if !ok {
		return nil, userErr("forget the run with 'git ralph finish "+o.Change+" --keep', then start over",
			"the run of %q has lost its branch %s", o.Change, rec.Branch)
	}
	if err := l.ensureWorktree(gctx, rec); err != nil {
		return nil, err
	}
	return rec, nil
}

// in returns a Loop like l whose git runs in the worktree at path, without automatic gc.
func (l *Loop) in(ctx context.Context, path string) (*Loop, error) {
	repo, err := git.Open(ctx, path)
	if err != nil {
		return nil, fmt.Errorf("open worktree %s: %w", path, err)
	}
	repo.Trace, repo.NoAutoGC = l.Repo.Trace, true
	wl := *l
	wl.Repo, wl.worktree = repo, path
	wl.taken = nil
	return &wl, nil
}

// newWorktreeRun records a new worktree run and makes it: the record first, so that a
// crash anywhere is completed by the next start.
func (l *Loop) newWorktreeRun(ctx context.Context, o Options, path string) (*run.Record, error) {
	if err := l.checkNewWorktreePath(ctx, path, o.Change); err != nil {
		return nil, err
	}
	branch := BranchName(o.Change)
	cur, head, err := l.startPoint(ctx, branch, "switch to the branch the work should come back to (e.g. 'git switch main'), then run 'git ralph start "+o.Change+" --worktree' again")
	if err != nil {
		return nil, err
	}
	rec := &run.Record{
		Change: o.Change, Branch: branch, Original: cur, OriginalCommit: head,
		Status: run.Starting, Agent: o.Agent, Model: o.Model, Started: l.Time(), PID: os.Getpid(),
		Worktree: &run.Worktree{Path: path, Created: true, Origin: l.Repo.Root},
	}
	RecordSource(rec, o.srcKind, o.srcArg, o.StoryLevel)
	if err := l.Save(rec); err != nil {
		return nil, err
	}
	if err := l.makeWorktreeRun(ctx, rec); err != nil {
		l.rollbackWorktreeStart(ctx, rec)
		return nil, err
	}
	return rec, nil
}

// makeWorktreeRun brings a starting worktree run to running, step by step, each step
// skipped when a crashed start already made it: the "initial state" commit from the
// user's checkout (built in a temporary index: the checkout is not touched), the backup
// of an existing ralph/<change>, the branch, the worktree.
func (l *Loop) makeWorktreeRun(ctx context.Context, rec *run.Record) error {
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
			return userErr("finish or remove that worktree first (git worktree remove "+p+")",
				"branch %s is checked out in another worktree: %s", rec.Branch, p)
		}
		if err := l.backupBranch(ctx, rec); err != nil {
			return err
		}
		if err := l.Repo.UpdateRef(ctx, "refs/heads/"+rec.Branch, rec.Initial); err != nil {
			return fmt.Errorf("create branch %s: %w", rec.Branch, err)
		}
	}
	if err := l.ensureWorktree(ctx, rec); err != nil {
		return err
	}
	rec.Checkpoint, rec.Status = rec.Initial, run.Running
	if err := l.Save(rec); err != nil {
		return err
	}
	from := rec.Original
	if from == "" {
		from = short(rec.OriginalCommit)
	}
	l.Report.Step(fmt.Sprintf("worktree %s on branch %s from %s; initial state %s", rec.Worktree.Path, rec.Branch, from, short(rec.Initial)))
	return nil
}

// rollbackWorktreeStart undoes a new worktree run that could not be made: the branch
// goes back to what it was, the record goes. The user's checkout was never touched.
func (l *Loop) rollbackWorktreeStart(ctx context.Context, rec *run.Record) {
	if tip, ok, _ := l.Repo.ResolveRef(ctx, "refs/heads/"+rec.Branch); ok && tip == rec.Initial {
		l.dropNewRun(ctx, rec)
		return
	}
	_ = l.Store.Remove(rec.Change)
}

// ensureWorktree makes sure the run's worktree exists on its branch: a directory
// deleted by hand is pruned from git's list and added again from the branch, which
// (with the record) holds everything the run made.
func (l *Loop) ensureWorktree(ctx context.Context, rec *run.Record) error {
	path := rec.Worktree.Path
	wts, err := l.Repo.Worktrees(ctx)
	if err != nil {
		return err
	}
	for _, w := range wts {
		if samePath(w.Path, path) {
			if !w.Prunable {
				if w.Branch != rec.Branch {
					return userErr("switch it back with 'git -C "+path+" switch "+rec.Branch+"', then run 'git ralph start "+rec.Change+"' again",
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
		return userErr("look at it and move it away, then run 'git ralph start "+rec.Change+"' again: the run's worktree is re-created there from "+rec.Branch, "%s holds a checkout git does not list as a worktree of this repository", path)
	}
	if err := l.Repo.PruneWorktrees(ctx); err != nil {
		return err
	}
	if err := l.checkNewWorktreePath(ctx, path, rec.Change); err != nil {
		var ue *Error
		if _, serr := os.Stat(path); serr == nil && rec.Status != run.Starting && errors.As(err, &ue) {
			// The run resumes at its recorded path whatever --worktree says.
			ue.Hint = "move it away, then run 'git ralph start " + rec.Change + "' again: the run's worktree is re-created there from " + rec.Branch
		}
		return err
	}
	if err := l.Repo.AddWorktree(ctx, path, rec.Branch); err != nil {
		return fmt.Errorf("add worktree %s: %w", path, err)
	}
	if rec.Status != run.Starting {
		l.Report.Step(fmt.Sprintf("worktree %s was missing; re-created it from %s", path, rec.Branch))
	}
	return nil
}

// worktreeEnv is what an agent running in a worktree run gets in its environment:
// where it is, and no automatic gc for its own commits.
func (l *Loop) worktreeEnv() []string {
	if l.worktree == "" {
		return nil
	}
	env := []string{"RALPH_WORKTREE=" + l.worktree}
	if os.Getenv("GIT_CONFIG_COUNT") == "" && os.Getenv("GIT_CONFIG_PARAMETERS") == "" {
		env = append(env, "GIT_CONFIG_COUNT=1", "GIT_CONFIG_KEY_0=gc.auto", "GIT_CONFIG_VALUE_0=0")
	}
	return env
}

// WorktreeState is where a run's worktree stands, for status and list.
type WorktreeState struct {
	Path    string `json:"path"`
	Missing bool   `json:"missing"` // the directory is gone; start re-creates it
}

func worktreeState(rec *run.Record) *WorktreeState {
	if rec.Worktree == nil {
		return nil
	}
	_, err := os.Stat(rec.Worktree.Path)
	return &WorktreeState{Path: rec.Worktree.Path, Missing: errors.Is(err, fs.ErrNotExist)}
}

// changeRoot is where a run's change is read: its worktree when it has one that exists.
func (l *Loop) changeRoot(rec *run.Record) string {
	if w := worktreeState(rec); w != nil && !w.Missing {
		return w.Path
	}
	return l.Repo.Root
}

// finishWorktree ends a worktree run. --squash lands the work uncommitted on the
// original branch in the checkout the run started from, then removes the (clean)
// worktree and the branch; --keep removes the clean worktree and keeps the branch.
// Nothing is removed with --force: a worktree with changes is kept and named. A
// crash-resume first removes the stale locks of every checkout involved, and a
// --squash killed half-way is completed (resumeWorktreeSquash).
func (l *Loop) finishWorktree(ctx context.Context, rec *run.Record, mode FinishMode) (*FinishResult, error) {
	wlock, err := l.Store.LockWorktrees()
	if err != nil {
		return nil, err
	}
	defer wlock.Unlock()
	if l, err = l.FromOrigin(ctx, rec); err != nil {
		return nil, err
	}
	res := &FinishResult{Change: rec.Change, Branch: rec.Branch, Worktree: rec.Worktree.Path}
	path := rec.Worktree.Path
	if rec.Finishing != nil || rec.Status == run.Running || rec.Busy != "" {
		// A crash-resume: a finish or a loop was killed, maybe with a git of its own.
		if err := l.ClearWorktreeCrashLocks(ctx, rec, finishCommand(rec.Change, mode)); err != nil {
			return nil, err
		}
		if err := l.CheckCrashedSurface(ctx, rec, finishCommand(rec.Change, mode)); err != nil {
			return nil, err
		}
	}
	if rec.Finishing != nil {
		return l.resumeWorktreeSquash(ctx, rec, mode, res)
	}
	dirty, present, err := l.WorktreeDirty(ctx, rec)
	if err != nil {
		return nil, err
	}
	if ok, err := l.Repo.BranchExists(ctx, rec.Branch); err != nil {
		return nil, err
	} else if !ok {
		return nil, BranchGone(rec)
	}
	if mode == Keep {
		if origin, err := l.originRepo(ctx, rec); err == nil {
			_ = l.CheckOriginal(ctx, origin, rec, true, "")
		}
		if err := l.Busy(rec, "finish --keep", func() error { return l.RemoveWorktree(ctx, rec, dirty, present, res) }); err != nil {
			return nil, err
		}
		_ = l.Store.SaveFinished(run.Finished{Change: rec.Change, Branch: rec.Branch, How: "keep", At: l.Time()})
		return res, l.Store.Remove(rec.Change)
	}
	if len(dirty) > 0 {
		return nil, userErr(fmt.Sprintf("commit them on %s in %s (they will be squashed too) or discard them, then run 'git ralph finish %s --squash' again", rec.Branch, path, rec.Change),
			"the worktree %s has %d uncommitted change(s)", path, len(dirty))
	}
	origin, err := l.originRepo(ctx, rec)
	if err != nil {
		return nil, err
	}
	if err := l.CheckOriginal(ctx, origin, rec, false, "git ralph finish "+rec.Change+" --squash"); err != nil {
		return nil, err
	}
	target := orDetachedName(rec.Original, rec.OriginalCommit)
	cur, err := origin.Branch(ctx)
	if err != nil {
		return nil, err
	}
	head, err := origin.Head(ctx)
	if err != nil {
		return nil, err
	}
	if cur != rec.Original || (rec.Original == "" && head != rec.OriginalCommit) {
		return nil, userErr(fmt.Sprintf("switch %s back to %s, then run 'git ralph finish %s --squash' again\nor keep the work on %s with 'git ralph finish %s --keep'", origin.Root, target, rec.Change, rec.Branch, rec.Change),
			"the work goes back onto %s in %s, which is on %s now", target, origin.Root, orDetachedName(cur, head))
	}
	tip, _, err := l.Repo.ResolveRef(ctx, "refs/heads/"+rec.Branch)
	if err != nil {
		return nil, err
	}
	st, err := origin.Status(ctx)
	if err != nil {
		return nil, err
	}
	var touched, carried []string
	if len(st) > 0 {
		ff, err := origin.IsAncestor(ctx, head, tip)
		if err != nil {
			return nil, err
		}
		if !ff {
			return nil, userErr(fmt.Sprintf("%s moved on since the run started, so the squash may conflict: commit or stash your changes in %s, then run 'git ralph finish %s --squash' again", target, origin.Root, rec.Change),
				"%s has %d uncommitted change(s)", origin.Root, len(st))
		}
		if touched, err = origin.ChangedPaths(ctx, head+"..."+tip); err != nil {
			return nil, err
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
			return nil, err
		}
		if len(carried) < len(both) {
			var later []string
			for _, p := range both {
				if !slices.Contains(carried, p) {
					later = append(later, p)
				}
			}
			return nil, userErr(fmt.Sprintf("commit or stash them in %s, then run 'git ralph finish %s --squash' again", origin.Root, rec.Change),
				"the squash would touch %d file(s) changed in %s since the run started: %s", len(later), origin.Root, strings.Join(later, ", "))
		}
	}
	// From here on a kill leaves the work half-way between the branch and the checkout:
	// the record says so before the first change, and the next finish completes it
	// (resumeWorktreeSquash).
	backup := backupRef(rec.Change, l.Time())
	res.Backup, res.Target = backup, target
	rec.Finishing = &run.Finishing{Tip: tip, Target: head, Backup: backup, Carried: carried, OriginDirty: len(st) > 0}
	if err := l.Save(rec); err != nil {
		return nil, err
	}
	if err := l.Repo.UpdateRef(ctx, backup, tip); err != nil {
		return nil, err
	}
	return l.squashWorktree(ctx, rec, origin, res, false)
}

// WorktreeDirty returns the uncommitted changes in the run's worktree, and whether the
// worktree is there at all.
func (l *Loop) WorktreeDirty(ctx context.Context, rec *run.Record) ([]git.StatusEntry, bool, error) {
	if worktreeState(rec).Missing {
		return nil, false, nil
	}
	wl, err := l.in(ctx, rec.Worktree.Path)
	if err != nil {
		return nil, false, err
	}
	st, err := wl.Repo.Status(ctx)
	return st, true, err
}

// RemoveWorktree removes the run's worktree if it is clean; a worktree with changes is
// kept (res.KeptWorktree says so). A deleted one is pruned from git's list.
func (l *Loop) RemoveWorktree(ctx context.Context, rec *run.Record, dirty []git.StatusEntry, present bool, res *FinishResult) error {
	path := rec.Worktree.Path
	if !present {
		return l.Repo.PruneWorktrees(ctx)
	}
	if len(dirty) > 0 {
		res.KeptWorktree, res.KeptChanges = true, len(dirty)
		return l.Repo.UnlockWorktree(ctx, path)
	}
	if err := l.Repo.UnlockWorktree(ctx, path); err != nil {
		return err
	}
	if err := l.Repo.RemoveWorktree(ctx, path); err != nil {
		return fmt.Errorf("remove worktree %s: %w", path, err)
	}
	res.RemovedWorktree = true
	if parent := filepath.Dir(path); rec.Worktree.Created && strings.HasSuffix(parent, ".ralph") {
		// The default parent (../<repo>.ralph) goes too, once it is empty.
		_ = os.Remove(parent)
	}
	return nil
}

// originRepo opens the checkout the worktree run started from (the main worktree when
// that checkout is gone).
func (l *Loop) originRepo(ctx context.Context, rec *run.Record) (*git.Repo, error) {
	dir := rec.Worktree.Origin
	if _, err := os.Stat(dir); err != nil {
		if dir, err = l.mainWorktree(ctx); err != nil {
			return nil, err
		}
	}
	if samePath(dir, l.Repo.Root) {
		return l.Repo, nil
	}
	repo, err := git.Open(ctx, dir)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", dir, err)
	}
	repo.Trace = l.Repo.Trace
	return repo, nil
}

// LoadChangeFor loads a change for display from where its run works.
func (l *Loop) LoadChangeFor(rec *run.Record, name string) (*source.Source, error) {
	if rec != nil {
		return OpenRun(l.changeRoot(rec), rec)
	}
	return source.Resolve(l.Repo.Root, l.Repo.Root, name, source.Options{})
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
