package source

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/git-ralph/git-ralph/internal/run"
)

// Resolve is what `git ralph start <arg>` means, in one place: the source arg names in r,
// read where its run works, with its refusals, by the rules of docs/TASKS.md, "What an
// argument of start means". A name is only looked up among the entries listed, never joined
// into a path; a path must lead inside r.Root. A run whose source cannot be read now gives a
// *RunError naming it.
func (ks Kinds) Resolve(r Repo, arg string) (*Source, error) {
	if arg == "" {
		return ks.bare(r)
	}
	name := RunOf(r, arg)
	s, err := ks.resolve(r, arg, name)
	if err != nil && name != "" {
		return nil, &RunError{Run: name, Err: err}
	}
	return s, err
}

// bare is what `git ralph start` with no argument means: the run of the branch HEAD is on
// (ralph/<name>), else the source a kind calls current (spec-kit's feature), else the
// only run; else it says what there is to run.
func (ks Kinds) bare(r Repo) (*Source, error) {
	if name, ok := strings.CutPrefix(r.Branch, "ralph/"); ok {
		if rec, err := record(r.Runs, name); err != nil {
			return nil, err
		} else if rec != nil {
			return ks.Resolve(r, name)
		}
	}
	for _, k := range ks.all() {
		c, ok := k.(Current)
		if !ok {
			continue
		}
		m, err := c.Current(r)
		switch {
		case err != nil:
			return nil, err
		case m.Err != nil:
			return nil, m.Err
		case m.Rank != None:
			s, err := k.Open(r, m.Ref)
			if err != nil {
				return nil, err
			}
			return ks.withRun(r, s)
		}
	}
	var runs []string
	if r.Runs != nil {
		runs, _ = r.Runs.Changes()
	}
	switch len(runs) {
	case 1:
		return ks.Resolve(r, runs[0])
	case 0:
	default:
		return nil, &Error{Msg: fmt.Sprintf("%d runs exist: %s", len(runs), strings.Join(runs, ", ")), Hint: "say which to go on with: 'git ralph start " + runs[0] + "'"}
	}
	// No run: the only source there is (what `list` shows), when there is one.
	if srcs, err := ks.List(r); err == nil && len(srcs) == 1 {
		s, err := ks.Open(r, srcs[0].Ref)
		if err != nil {
			return nil, err
		}
		return ks.withRun(r, s)
	}
	e := ks.unknown(r, "")
	var se *Error
	if errors.As(e, &se) {
		return nil, &Error{Msg: "nothing says what to run", Hint: "name it: 'git ralph start <change>'\n" + se.Hint}
	}
	return nil, e
}

func (ks Kinds) resolve(r Repo, arg, name string) (*Source, error) {
	if name != "" {
		rec, err := record(r.Runs, name)
		if err != nil {
			return nil, err
		}
		if rec.Source != "" {
			return ks.OpenRun(r, rec)
		}
		// An OpenSpec run's change may be in its worktree only: its name is looked up
		// there first.
		if root := rec.ChangeRoot(r.Root); root != r.Root {
			if s, err := ks.find(r.at(root), arg); err == nil {
				return ks.ofRun(r.at(root), s, rec)
			}
		}
	}
	s, err := ks.find(r, arg)
	if err != nil {
		if r.Initial != nil && name == "" && !isPath(arg) {
			if s, ok := ks.FromTrailers(r, arg, r.Initial(arg)); ok {
				return s, nil
			}
		}
		return nil, err
	}
	return ks.withRun(r, s)
}

// withRun is s as the run of its name reads it (ofRun), s itself when it has none.
func (ks Kinds) withRun(r Repo, s *Source) (*Source, error) {
	rec, err := record(r.Runs, s.Name)
	switch {
	case err != nil:
		return nil, err
	case rec == nil:
		return s, nil
	}
	return ks.ofRun(r, s, rec)
}

