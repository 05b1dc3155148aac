package loop

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/git-ralph/git-ralph/internal/git"
	"github.com/git-ralph/git-ralph/internal/repofile"
	"github.com/git-ralph/git-ralph/internal/run"
	"github.com/git-ralph/git-ralph/internal/source"
)

// ResolveSource resolves start's argument arg in repo, a relative path from cwd, and
// checks the run name: it must not start with a dash and ralph/<name> must be a valid
// branch name.
func ResolveSource(ctx context.Context, repo *git.Repo, cwd, arg string, o source.Options) (*source.Source, error) {
	s, err := source.Resolve(repo.Root, cwd, arg, o)
	if err != nil {
		return nil, sourceErr(err)
	}
	return s, checkRunName(ctx, repo, s)
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
	fix := "rename the directory " + s.RelDir + " to a name made of letters, digits and dashes"
	switch {
	case s.Kind == source.Plan:
		fix = "rename " + s.TasksRel + " to a name made of letters, digits and dashes"
	case s.Kind == source.PRD:
		fix = "set its \"branchName\" to ralph/<a name made of letters, digits and dashes>"
	}
	if strings.HasPrefix(s.Name, "-") { // it would read as an option to the commands it is passed to
		return UserErr(fix, "%s name %q starts with a dash", s.Kind.Noun(), s.Name)
	}
	if err := repo.CheckBranchName(ctx, BranchName(s.Name)); err != nil {
		return UserErr(fix, "%s name %q cannot be used in a branch name", s.Kind.Noun(), s.Name)
	}
	return nil
}

// runRecord is the record of the run named name, nil when there is none. The name is
// only looked up among the runs listed, never joined into a path.
func (l *Loop) runRecord(name string) *run.Record {
	names, err := l.Store.Changes()
	if err != nil || !slices.Contains(names, name) {
		return nil
	}
	rec, err := l.Store.Load(name)
	if err != nil {
		return nil
	}
	return rec
}

// findSource finds what start (or status, or a worktree run) means by arg, in repo (the
// checkout, or the worktree its run works in): the source a run of that name recorded,
// else arg resolved (source.Resolve, a relative path from cwd). A source whose run name
// has a run of another source is refused.
func (l *Loop) findSource(ctx context.Context, repo *git.Repo, cwd, arg string, o source.Options) (*source.Source, error) {
	if !source.IsPath(arg) {
		if rec := l.runRecord(arg); rec != nil && rec.Source != "" {
			s, err := source.OpenRun(repo.Root, rec)
			if err != nil {
				return nil, sourceErr(err)
			}
			return s, checkRunName(ctx, repo, s)
		}
	}
	s, err := ResolveSource(ctx, repo, cwd, arg, o)
	if err != nil {
		return nil, err
	}
	if rec := l.runRecord(s.Name); rec != nil {
		kind, recArg := source.Kind(rec.Source), rec.SourceArg
		if kind == "" {
			kind = source.OpenSpec
		}
		if kind != s.Kind || recArg != "" && recArg != s.Arg {
			was := kind.Noun() + " " + rec.Change
			if recArg != "" {
				was = kind.Noun() + " " + recArg
			}
			return nil, UserErr("finish that run first ('git ralph finish "+s.Name+"'), or rename one of them",
				"the run %s belongs to the %s, not to the %s %s", s.Name, was, s.Kind.Noun(), s.Arg)
		}
		if rec.StoryLevel != 0 && o.StoryLevel == 0 {
			// a resume keeps the story level the run began with
			if s, err = source.Open(repo.Root, s.Kind, s.Arg, source.Options{StoryLevel: rec.StoryLevel}); err != nil {
				return nil, sourceErr(err)
			}
		}
		s.KeepIDs(source.RecordedIDs(rec))
	}
	return s, nil
}

// runnable refuses a source the loop cannot run (no tracked file, or no task).
func runnable(s *source.Source) error {
	if err := s.Runnable(); err != nil {
		return sourceErr(err)
	}
	return nil
}

// initialSource reads the source of the run name from the trailers of the "initial
// state" commit of its branch (start --adopt on a runner: no record yet): a plan's or a
// prd.json's path, or that a name shared by a change and a feature is the feature.
func (l *Loop) initialSource(ctx context.Context, repo *git.Repo, name string) (*source.Source, bool) {
	if strings.HasPrefix(name, "-") || repo.CheckBranchName(ctx, BranchName(name)) != nil {
		return nil, false
	}
	cs, err := repo.Log(ctx, "refs/heads/"+BranchName(name), 1000)
	if err != nil {
		return nil, false
	}
	for _, c := range cs {
		if c.Subject == "initial state" {
			return source.FromTrailers(repo.Root, name, c.Trailers)
		}
	}
	return nil, false
}

// ResolvedSource is the source Start resolved: its kind and, for a plan or a prd.json,
// the tracked file (githubflow's adopt records them).
func (o Options) ResolvedSource() (source.Kind, string) { return o.srcKind, o.srcArg }

// RecordSource records o's task source in rec.
func (o Options) RecordSource(rec *run.Record) { source.Record(rec, o.srcKind, o.srcArg, o.StoryLevel) }

// RunNameOf is the run name of arg: arg itself, unless it is the path of a plan or a
// prd.json (from the current directory, or from the top level) that a run records; then
// that run's name. So `git ralph status docs/plans/x.md` finds the run "x".
func (l *Loop) RunNameOf(arg string) string { return runNameIn(l.Repo.Root, l.Store, arg) }

// runNameIn is RunNameOf in the repository whose top level is root.
func runNameIn(root string, store *run.Store, arg string) string {
	if !source.IsPath(arg) {
		return arg
	}
	var rels []string
	if cwd, err := os.Getwd(); err == nil {
		if abs, err := filepath.Abs(filepath.Join(cwd, arg)); err == nil {
			if rel, err := filepath.Rel(root, abs); err == nil {
				rels = append(rels, filepath.ToSlash(rel))
			}
		}
	}
	rels = append(rels, filepath.ToSlash(filepath.Clean(arg)))
	names, err := store.Changes()
	if err != nil {
		return arg
	}
	for _, n := range names {
		if rec, err := store.Load(n); err == nil && rec.SourceArg != "" && slices.Contains(rels, rec.SourceArg) {
			return n
		}
	}
	return arg
}

// checkTracked refuses a tracked file git ignores (and does not track): the "initial
// state" and checkpoint commits would leave it out, and a failed attempt's ticks would
// survive the reset to the checkpoint, making a story look done that never was.
func checkTracked(ctx context.Context, repo *git.Repo, s *source.Source) error {
	ignored, err := repo.Ignored(ctx, s.TasksRel)
	if err != nil || !ignored {
		return err
	}
	return UserErr("track it ('git add -f "+s.TasksRel+"' and commit) or take it out of .gitignore, then start again",
		"%s is ignored by git: its ticks could be neither committed nor undone after a failed attempt", s.TasksRel)
}
