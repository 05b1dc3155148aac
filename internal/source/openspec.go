package source

import (
	"errors"
	"path/filepath"
	"strings"

	"github.com/git-ralph/git-ralph/internal/openspec"
	"github.com/git-ralph/git-ralph/internal/tasklist"
)

func openOpenSpec(root, name string) (*Source, error) {
	ch, err := openspec.Load(root, name)
	if err != nil {
		var unk *openspec.UnknownChangeError
		if errors.As(err, &unk) {
			return nil, &Error{Msg: unk.Error(), Hint: unk.Hint()}
		}
		return nil, err
	}
	return FromChange(ch), nil
}

// FromChange is the source of a loaded OpenSpec change.
func FromChange(ch *openspec.Change) *Source {
	name := ch.Name
	s := &Source{Kind: OpenSpec, Name: name, Arg: name, RelDir: ch.RelDir, TasksPath: ch.TasksPath, TasksRel: ch.TasksRel,
		Warning: ch.Warning, HasTasks: ch.HasTasks, Tasks: ch.Tasks, Specs: ch.Specs, Why: openspec.Why(ch.Proposal),
		DoneMark: "[x]", parse: func(b []byte) (tasklist.Tasks, error) { return openspec.ParseTasks(b), nil }}
	if ch.Dir != "" { // the top level: the change's directory without its relative path
		s.root = filepath.Clean(strings.TrimSuffix(ch.Dir, filepath.FromSlash(ch.RelDir)))
	}
	s.Docs = []Doc{{"Proposal", ch.RelDir + "/proposal.md", ch.Proposal}, {"Design", ch.RelDir + "/design.md", ch.Design}}
	// OpenSpec's own rule for a change's title: the proposal's first "# " heading
	// without the template's "Change: " prefix; "# Proposal" is no title.
	if t := firstHeading(ch.Proposal); !strings.EqualFold(t, "Proposal") {
		s.Title = strings.TrimSpace(strings.TrimPrefix(t, "Change:"))
	}
	return s
}
