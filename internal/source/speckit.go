package source

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/git-ralph/git-ralph/internal/repofile"
	"github.com/git-ralph/git-ralph/internal/speckit"
	"github.com/git-ralph/git-ralph/internal/tasklist"
)

// speckitKind is a GitHub Spec Kit feature, a directory under specs/ that holds
// tasks.md (docs/TASKS.md, "The kinds"): its run is named after the directory, its stories are the "##"
// phases of tasks.md, and the agent marks tasks [X].
type speckitKind struct{}

const speckitID = "speckit"

func (speckitKind) About() About {
	return About{ID: speckitID, Noun: "spec-kit feature", One: "a spec-kit feature", Many: "spec-kit features",
		Make: "a spec-kit feature (specs/<feature>/tasks.md)"}
}

// Claim: a feature's directory name, its number alone when one feature has it, or its
// path (specs/<feature>, specs/<feature>/tasks.md, from the current directory). A
// directory under specs/ without tasks.md is a near miss with spec-kit's own advice, run
// /speckit.tasks. A name is only ever looked up among the directories listed.
func (k speckitKind) Claim(r Repo, arg string, explicit bool) (Match, error) {
	features, err := speckit.ListFeatures(r.Root)
	if err != nil {
		return Match{}, err
	}
	name, byPath := featureOfPath(r, arg)
	if !byPath {
		name = arg
	}
	if slices.Contains(features, name) {
		return Match{Ref: Ref{Kind: speckitID, Arg: name}, Rank: Exact}, nil
	}
	if !byPath && arg != "" && strings.Trim(arg, "0123456789") == "" {
		switch m := speckit.ByNumber(features, arg); len(m) {
		case 0:
		case 1:
			return Match{Ref: Ref{Kind: speckitID, Arg: m[0]}, Rank: Loose}, nil
		default:
			return Match{Err: &Error{Msg: fmt.Sprintf("%d spec-kit features are numbered %s: %s", len(m), arg, strings.Join(m, ", ")),
				Hint: "name one in full, e.g. 'git ralph start " + m[0] + "'"}}, nil
		}
	}
	if dirs, err := speckit.Dirs(r.Root); err == nil {
		rank := Exact
		if !slices.Contains(dirs, name) && !byPath && arg != "" && strings.Trim(arg, "0123456789") == "" {
			// its number alone, as for a feature with tasks.md
			if m := speckit.ByNumber(dirs, arg); len(m) == 1 {
				name, rank = m[0], Loose
			}
		}
		if slices.Contains(dirs, name) {
			nt := &speckit.NoTasksError{Name: name} // a feature whose tasks are not generated yet
			return Match{Ref: Ref{Kind: speckitID, Arg: name}, Rank: rank, Err: &Error{Msg: nt.Error(), Hint: nt.Hint()}}, nil
		}
	}
	if !explicit {
		return Match{}, nil
	}
	return Match{Err: noSuch(arg, have(k, features))}, nil
}

