// Package source is what the loop runs: a task list of one of the kinds SPEC §2b names
// (an OpenSpec change, a spec-kit feature, a markdown plan, a prd.json), resolved from
// the argument of `git ralph start` and read into the same stories and tasks, with what
// the prompt shows beside them. The loop, finish, status, report, worktree and dispatch
// code see only a *Source and never ask which kind it is, except to pass it on.
//
// A run records its source (run.go: Record, Trailers) and is given it back from that
// record (OpenRun) or, on a runner without one, from the trailers of its "initial state"
// commit (FromTrailers), which the caller reads from git.
//
// It reads files under the repository's top level and nothing else: it runs neither git
// nor an agent. Each kind's parser is its own leaf package (openspec, speckit, plan, prd);
// of git-ralph's own packages it imports only those, what they share (tasklist,
// repofile) and internal/run (the record), as TestParsersAreLeaves holds.
package source

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/git-ralph/git-ralph/internal/openspec"
	"github.com/git-ralph/git-ralph/internal/plan"
	"github.com/git-ralph/git-ralph/internal/prd"
	"github.com/git-ralph/git-ralph/internal/repofile"
	"github.com/git-ralph/git-ralph/internal/speckit"
	"github.com/git-ralph/git-ralph/internal/tasklist"
)

// Kind names a source kind; it is what RALPH_SOURCE carries and the run record keeps.
type Kind string

// The kinds of task list git-ralph runs.
const (
	OpenSpec Kind = "openspec"
	SpecKit  Kind = "speckit"
	Plan     Kind = "plan"
	PRD      Kind = "prd"
)

// Noun is how messages and the prompt name a source of kind k.
func (k Kind) Noun() string {
	switch k {
	case SpecKit:
		return "spec-kit feature"
	case Plan:
		return "plan"
	case PRD:
		return "prd"
	}
	return "change"
}

// Source is one task list the loop can run.
type Source struct {
	Kind Kind
	Name string // the run name: the branch is ralph/<Name>
	// Arg reopens the source (Open): the change or feature name, or the tracked file's
	// path relative to the top level for a plan or a prd.json.
	Arg       string
	RelDir    string // the directory of its documents, relative to the top level ("." at the top)
	TasksPath string // absolute path of the tracked file
	TasksRel  string // TasksPath relative to the top level, slash-separated: RALPH_TASKS_FILE
	Warning   string // a note on how the tracked file was chosen, "" when there is none
	HasTasks  bool   // the tracked file exists
	tasklist.Tasks

	// What the prompt shows beside the tasks.
	Docs  []Doc           // the source's documents, in the order the prompt names them
	Specs []openspec.Spec // an OpenSpec change's delta specs
	Why   string          // a few lines on why the work is done (a PR body's opening), "" if none
	Title string          // a title for the whole work (a pull request's), "" if none
	// Notes are things the user and the agent should know before a story starts (a
	// spec-kit checklist with open items); the prompt and the dry run show them.
	Notes []string
	// Learnings is the source's own learnings file relative to the top level
	// (progress.txt beside a prd.json), "" when the run's learnings file is git-ralph's.
	Learnings string
	// DoneMark is how the agent marks a task done: "[x]", spec-kit's "[X]", or "" for a
	// prd.json (passes: true).
	DoneMark string

	root  string // the top level the files are read under
	parse func([]byte) (tasklist.Tasks, error)
	ids   func([]byte) []string // prd: the story ids of the file parse just read
	want  []string
	keep  []string
}

// Doc is a document of the source.
type Doc struct {
	Title   string // "Proposal", "Design", "Plan", "Spec", "Research"…
	Path    string // relative to the top level; a directory ends in "/"
	Content string // the content to inline, "" to name the document only
}

// Reload re-reads the tracked file: the agent ticks boxes as it works. For a prd.json
// that is no longer valid JSON, or whose story ids changed, it returns a *BrokenError.
func (s *Source) Reload() error {
	data, ok, err := repofile.Read(s.root, s.TasksPath) // a regular file inside the repository only
	if err != nil {
		return err
	}
	if !ok {
		s.HasTasks, s.Tasks = false, tasklist.Tasks{}
		return nil
	}
	t, err := s.parse(data)
	if err != nil {
		return &BrokenError{File: s.TasksRel, Reason: err.Error()}
	}
	if s.ids != nil {
		if r := prd.Check(s.want, s.ids(data)); r != "" {
			return &BrokenError{File: s.TasksRel, Reason: r}
		}
	}
	s.HasTasks, s.Tasks = true, t
	s.Tasks.KeepIDs(s.keep)
	if s.Kind == Plan { // the plan is its own document: shown as it stands now
		s.Docs = []Doc{{Title: "Plan", Path: s.TasksRel, Content: string(data)}}
	}
	return nil
}

// KeepIDs makes stories keep the ids a run recorded (tasklist.Tasks.KeepIDs), now and
// at every Reload.
func (s *Source) KeepIDs(known []string) {
	s.keep = known
	s.Tasks.KeepIDs(known)
}

// BrokenError is a tracked file git-ralph can no longer read as it did at the start of
// the attempt: an attempt that leaves it so failed, with Reason passed on.
type BrokenError struct {
	File, Reason string
}

