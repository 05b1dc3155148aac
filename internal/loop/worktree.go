package loop

import (
	"context"
	"errors"
	"fmt"
	"github.com/git-ralph/git-ralph/internal/tell"
	"os"
	"path/filepath"
	"slices"

	"github.com/git-ralph/git-ralph/internal/git"
	"github.com/git-ralph/git-ralph/internal/preflight"
	"github.com/git-ralph/git-ralph/internal/run"
	"github.com/git-ralph/git-ralph/internal/source"
	"github.com/git-ralph/git-ralph/internal/start"
)

// A worktree run (start --worktree) works in a linked worktree of its own on
// ralph/<change>; its record and lock stay in the common dir, naming the worktree and the
// checkout it came from. Making and finishing one is internal/wtrun's (Loop.Worktrees); this
// file holds what the loop reads of it: where it works, the Loop there, the agent's
// environment there.

// worktreeTarget returns where the worktree run of change works: the record's worktree
// for an existing worktree run, else where Worktrees puts a new one (--worktree). ok is
// false for a run in the user's checkout.
func (l *Loop) worktreeTarget(ctx context.Context, change string, w start.WorktreeOption) (path string, ok bool, err error) {
	rec, err := l.Store.Load(change)
	if err != nil && !errors.Is(err, run.ErrNoRun) {
		return "", false, err
	}
	if rec != nil && rec.Worktree != nil {
		return rec.Worktree.Path, true, nil
	}
	if !w.On {
		return "", false, nil
	}
	if rec != nil {
		return "", false, tell.UserErr("resume it there with 'git ralph start "+change+"' (without --worktree), or finish it first",
			"change %q already has a run in the checkout %s", change, l.Repo.Root)
	}
	if l.Worktrees == nil {
		return "", false, fmt.Errorf("start of %q in a worktree: no way to run in a worktree here", change)
	}
	path, err = l.Worktrees.Path(ctx, l, change, w.Path)
	return path, err == nil, err
}

// checkWhere finds where r's loop works (the user's checkout, or the run's worktree)
// and refuses a branch checked out anywhere else, holding the worktrees lock so that
// no other git-ralph is half-way through adding one.
func (l *Loop) checkWhere(ctx context.Context, r *Resolved) (wt string, inWT bool, err error) {
	wlock, err := l.Store.LockWorktrees()
	if err != nil {
		return "", false, err
	}
	defer wlock.Unlock()
	wt, inWT, err = l.worktreeTarget(ctx, r.Change, r.Worktree)
	if err != nil {
		return "", false, err
	}
	here := l.Repo.Root
	if inWT {
		here = wt
	}
	return wt, inWT, preflight.BranchFree(ctx, l.Repo, BranchName(r.Change), here)
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
	if rec.WorktreeState().Missing || git.SamePath(rec.Worktree.Path, l.Repo.Root) {
		return l.Repo, true
	}
	repo, err := git.Open(ctx, rec.Worktree.Path)
	if err != nil {
		return l.Repo, true
	}
	repo.Trace = l.Repo.Trace
	return repo, true
}

// LoadRunChange resolves change as start does (source.Resolve; a path from where the
// command runs), read where its run works: its worktree, for a worktree run (whose
// change may exist nowhere else), else this checkout.
func (l *Loop) LoadRunChange(ctx context.Context, change string) (*source.Source, error) {
	cwd, _ := os.Getwd()
	return l.resolve(ctx, l.where(ctx, cwd), change)
}

// In returns a Loop like l whose git runs in the worktree at path, without automatic gc.
func (l *Loop) In(ctx context.Context, path string) (*Loop, error) {
	repo, err := git.Open(ctx, path)
	if err != nil {
		return nil, fmt.Errorf("open worktree %s: %w", path, err)
	}
	// Its .git file is in the work tree the agent writes: one pointed at another
	// repository (a crash may have left it so) must not become the repository this
	// run's git works in.
	if !git.SamePath(repo.CommonDir, l.Repo.CommonDir) {
		return nil, tell.UserErr("look at "+filepath.Join(path, ".git")+"; 'git worktree repair "+path+"' points it back",
			"the worktree %s belongs to another repository now (%s): its .git file was rewritten", path, repo.CommonDir)
	}
	repo.Trace, repo.NoAutoGC = l.Repo.Trace, true
	wl := *l
	wl.Repo, wl.worktree = repo, path
	return &wl, nil
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
