package issue

import (
	"fmt"
	"strings"

	"github.com/git-ralph/git-ralph/internal/tasklist"
)

// The agent never talks to GitHub: it gets the issue's tasks in a local file
// (RALPH_TASKS_FILE, outside the working tree) and ticks them there. git-ralph reads the
// file back, checks that nothing but boxes changed, and ticks the same tasks on GitHub.

// File is the local tasks file of an issue's stories: a "## <story id>: <title>"
// section per story, then one checkbox line per task, as the issue has them (nested
// ones indented as there; a story that is a title alone is one task, its title).
func File(title string, stories []tasklist.Story) []byte {
	var b strings.Builder
	fmt.Fprintf(&b, "# %s\n", oneLine(title))
	for _, st := range stories {
		fmt.Fprintf(&b, "\n## %s: %s\n\n", st.ID, oneLine(st.Title))
		for _, t := range st.Tasks {
			box := " "
			if t.Done {
				box = "x"
			}
			fmt.Fprintf(&b, "%s- [%s] %s\n", strings.Repeat(" ", t.Indent), box, oneLine(t.Text))
		}
	}
	return []byte(b.String())
}

func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// ChangedError says how a tasks file no longer holds the issue's tasks: the agent
// added, removed, reworded or moved one, or unticked one that was done, rather than only
// ticking boxes.
type ChangedError struct{ Detail string }

func (e *ChangedError) Error() string {
	return "the tasks file no longer lists the issue's tasks: " + e.Detail
}

// ReadFile reads a tasks file back: stories with each task done as the file says,
// provided the file lists the same tasks in the same order (only boxes ticked); a
// *ChangedError otherwise, with stories unchanged. Task lines stay those of the issue
// bodies (for Tick).
func ReadFile(stories []tasklist.Story, data []byte) ([]tasklist.Story, error) {
	got := Tasks(string(data))
	want := 0
	for _, st := range stories {
		want += len(st.Tasks)
	}
	if len(got) != want {
		return stories, &ChangedError{Detail: fmt.Sprintf("it has %d tasks, the issue %d", len(got), want)}
	}
	out := make([]tasklist.Story, len(stories))
	i := 0
	for si, st := range stories {
		out[si] = st
		out[si].Tasks = append([]tasklist.Task(nil), st.Tasks...)
		for ti, t := range st.Tasks {
			g := got[i]
			i++
			text := oneLine(t.Text)
			if g.Text != text {
				// a task ticked as skipped keeps its text before the note (tasklist.SkipNote)
				reason, skipped := tasklist.SkipNote(g.Text)
				if !skipped || !g.Done || !strings.HasPrefix(g.Text, text) {
					return stories, &ChangedError{Detail: fmt.Sprintf("task %d of story %s reads %q, not %q", ti+1, st.ID, g.Text, text)}
				}
				out[si].Tasks[ti].Text, out[si].Tasks[ti].Skipped = g.Text, reason
			}
			if t.Done && !g.Done {
				return stories, &ChangedError{Detail: fmt.Sprintf("task %d of story %s (%q) was done and is unticked", ti+1, st.ID, text)}
			}
			out[si].Tasks[ti].Done = g.Done
		}
	}
	return out, nil
}

// NewlyDone returns the body lines (Task.Line) of the tasks done in after and not in
// before (one story, before and after ReadFile): the boxes to tick on GitHub. A task
// that is the issue's title has no line and no box; one ticked as skipped stays open
// there (the checkpoint and the pull request say it was skipped).
func NewlyDone(before, after tasklist.Story) []int {
	var lines []int
	for i, t := range after.Tasks {
		if t.Done && t.Skipped == "" && i < len(before.Tasks) && !before.Tasks[i].Done && t.Line > 0 {
			lines = append(lines, t.Line)
		}
	}
	return lines
}

// FileTasks reads a tasks file (File) on its own: its "## <story id>: <title>" sections
// as stories, with their tasks and the lines they are on in the file. It is how the
// agent's side sees the file (the fake agent ticks a story's boxes with it); git-ralph
// reads it back with ReadFile, which also checks it against the issue.
func FileTasks(data []byte) tasklist.Tasks {
	var t tasklist.Tasks
	cur := -1
	scan(string(data), func(n int, line string) {
		if lv, text := tasklist.HeadingLevel(line); lv == 2 {
			id, title, _ := strings.Cut(text, ":")
			t.Stories = append(t.Stories, tasklist.Story{ID: strings.TrimSpace(id), Title: strings.TrimSpace(title), Line: n})
			cur = len(t.Stories) - 1
			return
		}
		desc, done, ok := tasklist.ExactTask(line)
		if !ok || desc == "" || cur < 0 {
			return
		}
		t.Stories[cur].Tasks = append(t.Stories[cur].Tasks, tasklist.Task{Text: desc, Done: done, Line: n, Indent: tasklist.IndentOf(line)})
		t.Total++
		if done {
			t.Done++
		}
	})
	return t
}
