// Package plan reads markdown plans: ralphex's plans ("### Task N: …" sections, see
// docs/TASKS.md, "The kinds"), fix_plan.md checklists and any markdown file of checkbox tasks.
// It reads the file it is given and nothing else.
package plan

import (
	"regexp"
	"strings"
	"sync"

	"github.com/git-ralph/git-ralph/internal/tasklist"
)

// taskHeadingRE is ralphex's unit of work, "### Task N: title" or "### Iteration N: …";
// N starts with a digit ("2", "2.5", "2a"), the colon may be a dot or a dash or absent.
var taskHeadingRE = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^ {0,3}###[ \t]+(?:Task|Iteration)[ \t]+([0-9][0-9A-Za-z.]*?)(?:[ \t]*:[ \t]*|\.?[ \t]+(?:[-–—:][ \t]*)?|\.?[ \t]*\r?$)(.*?)[ \t]*\r?$`)
})

// HasTaskSections reports whether the plan uses ralphex's "### Task N" (or "### Iteration
// N") headings outside fenced code.
func HasTaskSections(data []byte) bool {
	var fences tasklist.Fences
	for line := range strings.SplitSeq(string(data), "\n") {
		if !fences.Skip(line) && taskHeadingRE().MatchString(line) {
			return true
		}
	}
	return false
}

// Parse reads a plan. storyLevel 3 makes every "##" and "###" section a story; otherwise
// a plan with ralphex's Task sections runs those sections (ParseTaskSections), and any
// other plan runs its "##" sections (the rule of docs/TASKS.md). Tasks are exact "[ ]", "[x]", "[X]"
// boxes outside fenced code.
func Parse(data []byte, storyLevel int) tasklist.Tasks {
	if storyLevel < 3 && HasTaskSections(data) {
		return ParseTaskSections(data)
	}
	t := tasklist.ParseMarkdown(data, tasklist.Rules{StoryLevel: storyLevel})
	// A Task section is a story of its own at level 3 too: its id is still N.
	lines := strings.Split(string(data), "\n")
	seen := map[string]bool{}
	for i, s := range t.Stories {
		if s.Line > 0 {
			if m := taskHeadingRE().FindStringSubmatch(lines[s.Line-1]); m != nil {
				t.Stories[i].ID = m[1]
				if m[2] != "" {
					t.Stories[i].Title = m[2]
				}
			}
		}
		t.Stories[i].ID = tasklist.UniqueID(t.Stories[i].ID, seen)
	}
	return t
}

// ParseTaskSections reads a ralphex plan: the stories are exactly its Task sections,
// each running to the next heading of level 3 or less, with id N; checkboxes outside
// them are not tasks (ralphex's own rule: they would only cause extra iterations).
func ParseTaskSections(data []byte) tasklist.Tasks {
	var t tasklist.Tasks
	seen := map[string]bool{}
	var cur *tasklist.Story
	sub := ""
	lines := strings.Split(strings.TrimPrefix(string(data), "\ufeff"), "\n")
	flush := func(next int) {
		if cur != nil && len(cur.Tasks) > 0 {
			tasklist.Close(cur, lines, next)
			t.Stories = append(t.Stories, *cur)
		}
		cur = nil
	}
	var fences tasklist.Fences
	for i, line := range lines {
		n := i + 1
		if fences.Skip(line) {
			continue
		}
		if m := taskHeadingRE().FindStringSubmatch(line); m != nil {
			flush(n)
			id, title := m[1], m[2]
			if title == "" {
				_, title = tasklist.HeadingLevel(line)
			}
			cur, sub = &tasklist.Story{ID: tasklist.UniqueID(id, seen), Title: title, Line: n}, ""
			continue
		}
		if lv, text := tasklist.HeadingLevel(line); lv > 0 {
			if lv <= 3 {
				flush(n)
			} else {
				sub = text
			}
			continue
		}
		if cur == nil {
			continue
		}
		if desc, done, ok := tasklist.ExactTask(line); ok {
			t.Total++
			if done {
				t.Done++
			}
			cur.Tasks = append(cur.Tasks, tasklist.Task{Text: desc, Done: done, Line: n, Heading: sub, Indent: tasklist.IndentOf(line)})
		}
	}
	flush(len(lines) + 1)
	return t
}
