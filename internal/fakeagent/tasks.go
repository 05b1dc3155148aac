package fakeagent

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/git-ralph/git-ralph/internal/openspec"
)

// The rules below follow OpenSpec 1.13.2 as docs/TASKS.md describes it
// ("Stories and tasks", "The kinds"), so that what the fake ticks is what git-ralph counts as done.

var (
	taskIDPattern = regexp.MustCompile(`^[0-9]+(?:\.[0-9]+)+[A-Za-z]*`)
)

// isJSSpace reports whether r is matched by JavaScript's \s.
func isJSSpace(r rune) bool {
	switch r {
	case '\t', '\n', '\v', '\f', '\r', ' ', 0xa0, 0x1680, 0x2028, 0x2029, 0x202f, 0x205f, 0x3000, 0xfeff:
		return true
	}
	return r >= 0x2000 && r <= 0x200a
}

func skipSpace(s string, i int) int {
	for i < len(s) {
		r, size := utf8.DecodeRuneInString(s[i:])
		if !isJSSpace(r) {
			break
		}
		i += size
	}
	return i
}

// taskLine is a checkbox line as the OpenSpec CLI reads it.
type taskLine struct {
	open, close int // byte offsets of the box's '[' and ']'
	done        bool
	id          string // leading N.M token of the description, or ""
}

// parseTaskLine applies the CLI's
// /^\s*(?:[-*+]|\d{1,9}[.)])\s*\[(?:\s*([^\]\s]?)\s*\](?![([])|\s+\])\s*(.*)/
// (which works on UTF-16 units, so an astral character is not one box char).
func parseTaskLine(s string) (taskLine, bool) {
	i := skipSpace(s, 0)
	switch {
	case i < len(s) && strings.IndexByte("-*+", s[i]) >= 0:
		i++
	default:
		j := i
		for j < len(s) && s[j] >= '0' && s[j] <= '9' {
			j++
		}
		if j == i || j-i > 9 || j >= len(s) || (s[j] != '.' && s[j] != ')') {
			return taskLine{}, false
		}
		i = j + 1
	}
	i = skipSpace(s, i)
	if i >= len(s) || s[i] != '[' {
		return taskLine{}, false
	}
	t := taskLine{open: i, close: -1}
	// First alternative: at most one non-space character, not followed by ( or [.
	k := skipSpace(s, i+1)
	var box rune = -1
	if k < len(s) && s[k] != ']' {
		r, size := utf8.DecodeRuneInString(s[k:])
		if r > 0xffff {
			k = len(s) // two UTF-16 units: no match
		} else {
			box, k = r, skipSpace(s, k+size)
		}
	}
	if k < len(s) && s[k] == ']' && (k+1 >= len(s) || (s[k+1] != '(' && s[k+1] != '[')) {
		t.close, t.done = k, box == 'x' || box == 'X'
	} else if k = skipSpace(s, i+1); k > i+1 && k < len(s) && s[k] == ']' {
		// Second alternative: a whitespace-only box.
		t.close = k
	}
	if t.close < 0 {
		return taskLine{}, false
	}
	desc := s[skipSpace(s, t.close+1):]
	if id := taskIDPattern.FindString(desc); id != "" {
		if rest := desc[len(id):]; rest == "" || isJSSpace(firstRune(rest)) {
			t.id = id
		}
	}
	return t, true
}

func firstRune(s string) rune {
	r, _ := utf8.DecodeRuneInString(s)
	return r
}

// taskEdit is the result of ticking boxes in tasks.md.
type taskEdit struct {
	content  []byte
	old, new string // the changed lines, before and after, as the Edit tool shows them
}

// tasksFile is tasks.md split into lines; every byte is kept (a line keeps
// its '\r').
type tasksFile struct {
	lines []string
}

func splitTasks(content []byte) tasksFile {
	return tasksFile{lines: strings.Split(string(content), "\n")}
}

// tick ticks the open tasks on the given lines and returns the edit.
func (tf tasksFile) tick(lines []int) *taskEdit {
	first, last := -1, -1
	newLines := append([]string(nil), tf.lines...)
	for _, n := range lines {
		t, ok := parseTaskLine(tf.lines[n])
		if !ok || t.done {
			continue
		}
		s := tf.lines[n]
		newLines[n] = s[:t.open] + "[x]" + s[t.close+1:]
		if first < 0 {
			first = n
		}
		last = n
	}
	if first < 0 {
		return nil
	}
	return &taskEdit{
		content: []byte(strings.Join(newLines, "\n")),
		old:     strings.Join(tf.lines[first:last+1], "\n"),
		new:     strings.Join(newLines[first:last+1], "\n"),
	}
}

var errNothingToTick = errors.New("no open task to tick")

// tickStory ticks every open task of the story with that id, as git-ralph reads
// stories (openspec.ParseTasks: any level-2 section with a task, ids from numbers or
// slugs).
func tickStory(content []byte, story string) (*taskEdit, error) {
	t := openspec.ParseTasks(content)
	t.KeepIDs([]string{story}) // a run recorded with an id cut mid-word keeps it
	s, ok := t.Story(story)
	if !ok {
		return nil, fmt.Errorf("no story %q in tasks.md", story)
	}
	var lines []int
	for _, t := range s.OpenTasks() {
		lines = append(lines, t.Line-1)
	}
	if e := splitTasks(content).tick(lines); e != nil {
		return e, nil
	}
	return nil, errNothingToTick
}

// tickTask ticks the first open task whose id is id.
func tickTask(content []byte, id string) (*taskEdit, error) {
	tf := splitTasks(content)
	found := false
	for n, line := range tf.lines {
		t, ok := parseTaskLine(line)
		if !ok || t.id != id {
			continue
		}
		found = true
		if !t.done {
			return tf.tick([]int{n}), nil
		}
	}
	if !found {
		return nil, fmt.Errorf("no task %q in tasks.md", id)
	}
	return nil, errNothingToTick
}