func (e *BrokenError) Error() string { return e.File + ": " + e.Reason }

// Error is a source that cannot be run or found; Hint says what to do.
type Error struct {
	Msg, Hint string
}

func (e *Error) Error() string { return e.Msg }

// Options are how a source is read.
type Options struct {
	// StoryLevel 3 makes every "###" section of a plan a story (--story-level,
	// ralph.storyLevel); 0 or 2: SPEC §2b's default.
	StoryLevel int
}

// Open reads the source of kind k named by arg (a Source's Arg) in the repository at
// root, as a run recorded it. An empty kind is an OpenSpec change (records written
// before 2026-11-26).
func Open(root string, k Kind, arg string, o Options) (*Source, error) {
	switch k {
	case "", OpenSpec:
		return openOpenSpec(root, arg)
	case SpecKit:
		return openSpecKit(root, arg)
	case Plan, PRD:
		rel := filepath.ToSlash(filepath.Clean(filepath.FromSlash(arg)))
		if filepath.IsAbs(arg) || rel == ".." || strings.HasPrefix(rel, "../") {
			return nil, &Error{Msg: fmt.Sprintf("%s %q is outside the repository", k.Noun(), arg)}
		}
		return openFile(root, k, rel, o)
	}
	return nil, &Error{Msg: fmt.Sprintf("unknown task source %q", k), Hint: "this run was started by a newer git-ralph"}
}

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
	if ch.MoreSpecs {
		s.Notes = append(s.Notes, fmt.Sprintf("%s/specs holds more than %d delta specs: the first %d are shown here, read the others there", ch.RelDir, repofile.MaxDocs, repofile.MaxDocs))
	}
	// OpenSpec's own rule for a change's title: the proposal's first "# " heading
	// without the template's "Change: " prefix; "# Proposal" is no title.
	if t := firstHeading(ch.Proposal); !strings.EqualFold(t, "Proposal") {
		s.Title = strings.TrimSpace(strings.TrimPrefix(t, "Change:"))
	}
	return s
}

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

// openFile reads a plan or a prd.json at rel, a clean relative path.
func openFile(root string, k Kind, rel string, o Options) (*Source, error) {
	path := filepath.Join(root, filepath.FromSlash(rel))
	info, err := os.Lstat(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, &Error{Msg: fmt.Sprintf("%s: no such file", rel), Hint: "give the path of a " + map[Kind]string{Plan: ".md plan", PRD: "prd.json"}[k] + " in this repository"}
		}
		return nil, err
	}
	if !info.Mode().IsRegular() {
		return nil, &Error{Msg: fmt.Sprintf("%s is not a regular file", rel),
			Hint: "git-ralph runs a tracked file that is in the repository itself, not a symlink or a directory"}
	}
	dir := filepath.ToSlash(filepath.Dir(rel))
	s := &Source{Kind: k, Arg: rel, RelDir: dir, TasksPath: path, TasksRel: rel, HasTasks: true, root: root}
	data, ok, err := repofile.Read(root, path)
	if err != nil {
		return nil, &Error{Msg: err.Error(), Hint: "git-ralph runs a file that is in the repository itself"}
	}
	if !ok {
		return nil, &Error{Msg: fmt.Sprintf("%s: no such file", rel), Hint: "give the path of a file in this repository"}
	}
	base := strings.TrimSuffix(filepath.Base(rel), filepath.Ext(rel))
	switch k {
	case Plan:
		level := o.StoryLevel
		s.Name, s.DoneMark = base, "[x]"
		s.parse = func(b []byte) (tasklist.Tasks, error) { return plan.Parse(b, level), nil }
		s.Why = firstParagraph(string(data))
		s.Title = firstHeading(string(data))
	case PRD:
		p, err := prd.Parse(data)
		if err != nil {
			return nil, &Error{Msg: fmt.Sprintf("%s: %v", rel, err), Hint: "fix the file (snarktank/ralph's prd.json: {\"branchName\", \"userStories\": [{\"id\", \"title\", \"acceptanceCriteria\", \"priority\", \"passes\"}]})"}
		}
		s.Name = prdName(p.BranchName, dir, base)
		s.Why, s.Title = p.Description, p.Project
		s.want = p.IDs
		var last []string // the ids of the file parse read last: it is decoded once
		branch := p.BranchName
		s.parse = func(b []byte) (tasklist.Tasks, error) {
			p, err := prd.Parse(b)
			if err != nil {
				return tasklist.Tasks{}, err
			}
			if p.BranchName != branch { // the run is named after it
				return tasklist.Tasks{}, fmt.Errorf("its branchName changed from %q to %q", branch, p.BranchName)
			}
			last = p.IDs
			return p.Tasks, nil
		}
		s.ids = func([]byte) []string { return last }
		progress := "progress.txt"
		if dir != "." {
			progress = dir + "/progress.txt"
		}
		if _, ok, err := repofile.ReadHead(root, filepath.Join(root, filepath.FromSlash(progress))); err == nil && ok {
			s.Learnings = progress // read into every prompt: a regular file inside the repository only
		}
	}
	return s, s.Reload()
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

