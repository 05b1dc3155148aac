package source

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/git-ralph/git-ralph/internal/tasklist"
)

func write(t *testing.T, root, path, content string) {
	t.Helper()
	p := filepath.Join(root, filepath.FromSlash(path))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func repo(t *testing.T) string {
	root := t.TempDir()
	write(t, root, "openspec/changes/add-login/tasks.md", "## 1. Form\n- [ ] 1.1 a\n")
	write(t, root, "openspec/changes/add-login/proposal.md", "## Why\nUsers need to log in.\n")
	write(t, root, "openspec/changes/shared/tasks.md", "## 1. A\n- [ ] 1.1 a\n")
	write(t, root, "specs/001-photo-albums/tasks.md", "# Tasks: Albums\n## Phase 1: Setup\n- [X] T001 a\n## Phase 2: Albums\n- [ ] T002 b\n## Notes\n- [P] tasks = different files, no dependencies\n")
	write(t, root, "specs/001-photo-albums/spec.md", "# Feature Specification: Albums\n\n**Feature Branch**: `001-photo-albums`\n\nPeople group photos into albums.\n")
	write(t, root, "specs/001-photo-albums/checklists/requirements.md", "- [x] CHK001 a\n- [ ] CHK002 b\n")
	write(t, root, "specs/002-sharing/spec.md", "# only a spec\n")
	write(t, root, "specs/shared/tasks.md", "## Phase 1: A\n- [ ] T001 a\n")
	write(t, root, "specs/003-a/tasks.md", "- [ ] T001 a\n")
	write(t, root, "specs/003-b/tasks.md", "- [ ] T001 a\n")
	write(t, root, "docs/plans/20260120-colors.md", "# Colors\n\nMake colors configurable.\n\n## Implementation Steps\n### Task 1: Config\n- [ ] a\n### Task 2: Use it\n- [ ] b\n")
	write(t, root, "docs/plans/empty.md", "# Nothing\n\nprose only\n")
	write(t, root, "scripts/ralph/prd.json", `{"branchName": "ralph/task-priority", "description": "Task priorities", "userStories": [
		{"id": "US-002", "title": "b", "acceptanceCriteria": ["x"], "priority": 2, "passes": false},
		{"id": "US-001", "title": "a", "acceptanceCriteria": ["y"], "priority": 1, "passes": true}]}`)
	write(t, root, "scripts/ralph/progress.txt", "# Ralph Progress Log\n")
	write(t, root, "tools/prd.json", `{"userStories": [{"id": "US-001", "title": "a", "passes": false}]}`)
	return root
}

func TestResolve(t *testing.T) {
	root := repo(t)
	for _, tc := range []struct {
		arg, cwd                       string
		kind                           string
		name, tasksRel, next, learning string
	}{
		{"add-login", "", "openspec", "add-login", "openspec/changes/add-login/tasks.md", "1", ""},
		{"openspec:shared", "", "openspec", "shared", "openspec/changes/shared/tasks.md", "1", ""},
		{"speckit:shared", "", "speckit", "shared", "specs/shared/tasks.md", "1", ""},
		{"001-photo-albums", "", "speckit", "001-photo-albums", "specs/001-photo-albums/tasks.md", "2", ""},
		{"001", "", "speckit", "001-photo-albums", "specs/001-photo-albums/tasks.md", "2", ""},
		{"docs/plans/20260120-colors.md", "", "plan", "20260120-colors", "docs/plans/20260120-colors.md", "1", ""},
		{"../plans/20260120-colors.md", "docs/sub", "plan", "20260120-colors", "docs/plans/20260120-colors.md", "1", ""},
		{"prd.json", "scripts/ralph", "prd", "task-priority", "scripts/ralph/prd.json", "US-002", "scripts/ralph/progress.txt"},
		{"tools/prd.json", "", "prd", "tools", "tools/prd.json", "US-001", ""},
	} {
		t.Run(tc.arg, func(t *testing.T) {
			cwd := filepath.Join(root, filepath.FromSlash(tc.cwd))
			if err := os.MkdirAll(cwd, 0o755); err != nil {
				t.Fatal(err)
			}
			s, err := Builtin().Resolve(Repo{Root: root, Cwd: cwd}, tc.arg)
			if err != nil {
				t.Fatal(err)
			}
			next, _ := s.NextStory()
			if s.Kind.About().ID != tc.kind || s.Ref.Kind != tc.kind || s.Name != tc.name || s.TasksRel != tc.tasksRel || next.ID != tc.next || s.Learnings != tc.learning {
				t.Errorf("got %s %q %q next %q learnings %q", s.Ref.Kind, s.Name, s.TasksRel, next.ID, s.Learnings)
			}
			if err := s.Runnable(); err != nil {
				t.Errorf("Runnable: %v", err)
			}
			// reopening from what a run records gives the same source
			again, err := Builtin().Open(Repo{Root: root}, s.Ref)
			if err != nil || again.Name != s.Name || again.TasksRel != s.TasksRel {
				t.Errorf("Open(%+v) = %+v, %v", s.Ref, again, err)
			}
		})
	}
}

func TestResolveRefusals(t *testing.T) {
	root := repo(t)
	outside := t.TempDir()
	write(t, outside, "plan.md", "## A\n- [ ] a\n")
	if err := os.Symlink(filepath.Join(outside, "plan.md"), filepath.Join(root, "docs", "link.md")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(root, "elsewhere")); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ arg, msg, hint string }{
		{"shared", `"shared" is both an OpenSpec change and a spec-kit feature`, "openspec:shared"},
		{"nope", `no change or feature "nope"`, "spec-kit features: 001-photo-albums, 003-a, 003-b, shared"},
		{"003", "2 spec-kit features are numbered 003", "003-a"},
		{"speckit:002-sharing", "specs/002-sharing has no tasks.md", "/speckit.tasks"},
		{"speckit:../openspec", `no change or feature "../openspec"`, ""},
		{"openspec:../specs", `no change "../specs"`, ""},
		{"../x/plan.md", "is outside the repository", ""},
		{filepath.Join(outside, "plan.md"), "is outside the repository", ""},
		{"elsewhere/plan.md", "is outside the repository", ""},
		{"docs/link.md", "is not a regular file", "not a symlink"},
		{"docs/plans/none.md", "no such file", ""},
		{".git/x.md", "", ""},
		{"docs/plans", `no change or feature "docs/plans"`, ""},
	} {
		t.Run(tc.arg, func(t *testing.T) {
			_, err := Builtin().Resolve(Repo{Root: root, Cwd: root}, tc.arg)
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("Resolve(%q) = %v; want a *source.Error", tc.arg, err)
			}
			if !strings.Contains(e.Msg, tc.msg) || !strings.Contains(e.Hint, tc.hint) {
				t.Errorf("error %q hint %q; want %q / %q", e.Msg, e.Hint, tc.msg, tc.hint)
			}
		})
	}
	empty, err := Builtin().Resolve(Repo{Root: root, Cwd: root}, "docs/plans/empty.md")
	if err != nil {
		t.Fatal(err)
	}
	if err := empty.Runnable(); err == nil || !strings.Contains(err.Error(), "docs/plans/empty.md has no task") {
		t.Errorf("a plan without tasks: %v", err)
	}
}

