package fakeagent

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/git-ralph/git-ralph/internal/openspec"
)

type fixtureTask struct {
	ID   string `json:"id"`
	Done bool   `json:"done"`
	Line int    `json:"line"`
}

type fixtureStory struct {
	ID    string        `json:"id"`
	Tasks []fixtureTask `json:"tasks"`
}

// loadFixtures reads the OpenSpec fixtures: tasks.md files and their
// expected stories (testdata/tasks/stories.json, from the reference's
// expected.json).
func loadFixtures(t *testing.T) map[string][]fixtureStory {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(testdata, "tasks", "stories.json"))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Changes map[string][]fixtureStory `json:"changes"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	return doc.Changes
}

func readFixture(t *testing.T, change string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(testdata, "tasks", change, "tasks.md"))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// parseStories reads stories as git-ralph does, and their tasks with the fake's
// own task-line rules.
func parseStories(content []byte) []fixtureStory {
	lines := splitTasks(content).lines
	var stories []fixtureStory
	for _, s := range openspec.ParseTasks(content).Stories {
		fs := fixtureStory{ID: s.ID, Tasks: []fixtureTask{}}
		for _, task := range s.Tasks {
			if t, ok := parseTaskLine(lines[task.Line-1]); ok {
				fs.Tasks = append(fs.Tasks, fixtureTask{ID: t.id, Done: t.done, Line: task.Line})
			}
		}
		stories = append(stories, fs)
	}
	return stories
}

func TestTaskRulesMatchOpenSpecFixtures(t *testing.T) {
	for change, want := range loadFixtures(t) {
		got := parseStories(readFixture(t, change))
		if len(want) == 0 && len(got) == 0 {
			continue
		}
		for i := range want {
			if want[i].Tasks == nil {
				want[i].Tasks = []fixtureTask{}
			}
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s:\n got %+v\nwant %+v", change, got, want)
		}
	}
}

func TestTickStoryFixtures(t *testing.T) {
	for change, stories := range loadFixtures(t) {
		content := readFixture(t, change)
		for _, s := range stories {
			open := slices.ContainsFunc(s.Tasks, func(t fixtureTask) bool { return !t.Done })
			edit, err := tickStory(content, s.ID)
			if !open {
				if !errors.Is(err, errNothingToTick) {
					t.Errorf("%s story %s (complete): %v", change, s.ID, err)
				}
				continue
			}
			if err != nil {
				t.Errorf("%s story %s: %v", change, s.ID, err)
				continue
			}
			before, after := strings.Split(string(content), "\n"), strings.Split(string(edit.content), "\n")
			inStory := map[int]bool{}
			for _, task := range s.Tasks {
				inStory[task.Line-1] = true
				if tl, ok := parseTaskLine(after[task.Line-1]); !ok || !tl.done {
					t.Errorf("%s story %s: task %s not done: %q", change, s.ID, task.ID, after[task.Line-1])
				}
			}
			for i := range before {
				if before[i] == after[i] {
					continue
				}
				tl, _ := parseTaskLine(before[i])
				if !inStory[i] || after[i] != before[i][:tl.open]+"[x]"+before[i][tl.close+1:] {
					t.Errorf("%s story %s: line %d: %q -> %q", change, s.ID, i+1, before[i], after[i])
				}
			}
		}
	}
	if _, err := tickStory(readFixture(t, "edge-structure"), "5"); err == nil || errors.Is(err, errNothingToTick) {
		t.Errorf("missing story: %v", err)
	}
}

const crlfTasks = "\ufeff# Tasks\r\n\r\n## 1. First\r\n\r\n- [ ] 1.1 One\r\n- [x] 1.2 Two\r\n  - [ ] 1.3 Nested\r\n\r\n## 2. Second\r\n- [ ] 2.1 Other\r\n- [ ] 2.2 Another"

func setupChange(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	t.Chdir(dir)
	path := filepath.Join(dir, "openspec", "changes", "add-login", "tasks.md")
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(crlfTasks), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestCheckStoryRun(t *testing.T) {
	for _, args := range [][]string{claudeArgs, codexArgs} {
		t.Run(args[0], func(t *testing.T) {
			path := setupChange(t)
			env := inlineEnv(t, `{"steps":[{"check_story":true},{"say":"<promise>COMPLETE</promise>"}]}`)
			env["RALPH_CHANGE"], env["RALPH_STORY"] = "add-login", "1"
			r := runFake(t, args, "p", env)
			if r.code != 0 || r.stderr != "" {
				t.Fatalf("exit %d: %s", r.code, r.stderr)
			}
			got, _ := os.ReadFile(path)
			want := strings.Replace(strings.Replace(crlfTasks, "- [ ] 1.1", "- [x] 1.1", 1), "- [ ] 1.3", "- [x] 1.3", 1)
			if string(got) != want {
				t.Fatalf("tasks.md\n got %q\nwant %q", got, want)
			}
			evs := parseLines(t, r.stdout)
			if args[0] == "codex" {
				if labels(evs)[2] != "item.started:file_change" || str(evs[3].m, "item", "changes", 0, "kind") != "update" ||
					str(evs[3].m, "item", "changes", 0, "path") != path {
					t.Errorf("events %q: %s", labels(evs), evs[3].raw)
				}
				return
			}
			if !slices.Equal(labels(evs), []string{"system/init", "tool_use:Edit", "tool_result", "assistant:text", "result/success"}) {
				t.Fatalf("events %q", labels(evs))
			}
			input := get(evs[1].m, "message", "content", 0, "input")
			if str(input, "file_path") != path ||
				str(input, "old_string") != "- [ ] 1.1 One\r\n- [x] 1.2 Two\r\n  - [ ] 1.3 Nested\r" ||
				str(input, "new_string") != "- [x] 1.1 One\r\n- [x] 1.2 Two\r\n  - [x] 1.3 Nested\r" {
				t.Errorf("Edit input %v", input)
			}
		})
	}
}

func TestCheckTaskAndErrors(t *testing.T) {
	path := setupChange(t)
	env := inlineEnv(t, `{"steps":[{"check_task":"{{story}}.2"},{"check_story":"7"},{"check_task":"1.2"},{"say":"done"}]}`)
	env["RALPH_CHANGE"], env["RALPH_STORY"] = "add-login", "2"
	r := runFake(t, claudeArgs, "p", env)
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	got, _ := os.ReadFile(path)
	if want := strings.Replace(crlfTasks, "- [ ] 2.2", "- [x] 2.2", 1); string(got) != want {
		t.Fatalf("tasks.md\n got %q\nwant %q", got, want)
	}
	evs := parseLines(t, r.stdout)
	if !slices.Equal(labels(evs), []string{"system/init", "tool_use:Edit", "tool_result", "tool_use:Edit", "tool_result!",
		"tool_use:Edit", "tool_result!", "assistant:text", "result/success"}) {
		t.Fatalf("events %q", labels(evs))
	}
	for _, want := range []string{`check_story 7: no story "7" in tasks.md`, "check_task 1.2: no open task to tick"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("stderr %q lacks %q", r.stderr, want)
		}
	}
	if get(evs[len(evs)-1].m, "num_turns") != float64(4) {
		t.Errorf("num_turns %v", get(evs[len(evs)-1].m, "num_turns"))
	}
}
