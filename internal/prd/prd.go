// Package prd reads snarktank/ralph's prd.json (docs/TASKS.md, "The kinds"): its user stories, run in
// ascending priority, each complete when its "passes" is true. It reads the bytes it is
// given and nothing else.
package prd

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/git-ralph/git-ralph/internal/tasklist"
)

// PRD is a parsed prd.json.
type PRD struct {
	Project     string
	BranchName  string
	Description string
	// IDs are the "id" fields of userStories in file order, as written: every attempt
	// must leave the same list.
	IDs []string
	tasklist.Tasks
}

type file struct {
	Project     string            `json:"project"`
	BranchName  string            `json:"branchName"`
	Description string            `json:"description"`
	UserStories []json.RawMessage `json:"userStories"`
}

type userStory struct {
	ID                 any    `json:"id"`
	Title              string `json:"title"`
	Description        string `json:"description"`
	AcceptanceCriteria []any  `json:"acceptanceCriteria"`
	Priority           any    `json:"priority"`
	Passes             any    `json:"passes"`
}

// Parse reads prd.json. Each entry of userStories is a story; its tasks are its
// acceptanceCriteria (one task, its title, when it has none), all done exactly when its
// passes is true. Stories are ordered by ascending numeric priority, entries without
// one last, ties in file order.
func Parse(data []byte) (*PRD, error) {
	var f file
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("not valid JSON for a prd: %v", err)
	}
	if dec.More() {
		return nil, fmt.Errorf("not valid JSON: more than one value")
	}
	if f.UserStories == nil {
		return nil, fmt.Errorf(`no "userStories" list`)
	}
	p := &PRD{Project: f.Project, BranchName: f.BranchName, Description: f.Description}
	type entry struct {
		story    tasklist.Story
		priority float64
		has      bool
	}
	var entries []entry
	seen := map[string]bool{}
	from := 0 // where the next entry is looked for: entries are found in file order
	for i, raw := range f.UserStories {
		var u userStory
		if err := json.Unmarshal(raw, &u); err != nil {
			return nil, fmt.Errorf("userStories[%d]: %v", i, err)
		}
		rawID := ""
		switch v := u.ID.(type) {
		case string:
			rawID = v
		case float64:
			rawID = fmt.Sprint(v)
		}
		p.IDs = append(p.IDs, rawID)
		id := rawID
		if !validID(id) {
			id = tasklist.Slug(u.Title)
		}
		id = tasklist.UniqueID(id, seen)
		done := u.Passes == true
		s := tasklist.Story{ID: id, Title: strings.TrimSpace(u.Title), Description: strings.TrimSpace(u.Description), Raw: string(raw)}
		if at := bytes.Index(data[from:], raw); at >= 0 { // the lines its object spans
			at += from
			s.Line = 1 + bytes.Count(data[:at], []byte("\n"))
			s.End = s.Line + bytes.Count(raw, []byte("\n"))
			from = at + len(raw)
		}
		if s.Title == "" {
			s.Title = rawID
		}
		for _, c := range u.AcceptanceCriteria {
			text, ok := c.(string)
			if !ok {
				b, _ := json.Marshal(c)
				text = string(b)
			}
			t := tasklist.Task{Text: text, Done: done}
			if done {
				t.Skipped, _ = tasklist.SkipNote(text)
			}
			s.Tasks = append(s.Tasks, t)
		}
		if len(s.Tasks) == 0 {
			s.Tasks = []tasklist.Task{{Text: s.Title, Done: done}}
		}
		e := entry{story: s}
		if v, ok := u.Priority.(float64); ok {
			e.priority, e.has = v, true
		}
		entries = append(entries, e)
	}
	slices.SortStableFunc(entries, func(a, b entry) int {
		switch {
		case a.has && !b.has:
			return -1
		case !a.has && b.has:
			return 1
		case a.has && a.priority < b.priority:
			return -1
		case a.has && a.priority > b.priority:
			return 1
		}
		return 0
	})
	for _, e := range entries {
		p.Stories = append(p.Stories, e.story)
		d, t := e.story.Counts()
		p.Done += d
		p.Total += t
	}
	return p, nil
}

var idRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,39}$`) })

// validID: 1–40 characters of [A-Za-z0-9._-] starting with a letter or digit, and
// usable in a ref name (no "..", no ".lock" or "." at the end).
func validID(id string) bool {
	return idRE().MatchString(id) && !strings.Contains(id, "..") && !strings.HasSuffix(id, ".lock") && !strings.HasSuffix(id, ".")
}

// Check compares the story ids of a prd.json after an attempt with those before it:
// "" when they are the same list, else what changed.
func Check(before, after []string) string {
	if slices.Equal(slices.Sorted(slices.Values(before)), slices.Sorted(slices.Values(after))) {
		return "" // the same ids, perhaps in another order
	}
	var gone, added []string
	for _, id := range before {
		if !slices.Contains(after, id) {
			gone = append(gone, id)
		}
	}
	for _, id := range after {
		if !slices.Contains(before, id) {
			added = append(added, id)
		}
	}
	var parts []string
	if len(gone) > 0 {
		parts = append(parts, "removed "+strings.Join(gone, ", "))
	}
	if len(added) > 0 {
		parts = append(parts, "added "+strings.Join(added, ", "))
	}
	if len(parts) == 0 {
		parts = append(parts, "an id now appears a different number of times")
	}
	return "the story ids changed: " + strings.Join(parts, "; ")
}
