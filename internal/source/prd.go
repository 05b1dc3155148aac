package source

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/git-ralph/git-ralph/internal/prd"
	"github.com/git-ralph/git-ralph/internal/repofile"
	"github.com/git-ralph/git-ralph/internal/tasklist"
)

// prdKind is snarktank/ralph's prd.json (docs/TASKS.md, "The kinds"), named by its path: each user story is
// a story, done when its "passes" is true. Its run is named after its branchName.
type prdKind struct{}

const prdID = "prd"

func (prdKind) About() About {
	return About{ID: prdID, Noun: "prd", One: "a prd.json", Many: "prd.json files", Make: "a prd.json (give its path)"}
}

// Claim: the path of a .json file, or the run name of a prd.json that List lists (the
// name `list` shows it by).
func (k prdKind) Claim(r Repo, arg string, explicit bool) (Match, error) {
	if arg == "" || strings.ContainsAny(arg, `/\`) || strings.ToLower(filepath.Ext(arg)) == ".json" {
		return fileRef(r, prdID, ".json", arg)
	}
	srcs, err := k.List(r, nil)
	if err != nil {
		return Match{}, err
	}
	for _, s := range srcs {
		if s.Name == arg {
			return Match{Ref: s.Ref, Rank: Exact}, nil
		}
	}
	return Match{}, nil
}

func (k prdKind) Open(r Repo, ref Ref) (*Source, error) {
	rel, data, err := readFile(r, "prd", "prd.json", ref)
	var missing *Error
	if errors.As(err, &missing) && strings.HasSuffix(missing.Msg, ": no such file") {
		// snarktank's loop keeps it in scripts/ralph/: say so when it is there
		for _, at := range prdPlaces {
			if found := at + baseName(ref.Arg) + ".json"; found != ref.Arg && isFile(r, found) {
				missing.Hint = found + " is there: 'git ralph start " + found + "'"
			}
		}
	}
	if err != nil {
		return nil, err
	}
	p, err := prd.Parse(data)
	if err != nil {
		return nil, &Error{Msg: fmt.Sprintf("%s: %v", rel, err), Hint: "fix the file (snarktank/ralph's prd.json: {\"branchName\", \"userStories\": [{\"id\", \"title\", \"acceptanceCriteria\", \"priority\", \"passes\"}]})"}
	}
	dir := filepath.ToSlash(filepath.Dir(rel))
	want, branch := p.IDs, p.BranchName
	// Every attempt must leave the file valid JSON, with the same story ids (in any
	// order) and the same branchName (the run is named after it).
	s := New(k, Ref{Kind: prdID, Arg: rel}, r.Root, rel, func(b []byte) (tasklist.Tasks, error) {
		p, err := prd.Parse(b)
		if err != nil {
			return tasklist.Tasks{}, err
		}
		if p.BranchName != branch {
			return tasklist.Tasks{}, fmt.Errorf("its branchName changed from %q to %q", branch, p.BranchName)
		}
		if r := prd.Check(want, p.IDs); r != "" {
			return tasklist.Tasks{}, fmt.Errorf("%s", r)
		}
		return p.Tasks, nil
	})
	s.Name, s.RelDir, s.HasTasks = prdName(p.BranchName, dir, baseName(rel)), dir, true
	s.Why, s.Title = p.Description, p.Project
	s.Where = "prd " + rel
	s.NoWhy = s.TasksRel + " says nothing of why."
	s.NoTask = "add user stories: {\"id\": \"US-001\", \"title\": …, \"acceptanceCriteria\": […], \"priority\": 1, \"passes\": false}"
	s.Rename = "set its \"branchName\" to ralph/<a name made of letters, digits and dashes>"
	progress := "progress.txt"
	if dir != "." {
		progress = dir + "/progress.txt"
	}
	if _, ok, err := repofile.ReadHead(r.Root, filepath.Join(r.Root, filepath.FromSlash(progress))); err == nil && ok {
		s.Learnings = progress // read into every prompt: a regular file inside the repository only
	}
	return s, s.Reload()
}

// StillOpen: a story is done when its "passes" is true, whatever its criteria say.
func (prdKind) StillOpen(s *Source, story tasklist.Story) string {
	return fmt.Sprintf("story %s's \"passes\" is not true in %s", story.ID, s.TasksRel)
}

// prdPlaces are where a prd.json is kept: the top level, and snarktank's scripts/ralph/.
var prdPlaces = []string{"", "scripts/ralph/"}

// List: prd.json at the top level and in scripts/ralph/ (a file that does not read as a
// prd.json is left out).
func (k prdKind) List(r Repo, only []string) ([]*Source, error) {
	var out []*Source
	for _, at := range prdPlaces {
		rel := at + "prd.json"
		if only != nil && !slices.Contains(only, rel) || !isFile(r, rel) {
			continue
		}
		if s, err := k.Open(r, Ref{Kind: prdID, Arg: rel}); err == nil {
			out = append(out, s)
		}
	}
	return out, nil
}

// isFile reports whether rel (relative to the top level) is a regular file, looked up
// in its directory's listing: a name is never joined into a path before it is listed.
func isFile(r Repo, rel string) bool {
	dir, name := filepath.Split(filepath.FromSlash(rel))
	entries, err := os.ReadDir(filepath.Join(r.Root, dir))
	if err != nil {
		return false
	}
	for _, e := range entries {
		if e.Name() == name {
			return e.Type().IsRegular()
		}
	}
	return false
}

func (prdKind) AtCommit(_ Repo, ref Ref, read func(rel string, doc bool) ([]byte, error)) (*Source, error) {
	data, err := read(ref.Arg, false)
	if err != nil {
		return nil, err
	}
	s := &Source{Kind: prdKind{}, Ref: ref, TasksRel: ref.Arg, HasTasks: data != nil}
	if p, err := prd.Parse(data); err == nil {
		s.Tasks, s.Why, s.Title = p.Tasks, p.Description, p.Project
		s.Name = prdName(p.BranchName, filepath.ToSlash(filepath.Dir(ref.Arg)), baseName(ref.Arg))
	}
	return s, nil
}

// prdName is a prd's run name: its branchName without a leading "ralph/", else the name
// of the directory it is in (the file's own name at the top level). A "/" left in a
// branch name becomes "-": the run name is one path element.
func prdName(branch, dir, base string) string {
	if b := strings.TrimPrefix(strings.TrimSpace(branch), "ralph/"); b != "" {
		return strings.ReplaceAll(b, "/", "-")
	}
	if dir != "." {
		return filepath.Base(dir)
	}
	return base
}
