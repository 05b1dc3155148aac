package issue

import (
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
	})
	want := "Closes #10\nCloses #11\nCloses acme/other#3"
	if strings.Join(got, "\n") != want {
		t.Fatalf("ClosingLines:\n%s\nwant:\n%s", strings.Join(got, "\n"), want)
	}
	if RunName(10) != "issue-10" {
		t.Fatal(RunName(10))
	}
}
