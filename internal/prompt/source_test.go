package prompt

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/git-ralph/git-ralph/internal/source"
)

// copyFixture writes the fixture file from another package's testdata into root at path.
func copyFixture(t *testing.T, root, from, path string) {
	t.Helper()
	data, err := os.ReadFile(filepath.FromSlash(from))
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, root, path, string(data))
}

func writeFile(t *testing.T, root, path, content string) {
	t.Helper()
	p := filepath.Join(root, filepath.FromSlash(path))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// golden compares got with testdata/<name>; UPDATE_GOLDEN=1 rewrites it.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if os.Getenv("UPDATE_GOLDEN") != "" {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (UPDATE_GOLDEN=1 go test ./internal/prompt writes it)", err)
	}
	if got != string(want) {
		t.Errorf("the prompt differs from %s (UPDATE_GOLDEN=1 regenerates it):\n%s", path, lineDiff(string(want), got))
	}
}

// sourcePrompt resolves arg in root and renders the prompt of its next story.
func sourcePrompt(t *testing.T, root, arg, learnings, reason string) (*source.Source, string) {
	t.Helper()
	s, err := source.Builtin().Resolve(source.Repo{Root: root}, arg)
	if err != nil {
		t.Fatal(err)
	}
	story, ok := s.NextStory()
	if !ok {
		t.Fatal("no next story")
	}
	return s, render(t, "", ForSource(s, story, learningsPath, learnings, 1, 4, reason))
}

// TestSpecKitPrompt: a phase whole (its Goal, Independent Test and Checkpoint lines, its
// "###" groups), the feature's documents named and
// plan.md and spec.md inlined, a checklist with open items, "[X]" asked for.
func TestSpecKitPrompt(t *testing.T) {
	root := t.TempDir()
	dir := "specs/004-offline-sync/"
	copyFixture(t, root, "../speckit/testdata/upper-x-in-progress.md", dir+"tasks.md")
	writeFile(t, root, dir+"spec.md", "# Feature Specification: Offline Sync\n\nField workers edit notes where there is no network.\n")
	writeFile(t, root, dir+"plan.md", "# Implementation Plan: Offline Sync\n\n**Language/Version**: TypeScript 5.6\n**Storage**: SQLite on device\n")
	writeFile(t, root, dir+"research.md", "# Research\n")
	writeFile(t, root, dir+"contracts/sync.yaml", "openapi: 3.1.0\n")
	writeFile(t, root, dir+"checklists/requirements.md", "- [x] CHK001 a\n- [ ] CHK002 b\n")
	writeFile(t, root, ".specify/memory/constitution.md", "# Constitution\n")
	_, got := sourcePrompt(t, root, "004", "", "")
	golden(t, "speckit.golden", got)
	for _, want := range []string{
		`spec-kit feature "004-offline-sync"`,
		"Story 3: User Story 1 - Edit notes without a connection",
		"<section>\n## Phase 3: User Story 1 - Edit notes without a connection (Priority: P1) 🎯 MVP\n\n**Goal**: A note edited offline",
		"**Independent Test**: Turn on airplane mode",
		"### Tests for User Story 1 ⚠️\n\n> **NOTE: Write these tests FIRST",
		"### Implementation for User Story 1\n\n- [ ] T009 [US1]",
		"**Checkpoint**: User Story 1 is fully functional and testable on its own\n</section>",
		"- specs/004-offline-sync/research.md\n",
		"- specs/004-offline-sync/contracts/\n",
		"- .specify/memory/constitution.md\n",
		"Field workers edit notes where there is no network.",
		"**Storage**: SQLite on device",
		"checklist specs/004-offline-sync/checklists/requirements.md has 1 of 2 items unchecked",
		`change "- [ ]" to "- [X]"`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("the prompt lacks %q", want)
		}
	}
	if strings.Contains(got, "T011") {
		t.Error("another phase's task is in the prompt")
	}
}

