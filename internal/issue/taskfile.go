package issue

import (
	"fmt"
	"strings"

	"github.com/git-ralph/git-ralph/internal/tasklist"
)

// The agent never talks to GitHub: it gets a story's tasks in a local file
// (RALPH_TASKS_FILE, outside the working tree) and ticks them there. git-ralph reads the
// file back, checks that the agent changed nothing but boxes, and ticks the same tasks
// on GitHub.

// TaskFile is the local tasks file of story: its title as a heading, then one checkbox
// line per task, as the story has them (nested ones indented as in the issue).
func TaskFile(st tasklist.Story) []byte {
	var b strings.Builder
	fmt.Fprintf(&b, "# %s\n\n", oneLine(st.Title))
	for _, t := range st.Tasks {
		box := " "
		if t.Done {
			box = "x"
		}
		fmt.Fprintf(&b, "%s- [%s] %s\n", strings.Repeat(" ", t.Indent), box, oneLine(t.Text))
	}
	return []byte(b.String())
}

func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// ChangedError says how a tasks file no longer holds the story's tasks: the agent added,
// removed or reworded one, rather than only ticking boxes.
type ChangedError struct{ Detail string }

func (e *ChangedError) Error() string {
	return "the tasks file no longer lists the story's tasks: " + e.Detail
}

// ReadTaskFile reads the tasks file of story back: the story with each task done as the
// file says, provided the file lists the same tasks in the same order (only boxes
// changed); a *ChangedError otherwise. A task done before stays done: a box the agent
// unticked is an error too.
func ReadTaskFile(st tasklist.Story, data []byte) (tasklist.Story, error) {
	got := Tasks(string(data))
	if len(got) != len(st.Tasks) {
		return st, &ChangedError{Detail: fmt.Sprintf("it has %d tasks, the story %d", len(got), len(st.Tasks))}
	}
	out := st
	out.Tasks = append([]tasklist.Task(nil), st.Tasks...)
	for i, t := range got {
		want := oneLine(st.Tasks[i].Text)
		if t.Text != want {
			return st, &ChangedError{Detail: fmt.Sprintf("task %d reads %q, not %q", i+1, t.Text, want)}
		}
		if st.Tasks[i].Done && !t.Done {
			return st, &ChangedError{Detail: fmt.Sprintf("task %d (%q) was done and is unticked", i+1, want)}
		}
		out.Tasks[i].Done = t.Done
	}
	return out, nil
}

// NewlyDone returns the body lines (Task.Line) of the tasks done in after and not in
// before: the boxes to tick on GitHub. A task that is the issue's title has no line and
// no box.
func NewlyDone(before, after tasklist.Story) []int {
	var lines []int
	for i, t := range after.Tasks {
		if t.Done && i < len(before.Tasks) && !before.Tasks[i].Done && t.Line > 0 {
			lines = append(lines, t.Line)
		}
	}
	return lines
}
