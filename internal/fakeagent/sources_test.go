package fakeagent

import (
	"strings"
	"testing"

	"github.com/git-ralph/git-ralph/internal/plan"
	"github.com/git-ralph/git-ralph/internal/prd"
	"github.com/git-ralph/git-ralph/internal/speckit"
)

func TestTickSource(t *testing.T) {
	kit := "## Phase 1: Setup\n- [X] T001 a\n- [ ] T002 [P] b\n## Phase 2: More\n- [ ] T003 c\n## Notes\n- [P] tasks = different files\n"
	e, err := tickSource("speckit", []byte(kit), "1")
	if err != nil {
		t.Fatal(err)
	}
	if s, _ := speckit.ParseTasks(e.content).Story("1"); !s.Complete() || !strings.Contains(string(e.content), "- [X] T002 [P] b") {
		t.Errorf("spec-kit phase 1 not complete:\n%s", e.content)
	}
	if s, _ := speckit.ParseTasks(e.content).Story("2"); s.Complete() {
		t.Error("phase 2 was ticked too")
	}
	pl := "## Steps\n### Task 1: a\n- [ ] x\n### Task 2: b\n- [ ] y\n"
	e, err = tickSource("plan", []byte(pl), "2")
	if err != nil {
		t.Fatal(err)
	}
	if got := plan.Parse(e.content, 0); got.Done != 1 || !got.Stories[1].Complete() {
		t.Errorf("plan:\n%s", e.content)
	}
	js := `{"userStories": [
  {"id": "US-001", "title": "a", "passes": false, "priority": 2},
  {"id": "US-002", "title": "b", "passes": false, "priority": 1}
]}`
	e, err = tickSource("prd", []byte(js), "US-002")
	if err != nil {
		t.Fatal(err)
	}
	p, err := prd.Parse(e.content)
	if err != nil {
		t.Fatal(err)
	}
	if s, _ := p.Story("US-002"); !s.Complete() {
		t.Errorf("US-002 does not pass:\n%s", e.content)
	}
	if s, _ := p.Story("US-001"); s.Complete() {
		t.Error("US-001 passes too")
	}
	if _, err := tickSource("prd", e.content, "US-002"); err != errNothingToTick {
		t.Errorf("a story that passes: %v", err)
	}
}

// A GitHub issue's tasks file: the boxes of the story's section, and no other.
func TestTickIssue(t *testing.T) {
	file := "# Greeter\n\n## issue-11: Parse names\n\n- [ ] split\n  - [x] trim\n\n## issue-12: Wire it\n\n- [ ] Wire it\n"
	e, err := tickSource("issue", []byte(file), "issue-11")
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Replace(file, "- [ ] split", "- [x] split", 1)
	if string(e.content) != want {
		t.Fatalf("ticked:\n%s\nwant:\n%s", e.content, want)
	}
	if _, err := tickSource("issue", []byte(file), "issue-99"); err == nil {
		t.Fatal("a story the file does not have")
	}
}
