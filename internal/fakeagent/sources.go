package fakeagent

import (
	"fmt"
	"github.com/git-ralph/git-ralph/internal/issue"
	"regexp"
	"strings"

	"github.com/git-ralph/git-ralph/internal/plan"
	"github.com/git-ralph/git-ralph/internal/prd"
	"github.com/git-ralph/git-ralph/internal/speckit"
	"github.com/git-ralph/git-ralph/internal/tasklist"
)

// tickSource completes story in the tracked file of a source other than OpenSpec, as
// the agent is asked to: spec-kit tasks get [X], a plan's tasks [x] (its stories read at
// the default level, else at level 3), a prd.json story passes.
func tickSource(kind string, content []byte, story string) (*taskEdit, error) {
	switch kind {
	case "speckit":
		return tickBoxes(content, speckit.ParseTasks(content), story, "[X]")
	case "plan":
		t := plan.Parse(content, 0)
		if _, ok := t.Story(story); !ok {
			t = plan.Parse(content, 3)
		}
		return tickBoxes(content, t, story, "[x]")
	case "prd":
		return passStory(content, story)
	case "issue":
		return tickBoxes(content, issue.FileTasks(content), story, "[x]")
	}
	return nil, fmt.Errorf("unknown RALPH_SOURCE %q", kind)
}

// tickBoxes replaces the box of every open task of story with mark.
func tickBoxes(content []byte, t tasklist.Tasks, story, mark string) (*taskEdit, error) {
	t.KeepIDs([]string{story})
	s, ok := t.Story(story)
	if !ok {
		return nil, fmt.Errorf("no story %q in the tasks file", story)
	}
	tf := splitTasks(content)
	newLines := append([]string(nil), tf.lines...)
	first, last := -1, -1
	for _, task := range s.OpenTasks() {
		n := task.Line - 1
		i := strings.Index(newLines[n], "[ ]")
		if i < 0 {
			continue
		}
		newLines[n] = newLines[n][:i] + mark + newLines[n][i+3:]
		if first < 0 {
			first = n
		}
		last = n
	}
	if first < 0 {
		return nil, errNothingToTick
	}
	return &taskEdit{
		content: []byte(strings.Join(newLines, "\n")),
		old:     strings.Join(tf.lines[first:last+1], "\n"),
		new:     strings.Join(newLines[first:last+1], "\n"),
	}, nil
}

var passesFalse = regexp.MustCompile(`"passes"\s*:\s*false`)

// passStory sets "passes" to true in the prd.json entry of story, editing the text so
// that the rest of the file stays as it was.
func passStory(content []byte, story string) (*taskEdit, error) {
	p, err := prd.Parse(content)
	if err != nil {
		return nil, err
	}
	raw := ""
	for i, s := range p.Stories {
		if s.ID == story {
			raw = storyRawID(p, i)
		}
	}
	if raw == "" {
		return nil, fmt.Errorf("no story %q in prd.json", story)
	}
	text := string(content)
	at := regexp.MustCompile(`"id"\s*:\s*"` + regexp.QuoteMeta(raw) + `"`).FindStringIndex(text)
	if at == nil {
		return nil, fmt.Errorf("story %q: its id is not a string in prd.json", story)
	}
	end := len(text)
	if next := regexp.MustCompile(`"id"\s*:`).FindStringIndex(text[at[1]:]); next != nil {
		end = at[1] + next[0]
	}
	loc := passesFalse.FindStringIndex(text[at[1]:end])
	if loc == nil {
		return nil, errNothingToTick
	}
	old := text[at[1]+loc[0] : at[1]+loc[1]]
	out := text[:at[1]+loc[0]] + `"passes": true` + text[at[1]+loc[1]:]
	return &taskEdit{content: []byte(out), old: old, new: `"passes": true`}, nil
}

// storyRawID is the id as written of the i-th story in run order: the ids are matched
// back through their position in the file.
func storyRawID(p *prd.PRD, i int) string {
	id := p.Stories[i].ID
	for _, raw := range p.IDs {
		if raw == id {
			return raw
		}
	}
	// a slug or a _2 id: the raw id is not usable; the story cannot be found by it
	return ""
}
