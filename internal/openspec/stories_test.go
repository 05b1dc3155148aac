package openspec

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
)

// storySummary is a story as the tables below state it: id, title, heading line, and
// its tasks' lines.
type storySummary struct {
	ID, Title string
	Line      int
	Tasks     []int
}

func summarize(t Tasks) []storySummary {
	var out []storySummary
	for _, s := range t.Stories {
		sum := storySummary{ID: s.ID, Title: s.Title, Line: s.Line}
		for _, task := range s.Tasks {
			sum.Tasks = append(sum.Tasks, task.Line)
		}
		out = append(out, sum)
	}
	return out
}

// TestStyleFixtures parses realistic tasks.md files in each heading style people write
// (testdata/styles): every section with a task is a story, with the id docs/TASKS.md gives it.
func TestStyleFixtures(t *testing.T) {
	for dir, want := range map[string][]storySummary{
		"phases": {
			{"1", "Foundation", 3, []int{5, 6}},
			{"2", "Zsh", 8, []int{10, 11, 12}},
			{"3", "Bash and Fish", 14, []int{16, 17}},
		},
		"paren-numbers": {
			{"1", "CLI wiring", 3, []int{5, 6}},
			{"2", "Resolution order", 8, []int{10, 11}},
			{"3", "Docs", 13, []int{15}},
		},
		"bare-numbers": {
			{"1", "Setup", 1, []int{2, 3}},
			{"2", "Rollout", 5, []int{6}},
			{"2.3", "Sub-step: metrics", 8, []int{9}},
		},
		"steps": {
			{"1", "Read the config", 3, []int{5, 6}},
			{"2", "Wire it", 8, []int{10}},
			{"3", "Verify", 12, []int{14, 15}},
		},
		"prerequisites": {
			{"prerequisites", "Prerequisites", 3, []int{5, 6}},
			{"1", "Producer", 8, []int{10, 11}},
			{"2", "Consumers", 13, []int{15}},
		},
		"flat-list": {
			{"tasks", "Tasks", 0, []int{3, 4, 5, 6}},
		},
		"implementation-sections": {
			{"implementation-tasks", "Implementation Tasks", 7, []int{9, 10, 14}},
			{"testing", "Testing", 16, []int{18, 19}},
			{"implementation-tasks_2", "Implementation Tasks", 21, []int{23}},
		},
		"mixed": { // BOM, CRLF, accents, an emoji heading, a long heading, a heading of dashes
			{"taches", "Tâches", 0, []int{3}},
			{"etape-1-donnees", "Étape 1 : Données", 5, []int{7}},
			{"story", "🚀", 9, []int{11}},
			{"implementation-tres-longue-de-la", "Implémentation très longue de la fonctionnalité de synchronisation hors ligne", 13, []int{15}},
			{"story_2", "---", 17, []int{19}},
		},
	} {
		t.Run(dir, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join("testdata", "styles", dir, "tasks.md"))
			if err != nil {
				t.Fatal(err)
			}
			tasks := ParseTasks(data)
			if got := summarize(tasks); !reflect.DeepEqual(got, want) {
				t.Errorf("stories:\n got %+v\nwant %+v", got, want)
			}
			checkStories(t, data, tasks)
		})
	}
}

