package preflight

import (
	"errors"
	"strings"
	"testing"

	"github.com/git-ralph/git-ralph/internal/openspec"
	"github.com/git-ralph/git-ralph/internal/source"
	"github.com/git-ralph/git-ralph/internal/tell"
)

// TestNeverCompleteWhileOpen: a change whose stories are all complete while OpenSpec
// still counts an open task (one no story holds) is an error with a hint, never
// "complete". ParseTasks puts every task in a story, so the stories are cut by hand.
func TestNeverCompleteWhileOpen(t *testing.T) {
	ch := &source.Source{Name: "c", TasksRel: "openspec/changes/c/tasks.md",
		Tasks: openspec.ParseTasks([]byte("## 1. One\n- [x] 1.1 a\n## Prerequisites\n- [ ] p\n- [ ] q\n"))}
	if err := OpenOutsideStories(ch); err != nil {
		t.Fatalf("every task is in a story, yet: %v", err)
	}
	ch.Stories = ch.Stories[:1]
	if _, ok := ch.NextStory(); ok {
		t.Fatal("NextStory found a story")
	}
	err := OpenOutsideStories(ch)
	var e *tell.Error
	if !errors.As(err, &e) || e.Code != 0 {
		t.Fatalf("error = %#v, want an *Error with exit code 1", err)
	}
	if want := "openspec/changes/c/tasks.md has 2 open task(s) that belong to no story; the change is not complete"; e.Msg != want {
		t.Errorf("message %q, want %q", e.Msg, want)
	}
	if !strings.Contains(e.Hint, "git ralph start c") {
		t.Errorf("hint %q names no command", e.Hint)
	}
	ch.Tasks = openspec.ParseTasks([]byte("## 1. One\n- [x] 1.1 a\n"))
	ch.Stories = nil
	if err := OpenOutsideStories(ch); err != nil {
		t.Errorf("only done tasks outside the stories, yet: %v", err)
	}
}
