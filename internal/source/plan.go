package source

import (
	"path/filepath"

	"github.com/git-ralph/git-ralph/internal/plan"
	"github.com/git-ralph/git-ralph/internal/tasklist"
)

// planKind is a markdown plan (SPEC §2b): ralphex's docs/plans/*.md, a fix_plan.md, any
// markdown file of checkboxes, named by its path. Its run is named after the file.
type planKind struct{}

const planID = "plan"

func (planKind) About() About {
	return About{ID: planID, Noun: "plan", One: "a markdown plan", Many: "plans", Make: "a markdown plan (give its path)"}
}

// Claim: the path of a .md file.
func (planKind) Claim(r Repo, arg string, explicit bool) (Match, error) {
	m, err := fileRef(r, planID, ".md", arg)
	m.Ref.StoryLevel = r.StoryLevel
	return m, err
}

func (k planKind) Open(r Repo, ref Ref) (*Source, error) {
	rel, data, err := readFile(r, "plan", ".md plan", ref)
	if err != nil {
		return nil, err
	}
	level := ref.StoryLevel
	s := New(k, Ref{Kind: planID, Arg: rel, StoryLevel: level}, r.Root, rel,
		func(b []byte) (tasklist.Tasks, error) { return plan.Parse(b, level), nil })
	s.Name, s.RelDir, s.HasTasks, s.DoneMark = baseName(rel), filepath.ToSlash(filepath.Dir(rel)), true, "[x]"
	s.Why, s.Title = firstParagraph(string(data)), firstHeading(string(data))
	s.Docs = []Doc{{Title: "Plan", Path: rel, Tracked: true}} // the plan is its own document: shown as it stands
	s.Where = "plan " + rel
	s.NoWhy = s.TasksRel + " says nothing of why."
	s.NoTask = "a task is a '- [ ] …' line outside code blocks; ralphex plans hold them under '### Task N: …' headings"
	s.Rename = "rename " + rel + " to a name made of letters, digits and dashes"
	return s, s.Reload()
}

func (planKind) List(Repo, []string) ([]*Source, error) { return nil, nil }

func (planKind) AtCommit(_ Repo, ref Ref, read func(rel string) ([]byte, error)) (*Source, error) {
	data, err := read(ref.Arg)
	if err != nil {
		return nil, err
	}
	s := &Source{Kind: planKind{}, Ref: ref, Name: baseName(ref.Arg), TasksRel: ref.Arg, HasTasks: data != nil, Tasks: plan.Parse(data, ref.StoryLevel)}
	s.Why, s.Title = firstParagraph(string(data)), firstHeading(string(data))
	return s, nil
}
