package source

import (
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/git-ralph/git-ralph/internal/plan"
	"github.com/git-ralph/git-ralph/internal/tasklist"
)

// planKind is a markdown plan (docs/TASKS.md, "The kinds"): ralphex's docs/plans/*.md, a fix_plan.md, any
// markdown file of checkboxes, named by its path, or by its name when it is in a plans
// directory (ralphex's docs/plans, and ralph.plansDir). Its run is named after the file.
// A plan in a plans directory moves to its completed/ when its run completes, as ralphex
// moves it (unless ralph.movePlan is false), and a plan that moves itself there is
// followed.
type planKind struct{}

const planID = "plan"

// plansDir is where ralphex keeps its plans (its plans_dir default).
const plansDir = "docs/plans"

func (planKind) About() About {
	return About{ID: planID, Noun: "plan", One: "a markdown plan", Many: "plans", Make: "a markdown plan (docs/plans/<name>.md, or give its path)"}
}

// Claim: the path of a .md file, or the name of a plan in a plans directory (the file's
// name without .md, looked up among the files listed there).
func (planKind) Claim(r Repo, arg string, explicit bool) (Match, error) {
	if strings.ContainsAny(arg, `/\`) || strings.ToLower(filepath.Ext(arg)) == ".md" {
		m, err := fileRef(r, planID, ".md", arg)
		m.Ref.StoryLevel = r.StoryLevel
		return m, err
	}
	for _, dir := range planDirs(r) {
		if slices.Contains(planFiles(r, dir), arg+".md") {
			return Match{Ref: Ref{Kind: planID, Arg: dir + "/" + arg + ".md", StoryLevel: r.StoryLevel}, Rank: Exact}, nil
		}
	}
	return Match{}, nil
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

// List: the plans of the plans directories, their completed/ left out.
func (k planKind) List(r Repo, only []string) ([]*Source, error) {
	var out []*Source
	for _, dir := range planDirs(r) {
		for _, f := range planFiles(r, dir) {
			rel := dir + "/" + f
			if only != nil && !slices.Contains(only, rel) {
				continue
			}
			if s, err := k.Open(r, Ref{Kind: planID, Arg: rel}); err == nil {
				out = append(out, s) // a plan that cannot be read (a symlink) is no plan
			}
		}
	}
	return out, nil
}

func (planKind) AtCommit(_ Repo, ref Ref, read func(rel string, doc bool) ([]byte, error)) (*Source, error) {
	data, err := read(ref.Arg, false)
	if err != nil {
		return nil, err
	}
	s := &Source{Kind: planKind{}, Ref: ref, Name: baseName(ref.Arg), TasksRel: ref.Arg, HasTasks: data != nil, Tasks: plan.Parse(data, ref.StoryLevel)}
	s.Why, s.Title = firstParagraph(string(data)), firstHeading(string(data))
	return s, nil
}

// Moved: where git saw the plan go, else its directory's completed/ (where a ralphex
// plan's last task moves it).
func (planKind) Moved(r Repo, s *Source, to string) (Ref, bool) {
	ref := s.Ref
	if to != "" && strings.HasSuffix(strings.ToLower(to), ".md") {
		ref.Arg = to
		return ref, true
	}
	done := completedPath(s.TasksRel)
	if slices.Contains(planFiles(r, filepath.ToSlash(filepath.Dir(done))), filepath.Base(done)) {
		ref.Arg = done
		return ref, true
	}
	return Ref{}, false
}

// gitFalse reports whether v is one of git's spellings of false (git config --type=bool):
// no, off, false, 0, any case.
func gitFalse(v string) bool {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "false", "no", "off", "0":
		return true
	}
	return false
}

// Archive: a plan of a plans directory goes to its completed/ (ralphex's rule, and its
// move_plan_on_completion's: ralph.movePlan=false leaves it), unless a plan of that name
// is there already. A plan anywhere else (a fix_plan.md) stays where it is.
func (planKind) Archive(r Repo, s *Source) (string, bool) {
	if gitFalse(r.config("ralph.movePlan")) || !slices.Contains(planDirs(r), s.RelDir) {
		return "", false
	}
	to := completedPath(s.TasksRel)
	if _, err := os.Lstat(filepath.Join(r.Root, filepath.FromSlash(to))); err == nil {
		return "", false
	}
	return to, true
}

// completedPath is where ralphex puts a completed plan: <its directory>/completed/<name>.
func completedPath(rel string) string {
	return filepath.ToSlash(filepath.Join(filepath.Dir(rel), "completed", filepath.Base(rel)))
}

// planDirs are the plans directories: ralphex's docs/plans, and ralph.plansDir (relative
// to the top level) when it is set and inside the repository.
func planDirs(r Repo) []string {
	dirs := []string{plansDir}
	if d := r.config("ralph.plansDir"); d != "" {
		d = filepath.ToSlash(filepath.Clean(filepath.FromSlash(d)))
		if !filepath.IsAbs(d) && d != ".." && !strings.HasPrefix(d, "../") && !slices.Contains(dirs, d) {
			dirs = append(dirs, d)
		}
	}
	return dirs
}

// planFiles are the names of the .md files in dir (relative to the top level), sorted;
// none when it is not a directory of the repository.
func planFiles(r Repo, dir string) []string {
	entries, err := os.ReadDir(filepath.Join(r.Root, filepath.FromSlash(dir)))
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range entries {
		if e.Type().IsRegular() && strings.EqualFold(filepath.Ext(e.Name()), ".md") && !strings.HasPrefix(e.Name(), ".") {
			out = append(out, e.Name())
		}
	}
	return out
}
