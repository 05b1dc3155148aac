package source

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/git-ralph/git-ralph/internal/speckit"
	"github.com/git-ralph/git-ralph/internal/tasklist"
)

// speckitKind is a GitHub Spec Kit feature, a directory under specs/ that holds
// tasks.md (SPEC §2b): its run is named after the directory, its stories are the "##"
// phases of tasks.md, and the agent marks tasks [X].
type speckitKind struct{}

const speckitID = "speckit"

func (speckitKind) About() About {
	return About{ID: speckitID, Noun: "spec-kit feature", One: "a spec-kit feature", Many: "spec-kit features",
		Make: "a spec-kit feature (specs/<feature>/tasks.md)"}
}

// Claim: a feature's directory name, or its number alone when one feature has it.
// Explicit ("speckit:"), a directory under specs/ without tasks.md gets spec-kit's own
// advice. A name is only ever looked up among the directories listed.
func (k speckitKind) Claim(r Repo, arg string, explicit bool) (Match, error) {
	features, err := speckit.ListFeatures(r.Root)
	if err != nil {
		return Match{}, err
	}
	if slices.Contains(features, arg) {
		return Match{Ref: Ref{Kind: speckitID, Arg: arg}, Rank: Exact}, nil
	}
	if arg != "" && strings.Trim(arg, "0123456789") == "" {
		switch m := speckit.ByNumber(features, arg); len(m) {
		case 0:
		case 1:
			return Match{Ref: Ref{Kind: speckitID, Arg: m[0]}, Rank: Loose}, nil
		default:
			return Match{Err: &Error{Msg: fmt.Sprintf("%d spec-kit features are numbered %s: %s", len(m), arg, strings.Join(m, ", ")),
				Hint: "name one in full, e.g. 'git ralph start " + m[0] + "'"}}, nil
		}
	}
	if !explicit {
		return Match{}, nil
	}
	if _, err := k.Open(r, Ref{Kind: speckitID, Arg: arg}); err != nil {
		if e, ok := err.(*Error); ok {
			return Match{Err: e}, nil
		}
	}
	return Match{Err: noSuch(arg, have(k, features))}, nil
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
func (speckitKind) AtCommit(r Repo, ref Ref, read func(rel string) ([]byte, error)) (*Source, error) {
	dir := "specs/" + ref.Arg
	tasks, err := read(dir + "/tasks.md")
	if err != nil {
		return nil, err
	}
	spec, err := read(dir + "/spec.md")
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
