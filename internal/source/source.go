// Package source is what the loop runs: a task list of one of the kinds docs/TASKS.md, "The kinds" names
// (an OpenSpec change, a spec-kit feature, a markdown plan, a prd.json), read into the
// same stories and tasks, with what the prompt shows beside them.
//
// Each kind is one type behind the Kind interface (openspec.go, speckit.go, plan.go,
// prd.go), kept in a list (Kinds; Builtin is the list of those that need nothing from
// outside, and the CLI adds the others, built with what they need) as internal/agents
// lists the agent drivers. What an argument of `git ralph start` means is said in one
// place, Kinds.Resolve (resolve.go): a run's name or recorded path, a "<kind>:" prefix,
// or the best of every kind's Claim, with the refusals. The loop, finish, status,
// report, worktree and dispatch code see only a *Source and never ask which kind it is.
//
// A run records its source (run.go: Record, Trailers: a Ref) and is given it back from
// that record (OpenRun) or, on a runner without one, from the trailers of its "initial
// state" commit (FromTrailers), which the caller reads from git.
//
// It reads files under the repository's top level, through repofile, and nothing else:
// it runs neither git nor an agent, and talks to no network. Each kind's parser is its
// own leaf package (openspec, speckit, plan, prd); of git-ralph's own packages it imports
// only those, what they share (tasklist, repofile) and internal/run (the record), as
// TestParsersAreLeaves holds.
package source

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/git-ralph/git-ralph/internal/openspec"
	"github.com/git-ralph/git-ralph/internal/repofile"
	"github.com/git-ralph/git-ralph/internal/tasklist"
)

// Source is one task list the loop can run. Its kind's Open makes it (New), and fills
// in what the prompt and the messages show of it.
type Source struct {
	Kind      Kind   // what it is: messages name it by Kind.About().Noun
	Ref       Ref    // what reopens it (Open), and what a run of it records
	Name      string // the run name: the branch is ralph/<Name>
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

	// What messages say of it, in its kind's words.
	Where string // after the run name in status: "openspec/changes/x", "plan docs/plans/x.md"
	// NoTask is the hint for a tracked file that holds no task (a story without one
	// would be called done without any work); "" when a source of this kind may hold
	// none.
	NoTask string
	Rename string // the hint for a run name that cannot name a branch
	NoWhy  string // what a pull request says when Why is "": "proposal.md has no \"Why\" section."

	root  string // the top level the files are read under
	parse func([]byte) (tasklist.Tasks, error)
	keep  []string
	data  []byte // the tracked file as Reload (or WithTasks) read it last
}

// New is a source of kind k named by ref, whose tracked file is tasksRel (relative to
// root, the top level it is read under) as parse reads it: what a kind's Open builds on.
// parse's error is a file the agent left in a state this source cannot read (a
// prd.json's changed ids): an attempt that leaves it so fails, with that reason. The
// tasks are read by Reload.
func New(k Kind, ref Ref, root, tasksRel string, parse func(data []byte) (tasklist.Tasks, error)) *Source {
	return &Source{Kind: k, Ref: ref, root: root, TasksRel: tasksRel, TasksPath: filepath.Join(root, filepath.FromSlash(tasksRel)), parse: parse}
}

// Doc is a document of the source.
type Doc struct {
	Title   string // "Proposal", "Design", "Plan", "Spec", "Research"…
	Path    string // relative to the top level; a directory ends in "/"
	Content string // the content to inline, "" to name the document only
	// Tracked is set for the tracked file itself (a plan is its own document): its
	// Content is read again with it, as it stands now.
	Tracked bool
}

// Reload re-reads the tracked file: the agent ticks boxes as it works. For a file the
// source can no longer read (a prd.json that is not valid JSON, or whose story ids
// changed) it returns a *BrokenError.
func (s *Source) Reload() error {
	data, ok, err := repofile.Read(s.root, s.TasksPath) // a regular file inside the repository only
	if err != nil {
		return err
	}
	if !ok {
		s.HasTasks, s.Tasks = false, tasklist.Tasks{}
		return nil
	}
	if s.HasTasks && s.data != nil && bytes.Equal(data, s.data) {
		return nil // as parsed last (and kept by KeepIDs since): the loop's look after a checkpoint
	}
	t, err := s.parse(data)
	if err != nil {
		return &BrokenError{File: s.TasksRel, Reason: err.Error()}
	}
	s.HasTasks, s.Tasks, s.data = true, t, data
	s.Tasks.KeepIDs(s.keep)
	for i := range s.Docs {
		if s.Docs[i].Tracked {
			s.Docs[i].Content = string(data)
		}
	}
	return nil
}

