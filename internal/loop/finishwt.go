package loop

import (
	"context"

	"github.com/git-ralph/git-ralph/internal/git"
	"github.com/git-ralph/git-ralph/internal/run"
)

// ClearWorktreeCrashLocks is clearCrashLocks for a worktree run: the locks a killed git
// left in this checkout, in the checkout the run started from (where finish --squash
// merges) and in the run's worktree, judged all together.
func (l *Loop) ClearWorktreeCrashLocks(ctx context.Context, rec *run.Record, again string) error {
	var repos []*git.Repo
	if origin, err := l.originRepo(ctx, rec); err == nil && !samePath(origin.Root, l.Repo.Root) {
		repos = append(repos, origin)
	}
	if !worktreeState(rec).Missing && !samePath(rec.Worktree.Path, l.Repo.Root) {
		if wt, err := git.Open(ctx, rec.Worktree.Path); err == nil {
			wt.Trace = l.Repo.Trace
			repos = append(repos, wt)
		}
	}
	return l.ClearCrashLocks(ctx, rec, again, repos...)
}
