package openspec

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"unicode"

	"github.com/git-ralph/git-ralph/internal/repofile"
)

const fixtures = "testdata/fixtures"

func readJSON(t testing.TB, name string, v any) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(fixtures, name))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, v); err != nil {
		t.Fatal(err)
	}
}

func TestTaskLines(t *testing.T) {
	var cases []struct {
		Label, Line string
		Counted     bool
		Done        *bool
		Description *string
	}
	readJSON(t, "task-lines.json", &cases)
	if len(cases) < 75 {
		t.Fatalf("only %d cases in task-lines.json", len(cases))
	}
	for _, c := range cases {
		t.Run(c.Label, func(t *testing.T) {
			desc, done, ok := matchTask(c.Line)
			if ok != c.Counted {
				t.Fatalf("matchTask(%q) counted = %v, CLI says %v", c.Line, ok, c.Counted)
			}
			wantDone, wantTotal := 0, 0
			if ok {
				if done != *c.Done || desc != *c.Description {
					t.Errorf("matchTask(%q) = %q, done %v; CLI says %q, done %v", c.Line, desc, done, *c.Description, *c.Done)
				}
				wantTotal = 1
				if *c.Done {
					wantDone = 1
				}
			}
			if d, n := ParseTasks([]byte(c.Line)).Counts(); d != wantDone || n != wantTotal {
				t.Errorf("ParseTasks(%q).Counts() = %d/%d, want %d/%d", c.Line, d, n, wantDone, wantTotal)
			}
		})
	}
}

func TestHeadingLines(t *testing.T) {
	var cases []struct {
		Line     string
		Level2   bool
		Numbered *string
	}
	readJSON(t, "heading-lines.json", &cases)
	for _, c := range cases {
		ok, text := parseHeading(c.Line)
		if ok != c.Level2 {
			t.Errorf("parseHeading(%q) = %v; want %v", c.Line, ok, c.Level2)
		}
		// A "## N." heading (the CLI's numbering lint) keeps its number as the story id,
		// so a run recorded before headings of every style became stories resumes.
		if c.Numbered != nil {
			if id, _ := storyName(text); id != *c.Numbered {
				t.Errorf("storyName(%q) id = %q; the CLI numbers it %q", text, id, *c.Numbered)
			}
		}
	}
}

type expectedTask struct {
	ID          string
	Description string
	Done        bool
	Line        int
}

// task is e as ParseTasks gives it: expected.json's description is the CLI's, with the id.
func (e expectedTask) task() Task {
	return Task{ID: e.ID, Text: jsTrim(strings.TrimPrefix(e.Description, e.ID)), Done: e.Done, Line: e.Line}
}

type expectedChange struct {
	Path         string
	Archived     bool
	HasTasksFile bool
	CLI          struct{ CompletedTasks, TotalTasks int }
	Stories      []struct {
		ID, Title string
		Line      int
		Complete  bool
		Tasks     []expectedTask
	}
	Specs []struct {
		Capability, Purpose string
		Requirements        []struct {
			Operation, Name, From, To, Text string
			Scenarios                       []struct {
				Name    string
				Steps   []struct{ Keyword, Text string }
				RawText string
			}
		}
	}
}

type expectedRepos struct {
	Repos map[string]struct {
		ActiveChanges []string
		Changes       map[string]expectedChange
	}
}

func (e expectedChange) tasks() Tasks {
	var want Tasks
	for _, s := range e.Stories {
		story := Story{ID: s.ID, Title: s.Title, Line: s.Line}
		for _, task := range s.Tasks {
			story.Tasks = append(story.Tasks, task.task())
		}
		want.Stories = append(want.Stories, story)
	}
	return want
}

func (e expectedChange) specs() []Spec {
	var want []Spec
	for _, s := range e.Specs {
		spec := Spec{Capability: s.Capability, Purpose: s.Purpose, Path: e.Path + "/specs/" + s.Capability + "/spec.md"}
		for _, r := range s.Requirements {
			req := Requirement{Op: r.Operation, Name: r.Name, Text: r.Text}
			if r.Operation == "RENAMED" {
				req.Name, req.From = r.To, r.From
			}
			for _, sc := range r.Scenarios {
				scenario := Scenario{Name: sc.Name, Text: sc.RawText}
				for _, step := range sc.Steps {
					scenario.Steps = append(scenario.Steps, step.Keyword+" "+step.Text)
				}
				req.Scenarios = append(req.Scenarios, scenario)
			}
			spec.Requirements = append(spec.Requirements, req)
		}
		want = append(want, spec)
	}
	return want
}

