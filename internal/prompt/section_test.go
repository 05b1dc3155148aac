package prompt

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/git-ralph/git-ralph/internal/source"
)

// The story whole (issue 30, item 1): the prompt carries the story's own section of the
// tracked file as written, one golden per source, and a section over 24 KiB is named by
// its line range with every open task listed whole.

// openspecTasks is the example: a task whose text wraps, a note nested under it,
// a code block under a task, a sub-task in a nested bullet.
const openspecTasks = `## 1. Parser
- [ ] 1.1 Parse the header line and reject anything that
  does not start with MAGIC, returning ErrBadMagic
  - note: keep the reader streaming
- [ ] 1.2 Read the records
  ` + "```go" + `
  for r.Next() {
      rec := r.Record()
  }
  ` + "```" + `
  - [ ] 1.2.1 Stop at the first bad checksum,
    naming its offset

## 2. Writer
- [ ] 2.1 Write the header
`

func TestSectionGoldenOpenSpec(t *testing.T) {
	root := t.TempDir()
	writeFile(t, root, "openspec/changes/parser/tasks.md", openspecTasks)
	writeFile(t, root, "openspec/changes/parser/proposal.md", "## Why\n\nThe reader needs a parser.\n")
	_, got := sourcePrompt(t, root, "parser", "", "")
	golden(t, "section-openspec.golden", got)
	wholeSection(t, got, openspecTasks, 1, 12)
}

// TestSectionGoldenSpecKit: spec-kit's own template (testdata of internal/speckit): its
// first phase with its **Purpose** line; a later phase with Goal, Independent Test and
// Checkpoint once the phases before it are done.
func TestSectionGoldenSpecKit(t *testing.T) {
	root := t.TempDir()
	copyFixture(t, root, "../speckit/testdata/template.md", "specs/001-template/tasks.md")
	_, got := sourcePrompt(t, root, "001", "", "")
	golden(t, "section-speckit.golden", got)
	data := readFixture(t, "../speckit/testdata/template.md")
	wholeSection(t, got, data, lineOf(t, data, "## Phase 1: Setup"), lineOf(t, data, "## Phase 2:")-3)

	// Phases 1 and 2 done: phase 3 is next, its Goal, Independent Test and Checkpoint lines with it.
	done := strings.Replace(data, "- [ ] T0", "- [X] T0", 9)
	writeFile(t, root, "specs/001-template/tasks.md", done)
	_, got = sourcePrompt(t, root, "001", "", "")
	for _, want := range []string{"**Goal**: [Brief description of what this story delivers]", "**Independent Test**: [How to verify this story works on its own]",
		"**Checkpoint**: At this point, User Story 1 should be fully functional and testable independently"} {
		if !strings.Contains(got, want) {
			t.Errorf("phase 3's prompt lacks %q", want)
		}
	}
}

// TestSectionGoldenPlan: a real ralphex plan's Task section, its Files and its steps
// with nested bullets and a code block under a task.
func TestSectionGoldenPlan(t *testing.T) {
	root := t.TempDir()
	copyFixture(t, root, "../plan/testdata/ralphex-watch-mode.md", "docs/plans/watch-mode.md")
	data := readFixture(t, "../plan/testdata/ralphex-watch-mode.md")
	data = strings.Replace(data, "- [ ]", "- [x]", strings.Count(data[:strings.Index(data, "### Task 2:")], "- [ ]"))
	writeFile(t, root, "docs/plans/watch-mode.md", data)
	_, got := sourcePrompt(t, root, "docs/plans/watch-mode.md", "", "")
	golden(t, "section-plan.golden", got)
	wholeSection(t, got, data, lineOf(t, data, "### Task 2:"), lineOf(t, data, "### Task 3:")-2)
}

// TestSectionGoldenPRD: snarktank/ralph's example, every field of the story object.
func TestSectionGoldenPRD(t *testing.T) {
	root := t.TempDir()
	copyFixture(t, root, "../prd/testdata/snarktank-example.json", "scripts/ralph/prd.json")
	_, got := sourcePrompt(t, root, "scripts/ralph/prd.json", "", "")
	golden(t, "section-prd.golden", got)
	for _, want := range []string{`"id": "US-001"`, `"title": "Add priority field to database"`, `"description": "As a developer, I need to store task priority so it persists across sessions."`,
		`"Typecheck passes"`, `"priority": 1`, `"passes": false`, `"notes": ""`} {
		if !strings.Contains(got, want) {
			t.Errorf("the prompt lacks %q", want)
		}
	}
}