func TestSpecKitPrompt(t *testing.T) {
	s, err := Builtin().Resolve(Repo{Root: repo(t)}, "001")
	if err != nil {
		t.Fatal(err)
	}
	if s.DoneMark != "[X]" || len(s.Notes) != 1 || !strings.Contains(s.Notes[0], "specs/001-photo-albums/checklists/requirements.md has 1 of 2 items unchecked") {
		t.Errorf("mark %q notes %q", s.DoneMark, s.Notes)
	}
	if s.Why != "People group photos into albums." {
		t.Errorf("why %q", s.Why)
	}
	if d, n := s.Counts(); d != 1 || n != 2 {
		t.Errorf("the Notes' [P] line counted: %d/%d", d, n)
	}
	var titles []string
	for _, d := range s.Docs {
		titles = append(titles, d.Title+":"+d.Path)
	}
	if got := strings.Join(titles, " "); got != "Spec:specs/001-photo-albums/spec.md Checklists:specs/001-photo-albums/checklists/" {
		t.Errorf("docs %s", got)
	}
}

// TestPRDReload: an attempt that breaks the JSON or changes the story ids leaves a
// *BrokenError that says what happened; ticking passes is fine.
func TestPRDReload(t *testing.T) {
	root := repo(t)
	s, err := Builtin().Resolve(Repo{Root: root, Cwd: root}, "scripts/ralph/prd.json")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(root, "scripts", "ralph", "prd.json")
	for _, tc := range []struct{ content, reason string }{
		{`{"branchName": "ralph/task-priority", "userStories": [{"id": "US-001", "passes": true}, {"id": "US-002", "passes": true}]}`, ""},
		{`{"branchName": "ralph/task-priority", "userStories": [{"id": "US-001", "passes": true}, `, "not valid JSON"},
		{`{"branchName": "ralph/task-priority", "userStories": [{"id": "US-001", "passes": true}]}`, "removed US-002"},
		{`{"branchName": "ralph/task-priority", "userStories": [{"id": "US-001"}, {"id": "US-002"}, {"id": "US-003"}]}`, "added US-003"},
		{`{"branchName": "ralph/other", "userStories": [{"id": "US-001"}, {"id": "US-002"}]}`, `its branchName changed from "ralph/task-priority" to "ralph/other"`},
	} {
		if err := os.WriteFile(path, []byte(tc.content), 0o644); err != nil {
			t.Fatal(err)
		}
		err := s.Reload()
		var b *BrokenError
		if tc.reason == "" {
			if err != nil {
				t.Errorf("%s: %v", tc.content, err)
			} else if _, ok := s.NextStory(); ok {
				t.Error("every story passes, yet one is next")
			}
			continue
		}
		if !errors.As(err, &b) || !strings.Contains(b.Reason, tc.reason) || b.File != "scripts/ralph/prd.json" {
			t.Errorf("%s: %v; want a BrokenError with %q", tc.content, err, tc.reason)
		}
	}
}