// ofRun is s, found in r, as its run rec reads it: refused when the run is another
// source's, at the run's story level, where the run works, with the story ids it keeps.
func (ks Kinds) ofRun(r Repo, s *Source, rec *run.Record) (*Source, error) {
	was := RefOf(rec)
	if was.Kind != s.Ref.Kind || rec.SourceArg != "" && rec.SourceArg != s.Ref.Arg {
		what := ks.noun(was.Kind) + " " + rec.Change
		if rec.SourceArg != "" {
			what = ks.noun(was.Kind) + " " + rec.SourceArg
		}
		return nil, &Error{Msg: fmt.Sprintf("the run %s belongs to the %s, not to the %s %s", s.Name, what, s.Kind.About().Noun, s.Ref.Arg),
			Hint: "finish that run first ('git ralph finish " + s.Name + "'), or rename one of them"}
	}
	ref := s.Ref
	if rec.StoryLevel != 0 && r.StoryLevel == 0 {
		ref.StoryLevel = rec.StoryLevel // a resume keeps the story level the run began with
	}
	if root := rec.ChangeRoot(r.Root); ref != s.Ref || root != r.Root {
		// read where the run works: its worktree's copy is the one the agent ticks
		var err error
		if s, err = ks.Open(r.at(root), ref); err != nil && root != r.Root {
			s, err = ks.Open(r, ref)
		}
		if err != nil {
			return nil, err
		}
	}
	s.KeepIDs(RecordedIDs(rec))
	return s, nil
}

// find is what arg names now, whatever the runs: the kind its prefix names, else the
// best of every kind's claim.
func (ks Kinds) find(r Repo, arg string) (*Source, error) {
	if id, rest, ok := strings.Cut(arg, ":"); ok {
		if k, ok := ks.Lookup(id); ok {
			m, err := k.Claim(r, rest, true)
			switch {
			case err != nil:
				return nil, err
			case m.Err != nil:
				return nil, m.Err
			case m.Rank == None:
				return nil, noSuch(rest, nil)
			}
			return k.Open(r, m.Ref)
		}
	}
	type claim struct {
		k Kind
		m Match
	}
	var best []claim
	var near error
	for _, k := range ks.all() {
		m, err := k.Claim(r, arg, false)
		if err != nil {
			return nil, err
		}
		switch {
		case m.Rank == None:
			if near == nil {
				near = m.Err // a near miss
			}
		case len(best) == 0 || m.Rank > best[0].m.Rank:
			best = []claim{{k, m}}
		case m.Rank == best[0].m.Rank:
			best = append(best, claim{k, m})
		}
	}
	switch {
	case len(best) == 1 && best[0].m.Err != nil:
		return nil, best[0].m.Err
	case len(best) == 1:
		return best[0].k.Open(r, best[0].m.Ref)
	case len(best) > 1:
		var what, how []string
		for _, c := range best {
			what = append(what, c.k.About().One)
			how = append(how, "'git ralph start "+c.k.About().ID+":"+arg+"'")
		}
		return nil, &Error{Msg: fmt.Sprintf("%q is both %s", arg, orList(what, "and")), Hint: "say which: " + orList(how, "or")}
	case near != nil:
		return nil, near
	}
	return nil, ks.unknown(r, arg)
}

// unknown is the error for an argument that names nothing: what exists, or, when only
// one kind has anything here, that kind's own words (OpenSpec's, in an OpenSpec
// repository).
func (ks Kinds) unknown(r Repo, arg string) error {
	var lines []string
	var only Kind
	n := 0
	for _, k := range ks.all() {
		srcs, err := k.List(r, nil)
		if err != nil {
			return err
		}
		if len(srcs) > 0 {
			lines, only = append(lines, have(k, args(srcs))...), k
			n++
		}
	}
	if n == 1 {
		if m, err := only.Claim(r, arg, true); err == nil && m.Err != nil {
			return m.Err
		}
	}
	if len(lines) == 0 {
		var makes []string
		for _, k := range ks.all() {
			makes = append(makes, k.About().Make)
		}
		return noSuch(arg, []string{"nothing to run here: " + orList(makes, "or")})
	}
	return noSuch(arg, lines)
}

// noSuch is the error for a name nothing has; hint says what exists.
func noSuch(arg string, hint []string) *Error {
	h := strings.Join(hint, "\n")
	if h == "" {
		h = "'git ralph list' shows what there is to run"
	}
	return &Error{Msg: fmt.Sprintf("no change or feature %q", arg), Hint: h}
}

// have is the line of what exists of kind k, for noSuch: "spec-kit features: a, b".
func have(k Kind, names []string) []string {
	if len(names) == 0 {
		return nil
	}
	return []string{k.About().Many + ": " + strings.Join(names, ", ")}
}

// args are the arguments that name srcs.
func args(srcs []*Source) []string {
	var out []string
	for _, s := range srcs {
		out = append(out, s.Ref.Arg)
	}
	return out
}

