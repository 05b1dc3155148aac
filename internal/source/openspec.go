package source

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/git-ralph/git-ralph/internal/openspec"
	"github.com/git-ralph/git-ralph/internal/repofile"
	"github.com/git-ralph/git-ralph/internal/tasklist"
)

// openspecKind is an OpenSpec change, a directory under openspec/changes (docs/TASKS.md, "Stories and tasks"): its
// run is named after it, and a record that names no source is one of these (records
// written before 2026-11-26).
type openspecKind struct{}

// openspecID is the ID of OpenSpec changes: a run record that says no source is theirs.
const openspecID = "openspec"

func (openspecKind) About() About {
	return About{ID: openspecID, Noun: "change", One: "an OpenSpec change", Many: "OpenSpec changes",
		Make: "create an OpenSpec change ('openspec new change <name>')"}
}

// Claim: a change's name, as openspec/changes lists it (never joined into a path before).
func (openspecKind) Claim(r Repo, arg string, explicit bool) (Match, error) {
	changes, err := openspec.ListChanges(r.Root)
	switch {
	case err != nil:
		return Match{}, err
	case slices.Contains(changes, arg):
		return Match{Ref: Ref{Kind: openspecID, Arg: arg}, Rank: Exact}, nil
	case explicit:
		e := &openspec.UnknownChangeError{Name: arg, Known: changes}
		return Match{Err: &Error{Msg: e.Error(), Hint: e.Hint()}}, nil
	}
	return Match{}, nil
}

func (openspecKind) Open(r Repo, ref Ref) (*Source, error) {
	ch, err := openspec.Load(r.Root, ref.Arg)
	if err != nil {
		var unk *openspec.UnknownChangeError
		if errors.As(err, &unk) {
			return nil, &Error{Msg: unk.Error(), Hint: unk.Hint()}
		}
		return nil, err
	}
	s := FromChange(ch)
	return s, s.Reload() // read once more, as it stands, for the story's section
}

// List reads every change's tracked file only (not its proposal, design or specs), with
// openspec/changes and the schemas read once: `list` over a thousand changes stays fast.
func (openspecKind) List(r Repo, only []string) ([]*Source, error) {
	here, err := openspec.List(r.Root)
	if err != nil {
		return nil, err
	}
	var out []*Source
	for _, n := range here.Names {
		if only != nil && !slices.Contains(only, n) {
			continue
		}
		c, err := here.LoadTasks(n)
		if err != nil {
			return nil, err
		}
		out = append(out, FromChange(c))
	}
	return out, nil
}

// AtCommit reads the tracked file the change's schema names (tasks.md when the change is
// not in the work tree) and proposal.md.
func (openspecKind) AtCommit(r Repo, ref Ref, read func(rel string, doc bool) ([]byte, error)) (*Source, error) {
	dir := "openspec/changes/" + ref.Arg
	tasksRel := dir + "/tasks.md"
	ch, err := openspec.Load(r.Root, ref.Arg)
	if err == nil && ch.TasksRel != "" {
		tasksRel = ch.TasksRel // what the change's schema tracks, e.g. plan.md
	} else if errors.As(err, new(*repofile.RefusedError)) {
		return nil, err // a file of the change that may not be read
	}
	tasks, err := read(tasksRel, false)
	if err != nil {
		return nil, err
	}
	proposal, err := read(dir+"/proposal.md", true)
	if err != nil {
		return nil, err
	}
	s := &Source{Kind: openspecKind{}, Ref: ref, Name: ref.Arg, RelDir: dir, TasksRel: tasksRel, HasTasks: tasks != nil, Tasks: openspec.ParseTasks(tasks)}
	s.Why, s.Title = openspec.Why(string(proposal)), changeTitle(string(proposal))
	return s, nil
}

// FromChange is the source of a loaded OpenSpec change.
func FromChange(ch *openspec.Change) *Source {
	name := ch.Name
	root := ""
	if ch.Dir != "" { // the top level: the change's directory without its relative path
		root = filepath.Clean(strings.TrimSuffix(ch.Dir, filepath.FromSlash(ch.RelDir)))
	}
	s := New(openspecKind{}, Ref{Kind: openspecID, Arg: name}, root, ch.TasksRel,
		func(b []byte) (tasklist.Tasks, error) { return openspec.ParseTasks(b), nil })
	s.Name, s.RelDir, s.TasksPath, s.Warning, s.HasTasks, s.Tasks = name, ch.RelDir, ch.TasksPath, ch.Warning, ch.HasTasks, ch.Tasks
	s.Specs, s.Why, s.DoneMark = ch.Specs, openspec.Why(ch.Proposal), "[x]"
	s.Where = ch.RelDir
	s.NoTask = "write the stories into " + ch.TasksRel + " as '## 1. Title' headings with '- [ ] 1.1 …' tasks"
	s.NoWhy = "openspec/changes/" + name + "/proposal.md has no \"Why\" section."
	s.Rename = "rename the directory " + ch.RelDir + " to a name made of letters, digits and dashes"
	s.Docs = []Doc{{Title: "Proposal", Path: ch.RelDir + "/proposal.md", Content: ch.Proposal}, {Title: "Design", Path: ch.RelDir + "/design.md", Content: ch.Design}}
	if ch.MoreSpecs {
		s.Notes = append(s.Notes, fmt.Sprintf("%s/specs holds more than %d delta specs: the first %d are shown here, read the others there", ch.RelDir, repofile.MaxDocs, repofile.MaxDocs))
	}
	s.Title = changeTitle(ch.Proposal)
	return s
}

// changeTitle is OpenSpec's own rule for a change's title: the proposal's first "# "
// heading without the template's "Change: " prefix; "# Proposal" is no title.
func changeTitle(proposal string) string {
	if t := firstHeading(proposal); !strings.EqualFold(t, "Proposal") {
		return strings.TrimSpace(strings.TrimPrefix(t, "Change:"))
	}
	return ""
}
