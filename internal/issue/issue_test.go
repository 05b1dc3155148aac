package issue

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// body is an issue body as GitHub's web editor saves it (CRLF), with what an issue
// template brings: comments holding example boxes, a code block, nested and numbered
// items, a box with no text.
const body = "### Why\r\n" +
	"Greeting by name.\r\n" +
	"<!-- Use the boxes below:\r\n" +
	"- [ ] example task from the template\r\n" +
	"-->\r\n" +
	"## Tasks\r\n" +
	"- [ ] parse the name <!-- inline note -->\r\n" +
	"  - [x] trim it\r\n" +
	"    * [ ] nested deeper\r\n" +
	"1. [X] numbered, done\r\n" +
	"2) [ ]\ttab after the box\r\n" +
	"```md\r\n" +
	"- [ ] inside code\r\n" +
	"```\r\n" +
	"- [ ]\r\n" +
	"-[ ] no space\r\n" +
	"> - [ ] quoted\r\n" +
	"- [ ] last, no newline"

func TestTasks(t *testing.T) {
	var got []string
	for _, tk := range Tasks(body) {
		got = append(got, fmt.Sprintf("%d %v %d %s", tk.Line, tk.Done, tk.Indent, tk.Text))
	}
	want := []string{
		"7 false 0 parse the name <!-- inline note -->",
		"8 true 2 trim it",
		"9 false 4 nested deeper",
		"10 true 0 numbered, done",
		"11 false 0 tab after the box",
		"18 false 0 last, no newline",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("Tasks:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if len(Tasks("")) != 0 || len(Tasks("Just words.\n")) != 0 {
		t.Fatal("a body without a task list has no tasks")
	}
}

func TestTick(t *testing.T) {
	got, err := Tick(body, []int{7, 8, 11, 18})
	if err != nil {
		t.Fatal(err)
	}
	want := strings.NewReplacer(
		"- [ ] parse the name", "- [x] parse the name",
		"2) [ ]\ttab", "2) [x]\ttab",
		"- [ ] last, no newline", "- [x] last, no newline",
	).Replace(body)
	if got != want {
		t.Fatalf("Tick:\n%q\nwant:\n%q", got, want)
	}
	for _, tk := range Tasks(got) {
		if (tk.Line == 7 || tk.Line == 8 || tk.Line == 11 || tk.Line == 18 || tk.Line == 10) != tk.Done {
			t.Errorf("line %d done=%v", tk.Line, tk.Done)
		}
	}
	if again, err := Tick(got, []int{7}); err != nil || again != got {
		t.Fatalf("ticking a ticked box changed the body: %v", err)
	}
	for _, line := range []int{4, 13, 15, 16, 17, 99, 0} { // a template's example, code, no text, no space, a quote
		if out, err := Tick(body, []int{7, line}); err == nil || out != body {
			t.Errorf("line %d: %v", line, err)
		}
	}
	if got, _ := Tick("- [ ] a\n", []int{1}); got != "- [x] a\n" {
		t.Fatalf("LF body: %q", got)
	}
}

func TestTrusted(t *testing.T) {
	for assoc, want := range map[string]bool{"OWNER": true, "MEMBER": true, "COLLABORATOR": true,
		"CONTRIBUTOR": false, "FIRST_TIME_CONTRIBUTOR": false, "FIRST_TIMER": false, "MANNEQUIN": false, "NONE": false,
		"": false, "owner": false, "MAINTAINER": false} {
		if Trusted(assoc) != want {
			t.Errorf("Trusted(%q) = %v", assoc, !want)
		}
	}
}

func TestClosingLines(t *testing.T) {
	got := ClosingLines("acme/widgets", []Ref{
		{Repo: "acme/widgets", Number: 10, Open: true},
		{Repo: "acme/widgets", Number: 11, Open: true},
		{Repo: "acme/widgets", Number: 12, Open: false}, // closed: never named
		{Repo: "Acme/Widgets", Number: 11, Open: true},  // once
		{Repo: "acme/other", Number: 3, Open: true},
		{Repo: "acme/widgets", Number: 0, Open: true},
		{Repo: "ghe.example.com/acme/third", Number: 4, Open: true},
	})
	want := "Closes #10\nCloses #11\nCloses acme/other#3\nCloses acme/third#4"
	if strings.Join(got, "\n") != want {
		t.Fatalf("ClosingLines:\n%s\nwant:\n%s", strings.Join(got, "\n"), want)
	}
	if got := ClosingLines("", []Ref{{Repo: "ghe.example.com/acme/widgets", Number: 8, Open: true}}); len(got) != 1 || got[0] != "Closes acme/widgets#8" {
		t.Fatalf("for a message that may land anywhere: %v", got)
	}
	if RunName(10) != "issue-10" {
		t.Fatal(RunName(10))
	}
}

func TestSnapshotStories(t *testing.T) {
	s := &Snapshot{Repo: "acme/widgets",
		Parent: Issue{Number: 10, Title: "Greeter", Body: "- [ ] the parent's own list is context here\n", State: "open", Association: "OWNER"},
		Subs: []Issue{
			{Number: 13, Title: "Parse names", Body: "- [ ] split\n- [x] trim\n", State: "open", Association: "MEMBER"},
			{Number: 11, Title: "Old", Body: "- [ ] never ticked\n", State: "closed", Association: "NONE"},
			{Number: 12, Title: "Wire it", Body: "No list here.", State: "open", Association: "COLLABORATOR"},
		}}
	var got []string
	for _, st := range s.Stories() {
		d, n := st.Counts()
		got = append(got, fmt.Sprintf("%s %q %d/%d %q", st.ID, st.Title, d, n, st.Tasks[0].Text))
	}
	if d := s.Stories()[0].Description; d != "- [ ] split\n- [x] trim" {
		t.Fatalf("a sub-issue's story carries its body: %q", d)
	}
	want := `issue-13 "Parse names" 1/2 "split"
issue-11 "Old" 1/1 "never ticked"
issue-12 "Wire it" 0/1 "Wire it"`
	if strings.Join(got, "\n") != want {
		t.Fatalf("Stories:\n%s\nwant:\n%s", strings.Join(got, "\n"), want)
	}
	if s.Find(10) != &s.Parent || s.Find(11) != &s.Subs[1] || s.Find(99) != nil {
		t.Fatal("Find")
	}
	if tk := s.Tasks(); tk.Done != 2 || tk.Total != 4 {
		t.Fatalf("counts %d/%d", tk.Done, tk.Total)
	}
	if err := s.CheckTrust(false); err != nil {
		t.Fatalf("a closed sub-issue by anyone does not run: %v", err)
	}
	s.Subs[2].Association, s.Subs[2].Author = "CONTRIBUTOR", "outsider"
	err := s.CheckTrust(false)
	var ue *UntrustedError
	if !errors.As(err, &ue) || len(ue.Issues) != 1 || !strings.Contains(err.Error(), "#12 by @outsider (CONTRIBUTOR)") {
		t.Fatalf("untrusted: %v", err)
	}
	if s.CheckTrust(true) != nil {
		t.Fatal("--trust-issue-author")
	}

	alone := &Snapshot{Repo: "acme/widgets", Parent: Issue{Number: 7, Title: "Fix the typo", State: "open", Association: "OWNER"}}
	st := alone.Stories()
	if len(st) != 1 || st[0].ID != "issue-7" || len(st[0].Tasks) != 1 || st[0].Tasks[0].Text != "Fix the typo" || st[0].Tasks[0].Line != 0 {
		t.Fatalf("no sub-issues, no list: %+v", st)
	}
	alone.Parent.Body = "- [x] one\n- [ ] two\n"
	if st := alone.Stories(); len(st[0].Tasks) != 2 || st[0].Tasks[1].Line != 2 {
		t.Fatalf("no sub-issues: %+v", st)
	}
	alone.Parent.Association = "FIRST_TIMER"
	if alone.CheckTrust(false) == nil {
		t.Fatal("the parent's author counts")
	}
}

func TestQueue(t *testing.T) {
	open := func(n int, labels ...string) Issue { return Issue{Number: n, State: "open", Labels: labels} }
	got := Queue([]Candidate{
		{Issue: open(1, "ralph")},
		{Issue: open(2, "ralph"), BlockedBy: []Issue{open(1), {Number: 9, State: "closed"}}},
		{Issue: open(3, "ralph", "Ralph:Running")},
		{Issue: Issue{Number: 4, State: "closed"}},
		{Issue: open(5, "ralph"), BlockedBy: []Issue{{Number: 9, State: "closed"}}},
	}, "ralph:running")
	var lines []string
	for _, d := range got {
		lines = append(lines, fmt.Sprintf("#%d %v %s", d.Issue.Number, d.Take, d.Why))
	}
	want := `#1 true 
#2 false blocked by #1
#3 false claimed: it has the label ralph:running (another run is working on it)
#4 false closed
#5 true `
	if strings.Join(lines, "\n") != want {
		t.Fatalf("Queue:\n%s\nwant:\n%s", strings.Join(lines, "\n"), want)
	}
}

func TestFile(t *testing.T) {
	s := &Snapshot{Repo: "acme/widgets", Parent: Issue{Number: 10, Title: "Greeter", State: "open"},
		Subs: []Issue{{Number: 11, Title: "Parse  names", Body: "intro\r\n- [ ] split\r\n  - [x] trim   it\r\n- [ ] report `errors`\r\n", State: "open"},
			{Number: 12, Title: "Wire it", State: "open"}}}
	stories := s.Stories()
	file := string(File(s.Parent.Title, stories))
	want := "# Greeter\n\n## issue-11: Parse names\n\n- [ ] split\n  - [x] trim it\n- [ ] report `errors`\n\n## issue-12: Wire it\n\n- [ ] Wire it\n"
	if file != want {
		t.Fatalf("File:\n%q\nwant\n%q", file, want)
	}
	agent := strings.Replace(file, "- [ ] report", "- [X] report", 1)
	after, err := ReadFile(stories, []byte(agent))
	if err != nil {
		t.Fatal(err)
	}
	if lines := NewlyDone(stories[0], after[0]); len(lines) != 1 || lines[0] != 4 {
		t.Fatalf("NewlyDone = %v", lines)
	}
	if stories[0].Tasks[2].Done {
		t.Fatal("ReadFile changed the stories it was given")
	}
	ticked, err := Tick(s.Subs[0].Body, NewlyDone(stories[0], after[0]))
	if err != nil || ticked != "intro\r\n- [ ] split\r\n  - [x] trim   it\r\n- [x] report `errors`\r\n" {
		t.Fatalf("Tick = %q, %v", ticked, err)
	}
	for name, bad := range map[string]string{
		"added":    file + "- [ ] more\n",
		"removed":  strings.Replace(file, "- [ ] split\n", "", 1),
		"reworded": strings.Replace(file, "split", "split and done", 1),
		"unticked": strings.Replace(file, "[x] trim", "[ ] trim", 1),
		"moved":    strings.Replace(strings.Replace(file, "- [ ] split\n", "", 1), "- [ ] Wire it\n", "- [ ] Wire it\n- [ ] split\n", 1),
	} {
		var ce *ChangedError
		if _, err := ReadFile(stories, []byte(bad)); !errors.As(err, &ce) {
			t.Errorf("%s: %v", name, err)
		}
	}
	// a task ticked as skipped, with ralphex's note: taken, and left open on GitHub
	skipped, err := ReadFile(stories, []byte(strings.Replace(file, "- [ ] split", "- [x] split (skipped - not automatable: needs a phone)", 1)))
	if err != nil || !skipped[0].Tasks[0].Done || skipped[0].Tasks[0].Skipped != "not automatable: needs a phone" || len(NewlyDone(stories[0], skipped[0])) != 0 {
		t.Fatalf("skipped: %+v, %v", skipped[0].Tasks[0], err)
	}
	if _, err := ReadFile(stories, []byte(strings.Replace(file, "- [ ] split", "- [ ] split (skipped)", 1))); err == nil {
		t.Fatal("a skip note on a box left open is a rewording")
	}
	ft := FileTasks([]byte(file))
	if len(ft.Stories) != 2 || ft.Stories[0].ID != "issue-11" || ft.Stories[0].Title != "Parse names" || len(ft.Stories[0].Tasks) != 3 ||
		ft.Stories[0].Tasks[2].Line != 7 || ft.Stories[1].ID != "issue-12" || ft.Done != 1 || ft.Total != 4 {
		t.Fatalf("FileTasks = %+v", ft)
	}
	done, err := ReadFile(stories, []byte(strings.Replace(file, "- [ ] Wire it", "- [x] Wire it", 1)))
	if err != nil || !done[1].Complete() || len(NewlyDone(stories[1], done[1])) != 0 {
		t.Fatalf("a title task, done: %+v %v", done, err)
	}
}
