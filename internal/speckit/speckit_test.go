package speckit

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/git-ralph/git-ralph/internal/tasklist"
)

// storyWant is one story as a fixture must parse: id, title, done/total.
type storyWant struct {
	id, title   string
	done, total int
}

func checkTasks(t *testing.T, got tasklist.Tasks, want []storyWant, done, total int, next string) {
	t.Helper()
	if d, n := got.Counts(); d != done || n != total {
		t.Errorf("counts = %d/%d; want %d/%d", d, n, done, total)
	}
	var ids []string
	for _, s := range got.Stories {
		ids = append(ids, s.ID)
	}
	if len(got.Stories) != len(want) {
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

// TestFixtures: every fixture's counts, story split and first story.
func TestFixtures(t *testing.T) {
	for _, tc := range []struct {
		file        string
		stories     []storyWant
		done, total int
		next        string
	}{
		{"template.md", []storyWant{
			{"1", "Setup (Shared Infrastructure)", 0, 3},
			{"2", "Foundational (Blocking Prerequisites)", 0, 6},
			{"3", "User Story 1 - [Title] (Priority: P1) 🎯 MVP", 0, 8},
			{"4", "User Story 2 - [Title] (Priority: P2)", 0, 6},
			{"5", "User Story 3 - [Title] (Priority: P3)", 0, 5},
			{"phase-n-polish-cross-cutting-concerns", "Phase N: Polish & Cross-Cutting Concerns", 0, 6},
		}, 0, 34, "1"},
		{"upper-x-in-progress.md", []storyWant{
			{"1", "Setup (Shared Infrastructure)", 3, 3},
			{"2", "Foundational (Blocking Prerequisites)", 3, 3},
			{"3", "User Story 1 - Edit notes without a connection (Priority: P1) 🎯 MVP", 1, 4},
			{"4", "User Story 2 - Sync when back online (Priority: P2)", 0, 2},
			{"5", "Polish & Cross-Cutting Concerns", 0, 2},
		}, 7, 14, "3"},
		{"lower-x-phase-dot.md", []storyWant{
			{"3.1", "Setup", 2, 2},
			{"3.2", "Tests First (TDD) ⚠️ MUST COMPLETE BEFORE 3.3", 2, 2},
			{"3.3", "Core Implementation (ONLY after tests are failing)", 1, 3},
			{"3.4", "Polish", 0, 2},
		}, 5, 9, "3.3"},
		{"all-done.md", []storyWant{
			{"1", "Setup", 1, 1},
			{"2", "User Story 1 - Switch theme (Priority: P1)", 2, 2},
		}, 3, 3, ""},
	} {
		t.Run(tc.file, func(t *testing.T) {
			checkTasks(t, ParseTasks(fixture(t, tc.file)), tc.stories, tc.done, tc.total, tc.next)
		})
	}
}

// TestTaskDetails: T### ids, [P]/[USn] kept in the text, the sub-heading of a phase's
// tasks, and the fenced example lines not read as tasks.
func TestTaskDetails(t *testing.T) {
	tasks := ParseTasks(fixture(t, "upper-x-in-progress.md"))
	s, _ := tasks.Story("3")
	var got []string
	for _, task := range s.Tasks {
		got = append(got, task.ID+"|"+task.Heading+"|"+task.Text)
	}
	want := []string{
		"T007|Tests for User Story 1 ⚠️|[P] [US1] Contract test for POST /sync in api/tests/contract/sync.test.ts",
		"T008|Tests for User Story 1 ⚠️|[P] [US1] Integration test for an offline edit in app/tests/integration/offline-edit.test.ts",
		"T009|Implementation for User Story 1|[US1] Write edits to the change queue in app/src/sync/queue.ts (depends on T004)",
		"T010|Implementation for User Story 1|[US1] Show a \"saved offline\" badge in app/src/notes/NoteHeader.tsx",
	}
	if !slices.Equal(got, want) {
		t.Errorf("story 3 tasks:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	long := ParseTasks(fixture(t, "lower-x-phase-dot.md"))
	if s, _ := long.Story("3.1"); s.Tasks[0].ID != "T1001" {
		t.Errorf("four-digit id: %q", s.Tasks[0].ID)
	}
	tmpl := ParseTasks(fixture(t, "template.md"))
	if s, _ := tmpl.Story("phase-n-polish-cross-cutting-concerns"); s.Tasks[0].ID != "" || s.Tasks[0].Text != "TXXX [P] Documentation updates in docs/" {
		t.Errorf("TXXX is no id: %+v", s.Tasks[0])
	}
}

// TestNotATask: the lines a loose parser counts and spec-kit's rule does not.
func TestNotATask(t *testing.T) {
	for _, line := range []string{
		"- [P] tasks = different files, no dependencies",
		"- [Story] label maps task to specific user story for traceability",
		"- [~] T001 half done",
		"- [-] T001 dropped",
		"- [ ](https://example.com) a link",
		"- [x]T001 glued",
		"-[ ] T001 no space after the marker",
		"[ ] T001 no marker",
	} {
		if _, _, ok := tasklist.ExactTask(line); ok {
			t.Errorf("%q read as a task", line)
		}
	}
	for _, line := range []string{"- [ ] T001 a", "* [x] T001 a", "  + [X] T001 a", "1. [ ] T001 a", "- [ ]", "\t- [x] tab"} {
		if _, _, ok := tasklist.ExactTask(line); !ok {
			t.Errorf("%q not read as a task", line)
		}
	}
}

func TestListAndLoad(t *testing.T) {
	root := t.TempDir()
	write := func(path, content string) {
		t.Helper()
		p := filepath.Join(root, filepath.FromSlash(path))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("specs/001-photo-albums/tasks.md", "## Phase 1: Setup\n- [ ] T001 a\n")
	write("specs/001-photo-albums/spec.md", "# Spec\n")
	write("specs/001-photo-albums/plan.md", "# Plan\n")
	write("specs/001-photo-albums/data-model.md", "# Model\n")
	write("specs/001-photo-albums/contracts/api.yaml", "openapi: 3.1.0\n")
	write("specs/001-photo-albums/checklists/requirements.md", "- [x] CHK001 ok\n- [ ] CHK002 open\n- [ ] CHK003 open\n")
	write("specs/001-photo-albums/checklists/ux.md", "- [x] CHK001 ok\n")
	write("specs/002-sharing/spec.md", "# only a spec\n")
	write("specs/.hidden/tasks.md", "- [ ] T001 a\n")
	write(".specify/memory/constitution.md", "# Constitution\n")
	if err := os.MkdirAll(filepath.Join(root, "specs", "003-empty", "contracts"), 0o755); err != nil {
		t.Fatal(err)
	}
	names, err := ListFeatures(root)
	if err != nil || !slices.Equal(names, []string{"001-photo-albums"}) {
		t.Fatalf("ListFeatures = %v, %v", names, err)
	}
	if got := ByNumber([]string{"001-a", "002-b", "001b-c"}, "001"); !slices.Equal(got, []string{"001-a"}) {
		t.Errorf("ByNumber = %v", got)
	}
	f, err := Load(root, "001-photo-albums")
	if err != nil {
		t.Fatal(err)
	}
	wantDocs := []string{"specs/001-photo-albums/spec.md", "specs/001-photo-albums/plan.md", "specs/001-photo-albums/data-model.md",
		"specs/001-photo-albums/contracts/", "specs/001-photo-albums/checklists/", ".specify/memory/constitution.md"}
	if !slices.Equal(f.Docs, wantDocs) {
		t.Errorf("docs = %v; want %v", f.Docs, wantDocs)
	}
	if f.Spec != "# Spec\n" || f.Plan != "# Plan\n" || f.TasksRel != "specs/001-photo-albums/tasks.md" {
		t.Errorf("feature = %+v", f)
	}
	wantCL := []Checklist{{"specs/001-photo-albums/checklists/requirements.md", 2, 3}, {"specs/001-photo-albums/checklists/ux.md", 0, 1}}
	if !slices.Equal(f.Checklists, wantCL) {
		t.Errorf("checklists = %+v", f.Checklists)
	}
	var nt *NoTasksError
	if _, err := Load(root, "002-sharing"); err == nil || !asNoTasks(err, &nt) {
		t.Errorf("Load of a feature without tasks.md: %v", err)
	}
	for _, bad := range []string{"../specs/001-photo-albums", "001-photo-albums/..", ".hidden", "nope"} {
		if _, err := Load(root, bad); err == nil {
			t.Errorf("Load(%q) succeeded", bad)
		}
	}
}

func asNoTasks(err error, target **NoTasksError) bool {
	e, ok := err.(*NoTasksError)
	*target = e
	return ok
}

// TestForBranch: spec-kit's find_feature_dir_by_prefix (scripts/bash/common.sh at v0.9.5):
// a prefix names every feature that has it, one path segment is dropped, any other name
// is the feature of that name.
func TestForBranch(t *testing.T) {
	dirs := []string{"004-add-feature", "004-fix-bug", "019-chat", "20260319-143022-drafts", "core-features"}
	for _, tc := range []struct {
		branch string
		want   []string
	}{
		{"019-chat", []string{"019-chat"}},
		{"019-chat-ui", []string{"019-chat"}},
		{"feat/019-x", []string{"019-chat"}},
		{"004-whatever", []string{"004-add-feature", "004-fix-bug"}},
		{"20260319-143022-anything", []string{"20260319-143022-drafts"}},
		{"core-features", []string{"core-features"}},
		{"main", nil},
		{"ralph/019-chat", []string{"019-chat"}},
		{"a/b/019-chat", nil},
		{"01-too-short", nil},
	} {
		if got := ForBranch(dirs, tc.branch); !slices.Equal(got, tc.want) {
			t.Errorf("ForBranch(%q) = %q, want %q", tc.branch, got, tc.want)
		}
	}
	for data, want := range map[string]string{
		`{"feature_directory":"specs/019-chat"}`:       "specs/019-chat",
		"{\n  \"feature_directory\": \"specs/x\"\n}\n": "specs/x",
		`{"feature_directory": 3}`:                     "",
		`{}`:                                           "",
		`not json`:                                     "",
	} {
		if got := FeatureDirectory([]byte(data)); got != want {
			t.Errorf("FeatureDirectory(%q) = %q, want %q", data, got, want)
		}
	}
}