// featureOfPath is the feature directory a path names: "specs/<name>", its tasks.md or
// any file in it, relative to the current directory; false when arg is no such path.
func featureOfPath(r Repo, arg string) (string, bool) {
	if !strings.ContainsAny(arg, `/\`) {
		return "", false
	}
	rel, err := inside(r, arg)
	if err != nil {
		return "", false
	}
	rest, ok := strings.CutPrefix(strings.TrimSuffix(rel, "/"), "specs/")
	if !ok {
		return "", false
	}
	name, file, _ := strings.Cut(rest, "/")
	if name == "" || file != "" && file != "tasks.md" {
		return "", false
	}
	return name, true
}

// Current is spec-kit's current feature, in spec-kit's own order (scripts/bash/common.sh):
// SPECIFY_FEATURE_DIRECTORY, else .specify/feature.json's "feature_directory" (what
// /speckit.specify records), else the feature the branch is named after (SPECIFY_FEATURE,
// else the branch HEAD is on; the rule spec-kit used until v0.10.0). A feature named by
// the first two that is not a directory under specs/, or has no tasks.md yet, is said.
func (k speckitKind) Current(r Repo) (Match, error) {
	getenv := r.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	dir, from := getenv("SPECIFY_FEATURE_DIRECTORY"), "SPECIFY_FEATURE_DIRECTORY"
	if dir == "" {
		if data, ok, err := repofile.Read(r.Root, filepath.Join(r.Root, ".specify", "feature.json")); err == nil && ok {
			dir, from = speckit.FeatureDirectory(data), ".specify/feature.json"
		}
	}
	if dir != "" {
		// relative to the top level, as spec-kit reads it
		name, ok := featureOfPath(r.at(r.Root), strings.TrimSuffix(filepath.ToSlash(dir), "/")+"/")
		if !ok {
			return Match{Err: &Error{Msg: fmt.Sprintf("%s names %s, which is not a feature directory under specs/", from, dir),
				Hint: "point it at the feature to run (specs/<feature>), or name the feature: 'git ralph start <feature>'"}}, nil
		}
		m, err := k.Claim(r, name, false)
		if err == nil && m.Rank == None && m.Err == nil {
			m.Err = &Error{Msg: fmt.Sprintf("%s names %s, which does not exist", from, dir), Hint: "run /speckit.specify, or name the feature: 'git ralph start <feature>'"}
		}
		return m, err
	}
	branch := getenv("SPECIFY_FEATURE")
	if branch == "" {
		branch = r.Branch
	}
	dirs, err := speckit.Dirs(r.Root)
	if err != nil || branch == "" {
		return Match{}, err
	}
	switch m := speckit.ForBranch(dirs, branch); len(m) {
	case 0:
		return Match{}, nil
	case 1:
		return k.Claim(r, m[0], false)
	default:
		return Match{Err: &Error{Msg: fmt.Sprintf("branch %s could be any of the spec-kit features %s", branch, strings.Join(m, ", ")),
			Hint: "name one: 'git ralph start " + m[0] + "'"}}, nil
	}
}

func (speckitKind) Open(r Repo, ref Ref) (*Source, error) {
	name := ref.Arg
	f, err := speckit.Load(r.Root, name)
	if err != nil {
		var nt *speckit.NoTasksError
		if errors.As(err, &nt) {
			return nil, &Error{Msg: nt.Error(), Hint: nt.Hint()}
		}
		return nil, err
	}
	s := New(speckitKind{}, Ref{Kind: speckitID, Arg: name}, r.Root, f.TasksRel,
		func(b []byte) (tasklist.Tasks, error) { return speckit.ParseTasks(b), nil })
	s.Name, s.RelDir, s.DoneMark = name, f.RelDir, "[X]"
	s.Where = "spec-kit feature " + f.TasksRel
	s.NoWhy = s.TasksRel + " says nothing of why."
	s.NoTask = "generate the tasks with spec-kit's /speckit.tasks; a task is a '- [ ] T001 …' line outside code blocks"
	s.Rename = "rename the directory " + f.RelDir + " to a name made of letters, digits and dashes"
	for _, d := range f.Docs {
		doc := Doc{Title: docTitle(d), Path: d}
		switch {
		case strings.HasSuffix(d, "/spec.md"):
			doc.Content = f.Spec
		case strings.HasSuffix(d, "/plan.md"):
			doc.Content = f.Plan
		}
		s.Docs = append(s.Docs, doc)
	}
	for _, c := range f.Checklists {
		if c.Open > 0 {
			s.Notes = append(s.Notes, fmt.Sprintf("checklist %s has %d of %d items unchecked (spec-kit's /speckit.implement asks before it goes on)", c.Path, c.Open, c.Total))
		}
	}
	s.Why, s.Title = firstParagraph(f.Spec), featureTitle(f.Spec)
	return s, s.Reload()
}

func (k speckitKind) List(r Repo, only []string) ([]*Source, error) {
	features, err := speckit.ListFeatures(r.Root)
	if err != nil {
		return nil, err
	}
	var out []*Source
	for _, n := range features {
		if only != nil && !slices.Contains(only, n) {
			continue
		}
		s, err := k.Open(r, Ref{Kind: speckitID, Arg: n})
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

// AtCommit reads the feature's tasks.md and spec.md.
func (speckitKind) AtCommit(r Repo, ref Ref, read func(rel string, doc bool) ([]byte, error)) (*Source, error) {
	dir := "specs/" + ref.Arg
	tasks, err := read(dir+"/tasks.md", false)
	if err != nil {
		return nil, err
	}
	spec, err := read(dir+"/spec.md", true)
	if err != nil {
		return nil, err
	}
	s := &Source{Kind: speckitKind{}, Ref: ref, Name: ref.Arg, RelDir: dir, TasksRel: dir + "/tasks.md", HasTasks: tasks != nil, Tasks: speckit.ParseTasks(tasks)}
	s.Why, s.Title = firstParagraph(string(spec)), featureTitle(string(spec))
	return s, nil
}

// featureTitle is spec.md's first "# " heading without the template's "Feature
// Specification:".
func featureTitle(spec string) string {
	return strings.TrimSpace(strings.TrimPrefix(firstHeading(spec), "Feature Specification:"))
}

// docTitle names a spec-kit document in the prompt.
func docTitle(path string) string {
	base := filepath.Base(strings.TrimSuffix(path, "/"))
	switch base {
	case "spec.md":
		return "Spec"
	case "plan.md":
		return "Plan"
	case "research.md":
		return "Research"
	case "data-model.md":
		return "Data model"
	case "quickstart.md":
		return "Quickstart"
	case "contracts":
		return "Contracts"
	case "checklists":
		return "Checklists"
	case "constitution.md":
		return "Constitution"
	}
	return base
}
