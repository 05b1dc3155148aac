package source

import (
	"slices"

	"github.com/git-ralph/git-ralph/internal/run"
)

// What a run records of its source, and its source opened again from that record (or
// from the trailers of its "initial state" commit, which a caller reads from git).

// OpenRun opens the source of a recorded run in root, the top level it works in.
func OpenRun(root string, rec *run.Record) (*Source, error) {
	arg := rec.SourceArg
	if arg == "" {
		arg = rec.Change
	}
	s, err := Open(root, Kind(rec.Source), arg, Options{StoryLevel: rec.StoryLevel})
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

// Record writes into rec which source its run works through, so that status,
// finish, report and a resume reopen the same one (OpenRun). An OpenSpec change leaves
// the record as it always was.
func Record(rec *run.Record, kind Kind, arg string, storyLevel int) {
	if kind == "" || kind == OpenSpec {
		return
	}
	rec.Source = string(kind)
	if kind == Plan || kind == PRD {
		rec.SourceArg = arg
	}
	if kind == Plan {
		rec.StoryLevel = storyLevel
	}
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

// FromTrailers opens the source of the run name that trailers, those of the "initial
// state" commit of its branch, name (start --adopt on a runner: no record yet): a
// plan's or a prd.json's path, or that a name shared by a change and a feature is the
// feature.
func FromTrailers(root, name string, trailers map[string]string) (*Source, bool) {
	kind, arg := Kind(trailers[trailerSource]), trailers[trailerSourceArg]
	if kind == SpecKit {
		arg = name // a feature that is also an OpenSpec change's name: the trailer says which
	}
	if trailers["Ralph-Change"] != name || kind != Plan && kind != PRD && kind != SpecKit || arg == "" {
		return nil, false
	}
	s, err := Open(root, kind, arg, Options{})
	if err != nil || s.Name != name {
		return nil, false
	}
	return s, true
}

// KindOf is the source kind of a run; records before 2026-11-26 are OpenSpec's.
func KindOf(rec *run.Record) Kind {
	if rec.Source == "" {
		return OpenSpec
	}
	return Kind(rec.Source)
}
