package prd

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

type storyWant struct {
	id, title   string
	done, total int
}

// TestFixtures: counting, story order (priority) and first story of every fixture.
func TestFixtures(t *testing.T) {
	for _, tc := range []struct {
		file        string
		branch      string
		stories     []storyWant
		done, total int
		next        string
	}{
		{"snarktank-example.json", "ralph/task-priority", []storyWant{
			{"US-001", "Add priority field to database", 0, 3},
			{"US-002", "Display priority indicator on task cards", 0, 4},
			{"US-003", "Add priority selector to task edit", 0, 5},
			{"US-004", "Filter tasks by priority", 0, 5},
		}, 0, 17, "US-001"},
		{"feature-branch-partial.json", "feature/812-export-statements", []storyWant{
			{"US-001", "Add the statement query", 4, 4},
			{"US-002", "CSV export endpoint", 0, 3},
			{"US-003", "PDF export endpoint", 0, 2},
		}, 4, 9, "US-002"},
		{"out-of-order.json", "", []storyWant{
			{"US-001", "Parse flags", 1, 1},
			{"US-003", "Read config from XDG_CONFIG_HOME", 0, 2},
			{"colour-output-when-stdout-is-a-terminal", "Colour output when stdout is a terminal", 0, 1},
			{"US-001_2", "Duplicate id", 0, 1},
			{"US-004", "Shell completions", 0, 1},
		}, 1, 6, "US-003"},
		{"empty.json", "ralph/feature", nil, 0, 0, ""},
	} {
		t.Run(tc.file, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join("testdata", tc.file))
			if err != nil {
				t.Fatal(err)
			}
			p, err := Parse(data)
			if err != nil {
				t.Fatal(err)
			}
			if p.BranchName != tc.branch {
				t.Errorf("branchName %q", p.BranchName)
			}
			if d, n := p.Counts(); d != tc.done || n != tc.total {
				t.Errorf("counts %d/%d; want %d/%d", d, n, tc.done, tc.total)
			}
			if len(p.Stories) != len(tc.stories) {
				t.Fatalf("%d stories; want %d", len(p.Stories), len(tc.stories))
			}
			for i, w := range tc.stories {
				s := p.Stories[i]
				d, n := s.Counts()
				if s.ID != w.id || s.Title != w.title || d != w.done || n != w.total {
					t.Errorf("story %d = %q %q %d/%d; want %q %q %d/%d", i, s.ID, s.Title, d, n, w.id, w.title, w.done, w.total)
				}
			}
			s, ok := p.NextStory()
			if tc.next == "" && ok || tc.next != "" && s.ID != tc.next {
				t.Errorf("next = %q %v; want %q", s.ID, ok, tc.next)
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	for _, tc := range []struct{ data, want string }{
		{`{"userStories": [`, "not valid JSON"},
		{`{"project": "x"}`, `no "userStories"`},
		{`{"userStories": [1]}`, "userStories[0]"},
		{`{"userStories": []} {}`, "more than one value"},
		{``, "not valid JSON"},
	} {
		if _, err := Parse([]byte(tc.data)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Parse(%q) = %v; want an error with %q", tc.data, err, tc.want)
		}
	}
	// passes must be the JSON true: a string does not complete a story
	p, err := Parse([]byte(`{"userStories": [{"id": "US-1", "title": "a", "passes": "true"}]}`))
	if err != nil || p.Done != 0 {
		t.Errorf("passes \"true\": %v, done %d", err, p.Done)
	}
}

func TestCheck(t *testing.T) {
	ids := []string{"US-001", "US-002"}
	if r := Check(ids, []string{"US-002", "US-001"}); r != "" {
		t.Errorf("reordered: %q", r)
	}
	if r := Check(ids, []string{"US-001"}); r != "the story ids changed: removed US-002" {
		t.Errorf("removed: %q", r)
	}
	if r := Check(ids, []string{"US-001", "US-002", "US-003"}); r != "the story ids changed: added US-003" {
		t.Errorf("added: %q", r)
	}
	if r := Check(ids, []string{"US-001", "US-001", "US-002"}); r == "" {
		t.Error("a duplicated id passed")
	}
}

// TestSkippedCriterion: a criterion of a passing story that ends with the skip note is a
// task ticked as skipped; the same note on a story that does not pass is nothing yet.
func TestSkippedCriterion(t *testing.T) {
	p, err := Parse([]byte(`{"userStories": [
		{"id": "US-001", "acceptanceCriteria": ["Typecheck passes", "Verify in browser (skipped - not automatable: no browser here)"], "passes": true},
		{"id": "US-002", "acceptanceCriteria": ["Verify in browser (skipped - no browser)"], "passes": false}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if got := p.Stories[0].Tasks[1].Skipped; got != "not automatable: no browser here" {
		t.Errorf("a passing story's skipped criterion: %q", got)
	}
	if got := p.Stories[0].Tasks[0].Skipped + p.Stories[1].Tasks[0].Skipped; got != "" {
		t.Errorf("skipped where nothing is: %q", got)
	}
	if p.Stories[0].Line != 2 || p.Stories[0].End != 2 || p.Stories[1].Line != 3 {
		t.Errorf("lines %d–%d, %d", p.Stories[0].Line, p.Stories[0].End, p.Stories[1].Line)
	}
}