func TestExpected(t *testing.T) {
	var exp expectedRepos
	readJSON(t, "expected.json", &exp)
	for repo, r := range exp.Repos {
		root := filepath.Join(fixtures, repo)
		t.Run(repo+"/ListChanges", func(t *testing.T) {
			got, err := ListChanges(root)
			if err != nil || !reflect.DeepEqual(got, r.ActiveChanges) {
				t.Errorf("ListChanges = %q, %v; want %q", got, err, r.ActiveChanges)
			}
		})
		for name, e := range r.Changes {
			t.Run(repo+"/"+name, func(t *testing.T) {
				var c *Change
				var err error
				if e.Archived { // not listed, so Load refuses it
					c, err = loadDir(nil, root, e.Path, name, true)
				} else {
					c, err = Load(root, name)
				}
				if err != nil {
					t.Fatal(err)
				}
				if c.Name != name || c.RelDir != e.Path || c.HasTasks != e.HasTasksFile || !filepath.IsAbs(c.Dir) ||
					c.TasksPath != filepath.Join(c.Dir, "tasks.md") {
					t.Errorf("got Name %q RelDir %q HasTasks %v Dir %q TasksPath %q", c.Name, c.RelDir, c.HasTasks, c.Dir, c.TasksPath)
				}
				if done, total := c.Counts(); done != e.CLI.CompletedTasks || total != e.CLI.TotalTasks {
					t.Errorf("Counts() = %d/%d, CLI says %d/%d", done, total, e.CLI.CompletedTasks, e.CLI.TotalTasks)
				}
				if want := e.tasks(); !reflect.DeepEqual(plain(c.Stories), want.Stories) {
					t.Errorf("stories:\n got %+v\nwant %+v", c.Stories, want.Stories)
				}
				for i, s := range e.Stories {
					if got := c.Stories[i].Complete(); got != s.Complete {
						t.Errorf("story %s Complete() = %v, want %v", s.ID, got, s.Complete)
					}
				}
				if want := e.specs(); !reflect.DeepEqual(c.Specs, want) {
					t.Errorf("specs:\n got %+v\nwant %+v", c.Specs, want)
				}
				if c.Proposal == "" {
					t.Error("proposal.md not read")
				}
			})
		}
	}
}

func TestLoadUnknown(t *testing.T) {
	root := filepath.Join(fixtures, "repo")
	for _, name := range []string{"nope", "../x", "a/b", "", "archive", ".", "..", "archive/2026-11-25-add-session-management",
		"add-password-reset/", "./add-password-reset", "ADD-PASSWORD-RESET"} {
		_, err := Load(root, name)
		var unknown *UnknownChangeError
		if !errors.As(err, &unknown) || unknown.Name != name {
			t.Fatalf("Load(%q) error = %v, want *UnknownChangeError", name, err)
		}
	}
	_, err := Load(root, "../x")
	unknown := err.(*UnknownChangeError)
	if got, want := err.Error(), `no change "../x" in openspec/changes`; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
	if got, want := unknown.Hint(), "changes here: add-email-notifications, add-password-reset, remove-remember-me"; got != want {
		t.Errorf("Hint() = %q, want %q", got, want)
	}
	_, err = Load(t.TempDir(), "x")
	if got, want := err.(*UnknownChangeError).Hint(), "no changes here: create one with 'openspec new change <name>'"; got != want {
		t.Errorf("Hint() = %q, want %q", got, want)
	}
}