// TestStoryHeadings: one table row per heading style, plus the awkward cases.
func TestStoryHeadings(t *testing.T) {
	for _, c := range []struct {
		name, tasks string
		want        []storySummary
	}{
		{"numbered with a dot", "## 1. Setup\n- [ ] 1.1 a\n", []storySummary{{"1", "Setup", 1, []int{2}}}},
		{"numbered with a paren", "## 1) CLI wiring\n- [ ] a\n", []storySummary{{"1", "CLI wiring", 1, []int{2}}}},
		{"number without a dot", "## 1 Setup\n- [ ] a\n", []storySummary{{"1", "Setup", 1, []int{2}}}},
		{"sub-step number", "## 2.3 Sub-step\n- [ ] a\n", []storySummary{{"2.3", "Sub-step", 1, []int{2}}}},
		{"phase", "## Phase 2: Zsh\n- [ ] a\n", []storySummary{{"2", "Zsh", 1, []int{2}}}},
		{"step with a dash", "## Step 2 - Wire it\n- [ ] a\n", []storySummary{{"2", "Wire it", 1, []int{2}}}},
		{"other words", "## part 1\n- [ ] a\n## MILESTONE 2 — beta\n- [ ] b\n## Story 3. Last\n- [ ] c\n",
			[]storySummary{{"1", "part 1", 1, []int{2}}, {"2", "beta", 3, []int{4}}, {"3", "Last", 5, []int{6}}}},
		{"a word that is not a story word", "## Stages 2\n- [ ] a\n## Phase2\n- [ ] b\n",
			[]storySummary{{"stages-2", "Stages 2", 1, []int{2}}, {"phase2", "Phase2", 3, []int{4}}}},
		{"number glued to a word", "## 3D rendering\n- [ ] a\n", []storySummary{{"3d-rendering", "3D rendering", 1, []int{2}}}},
		{"prerequisites", "## Prerequisites\n- [ ] a\n", []storySummary{{"prerequisites", "Prerequisites", 1, []int{2}}}},
		{"implementation", "## Implementation\n- [ ] a\n", []storySummary{{"implementation", "Implementation", 1, []int{2}}}},
		{"tasks", "## Tasks\n- [ ] a\n", []storySummary{{"tasks", "Tasks", 1, []int{2}}}},
		{"flat list under # Tasks", "# Tasks\n\n- [ ] a\n- [x] b\n", []storySummary{{"tasks", "Tasks", 0, []int{3, 4}}}},
		{"flat list without a heading", "- [ ] a\n", []storySummary{{"tasks", "Tasks", 0, []int{1}}}},
		{"preamble titled by the nearest # heading", "# Plan\n# Todo list\n- [ ] a\n# Later\n- [ ] b\n## 1. One\n- [ ] c\n",
			[]storySummary{{"todo-list", "Todo list", 0, []int{3, 5}}, {"1", "One", 6, []int{7}}}},
		{"prerequisites before ## 1.", "# Tasks\n## Prerequisites\n- [ ] p\n## 1. One\n- [ ] 1.1 a\n",
			[]storySummary{{"prerequisites", "Prerequisites", 2, []int{3}}, {"1", "One", 4, []int{5}}}},
		{"sections without tasks are not stories", "## Goals\nprose\n## 1. One\n## 2. Two\n- [ ] a\n## Notes\n- plain bullet\n",
			[]storySummary{{"2", "Two", 4, []int{5}}}},
		{"### and # do not end a story", "## 1. One\n### Sub\n- [ ] a\n# Appendix\n- [ ] b\n",
			[]storySummary{{"1", "One", 1, []int{3, 5}}}},
		{"duplicate numbers", "## 1. A\n- [ ] a\n## 1. B\n- [ ] b\n## 1. C\n- [ ] c\n",
			[]storySummary{{"1", "A", 1, []int{2}}, {"1_2", "B", 3, []int{4}}, {"1_3", "C", 5, []int{6}}}},
		{"empty slug", "## 🚀 🚀\n- [ ] a\n##\n- [ ] b\n## ***\n- [ ] c\n",
			[]storySummary{{"story", "🚀 🚀", 1, []int{2}}, {"story_2", "", 3, []int{4}}, {"story_3", "***", 5, []int{6}}}},
		{"number alone", "## 4.\n- [ ] a\n## Phase 5\n- [ ] b\n",
			[]storySummary{{"4", "4.", 1, []int{2}}, {"5", "Phase 5", 3, []int{4}}}},
		{"fenced code is read literally", "## 1. Real\n- [ ] a\n```md\n## 9. Fenced\n- [x] b\n```\n",
			[]storySummary{{"1", "Real", 1, []int{2}}, {"9", "Fenced", 4, []int{5}}}},
		{"CRLF", "## Phase 1: One\r\n- [x] 1.1 a\r\n## Notes\r\n- [ ] b\r\n",
			[]storySummary{{"1", "One", 1, []int{2}}, {"notes", "Notes", 3, []int{4}}}},
		{"BOM", "\ufeff# Tasks\n- [ ] a\n", []storySummary{{"tasks", "Tasks", 0, []int{2}}}},
		{"BOM before a heading", "\ufeff## Setup\n- [ ] a\n", []storySummary{{"setup", "Setup", 1, []int{2}}}},
		{"slug cut at 40 characters, no dash at the end", "## " + strings.Repeat("abcd ", 12) + "\n- [ ] a\n",
			[]storySummary{{"abcd-abcd-abcd-abcd-abcd-abcd-abcd-abcd", strings.TrimSpace(strings.Repeat("abcd ", 12)), 1, []int{2}}}},
		{"a number too long for an id", "## " + strings.Repeat("1.", 30) + "1 Deep\n- [ ] a\n",
			[]storySummary{{"1-1-1-1-1-1-1-1-1-1-1-1-1-1-1-1-1-1-1-1", strings.Repeat("1.", 30) + "1 Deep", 1, []int{2}}}},
		{"not headings", "##2. No space\n- [ ] a\n    ## 3. Four spaces\n- [ ] b\n", []storySummary{{"tasks", "Tasks", 0, []int{2, 4}}}},
		{"a slug never collides with a repeat", "## A\n- [ ] a\n## a\n- [ ] b\n## A!\n- [ ] c\n",
			[]storySummary{{"a", "A", 1, []int{2}}, {"a_2", "a", 3, []int{4}}, {"a_3", "A!", 5, []int{6}}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			tasks := ParseTasks([]byte(c.tasks))
			if got := summarize(tasks); !reflect.DeepEqual(got, c.want) {
				t.Errorf("stories:\n got %+v\nwant %+v", got, c.want)
			}
			checkStories(t, []byte(c.tasks), tasks)
		})
	}
}