// orList joins "a", "b", "c" as "a, b or c" (with word for "or").
func orList(items []string, word string) string {
	if len(items) < 2 {
		return strings.Join(items, "")
	}
	return strings.Join(items[:len(items)-1], ", ") + " " + word + " " + items[len(items)-1]
}

// noun is how messages name a source of the kind whose ID is id.
func (ks Kinds) noun(id string) string {
	if k, ok := ks.Lookup(id); ok {
		return k.About().Noun
	}
	return id
}

// RunError is an argument that names a run whose source cannot be read now; a crash
// may have left its files half-restored, which the run's own checkpoint puts back.
type RunError struct {
	Run string // the run's name
	Err error
}

func (e *RunError) Error() string { return e.Err.Error() }
func (e *RunError) Unwrap() error { return e.Err }

// RunOf is the run arg names, "" when it names none: a run's name, or the path of the
// file a run records (from r.Cwd, or from the top level), so that `git ralph status
// docs/plans/x.md` finds the run "x". A name is only looked up among the runs listed.
func RunOf(r Repo, arg string) string {
	if r.Runs == nil || arg == "" {
		return ""
	}
	names, err := r.Runs.Changes()
	if err != nil {
		return ""
	}
	if !isPath(arg) {
		if slices.Contains(names, arg) {
			return arg
		}
		return ""
	}
	var rels []string
	cwd := r.Cwd
	if cwd == "" {
		cwd = r.Root
	}
	if rel, err := filepath.Rel(r.Root, filepath.Join(cwd, arg)); err == nil && !filepath.IsAbs(arg) {
		rels = append(rels, filepath.ToSlash(rel))
	} else if rel, err := filepath.Rel(r.Root, arg); err == nil && filepath.IsAbs(arg) {
		rels = append(rels, filepath.ToSlash(rel))
	}
	rels = append(rels, filepath.ToSlash(filepath.Clean(arg)))
	for _, n := range names {
		if rec, err := r.Runs.Load(n); err == nil && rec.SourceArg != "" && slices.Contains(rels, rec.SourceArg) {
			return n
		}
	}
	return ""
}

// record is the record of the run named name, nil when there is none (or no store); a
// record that is there and cannot be read is an error (run.UnreadableError), never "no
// run". The name is only looked up among the runs listed, never joined into a path.
func record(runs *run.Store, name string) (*run.Record, error) {
	if runs == nil {
		return nil, nil
	}
	names, err := runs.Changes()
	if err != nil || !slices.Contains(names, name) {
		return nil, nil
	}
	return runs.Load(name)
}

// isPath reports whether arg reads as the path of a file (a plan's or a prd.json's)
// rather than a name.
func isPath(arg string) bool {
	ext := strings.ToLower(filepath.Ext(arg))
	return ext == ".md" || ext == ".json"
}

// inside returns arg, a path relative to r.Cwd (or absolute), relative to r.Root and
// slash-separated, if it is inside r.Root; symlinks in the directories on the way are
// resolved so a path through a link out of the repository is refused.
func inside(r Repo, arg string) (string, error) {
	root, cwd := r.Root, r.Cwd
	if cwd == "" {
		cwd = root
	}
	p := arg
	if !filepath.IsAbs(p) {
		p = filepath.Join(cwd, p)
	}
	p = filepath.Clean(p)
	outside := &Error{Msg: fmt.Sprintf("%s is outside the repository", arg), Hint: "git-ralph runs a file of the repository it works in"}
	dir, err := filepath.EvalSymlinks(filepath.Dir(p))
	if err != nil {
		if rel, err := filepath.Rel(root, p); err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			return "", outside
		}
		return "", &Error{Msg: fmt.Sprintf("%s: no such file", arg), Hint: "give the path of a file in this repository"}
	}
	top, err := filepath.EvalSymlinks(root)
	if err != nil {
		return "", err
	}
	rel, err := filepath.Rel(top, filepath.Join(dir, filepath.Base(p)))
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) || filepath.IsAbs(rel) {
		return "", outside
	}
	rel = filepath.ToSlash(rel)
	if rel == ".git" || strings.HasPrefix(rel, ".git/") {
		return "", &Error{Msg: fmt.Sprintf("%s is inside .git", arg), Hint: "give the path of a file in the work tree"}
	}
	return rel, nil
}