// MaxSection is the size above which a story's section is named by its line range
// instead of shown whole (the prompt's limit for a document, 24 KiB).
const MaxSection = 24 << 10

// Section is a story's own part of the tracked file, as it stands.
type Section struct {
	Path        string // the tracked file, relative to the top level
	First, Last int    // its lines, 1-based; 0 when the tracked file has none to name
	Text        string // as written; "" when Cut
	Size        int    // bytes
	// Cut is set for a section over MaxSection: the agent reads it in the file, and Open
	// lists its open tasks, each whole (its checkbox line and what continues it).
	Cut  bool
	Open []string
}

// Section is story's own part of the tracked file as Reload read it last: for a markdown
// file its lines from its heading to the line before the next heading that ends it (the
// preamble's from the top of the file), for a prd.json its JSON object, indented.
func (s *Source) Section(story tasklist.Story) Section {
	sec := Section{Path: s.TasksRel, First: story.Line, Last: story.End}
	if story.Raw != "" {
		var b bytes.Buffer
		if json.Indent(&b, []byte(story.Raw), "", "  ") == nil {
			sec.Text = b.String()
		} else {
			sec.Text = story.Raw
		}
	} else if story.End > 0 {
		sec.First = max(story.Line, 1)
		sec.Text = strings.Join(lines(s.data, sec.First, sec.Last), "\n")
	}
	sec.Size = len(sec.Text)
	if sec.Size <= MaxSection {
		return sec
	}
	sec.Cut, sec.Text = true, ""
	for _, t := range story.OpenTasks() {
		whole := t.Text
		if t.Line > 0 {
			whole = strings.Join(lines(s.data, t.Line, t.Line), "")
		}
		if t.Rest != "" {
			whole += "\n" + t.Rest
		}
		sec.Open = append(sec.Open, whole)
	}
	return sec
}

// lines are the lines first to last (1-based, inclusive) of data, without their "\r".
func lines(data []byte, first, last int) []string {
	var out []string
	n := 0
	for line := range strings.SplitSeq(strings.TrimPrefix(string(data), "\ufeff"), "\n") {
		n++
		if n > last {
			break
		}
		if n >= first {
			out = append(out, strings.TrimSuffix(line, "\r"))
		}
	}
	return out
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

// WithTasks is s with its tasks read from data (the tracked file as a commit has it),
// by s's own parser; the ids s keeps are kept.
func (s *Source) WithTasks(data []byte) (*Source, error) {
	t, err := s.parse(data)
	if err != nil {
		return nil, err
	}
	c := *s
	c.HasTasks, c.Tasks, c.data = true, t, data
	c.Tasks.KeepIDs(s.keep)
	return &c, nil
}

// Runnable returns an error that says why the source cannot be run: its tracked file is
// missing, or it holds no task (unless its kind allows that: NoTask is "").
func (s *Source) Runnable() error {
	if !s.HasTasks {
		return &Error{Msg: fmt.Sprintf("%s %q has no %s", s.Kind.About().Noun, s.Name, filepath.Base(s.TasksRel)),
			Hint: "write the stories into " + s.TasksRel + " as '## 1. Title' headings with '- [ ] 1.1 …' tasks"}
	}
	if s.NoTask == "" || s.Total > 0 {
		return nil
	}
	return &Error{Msg: fmt.Sprintf("%s has no task", s.TasksRel), Hint: s.NoTask}
}

// Unfinished says why story, which the agent said is complete, is not: its open tasks
// in the tracked file, or what its kind says (StillOpen). "" when it is complete.
func (s *Source) Unfinished(story tasklist.Story) string {
	open := story.OpenTasks()
	if len(open) == 0 {
		return ""
	}
	if so, ok := s.Kind.(StillOpen); ok {
		return so.StillOpen(s, story)
	}
	return tasklist.OpenList(open) + " still open in " + s.TasksRel
}

// FromInitial recomputes Title and Why from the source's documents as read returns them
// (the run's initial state commit): a pull request carries the user's words, never what
// the agent made of them in the work tree. read returns nil for a missing file; doc is
// Kind.AtCommit's.
func (s *Source) FromInitial(read func(rel string, doc bool) []byte) {
	s.Title, s.Why = "", ""
	c, err := s.Kind.AtCommit(Repo{Root: s.root}, s.Ref, func(rel string, doc bool) ([]byte, error) { return read(rel, doc), nil })
	if err == nil {
		s.Title, s.Why = c.Title, c.Why
	}
}
