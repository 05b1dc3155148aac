package plan

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/git-ralph/git-ralph/internal/tasklist"
)

type storyWant struct {
	id, title   string
	done, total int
}

func checkTasks(t *testing.T, got tasklist.Tasks, want []storyWant, done, total int, next string) {
	t.Helper()
	if d, n := got.Counts(); d != done || n != total {
		t.Errorf("counts = %d/%d; want %d/%d", d, n, done, total)
	}
	if len(got.Stories) != len(want) {
		var ids []string
		for _, s := range got.Stories {
			ids = append(ids, s.ID)
		}
		t.Fatalf("stories %v; want %d stories", ids, len(want))
	}
	for i, w := range want {
		s := got.Stories[i]
		d, n := s.Counts()
		if s.ID != w.id || s.Title != w.title || d != w.done || n != w.total {
			t.Errorf("story %d = %q %q %d/%d; want %q %q %d/%d", i, s.ID, s.Title, d, n, w.id, w.title, w.done, w.total)
		}
	}
	if got.OpenOutsideStories() != 0 {
		t.Errorf("%d open tasks outside every story", got.OpenOutsideStories())
	}
	s, ok := got.NextStory()
	if next == "" && ok || next != "" && s.ID != next {
		t.Errorf("next story = %q (%v); want %q", s.ID, ok, next)
	}
}

func fixture(t *testing.T, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// TestFixtures: the counting, story split and first story of every plan fixture, at
// the default story level and at level 3.
func TestFixtures(t *testing.T) {
	for _, tc := range []struct {
		file        string
		level       int
		stories     []storyWant
		done, total int
		next        string
	}{
		{"ralphex-long-lines.md", 0, []storyWant{
			{"1", "Fix CodexExecutor to pass prompt via stdin", 6, 7},
			{"2", "Fix codex-as-claude.sh to pipe prompt via stdin", 2, 4},
			{"3", "Fix gemini-as-claude.sh to pipe prompt via stdin", 0, 3},
			{"4", "Fix opencode wrapper scripts", 0, 3},
			{"5", "Verify and document", 0, 4},
		}, 8, 21, "1"},
		{"ralphex-long-lines.md", 3, []storyWant{
			{"1", "Fix CodexExecutor to pass prompt via stdin", 6, 7},
			{"2", "Fix codex-as-claude.sh to pipe prompt via stdin", 2, 4},
			{"3", "Fix gemini-as-claude.sh to pipe prompt via stdin", 0, 3},
			{"4", "Fix opencode wrapper scripts", 0, 3},
			{"5", "Verify and document", 0, 4},
		}, 8, 21, "1"},
		// "### 1. Add Config Fields" under "## Tasks": no "Task N" heading, so docs/TASKS.md's rule
		// gives one story; --story-level 3 gives one per "###".
		{"ralphex-numbered-under-tasks.md", 0, []storyWant{{"tasks", "Tasks", 38, 38}}, 38, 38, ""},
		{"ralphex-numbered-under-tasks.md", 3, []storyWant{
			{"1", "Add Config Fields", 6, 6},
			{"2", "Add Error Type", 5, 5},
			{"3", "Integrate in Claude Executor", 5, 5},
			{"4", "Integrate in Codex Executor", 5, 5},
			{"5", "Pass Patterns from Config to Executors", 3, 3},
			{"6", "Handle Error in Runner", 6, 6},
			{"7", "Documentation", 3, 3},
			{"8", "Final Validation", 5, 5},
		}, 38, 38, ""},
		{"ralphex-completed.md", 0, []storyWant{
			{"1", "Add completion detection and truncate-on-completed logic", 6, 6},
			{"2", "Verify acceptance criteria", 3, 3},
			{"3", "Update documentation", 2, 2},
		}, 11, 11, ""},
		// Eleven Task sections under one "## Implementation Steps", and a fenced sample
		// progress log holding a "#" heading.
		{"ralphex-e2e.md", 0, []storyWant{
			{"1", "Create comprehensive test fixture with all event types", 3, 3},
			{"2", "Add error event rendering tests", 2, 2},
			{"3", "Add warning event rendering tests", 2, 2},
			{"4", "Add signal event tests", 2, 2},
			{"5", "Add task boundary event tests", 2, 2},
			{"6", "Add iteration boundary event tests", 2, 2},
			{"7", "Add auto-scroll behavior tests", 3, 3},
			{"8", "Add plan parsing edge case tests", 3, 3},
			{"9", "Add SSE connection handling tests", 3, 3},
			{"10", "Verify all tests pass together", 3, 3},
			{"11", "Update documentation", 2, 2},
		}, 27, 27, ""},
		{"fix-plan.md", 0, []storyWant{
			{"high-priority", "High Priority", 1, 3},
			{"medium-priority", "Medium Priority", 0, 2},
			{"optional", "Optional", 0, 1},
			{"completed", "Completed", 2, 2},
		}, 3, 8, "high-priority"},
	} {
		t.Run(tc.file+"/"+string(rune('0'+tc.level)), func(t *testing.T) {
			checkTasks(t, Parse(fixture(t, tc.file), tc.level), tc.stories, tc.done, tc.total, tc.next)
		})
	}
}

// TestTaskSectionRules: the heading forms, boxes outside Task sections, fences, sections
// ended by a "###" that is not a Task, "####" sub-headings kept with the tasks.
func TestTaskSectionRules(t *testing.T) {
	data := []byte(`# Plan
- [ ] not a task: outside every Task section
## Implementation Steps
### Task 1: First
- [x] a
#### Files
- [ ] b
` + "```md\n### Task 9: inside a fence\n- [ ] fenced\n```\n" + `### Notes
- [ ] not a task either
### Iteration 2.5 - Second
- [ ] c
### Task 2a
- [X] d
### Task 1: again
- [ ] e
## Success criteria
- [ ] not a task
`)
	if !HasTaskSections(data) {
		t.Fatal("no Task sections found")
	}
	got := Parse(data, 0)
	checkTasks(t, got, []storyWant{
		{"1", "First", 1, 2},
		{"2.5", "Second", 0, 1},
		{"2a", "Task 2a", 1, 1},
		{"1_2", "again", 0, 1},
	}, 2, 5, "1")
	if h := got.Stories[0].Tasks[1].Heading; h != "Files" {
		t.Errorf("sub-heading %q", h)
	}
	if HasTaskSections([]byte("```\n### Task 1: in a fence\n```\n## Steps\n- [ ] a\n")) {
		t.Error("a fenced Task heading counted")
	}
}

// TestNoTask: a plan without a task has no story (the loop refuses it).
func TestNoTask(t *testing.T) {
	for _, data := range []string{"# Plan\n\nJust prose.\n", "## Steps\n- [P] note\n```\n- [ ] fenced\n```\n", ""} {
		if tk := Parse([]byte(data), 0); len(tk.Stories) != 0 || tk.Total != 0 {
			t.Errorf("%q: %d stories, %d tasks", data, len(tk.Stories), tk.Total)
		}
	}
	if !strings.Contains(string(fixture(t, "ralphex-e2e.md")), "# Ralphex Progress Log") {
		t.Fatal("the e2e fixture lost its fenced heading")
	}
}