// validID is what a story id may look like: valid in a ref name component and in
// "checkpoint: <id>", with no space, and never starting or ending with a dot or dash.
var validID = regexp.MustCompile(`^[a-z0-9]+(?:[.-][a-z0-9]+)*(?:_[0-9]+)?$`)

// checkStories asserts the invariants of docs/TASKS.md, "Stories and tasks" for tasks, parsed from data: the stories
// hold every task OpenSpec counts, each exactly once and in file order; every story has
// a task; ids are unique, well-formed, and do not depend on which boxes are ticked.
func checkStories(t testing.TB, data []byte, tasks Tasks) {
	t.Helper()
	wantDone, wantTotal := refCounts(data)
	total, done, prevLine := 0, 0, -1
	ids := map[string]bool{}
	for _, s := range tasks.Stories {
		if len(s.Tasks) == 0 {
			t.Fatalf("story %q has no task", s.ID)
		}
		if !validID.MatchString(s.ID) || len(s.ID) > maxSlug+4 || ids[s.ID] {
			t.Fatalf("story id %q is not valid or not unique", s.ID)
		}
		ids[s.ID] = true
		if s.Line <= prevLine {
			t.Fatalf("story %q on line %d is out of file order", s.ID, s.Line)
		}
		prevLine = s.Line
		for _, task := range s.Tasks {
			if task.Line <= prevLine {
				t.Fatalf("task on line %d of story %q is out of file order", task.Line, s.ID)
			}
			prevLine = task.Line
			total++
			if task.Done {
				done++
			}
		}
	}
	if done != wantDone || total != wantTotal {
		t.Fatalf("stories hold %d/%d tasks, OpenSpec counts %d/%d", done, total, wantDone, wantTotal)
	}
	if d, n := tasks.Counts(); d != wantDone || n != wantTotal || tasks.OpenOutsideStories() != 0 {
		t.Fatalf("Counts() = %d/%d, OpenOutsideStories() = %d; OpenSpec counts %d/%d, all in stories",
			d, n, tasks.OpenOutsideStories(), wantDone, wantTotal)
	}
	if _, ok := tasks.NextStory(); ok != (done < total) {
		t.Fatalf("NextStory found a story: %v, but %d of %d tasks are done", ok, done, total)
	}
	// Untick every task: the same stories, with the same ids, hold the same lines.
	lines := strings.Split(string(data), "\n")
	for i, line := range lines {
		if _, d, ok := matchTask(line); ok && d {
			open := strings.IndexByte(line, '[')
			end := open + strings.IndexByte(line[open:], ']')
			lines[i] = line[:open] + "[ ]" + line[end+1:]
		}
	}
	unticked := ParseTasks([]byte(strings.Join(lines, "\n")))
	if a, b := summarize(tasks), summarize(unticked); !reflect.DeepEqual(a, b) {
		t.Fatalf("stories change when boxes are unticked:\n%+v\n%+v", a, b)
	}
	if d, _ := unticked.Counts(); d != 0 {
		t.Fatalf("%d tasks still done after unticking", d)
	}
}

