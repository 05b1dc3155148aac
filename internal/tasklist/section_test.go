package tasklist

import (
	"strings"
	"testing"
)

// TestContinue: a task keeps the lines that continue it (docs/TASKS.md, "Stories and tasks"): wrapped text, nested
// bullets, a fenced block under it with unindented lines, a lazy continuation; a box in
// a nested bullet is a task of its own; a phase's bold lines, a heading or a line at
// the task's own indent after a blank line continue nothing.
func TestContinue(t *testing.T) {
	doc := strings.Join([]string{
		"# Tasks", //                                             1
		"",
		"## 1. Parser", //                                         3
		"**Goal**: read headers",
		"",
		"- [ ] 1.1 Parse the header line and reject anything that", // 6
		"  does not start with MAGIC, returning ErrBadMagic",
		"  - note: keep the reader streaming",
		"",
		"  ```go", //                                              10
		"if !bytes.HasPrefix(b, magic) {",
		"## not a heading",
		"}",
		"  ```",
		"- [ ] 1.2 A task whose text wraps", //                      15
		"without indentation (lazy)",
		"  - [ ] 1.2.1 a sub-task in a nested bullet",
		"    with its own line",
		"  - back to 1.2's notes",
		"", //                                                     20
		"**Checkpoint**: the parser reads every fixture",
		"- [x] 1.3 Done, alone",
		"",
		"",
		"## 2. Writer", //                                         25
		"- [ ] 2.1 Write",
		"### Notes",
		"  indented under a heading: nobody's",
		"",
	}, "\n")
	got := ParseMarkdown([]byte(doc), Rules{TaskID: func(d string) (string, string) {
		id, text, _ := strings.Cut(d, " ")
		return id, text
	}})
	if len(got.Stories) != 2 {
		t.Fatalf("stories %+v", got.Stories)
	}
	s := got.Stories[0]
	if s.Line != 3 || s.End != 22 {
		t.Errorf("story 1 spans %d–%d, want 3–22", s.Line, s.End)
	}
	want := map[string]struct {
		rest string
		end  int
	}{
		"1.1":   {"  does not start with MAGIC, returning ErrBadMagic\n  - note: keep the reader streaming\n\n  ```go\nif !bytes.HasPrefix(b, magic) {\n## not a heading\n}\n  ```", 14},
		"1.2":   {"without indentation (lazy)\n  - back to 1.2's notes", 19},
		"1.2.1": {"    with its own line", 18},
		"1.3":   {"", 22},
	}
	for _, task := range s.Tasks {
		w, ok := want[task.ID]
		if !ok {
			t.Errorf("unexpected task %q", task.ID)
			continue
		}
		if task.Rest != w.rest || task.End != w.end {
			t.Errorf("task %s: rest %q end %d; want %q end %d", task.ID, task.Rest, task.End, w.rest, w.end)
		}
	}
	if w := got.Stories[1]; w.Line != 25 || w.End != 28 || w.Tasks[0].Rest != "" {
		t.Errorf("story 2: %+v", w)
	}
}

// TestSkipNote: ralphex's "(skipped - not automatable)" and the forms agents write it in.
func TestSkipNote(t *testing.T) {
	for text, want := range map[string]string{
		"manual test (skipped - not automatable)":                          "not automatable",
		"Deploy to staging (skipped - not automatable: needs credentials)": "not automatable: needs credentials",
		"Check on a device (Skipped: no device here)":                      "no device here",
		"Verify in browser (skipped)":                                      "skipped",
		"Verify (skipped —  not automatable:\n  needs a phone)":            "not automatable: needs a phone",
		"Skip the cache (skipped)x":                                        "skipped",
		"skipped - not in parentheses":                                     "",
		"(skippedness)":                                                    "",
	} {
		got, ok := SkipNote(text)
		if got != want || ok != (want != "") {
			t.Errorf("SkipNote(%q) = %q, %v; want %q", text, got, ok, want)
		}
	}
	got := ParseMarkdown([]byte("## 1. Ship\n- [x] build\n- [x] deploy (skipped - not automatable: needs credentials)\n- [ ] verify (skipped - no device)\n"), Rules{})
	var skipped []string
	for _, task := range got.Stories[0].Tasks {
		skipped = append(skipped, task.Skipped)
	}
	if strings.Join(skipped, "|") != "|not automatable: needs credentials|" {
		t.Errorf("skipped %q: only a ticked task is skipped", skipped)
	}
}
