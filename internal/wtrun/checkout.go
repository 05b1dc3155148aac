package wtrun

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/git-ralph/git-ralph/internal/git"
	"github.com/git-ralph/git-ralph/internal/loop"
	"github.com/git-ralph/git-ralph/internal/run"
)

// What a finish of a worktree run (--squash and --keep here, --pr in githubflow through
// loop.WorktreeRuns) does with the run's worktree and the checkout it started from.

// worktreeDirty returns the uncommitted changes in the run's worktree, and whether the
// worktree is there at all.
func worktreeDirty(ctx context.Context, l *loop.Loop, rec *run.Record) ([]git.StatusEntry, bool, error) {
	if rec.WorktreeState().Missing {
		return nil, false, nil
	}
	wl, err := l.In(ctx, rec.Worktree.Path)
	if err != nil {
		return nil, false, err
	}
	st, err := wl.Repo.Status(ctx)
	return st, true, err
}

// removeWorktree removes the run's worktree if it is clean; a worktree with changes is
// kept (res.KeptWorktree says so). A deleted one is pruned from git's list.
func removeWorktree(ctx context.Context, l *loop.Loop, rec *run.Record, dirty []git.StatusEntry, present bool, res *run.FinishResult) error {
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
func originRepo(ctx context.Context, l *loop.Loop, rec *run.Record) (*git.Repo, error) {
	dir := rec.Worktree.Origin
	if _, err := os.Stat(dir); err != nil {
		if dir, err = l.Repo.MainWorktree(ctx); err != nil {
			return nil, err
		}
	}
	if git.SamePath(dir, l.Repo.Root) {
		return l.Repo, nil
	}
	repo, err := git.Open(ctx, dir)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", dir, err)
	}
	repo.Trace = l.Repo.Trace
	repo.RunHooksLike(l.Repo) // its hooks run where this finish's do
	return repo, nil
}

// fromOrigin returns l, or, when l works inside rec's worktree (which a finish may
// remove), a Loop working in the checkout the worktree run started from. The caller
// holds the worktrees lock.
func fromOrigin(ctx context.Context, l *loop.Loop, rec *run.Record) (*loop.Loop, error) {
	if !git.SamePath(l.Repo.Root, rec.Worktree.Path) {
		return l, nil
	}
	origin, err := originRepo(ctx, l, rec)
	if err != nil {
		return nil, err
	}
	ol := *l
	ol.Repo = origin
	return &ol, nil
}

// clearCrashLocks is loop.ClearCrashLocks for a worktree run: the locks a killed git
// left in this checkout, in the checkout the run started from (where finish --squash
// merges) and in the run's worktree, judged all together.
func clearCrashLocks(ctx context.Context, l *loop.Loop, rec *run.Record, again string) error {
	var repos []*git.Repo
	if origin, err := originRepo(ctx, l, rec); err == nil && !git.SamePath(origin.Root, l.Repo.Root) {
		repos = append(repos, origin)
	}
	if !rec.WorktreeState().Missing && !git.SamePath(rec.Worktree.Path, l.Repo.Root) {
		if wt, err := git.Open(ctx, rec.Worktree.Path); err == nil {
			wt.Trace = l.Repo.Trace
			repos = append(repos, wt)
		}
	}
	return l.ClearCrashLocks(ctx, rec, again, repos...)
}