// firstHeading is the text of a markdown document's first "# " heading (only the
// first: a document whose first one is empty has none), "".
func firstHeading(doc string) string {
	for line := range strings.SplitSeq(doc, "\n") {
		if t, ok := strings.CutPrefix(strings.TrimRight(line, " \t\r"), "# "); ok {
			return strings.TrimSpace(t)
		}
	}
	return ""
}

// WithTasks is s with its tasks read from data (the tracked file as a commit has it),
// by s's own parser; the ids s keeps are kept.
func (s *Source) WithTasks(data []byte) (*Source, error) {
	t, err := s.parse(data)
	if err != nil {
		return nil, err
	}
	c := *s
	c.HasTasks, c.Tasks = true, t
	c.Tasks.KeepIDs(s.keep)
	return &c, nil
}

// firstParagraph is the first paragraph of prose of a markdown document (not a heading,
// a front matter, a list or a bold label line), for a PR body's opening.
func firstParagraph(doc string) string {
	var para []string
	front := false
	for i, line := range strings.Split(doc, "\n") {
		t := strings.TrimSpace(line)
		if i == 0 && t == "---" {
			front = true
			continue
		}
		if front {
			front = t != "---"
			continue
		}
		if t == "" || strings.HasPrefix(t, "#") || strings.HasPrefix(t, "**") || strings.HasPrefix(t, "- ") ||
			strings.HasPrefix(t, "* ") || strings.HasPrefix(t, ">") || strings.HasPrefix(t, "<!--") || strings.HasPrefix(t, "```") {
			if len(para) > 0 {
				break
			}
			continue
		}
		para = append(para, t)
	}
	return strings.Join(para, " ")
}

// Runnable returns an error that says why the source cannot be run: its tracked file is
// missing, or (for a spec-kit feature, a plan or a prd.json) it holds no task.
func (s *Source) Runnable() error {
	if !s.HasTasks {
		return &Error{Msg: fmt.Sprintf("%s %q has no %s", s.Kind.Noun(), s.Name, filepath.Base(s.TasksRel)),
			Hint: "write the stories into " + s.TasksRel + " as '## 1. Title' headings with '- [ ] 1.1 …' tasks"}
	}
	if s.Kind == OpenSpec || s.Total > 0 || len(s.Stories) > 0 {
		return nil
	}
	hint := map[Kind]string{
		SpecKit: "generate the tasks with spec-kit's /speckit.tasks; a task is a '- [ ] T001 …' line outside code blocks",
		Plan:    "a task is a '- [ ] …' line outside code blocks; ralphex plans hold them under '### Task N: …' headings",
		PRD:     "add user stories: {\"id\": \"US-001\", \"title\": …, \"acceptanceCriteria\": […], \"priority\": 1, \"passes\": false}",
	}[s.Kind]
	return &Error{Msg: fmt.Sprintf("%s has no task", s.TasksRel), Hint: hint}
}

// ParseAs reads data, a tracked file as a commit has it, as a source of kind k does
// (storyLevel for a plan), without the file: for a report built from git alone.
func ParseAs(k Kind, data []byte, storyLevel int) (tasklist.Tasks, error) {
	switch k {
	case SpecKit:
		return speckit.ParseTasks(data), nil
	case Plan:
		return plan.Parse(data, storyLevel), nil
	case PRD:
		p, err := prd.Parse(data)
		if err != nil {
			return tasklist.Tasks{}, err
		}
		return p.Tasks, nil
	}
	return openspec.ParseTasks(data), nil
}

// TrackedPath is the tracked file of a run named name of kind k, relative to the top
// level (arg: a plan's or a prd.json's path), for a report built from git alone.
func TrackedPath(k Kind, name, arg string) string {
	switch k {
	case SpecKit:
		return "specs/" + name + "/tasks.md"
	case Plan, PRD:
		return arg
	}
	return "openspec/changes/" + name + "/tasks.md"
}

// FromInitial recomputes Title and Why from the source's documents as read returns them
// (the run's initial state commit): a pull request carries the user's words, never what
// the agent made of them in the work tree. read returns nil for a missing file.
func (s *Source) FromInitial(read func(rel string) []byte) {
	switch s.Kind {
	case SpecKit:
		spec := string(read(s.RelDir + "/spec.md"))
		s.Why = firstParagraph(spec)
		s.Title = strings.TrimSpace(strings.TrimPrefix(firstHeading(spec), "Feature Specification:"))
	case Plan:
		doc := string(read(s.TasksRel))
		s.Why, s.Title = firstParagraph(doc), firstHeading(doc)
	case PRD:
		s.Why, s.Title = "", ""
		if p, err := prd.Parse(read(s.TasksRel)); err == nil {
			s.Why, s.Title = p.Description, p.Project
		}
	default:
		proposal := string(read(s.RelDir + "/proposal.md"))
		s.Why, s.Title = openspec.Why(proposal), ""
		if t := firstHeading(proposal); !strings.EqualFold(t, "Proposal") {
			s.Title = strings.TrimSpace(strings.TrimPrefix(t, "Change:"))
		}
	}
}