// TestReloadParsesOnlyChanges: a tracked file read as it was last parsed is not parsed
// again (the loop's look after a checkpoint), and keeps the ids KeepIDs gave it; one
// that changed, or came back after a broken one, is read as it is now.
func TestReloadParsesOnlyChanges(t *testing.T) {
	root := repo(t)
	s, err := Builtin().Resolve(Repo{Root: root, Cwd: root}, "scripts/ralph/prd.json")
	if err != nil {
		t.Fatal(err)
	}
	parses := 0
	parse := s.parse
	s.parse = func(b []byte) (tasklist.Tasks, error) { parses++; return parse(b) }
	path := filepath.Join(root, "scripts", "ralph", "prd.json")
	open := `{"branchName": "ralph/task-priority", "userStories": [{"id": "US-001", "passes": true}, {"id": "US-002"}]}`
	for i, step := range []struct {
		content    string // "" leaves the file as it is
		parses     int
		next, fail string
	}{
		{content: open, parses: 1, next: "US-002"},
		{parses: 1, next: "US-002"},
		{content: `{"branchName": "ralph/task-priority", "userStories": [`, parses: 2, fail: "not valid JSON"},
		{content: open, parses: 2, next: "US-002"}, // as last parsed
		{content: strings.Replace(open, `{"id": "US-002"}`, `{"id": "US-002", "passes": true}`, 1), parses: 3},
	} {
		if step.content != "" {
			if err := os.WriteFile(path, []byte(step.content), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		err := s.Reload()
		if step.fail != "" {
			if err == nil || !strings.Contains(err.Error(), step.fail) {
				t.Errorf("step %d: %v; want %q", i, err, step.fail)
			}
		} else if err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
		if parses != step.parses {
			t.Errorf("step %d: %d parses, want %d", i, parses, step.parses)
		}
		if step.fail != "" {
			continue
		}
		next, ok := s.NextStory()
		if got := map[bool]string{true: next.ID}[ok]; got != step.next {
			t.Errorf("step %d: next story %q, want %q", i, got, step.next)
		}
	}
}

// TestSymlinksOut: a file that would go into the prompt is read only when it is a
// regular file inside the repository: a spec-kit spec.md linked out of it is refused, a
// progress.txt linked out is no learnings file, a tasks.md linked out is refused.
func TestSymlinksOut(t *testing.T) {
	root := repo(t)
	secret := filepath.Join(t.TempDir(), "id_ed25519")
	write(t, filepath.Dir(secret), "id_ed25519", "PRIVATE KEY\n")
	write(t, root, "specs/009-linked/tasks.md", "## Phase 1: A\n- [ ] T001 a\n")
	if err := os.Symlink(secret, filepath.Join(root, "specs", "009-linked", "spec.md")); err != nil {
		t.Fatal(err)
	}
	if _, err := Builtin().Resolve(Repo{Root: root, Cwd: root}, "009-linked"); err == nil || !strings.Contains(err.Error(), "outside the repository") {
		t.Errorf("a spec.md linked out of the repository: %v", err)
	}
	if err := os.Remove(filepath.Join(root, "scripts", "ralph", "progress.txt")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(secret, filepath.Join(root, "scripts", "ralph", "progress.txt")); err != nil {
		t.Fatal(err)
	}
	s, err := Builtin().Resolve(Repo{Root: root, Cwd: root}, "scripts/ralph/prd.json")
	if err != nil || s.Learnings != "" {
		t.Errorf("a progress.txt linked out: learnings %q, %v", s.Learnings, err)
	}
	write(t, root, "specs/010-tasks-out/spec.md", "# s\n")
	if err := os.Symlink(secret, filepath.Join(root, "specs", "010-tasks-out", "tasks.md")); err != nil {
		t.Fatal(err)
	}
	if _, err := Builtin().Resolve(Repo{Root: root, Cwd: root}, "speckit:010-tasks-out"); err == nil || strings.Contains(err.Error(), "PRIVATE") {
		t.Errorf("a tasks.md linked out of the repository: %v", err)
	}
}