// TestPlanPrompt: a ralphex Task section, the plan inlined as it stands.
func TestPlanPrompt(t *testing.T) {
	root := t.TempDir()
	copyFixture(t, root, "../plan/testdata/ralphex-long-lines.md", "docs/plans/long-lines-plan.md")
	_, got := sourcePrompt(t, root, "docs/plans/long-lines-plan.md", "", "")
	golden(t, "plan.golden", got)
	for _, want := range []string{
		"one section of the plan docs/plans/long-lines-plan.md",
		"Story 1: Fix CodexExecutor to pass prompt via stdin",
		"- [ ] Run `make test` and `make lint`",
		"<plan>\n# Fix Windows Command-Line Length Limits",
		"- [ ] 2: Fix codex-as-claude.sh",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("the prompt lacks %q", want)
		}
	}
}

// TestPRDPrompt: the story's object whole (description, criteria, notes), progress.txt
// as the learnings file, the passes rule.
func TestPRDPrompt(t *testing.T) {
	root := t.TempDir()
	copyFixture(t, root, "../prd/testdata/feature-branch-partial.json", "scripts/ralph/prd.json")
	writeFile(t, root, "scripts/ralph/progress.txt", "# Ralph Progress Log\n## Codebase Patterns\n- Use StatementQuery for every export\n")
	s, got := sourcePrompt(t, root, "scripts/ralph/prd.json", "# Ralph Progress Log\n## Codebase Patterns\n- Use StatementQuery for every export", "")
	if s.Name != "feature-812-export-statements" {
		t.Errorf("run name %q", s.Name)
	}
	golden(t, "prd.golden", got)
	for _, want := range []string{
		"Story US-002: CSV export endpoint",
		`"description": "As a user, I want to download a month as CSV.",`,
		`    "The header row is date,description,amount,balance",`,
		`  "notes": ""`,
		"scripts/ralph/progress.txt holds notes shared by every story of this prd.",
		"> - Use StatementQuery for every export",
		`set "passes" to true for story US-002 in scripts/ralph/prd.json`,
		`Keep it the way snarktank/ralph keeps progress.txt: a "## Codebase Patterns" section at its top`,
		"- [x] US-001: Add the statement query",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("the prompt lacks %q", want)
		}
	}
	if strings.Contains(got, "not committed") {
		t.Error("progress.txt is said not to be committed")
	}
}

// TestOpenSpecFixes: odd boxes shown as written with a line on how they count, tasks
// under "###" under their sub-heading, as the section has them.
func TestOpenSpecFixes(t *testing.T) {
	root := t.TempDir()
	writeFile(t, root, "openspec/changes/cli/tasks.md", `## Phase 0: Groundwork
### Task 0.1: Parse the flags
- [x] 0.1.1 Add the flag set
- [~] 0.1.2 Validate durations
  - [ ] reject negative values
### Task 0.2: Wire the command
- [-] 0.2.1 Old entry point (dropped)
- [ ] 0.2.2 New entry point
`)
	_, got := sourcePrompt(t, root, "cli", "", "")
	golden(t, "openspec-fixes.golden", got)
	for _, want := range []string{
		"### Task 0.1: Parse the flags\n- [x] 0.1.1 Add the flag set\n- [~] 0.1.2 Validate durations\n  - [ ] reject negative values\n### Task 0.2: Wire the command\n- [-] 0.2.1",
		"Boxes such as [~], [-] are shown as written; git-ralph counts them as open",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("the prompt lacks %q:\n%s", want, got)
		}
	}
}

// TestSpecKitPromptBare: a feature with tasks.md only says so, and names no document.
func TestSpecKitPromptBare(t *testing.T) {
	root := t.TempDir()
	writeFile(t, root, "specs/007-bare/tasks.md", "## Phase 1: Setup\n- [ ] T001 a\n")
	_, got := sourcePrompt(t, root, "007-bare", "", "")
	if !strings.Contains(got, "The feature's documents are in specs/007-bare/: tasks.md only, so far.\n") {
		t.Errorf("the prompt of a bare feature:\n%s", got)
	}
	if strings.Contains(got, "Before you start") || strings.Contains(got, "<spec>") {
		t.Error("notes or documents that do not exist")
	}
}
