package source

import (
	"slices"

	"github.com/git-ralph/git-ralph/internal/run"
)

// What a run records of its source, and its source opened again from that record (or
// from the trailers of its "initial state" commit, which a caller reads from git).

// RefOf is the source a run records: its kind, its key (the run name when the record
// has none) and its story level. A record that names no kind is an OpenSpec change's
// (records written before 2026-11-26 name none).
func RefOf(rec *run.Record) Ref {
	ref := Ref{Kind: rec.Source, Arg: rec.SourceArg, StoryLevel: rec.StoryLevel}
	if ref.Kind == "" {
		ref.Kind = openspecID
	}
	if ref.Arg == "" {
		ref.Arg = rec.Change
	}
	return ref
}

// OpenRun opens the source of a recorded run where it works: its worktree when it has
// one that exists, else r.Root (and there too when what is at the worktree's path is
// no checkout of it: something else put in its place).
func (ks Kinds) OpenRun(r Repo, rec *run.Record) (*Source, error) {
	root := rec.ChangeRoot(r.Root)
	s, err := ks.Open(r.at(root), RefOf(rec))
	if err != nil && root != r.Root {
		s, err = ks.Open(r.at(r.Root), RefOf(rec))
	}
	if err != nil {
		return nil, err
	}
	s.Name = rec.Change // a prd.json whose branchName changed since is still this run's
	s.KeepIDs(RecordedIDs(rec))
	return s, nil
}

// RecordedIDs are the story ids a run has recorded: a story keeps the id its run began
// with (tasklist.Tasks.KeepIDs).
func RecordedIDs(rec *run.Record) []string {
	ids := []string{}
	if rec.CurrentStory != "" {
		ids = append(ids, rec.CurrentStory)
	}
	for _, a := range rec.Attempts {
		if !slices.Contains(ids, a.Story) {
			ids = append(ids, a.Story)
		}
	}
	return ids
}

// Record writes into rec which source its run works through, so that status, finish,
// report and a resume reopen the same one (OpenRun): its kind, its key when that is not
// the run name (a plan's or a prd.json's path), its story level when it has one. An
// OpenSpec change leaves the record as it always was.
func Record(rec *run.Record, ref Ref) {
	if ref.Kind == "" || ref.Kind == openspecID {
		return
	}
	rec.Source = ref.Kind
	if ref.Arg != rec.Change {
		rec.SourceArg = ref.Arg
	}
	rec.StoryLevel = ref.StoryLevel
}

// Trailers of the "initial state" commit that name the source of a run of a plan or a
// prd.json, so that the runner's start --adopt, which has no record, finds it again.
const (
	trailerSource    = "Ralph-Source"
	trailerSourceArg = "Ralph-Source-Arg"
)

// Trailers are the initial state commit's trailer lines for rec's source, "" for
// an OpenSpec change (its run name finds it, as it always did).
func Trailers(rec *run.Record) string {
	switch {
	case rec.Source == "":
		return ""
	case rec.SourceArg == "":
		return trailerSource + ": " + rec.Source + "\n"
	}
	return trailerSource + ": " + rec.Source + "\n" + trailerSourceArg + ": " + rec.SourceArg + "\n"
}

// RefOfTrailers is the source the trailers of a commit git-ralph made for the run name
// name say (RefOf for a run that has no record), false when they name none.
func RefOfTrailers(name string, trailers map[string]string) (Ref, bool) {
	kind, arg := trailers[trailerSource], trailers[trailerSourceArg]
	if arg == "" {
		arg = name
	}
	return Ref{Kind: kind, Arg: arg}, kind != ""
}

// FromTrailers opens the source of the run name that trailers, those of the "initial
// state" commit of its branch, name (start --adopt on a runner: no record yet): a
// plan's or a prd.json's path, or that a name shared by a change and a feature is the
// feature.
func (ks Kinds) FromTrailers(r Repo, name string, trailers map[string]string) (*Source, bool) {
	ref, ok := RefOfTrailers(name, trailers)
	if !ok || trailers["Ralph-Change"] != name {
		return nil, false
	}
	s, err := ks.Open(r, ref)
	if err != nil || s.Name != name {
		return nil, false
	}
	return s, true
}
