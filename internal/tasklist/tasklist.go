// Package tasklist holds what every task source git-ralph runs is made of: tasks
// (checkbox lines), stories (the sections the loop runs one at a time) and the rules
// they share, whatever file they come from: story ids from headings, slugs, unique ids,
// ATX headings and fenced code blocks.
//
// It is a leaf: it reads no file and runs nothing; the sources (openspec, speckit,
// plan, prd) parse their files into these types.
package tasklist

import (
	"slices"
	"strconv"
	"strings"
)

// Task is one checkbox line (or, for prd.json, one acceptance criterion).
type Task struct {
	ID   string // the source's task id ("1.2", "T012"), "" if none
	Text string // description without the id, trimmed
	Done bool   // the source's own rule: x or X in the box, or passes in prd.json
	Line int    // 1-based line in the tracked file; 0 when the source has no lines
	// Box is what the box holds when it is neither empty nor x/X ("~", "-"): such a task
	// is open (OpenSpec counts it so) and the prompt shows it as written. "" otherwise.
	Box string
	// Indent is the width of the white space before the list marker (a tab counts 4):
	// the prompt nests a sub-task under the task above it.
	Indent int
	// Heading is the text of the deepest heading below the story's own one that the task
	// sits under ("Task 0.1: Parse the flags"), "" when there is none: it gives the
	// task's sub-bullets their meaning in the prompt.
	Heading string
	// Skipped is why a task that is ticked was not done: the agent could not do it here
	// and said so in the form ralphex uses, "[x] … (skipped - not automatable: reason)"
	// (SkipNote). "" for a task that is open or was done.
	Skipped string
	// Rest is what continues the task below its checkbox line, as written (wrapped text,
	// nested bullets, a code block under it; Continue), "" when nothing does. End is the
	// last line it takes (Line when nothing continues it; 0 when the source has no lines).
	Rest string
	End  int
}

// Story is one unit of the loop: a section of the tracked file (or a prd.json entry)
// with at least one task.
type Story struct {
	ID    string // valid in a ref name and in "checkpoint: <id>"; unique in the source
	Title string
	Line  int // 1-based line of the heading; 0 when there is none
	// End is the last line of the story's section: the line before the next heading that
	// ends it (or the end of the file), blank lines left out; 0 when the source has no
	// lines. A prd.json entry's lines are those its JSON object spans.
	End   int
	Tasks []Task
	// Raw is the story as the tracked file writes it when that is not a run of whole
	// lines (a prd.json entry: its JSON object); "" otherwise.
	Raw string
	// Description is what the source says of the story beyond its title (a prd.json
	// entry's description), "" when it says nothing.
	Description string
	// LegacyID is the id a run started before 2026-11-26 gave the story, when it differs
	// from ID (a long title's slug was then cut mid-word); see KeepIDs.
	LegacyID string
}

// Counts returns the number of done tasks and of all tasks in the story.
func (s Story) Counts() (done, total int) { return count(s.Tasks) }

// Complete reports whether every task of the story is done.
func (s Story) Complete() bool {
	done, total := s.Counts()
	return done == total
}

// OpenTasks returns the tasks of the story that are not done, in file order.
func (s Story) OpenTasks() []Task {
	var open []Task
	for _, t := range s.Tasks {
		if !t.Done {
			open = append(open, t)
		}
	}
	return open
}

// Tasks is a parsed tracked file: its stories, in the order the loop runs them.
type Tasks struct {
	Stories []Story

	// Done and Total are the file's own count, taken by the source's rule whatever the
	// stories hold (for OpenSpec, line by line as the CLI counts).
	Done, Total int
}

// Counts returns the done and total task counts of the file.
func (t Tasks) Counts() (done, total int) { return t.Done, t.Total }

// OpenOutsideStories returns how many open tasks the file counts that no story holds.
// A parser puts every task it counts in a story, so it is 0; the loop checks it all the
// same before it calls a run complete.
func (t Tasks) OpenOutsideStories() int {
	open := t.Total - t.Done
	for _, s := range t.Stories {
		open -= len(s.OpenTasks())
	}
	return open
}

// KeepIDs gives back their old ids to the stories whose LegacyID is among known (the
// story ids a run recorded) while their new ID is not: a run started before slugs were
// cut at word ends resumes under the ids its record, refs and checkpoints carry.
func (t *Tasks) KeepIDs(known []string) {
	has := map[string]bool{}
	for _, id := range known {
		has[id] = true
	}
	for i, s := range t.Stories {
		if s.LegacyID != "" && has[s.LegacyID] && !has[s.ID] {
			t.Stories[i].ID, t.Stories[i].LegacyID = s.LegacyID, ""
		}
	}
}

// NextStory returns the first incomplete story in run order.
func (t Tasks) NextStory() (Story, bool) {
	for _, s := range t.Stories {
		if !s.Complete() {
			return s, true
		}
	}
	return Story{}, false
}

// Story returns the story whose id is id.
func (t Tasks) Story(id string) (Story, bool) {
	for _, s := range t.Stories {
		if s.ID == id {
			return s, true
		}
	}
	return Story{}, false
}

func count(tasks []Task) (done, total int) {
	for _, t := range tasks {
		if t.Done {
			done++
		}
	}
	return done, len(tasks)
}

// IsJSSpace reports whether r is in JavaScript's \s class (WhiteSpace and LineTerminator):
// OpenSpec's CLI is JavaScript, and its parse is the one ids must agree with.
func IsJSSpace(r rune) bool {
	switch r {
	case '\t', '\n', '\v', '\f', '\r', ' ', '\u00a0', '\u1680', '\u2028', '\u2029', '\u202f', '\u205f', '\u3000', '\ufeff':
		return true
	}
	return r >= '\u2000' && r <= '\u200a'
}

// Trim is JavaScript's String.prototype.trim.
func Trim(s string) string { return strings.TrimFunc(s, IsJSSpace) }

// maxNamed is how many open tasks a failure reason names.
const maxNamed = 5

// OpenList says which of tasks are open, for a failure reason: how many, and the ids
// (or line numbers) of at most the first five, so that a story of 32 open tasks does not
// print 32 ids in every hint. "" when none is open.
func OpenList(tasks []Task) string {
	var names []string
	n := 0
	for _, t := range tasks {
		if t.Done {
			continue
		}
		n++
		name := t.ID
		if name == "" && t.Line > 0 {
			name = "line " + strconv.Itoa(t.Line)
		}
		if name == "" {
			name = strconv.Quote(t.Text)
		}
		if len(names) < maxNamed && !slices.Contains(names, name) {
			names = append(names, name)
		}
	}
	switch {
	case n == 0:
		return ""
	case n == 1:
		return "1 task (" + names[0] + ") is"
	case n <= maxNamed:
		return strconv.Itoa(n) + " tasks (" + strings.Join(names, ", ") + ") are"
	}
	return strconv.Itoa(n) + " tasks (" + strings.Join(names, ", ") + " and " + strconv.Itoa(n-len(names)) + " more) are"
}

// IndentOf is the width of the white space that starts line, a tab counting 4.
func IndentOf(line string) int {
	w := 0
	for _, c := range line {
		switch c {
		case ' ':
			w++
		case '\t':
			w += 4
		default:
			return w
		}
	}
	return w
}