// storyLines are the pieces FuzzStories builds tasks.md files from: headings of every
// style, tasks, fences and prose.
var storyLines = []string{
	"# Tasks", "## 1. Setup", "## 1) CLI", "## 1 Setup", "## Phase 2: Zsh", "## Step 2 - Wire it",
	"## 2.3 Sub-step", "## Prerequisites", "## Implementation Tasks", "## Notes", "##", "## 🚀", "### Sub",
	"   ## 3. Indented", "    ## 4. Code", "##2. Glued", "# Appendix", "```", "<!--", "-->", "",
	"Some prose.", "- plain bullet", "- [ ] 1.1 open", "- [x] 1.2 done", "  - [X] nested", "* [ ] star",
	"1. [ ] ordered", "- [~] tilde", "- [ ](url)", "- [x](url)", "- [WIP] not a task", "- []", "\t- [ x ] tab",
	"## 1. Setup\r", "- [ ] crlf\r", "\ufeff- [ ] bom", "## Étape 1 : Données", "## 1.1.1.1.1.1.1.1.1.1.1.1.1.1.1.1.1.1.1.1.1",
}

// FuzzStories generates tasks.md files from a vocabulary of real-world lines, one per
// input byte, and checks the invariant of docs/TASKS.md, "Stories and tasks" on each: the stories' task totals
// equal OpenSpec's counting, every story has a task, and ids are unique and stable.
func FuzzStories(f *testing.F) {
	f.Add([]byte{0, 23, 24, 7, 23, 1, 24, 25})
	f.Add([]byte{7, 23, 1, 23, 1, 24, 9, 21})
	f.Add([]byte{11, 23, 10, 24, 17, 2, 23, 17, 25})
	f.Fuzz(func(t *testing.T, picks []byte) {
		var b strings.Builder
		for i, p := range picks {
			if i > 0 {
				b.WriteByte('\n')
			}
			b.WriteString(storyLines[int(p)%len(storyLines)])
		}
		data := []byte(b.String())
		checkStories(t, data, ParseTasks(data))
	})
}

func ExampleParseTasks() {
	tasks := ParseTasks([]byte("# Tasks\n\n## Prerequisites\n- [x] Get access\n\n## Phase 1: Foundation\n- [ ] 1.1 Schema\n"))
	for _, s := range tasks.Stories {
		d, n := s.Counts()
		fmt.Printf("%s %q %d/%d\n", s.ID, s.Title, d, n)
	}
	// Output:
	// prerequisites "Prerequisites" 1/1
	// 1 "Foundation" 0/1
}

// TestLongSlugWordEnd: a slug over 40 characters ends at a word's end; the id a run
// started before that rule recorded is kept by KeepIDs, and only then.
func TestLongSlugWordEnd(t *testing.T) {
	data := []byte("## Phase D: capability resolver, StoragePicker and the rest\n- [ ] a\n## Short\n- [ ] b\n")
	tasks := ParseTasks(data)
	s := tasks.Stories[0]
	if s.ID != "phase-d-capability-resolver" || s.LegacyID != "phase-d-capability-resolver-storagepicke" {
		t.Fatalf("id %q legacy %q", s.ID, s.LegacyID)
	}
	if tasks.Stories[1].LegacyID != "" {
		t.Errorf("a short slug has a legacy id %q", tasks.Stories[1].LegacyID)
	}
	fresh := ParseTasks(data)
	fresh.KeepIDs([]string{"short"})
	if fresh.Stories[0].ID != "phase-d-capability-resolver" {
		t.Errorf("KeepIDs without the old id changed it to %q", fresh.Stories[0].ID)
	}
	tasks.KeepIDs([]string{"phase-d-capability-resolver-storagepicke", "short"})
	if got := tasks.Stories[0].ID; got != "phase-d-capability-resolver-storagepicke" {
		t.Errorf("resumed run: id %q", got)
	}
	if _, ok := tasks.NextStory(); !ok {
		t.Error("no next story")
	}
}

// TestOddBoxesAndSubHeadings: a box that is neither blank nor x keeps what it holds (the
// prompt shows it as written) and tasks keep the "###" heading above them.
func TestOddBoxesAndSubHeadings(t *testing.T) {
	data := []byte("## 1. Setup\n### Task 0.1: Parse the flags\n- [ ] 1.1 a\n  - [~] 1.1.1 sub\n### Task 0.2: Wire it\n- [-] 1.2 b\n- [x] 1.3 c\n")
	s := ParseTasks(data).Stories[0]
	var got []string
	for _, task := range s.Tasks {
		got = append(got, task.ID+"|"+task.Box+"|"+task.Heading)
	}
	want := []string{"1.1||Task 0.1: Parse the flags", "1.1.1|~|Task 0.1: Parse the flags", "1.2|-|Task 0.2: Wire it", "1.3||Task 0.2: Wire it"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("tasks %v; want %v", got, want)
	}
	if d, n := s.Counts(); d != 1 || n != 4 {
		t.Errorf("counts %d/%d", d, n)
	}
}