// TestSectionOver24KiB: a section over 24 KiB is named by its file and its exact line
// range, and every open task is listed whole; a done one is not.
func TestSectionOver24KiB(t *testing.T) {
	root := t.TempDir()
	var b strings.Builder
	b.WriteString("# Tasks\n\n## 1. Migrate every table\n\n**Goal**: one schema\n\n")
	for i := 1; i <= 300; i++ {
		box := " "
		if i%2 == 0 {
			box = "x"
		}
		fmt.Fprintf(&b, "- [%s] 1.%d Migrate table t%03d to the new schema, keeping its rows and\n  its indexes as they are\n  - note: table t%03d has %d rows\n", box, i, i, i, i*1000)
	}
	b.WriteString("\n## 2. Drop the old schema\n- [ ] 2.1 Drop it\n")
	writeFile(t, root, "openspec/changes/migrate/tasks.md", b.String())
	_, got := sourcePrompt(t, root, "migrate", "", "")
	golden(t, "section-cut.golden", got)
	if !strings.Contains(got, "Story 1 is lines 3–906 of openspec/changes/migrate/tasks.md (") {
		t.Errorf("the line range is not named:\n%s", got[:min(len(got), 600)])
	}
	for i := 1; i <= 300; i++ {
		task := fmt.Sprintf("1.%d Migrate table t%03d to the new schema, keeping its rows and\n  its indexes as they are\n  - note: table t%03d has %d rows\n", i, i, i, i*1000)
		if in := strings.Contains(got, task); in != (i%2 == 1) {
			t.Fatalf("task 1.%d (done: %v) in the prompt: %v", i, i%2 == 0, in)
		}
	}
}

// TestRealFilesWholeStory: for real files of every source (spec-kit's template, every
// ralphex plan of internal/plan's testdata, snarktank's prd.json and the OpenSpec
// fixtures), every line of the next story's section is in its prompt.
func TestRealFilesWholeStory(t *testing.T) {
	type real struct{ fixture, path, arg string }
	var files []real
	plans, _ := filepath.Glob(filepath.Join("..", "plan", "testdata", "ralphex-*.md"))
	for _, p := range plans {
		files = append(files, real{p, "docs/plans/" + filepath.Base(p), "docs/plans/" + filepath.Base(p)})
	}
	files = append(files, real{"../speckit/testdata/template.md", "specs/001-x/tasks.md", "001-x"},
		real{"../prd/testdata/snarktank-example.json", "prd.json", "prd.json"})
	changes, _ := filepath.Glob(filepath.Join("..", "openspec", "testdata", "fixtures", "*", "openspec", "changes", "*", "tasks.md"))
	for _, c := range changes {
		name := filepath.Base(filepath.Dir(c))
		files = append(files, real{c, "openspec/changes/" + name + "/tasks.md", name})
	}
	if len(files) < 10 {
		t.Fatalf("only %d real files found", len(files))
	}
	for _, f := range files {
		t.Run(f.arg, func(t *testing.T) {
			root := t.TempDir()
			copyFixture(t, root, filepath.ToSlash(f.fixture), f.path)
			s, err := source.Builtin().Resolve(source.Repo{Root: root}, f.arg)
			if err != nil {
				t.Fatal(err)
			}
			story, ok := s.NextStory()
			if !ok {
				t.Skip("every story is done")
			}
			got := render(t, "", ForSource(s, story, "/tmp/learnings.md", "", 1, 4, ""))
			if strings.HasSuffix(f.path, ".json") {
				if !strings.Contains(got, `"id": "`+story.ID+`"`) {
					t.Errorf("story %s's object is not in the prompt", story.ID)
				}
				return
			}
			data := readFixture(t, f.fixture)
			sec := s.Section(story)
			if sec.Cut {
				t.Skipf("section of %d bytes", sec.Size)
			}
			wholeSection(t, got, data, sec.First, sec.Last)
		})
	}
}

// wholeSection fails unless every non-blank line first..last of data is in the prompt.
func wholeSection(t *testing.T, prompt, data string, first, last int) {
	t.Helper()
	lines := strings.Split(data, "\n")
	if first < 1 || last > len(lines) || first > last {
		t.Fatalf("lines %d–%d of a file of %d", first, last, len(lines))
	}
	for n := first; n <= last; n++ {
		line := strings.TrimRight(lines[n-1], "\r")
		if strings.TrimSpace(line) != "" && !strings.Contains(prompt, line+"\n") {
			t.Errorf("line %d is not in the prompt: %q", n, line)
		}
	}
}

func readFixture(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.FromSlash(path))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// lineOf is the 1-based number of the first line of data that starts with prefix.
func lineOf(t *testing.T, data, prefix string) int {
	t.Helper()
	for i, line := range strings.Split(data, "\n") {
		if strings.HasPrefix(line, prefix) {
			return i + 1
		}
	}
	t.Fatalf("no line starts with %q", prefix)
	return 0
}

// TestSkipRule: the prompt says in one line how to tick a task that cannot be done here,
// in each source's terms, unless skipping is off (ralph.allowSkip=false).
func TestSkipRule(t *testing.T) {
	root := t.TempDir()
	writeFile(t, root, "openspec/changes/parser/tasks.md", openspecTasks)
	copyFixture(t, root, "../prd/testdata/snarktank-example.json", "prd.json")
	for arg, want := range map[string]string{
		"parser":   `tick it all the same and end its text with "(skipped - not automatable: <why>)"`,
		"prd.json": `end that acceptance criterion's text with "(skipped - not automatable: <why>)"`,
	} {
		s, err := source.Builtin().Resolve(source.Repo{Root: root}, arg)
		if err != nil {
			t.Fatal(err)
		}
		story, _ := s.NextStory()
		d := ForSource(s, story, "/l.md", "", 1, 4, "")
		if got := render(t, "", d); !strings.Contains(got, want) {
			t.Errorf("%s: the prompt lacks %q", arg, want)
		}
		d.NoSkip = true
		if got := render(t, "", d); strings.Contains(got, "skipped - not automatable") {
			t.Errorf("%s: skipping is off, yet the prompt offers it", arg)
		}
	}
}
