package preflight

import (
	"context"
	"errors"
	"strings"

	"github.com/git-ralph/git-ralph/internal/git"
	"github.com/git-ralph/git-ralph/internal/repofile"
	"github.com/git-ralph/git-ralph/internal/source"
	"github.com/git-ralph/git-ralph/internal/tell"
)

// SourceErr turns a source's error into one with its hint: a file the source is not
// read from (repofile's rule: where it may be, what it may be, how large) says what to
// do about it.
func SourceErr(err error) error {
	var e *source.Error
	if errors.As(err, &e) {
		return &tell.Error{Msg: e.Msg, Hint: e.Hint, Err: err}
	}
	var refused *repofile.RefusedError
	if errors.As(err, &refused) {
		return &tell.Error{Msg: err.Error(), Hint: refused.Hint(), Err: err}
	}
	return err
}

// RunName refuses a run name that would read as an option or cannot name a branch;
// branch is the run's.
func RunName(ctx context.Context, repo *git.Repo, s *source.Source, branch string) error {
	noun := s.Kind.About().Noun
	if strings.HasPrefix(s.Name, "-") { // it would read as an option to the commands it is passed to
		return tell.UserErr(s.Rename, "%s name %q starts with a dash", noun, s.Name)
	}
	if err := repo.CheckBranchName(ctx, branch); err != nil {
		return tell.UserErr(s.Rename, "%s name %q cannot be used in a branch name", noun, s.Name).WithCause(err)
	}
	return nil
}

// Runnable refuses a source the loop cannot run (no tracked file, or no task).
func Runnable(s *source.Source) error {
	if err := s.Runnable(); err != nil {
		return SourceErr(err)
	}
	return nil
}

// Tracked refuses a tracked file git ignores (and does not track): the "initial
// state" and checkpoint commits would leave it out, and a failed attempt's ticks would
// survive the reset to the checkpoint, making a story look done that never was.
func Tracked(ctx context.Context, repo *git.Repo, s *source.Source) error {
	if s.IsOutside() { // kept by its kind, outside the working tree
		return nil
	}
	ignored, err := repo.Ignored(ctx, s.TasksRel)
	if err != nil || !ignored {
		return err
	}
	return tell.UserErr("track it ('git add -f "+s.TasksRel+"' and commit) or take it out of .gitignore, then start again",
		"%s is ignored by git: its ticks could be neither committed nor undone after a failed attempt", s.TasksRel)
}

// OpenOutsideStories is the error for a change whose stories are all complete while
// OpenSpec still counts an open task in it: git-ralph never calls such a change complete.
func OpenOutsideStories(src *source.Source) error {
	n := src.OpenOutsideStories()
	if n == 0 {
		return nil
	}
	return tell.UserErr("put them under a '## ' heading in "+src.TasksRel+", then run 'git ralph start "+src.Name+"' again",
		"%s has %d open task(s) that belong to no story; the change is not complete", src.TasksRel, n)
}
