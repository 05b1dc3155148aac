package loop

import (
	"context"
	"errors"
	"os"
	"slices"
	"strings"

	"github.com/git-ralph/git-ralph/internal/git"
	"github.com/git-ralph/git-ralph/internal/repofile"
	"github.com/git-ralph/git-ralph/internal/run"
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
		return nil, sourceErr(err)
	}
	return s, checkRunName(ctx, l.Repo, s)
}

// sourceErr turns a source's error into one with its hint: a file the source is not
// read from (repofile's rule: where it may be, what it may be, how large) says what to
// do about it.
func sourceErr(err error) error {
	var e *source.Error
	if errors.As(err, &e) {
		return &Error{Msg: e.Msg, Hint: e.Hint, Err: err}
	}
	var refused *repofile.RefusedError
	if errors.As(err, &refused) {
		return &Error{Msg: err.Error(), Hint: refused.Hint(), Err: err}
	}
	return err
}

// checkRunName refuses a run name that would read as an option or cannot name a branch.
func checkRunName(ctx context.Context, repo *git.Repo, s *source.Source) error {
	noun := s.Kind.About().Noun
	if strings.HasPrefix(s.Name, "-") { // it would read as an option to the commands it is passed to
		return UserErr(s.Rename, "%s name %q starts with a dash", noun, s.Name)
	}
	if err := repo.CheckBranchName(ctx, BranchName(s.Name)); err != nil {
		return UserErr(s.Rename, "%s name %q cannot be used in a branch name", noun, s.Name).WithCause(err)
	}
	return nil
}

// runnable refuses a source the loop cannot run (no tracked file, or no task).
func runnable(s *source.Source) error {
	if err := s.Runnable(); err != nil {
		return sourceErr(err)
	}
	return nil
}

// runRecord is the record of the run named name, nil when there is none; one that
// cannot be read is an error. The name is only looked up among the runs listed, never
// joined into a path.
func (l *Loop) runRecord(name string) (*run.Record, error) {
	names, err := l.Store.Changes()
	if err != nil || !slices.Contains(names, name) {
		return nil, nil
	}
	return l.Store.Load(name)
}

// RunNameOf is the run name of arg: the run arg names (source.RunOf: its name, or the
// path of a plan or a prd.json, from the current directory or from the top level, that
// a run records), else arg itself. So `git ralph status docs/plans/x.md` finds the run "x".
func (l *Loop) RunNameOf(arg string) string { return runNameIn(l.Repo.Root, l.Store, arg) }

// runNameIn is RunNameOf in the repository whose top level is root.
func runNameIn(root string, store *run.Store, arg string) string {
	cwd, _ := os.Getwd()
	if name := source.RunOf(source.Repo{Root: root, Cwd: cwd, Runs: store}, arg); name != "" {
		return name
	}
	return arg
}

// checkTracked refuses a tracked file git ignores (and does not track): the "initial
// state" and checkpoint commits would leave it out, and a failed attempt's ticks would
// survive the reset to the checkpoint, making a story look done that never was.
func checkTracked(ctx context.Context, repo *git.Repo, s *source.Source) error {
	if s.IsOutside() { // kept by its kind, outside the working tree
		return nil
	}
	ignored, err := repo.Ignored(ctx, s.TasksRel)
	if err != nil || !ignored {
		return err
	}
	return UserErr("track it ('git add -f "+s.TasksRel+"' and commit) or take it out of .gitignore, then start again",
		"%s is ignored by git: its ticks could be neither committed nor undone after a failed attempt", s.TasksRel)
}
