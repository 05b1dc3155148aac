package tasklist

import (
	"strings"
	"testing"
)

func TestSlugWordEnd(t *testing.T) {
	for _, tc := range []struct{ in, want, legacy string }{
		{"Phase D: capability resolver, StoragePicker and more", "phase-d-capability-resolver", "phase-d-capability-resolver-storagepicke"},
		{"Implémentation très longue de la fonctionnalité de synchronisation", "implementation-tres-longue-de-la", "implementation-tres-longue-de-la-fonctio"},
		{strings.Repeat("a", 45), strings.Repeat("a", 40), strings.Repeat("a", 40)},
		{"exactly forty characters long heading ab", "exactly-forty-characters-long-heading-ab", "exactly-forty-characters-long-heading-ab"},
		{"exactly forty characters long heading abc", "exactly-forty-characters-long-heading", "exactly-forty-characters-long-heading-ab"},
		{"🚀", "story", "story"},
	} {
		if got := Slug(tc.in); got != tc.want || len(got) > MaxSlug {
			t.Errorf("Slug(%q) = %q; want %q", tc.in, got, tc.want)
		}
		if got := LegacySlug(tc.in); got != tc.legacy {
			t.Errorf("LegacySlug(%q) = %q; want %q", tc.in, got, tc.legacy)
		}
	}
}

func TestFences(t *testing.T) {
	lines := []string{
		"- [ ] a",       // 0 task
		"```bash",       // 1 opens
		"- [ ] b",       // 2 in
		"~~~",           // 3 in: another character
		"````",          // 4 closes (longer run of the same character)
		"  ~~~~ md",     // 5 opens, indented
		"## heading",    // 6 in
		"~~~",           // 7 in: shorter run
		"~~~~~",         // 8 closes
		"``` not `open", // 9 a backtick in the info string: not a fence
		"- [x] c",       // 10 task
	}
	var f Fences
	var got []bool
	for _, l := range lines {
		got = append(got, f.Skip(l))
	}
	want := []bool{false, true, true, true, true, true, true, true, true, false, false}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("line %d %q: skip %v; want %v", i, lines[i], got[i], want[i])
		}
	}
}

func TestHeadingLevel(t *testing.T) {
	for _, tc := range []struct {
		line  string
		level int
		text  string
	}{
		{"### Task 1: x", 3, "Task 1: x"}, {"## Title ##", 2, "Title"}, {"## C#", 2, "C#"}, {"   #### Deep", 4, "Deep"},
		{"    ## code", 0, ""}, {"#hashtag", 0, ""}, {"####### seven", 0, ""}, {"##\r", 2, ""},
	} {
		if l, text := HeadingLevel(tc.line); l != tc.level || text != tc.text {
			t.Errorf("HeadingLevel(%q) = %d %q; want %d %q", tc.line, l, text, tc.level, tc.text)
		}
	}
}

func TestOpenList(t *testing.T) {
	var many []Task
	for i := range 32 {
		many = append(many, Task{ID: "1." + string(rune('a'+i%26)) + strings.Repeat("x", i/26), Line: i + 1})
	}
	for _, tc := range []struct {
		tasks []Task
		want  string
	}{
		{nil, ""},
		{[]Task{{ID: "1.1", Done: true}}, ""},
		{[]Task{{ID: "1.1"}, {ID: "1.2", Done: true}}, "1 task (1.1) is"},
		{[]Task{{ID: "T001"}, {Line: 14}, {Text: "criterion"}}, `3 tasks (T001, line 14, "criterion") are`},
		{many, "32 tasks (1.a, 1.b, 1.c, 1.d, 1.e and 27 more) are"},
	} {
		if got := OpenList(tc.tasks); got != tc.want {
			t.Errorf("OpenList = %q; want %q", got, tc.want)
		}
	}
}