// TestDirectories covers what the fixtures cannot hold: hidden and empty directories,
// symlinks, plain files, a directory named tasks.md, a missing openspec/changes.
func TestDirectories(t *testing.T) {
	root := t.TempDir()
	if names, err := ListChanges(root); names != nil || err != nil {
		t.Fatalf("ListChanges without openspec/ = %q, %v; want nil, nil", names, err)
	}
	changes := filepath.Join(root, "openspec", "changes")
	for _, dir := range []string{"archive/2026-01-01-old", ".hidden", "empty", "b-dir-tasks/tasks.md", "Bad_Name/specs/a/b"} {
		if err := os.MkdirAll(filepath.Join(changes, dir), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	files := map[string]string{
		"plain-file":                  "",
		"Bad_Name/tasks.md":           "## 1. One\n- [x] 1.1 done\n",
		"Bad_Name/specs/spec.md":      "## ADDED Requirements\n### Requirement: Ignored\n",
		"Bad_Name/specs/a/b/spec.md":  "## REMOVED Requirements\n- `### Requirement: Old`\n",
		"Bad_Name/specs/a/spec.md":    "## ADDED Requirements\n```\n### Requirement: Fenced\n```\n### Requirement: Real ###\nIt SHALL.\n#### Scenario: S ##\n- **WHEN** w\n",
		"archive/2026-01-01-old/x.md": "",
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(changes, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("empty", filepath.Join(changes, "link")); err != nil {
		t.Fatal(err)
	}
	names, err := ListChanges(root)
	if want := []string{"Bad_Name", "b-dir-tasks", "empty"}; err != nil || !reflect.DeepEqual(names, want) {
		t.Fatalf("ListChanges = %q, %v; want %q", names, err, want)
	}
	for _, name := range []string{"link", ".hidden", "plain-file"} {
		if _, err := Load(root, name); !errors.As(err, new(*UnknownChangeError)) {
			t.Errorf("Load(%q) error = %v, want *UnknownChangeError", name, err)
		}
	}
	for _, name := range []string{"empty", "b-dir-tasks"} {
		c, err := Load(root, name)
		if err != nil || c.HasTasks || c.Stories != nil || c.Specs != nil {
			t.Errorf("Load(%q) = %+v, %v; want a change without tasks", name, c, err)
		}
	}
	c, err := Load(root, "Bad_Name")
	if err != nil {
		t.Fatal(err)
	}
	want := []Spec{
		{Capability: "a", Path: "openspec/changes/Bad_Name/specs/a/spec.md", Requirements: []Requirement{{Op: "ADDED", Name: "Real",
			Text: "It SHALL.", Scenarios: []Scenario{{Name: "S", Steps: []string{"WHEN w"}, Text: "- **WHEN** w"}}}}},
		{Capability: "a/b", Path: "openspec/changes/Bad_Name/specs/a/b/spec.md", Requirements: []Requirement{{Op: "REMOVED", Name: "Old"}}},
	}
	if !c.HasTasks || !reflect.DeepEqual(c.Specs, want) {
		t.Errorf("Load(Bad_Name) = HasTasks %v, specs %+v; want %+v", c.HasTasks, c.Specs, want)
	}
}

func TestChangeProgress(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "openspec", "changes", "c")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	write := func(s string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, "tasks.md"), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("- [ ] loose\n## Notes\n* [x] note\n## 1. A\n- [x] 1.1 a\n## 2. B\n- [ ] 2.1 b\n- [x] 2.2 c\n## 2. Again\n- [ ] again\n## Empty\n")
	c, err := Load(root, "c")
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, s := range c.Stories {
		ids = append(ids, s.ID)
	}
	if want := []string{"tasks", "notes", "1", "2", "2_2"}; !reflect.DeepEqual(ids, want) {
		t.Errorf("story ids = %q, want %q", ids, want)
	}
	if s, ok := c.NextStory(); !ok || s.ID != "tasks" || s.Line != 0 || s.Title != "Tasks" {
		t.Errorf("NextStory() = %+v, %v; want the tasks before the first heading", s, ok)
	}
	write("## 1. A\n- [x] 1.1 a\n## 2. B\n- [ ] 2.1 b\n- [x] 2.2 c\n## 2. Again\n- [ ] again\n")
	if err := c.Reload(); err != nil {
		t.Fatal(err)
	}
	if s, ok := c.NextStory(); !ok || s.Title != "B" || len(s.OpenTasks()) != 1 || s.OpenTasks()[0].ID != "2.1" {
		t.Errorf("NextStory() = %+v, %v; want story 2 with open task 2.1", s, ok)
	}
	if s, ok := c.Story("2"); !ok || s.Title != "B" {
		t.Errorf("Story(2) = %+v, %v; want the first story 2", s, ok)
	}
	if s, ok := c.Story("2_2"); !ok || s.Title != "Again" {
		t.Errorf("Story(2_2) = %+v, %v; want the second story 2", s, ok)
	}
	if _, ok := c.Story("3"); ok {
		t.Error("Story(3) found a story")
	}
	write("## 1. A\n- [x] 1.1 a\n## 2. B\n- [x] 2.1 b\n")
	if err := c.Reload(); err != nil {
		t.Fatal(err)
	}
	if s, ok := c.NextStory(); ok {
		t.Errorf("after Reload NextStory() = %+v, %v; want none", s, ok)
	}
	if err := os.Remove(filepath.Join(dir, "tasks.md")); err != nil {
		t.Fatal(err)
	}
	if err := c.Reload(); err != nil || c.HasTasks || c.Stories != nil {
		t.Errorf("Reload without tasks.md = %v, HasTasks %v, %d stories", err, c.HasTasks, len(c.Stories))
	}
}

func TestSplitID(t *testing.T) {
	for desc, want := range map[string][2]string{
		"1.1 plain":   {"1.1", "plain"},
		"3.1.2a\tx":   {"3.1.2a", "x"},
		"10.3":        {"10.3", ""},
		"1.2\u00a0x":  {"1.2", "x"},
		"1. x":        {"", "1. x"},
		"1 x":         {"", "1 x"},
		"1.2.x y":     {"", "1.2.x y"},
		"1.2a.3 y":    {"", "1.2a.3 y"},
		"1.2: y":      {"", "1.2: y"},
		"1.2é y":      {"", "1.2é y"},
		"v1.2 y":      {"", "v1.2 y"},
		"12.34AbC  z": {"12.34AbC", "z"},
		"":            {"", ""},
	} {
		if id, text := splitID(desc); id != want[0] || text != want[1] {
			t.Errorf("splitID(%q) = %q, %q; want %q, %q", desc, id, text, want[0], want[1])
		}
	}
}

// TestWellFormed: ill-formed UTF-8 decodes as in Node (one U+FFFD per maximal subpart);
// the verdicts below were produced by node 20 with the CLI's pattern.
func TestWellFormed(t *testing.T) {
	for _, c := range []struct {
		in      string
		counted bool
	}{
		{"- [\xe2\x82] a", true},
		{"- [\xe2]", true},
		{"- [\xc3\xa9\xe2]", false},
		{"- [\xf0\x9f\x9a]", true},
		{"- [\xed\xa0\x80]", false},
		{"- [\xc0\x80]", false},
		{"- [\xf4\x90\x80\x80]", false},
		{"- [\xe0\x80]", false},
		{"- [] \xffx", true},
	} {
		if _, total := ParseTasks([]byte(c.in)).Counts(); (total == 1) != c.counted {
			t.Errorf("ParseTasks(%q) counted %d tasks, Node counts %v", c.in, total, c.counted)
		}
	}
	if got := wellFormed([]byte("a\xe2\x82b\xffc\xf0\x9f\x9a")); got != "a\ufffdb\ufffdc\ufffd" {
		t.Errorf("wellFormed = %q", got)
	}
}

// refTask is the CLI's TASK_LINE_PATTERN in RE2 syntax. It is applied to lines rewritten by
// refLine, so that RE2 sees what JavaScript sees: every JS whitespace character becomes a
// space, and an astral character becomes two units. The look-ahead (?![([]) becomes a
// consumed character class, which changes nothing for counting.
var refTask = regexp.MustCompile(`^\s*(?:[-*+]|\d{1,9}[.)])\s*\[(?:\s*([^\]\s]?)\s*\](?:[^(\[]|$)|\s+\])`)

func refLine(line string) string {
	var b strings.Builder
	for _, r := range line {
		switch {
		case unicode.Is(unicode.Zs, r) || strings.ContainsRune("\t\n\v\f\r\u2028\u2029\ufeff", r):
			b.WriteByte(' ')
		case r > 0xFFFF:
			b.WriteString("\uE000\uE000")
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// refCounts is OpenSpec's counting rule (docs/TASKS.md, "The kinds") written the plain way: split on \n, match, count.
func refCounts(data []byte) (done, total int) {
	for _, line := range strings.Split(wellFormed(data), "\n") {
		m := refTask.FindStringSubmatch(refLine(line))
		if m == nil {
			continue
		}
		total++
		if m[1] == "x" || m[1] == "X" {
			done++
		}
	}
	return done, total
}

func FuzzParseTasks(f *testing.F) {
	paths, _ := filepath.Glob(filepath.Join(fixtures, "*", "openspec", "changes", "*", "tasks.md"))
	archived, _ := filepath.Glob(filepath.Join(fixtures, "*", "openspec", "changes", "archive", "*", "tasks.md"))
	for _, p := range append(paths, archived...) {
		data, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	var lines []struct{ Line string }
	readJSON(f, "task-lines.json", &lines)
	for _, l := range lines {
		f.Add([]byte(l.Line))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		tasks := ParseTasks(data)
		done, total := tasks.Counts()
		if done < 0 || done > total {
			t.Fatalf("Counts() = %d/%d", done, total)
		}
		if rd, rt := refCounts(data); rd != done || rt != total {
			t.Fatalf("Counts() = %d/%d, reference model says %d/%d", done, total, rd, rt)
		}
		checkStories(t, data, tasks)
	})
}

func BenchmarkParseTasks(b *testing.B) {
	var sb strings.Builder
	sb.WriteString("# Tasks\n") // 200 stories of 10 lines: 2,001 lines
	for i := 1; i <= 200; i++ {
		fmt.Fprintf(&sb, "\n## %d. Story number %d\n\n", i, i)
		for j := 1; j <= 7; j++ {
			box := " "
			if j%3 == 0 {
				box = "x"
			}
			fmt.Fprintf(&sb, "- [%s] %d.%d Implement part %d of story %d and verify it with a test\n", box, i, j, j, i)
		}
	}
	data := []byte(sb.String())
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		ParseTasks(data)
	}
}

// plain is stories without what the CLI's parse does not give (odd boxes, sub-headings,
// legacy ids, sections' ends, what continues a task), which other tests check.
func plain(stories []Story) []Story {
	var out []Story
	for _, s := range stories {
		s.LegacyID, s.End = "", 0
		s.Tasks = append([]Task(nil), s.Tasks...)
		for i := range s.Tasks {
			s.Tasks[i].Box, s.Tasks[i].Heading, s.Tasks[i].Indent = "", "", 0
			s.Tasks[i].Rest, s.Tasks[i].End = "", 0
		}
		out = append(out, s)
	}
	return out
}

// TestLoadBounded: what a change's documents hold is read with a limit: the first
// repofile.MaxDoc bytes of a long proposal, design or spec (Spec.Cut says so), at most
// repofile.MaxDocs specs (MoreSpecs says there are others).
func TestLoadBounded(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "openspec", "changes", "x")
	write := func(rel, content string) {
		t.Helper()
		p := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("tasks.md", "## 1. One\n- [ ] 1.1 do it\n")
	long := "# Change: x\n\n## Why\n\nBecause.\n\n" + strings.Repeat("more words\n", repofile.MaxDoc/5)
	write("proposal.md", long)
	write("design.md", long)
	req := "### Requirement: R%d\nThe system SHALL do %d.\n\n#### Scenario: S\n- **WHEN** a\n- **THEN** b\n\n"
	var spec strings.Builder
	spec.WriteString("## ADDED Requirements\n\n")
	for i := 0; spec.Len() < 2*repofile.MaxDoc; i++ {
		fmt.Fprintf(&spec, req, i, i)
	}
	write("specs/aaa/spec.md", spec.String())
	for i := range repofile.MaxDocs + 5 {
		write(fmt.Sprintf("specs/cap%03d/spec.md", i), "## ADDED Requirements\n\n"+fmt.Sprintf(req, i, i))
	}
	c, err := Load(root, "x")
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Proposal) != repofile.MaxDoc || len(c.Design) != repofile.MaxDoc || !strings.HasPrefix(c.Proposal, "# Change: x") {
		t.Errorf("proposal %d bytes, design %d, want the first %d of each", len(c.Proposal), len(c.Design), repofile.MaxDoc)
	}
	if len(c.Specs) != repofile.MaxDocs || !c.MoreSpecs {
		t.Fatalf("%d specs (more: %v), want %d and more", len(c.Specs), c.MoreSpecs, repofile.MaxDocs)
	}
	if s := c.Specs[0]; s.Capability != "aaa" || !s.Cut || len(s.Requirements) == 0 {
		t.Errorf("the long spec: %s, cut %v, %d requirements", s.Capability, s.Cut, len(s.Requirements))
	}
	if c.Specs[1].Cut {
		t.Errorf("a short spec is cut")
	}
}
