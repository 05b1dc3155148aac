package loop

import (
	"context"

	"github.com/git-ralph/git-ralph/internal/git"
	"github.com/git-ralph/git-ralph/internal/preflight"
	"github.com/git-ralph/git-ralph/internal/source"
)

// where is the repository as the task sources see it: its top level, cwd for a relative
// path ("" for the top level), its runs and its git config.
func (l *Loop) where(ctx context.Context, cwd string) source.Repo {
	return source.Repo{Root: l.Repo.Root, Cwd: cwd, Runs: l.Store, Config: gitConfig(ctx, l.Repo)}
}

// gitConfig reads repo's git config for the task sources: "" when a key is unset.
func gitConfig(ctx context.Context, repo *git.Repo) func(string) string {
	return func(key string) string {
		v, _, _ := repo.Config(ctx, key)
		return v
	}
}

// resolve is what an argument of start (or status, dispatch, a worktree run) means:
// source.Resolve, the one place that says it, then the run name's check.
func (l *Loop) resolve(ctx context.Context, r source.Repo, arg string) (*source.Source, error) {
	s, err := l.Sources.Resolve(r, arg)
	if err != nil {
		return nil, preflight.SourceErr(err)
	}
	return s, preflight.RunName(ctx, l.Repo, s, BranchName(s.Name))
}

// RunNameOf is the run name of arg: the run arg names (source.RunOf: its name, or the
// path of a plan or a prd.json, from the current directory or from the top level, that
// a run records), else arg itself. So `git ralph status docs/plans/x.md` finds the run "x".
func (l *Loop) RunNameOf(arg string) string { return source.RunNameIn(l.Repo.Root, l.Store, arg) }

// agentFiles are the files outside the working tree the agent writes: the learnings
// file, and the tracked file when its kind keeps it outside the working tree.
func agentFiles(src *source.Source, learnings string) []string {
	files := []string{learnings}
	if src != nil && src.IsOutside() {
		files = append(files, src.TasksPath)
	}
	return files
}
