package wtrun

import (
	"context"
	"path/filepath"

	"github.com/git-ralph/git-ralph/internal/loop"
)

// WorktreeDirConfig is the git config key naming the directory under which worktree
// runs are made, one subdirectory per change.
const WorktreeDirConfig = "ralph.worktreeDir"

// worktreePath returns where a new worktree run of change works: path (--worktree=PATH),
// else <ralph.worktreeDir>/<change>, else ../<repo>.ralph/<change> next to the main
// worktree; absolute.
func worktreePath(ctx context.Context, l *loop.Loop, change, path string) (string, error) {
	if path == "" {
		main, err := l.Repo.MainWorktree(ctx)
		if err != nil {
			return "", err
		}
		dir, set, err := l.Repo.ConfigPath(ctx, WorktreeDirConfig)
		if err != nil {
			return "", err
		}
		switch {
		case set && dir != "" && !filepath.IsAbs(dir):
			dir = filepath.Join(main, dir)
		case !set || dir == "":
			dir = filepath.Join(filepath.Dir(main), filepath.Base(main)+".ralph")
		}
		path = filepath.Join(dir, change)
	}
	return filepath.Abs(path)
}
