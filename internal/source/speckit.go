package source

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/git-ralph/git-ralph/internal/speckit"
	"github.com/git-ralph/git-ralph/internal/tasklist"
)

func openSpecKit(root, name string) (*Source, error) {
	f, err := speckit.Load(root, name)
	if err != nil {
		var nt *speckit.NoTasksError
		if errors.As(err, &nt) {
			return nil, &Error{Msg: nt.Error(), Hint: nt.Hint()}
		}
		return nil, err
	}
	s := &Source{Kind: SpecKit, Name: name, Arg: name, RelDir: f.RelDir, TasksPath: f.TasksPath, TasksRel: f.TasksRel, root: root,
		DoneMark: "[X]", parse: func(b []byte) (tasklist.Tasks, error) { return speckit.ParseTasks(b), nil }}
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
	s.Why = firstParagraph(f.Spec)
	s.Title = strings.TrimSpace(strings.TrimPrefix(firstHeading(f.Spec), "Feature Specification:"))
	return s, s.Reload()
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
