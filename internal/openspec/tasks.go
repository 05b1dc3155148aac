package openspec

import (
	"regexp"
	"strings"
	"unicode/utf8"
)

// Task is one checkbox line of tasks.md, counted exactly as OpenSpec 1.13.2 counts it.
type Task struct {
	ID      string // leading N.M token ("1.2", "3.1.2a"), "" if none
	Text    string // description without the id, trimmed
	Done    bool   // the box holds exactly x or X (spaces around allowed)
	Line    int    // 1-based line in tasks.md
	Section string // for orphans: the unnumbered heading's text ("" before any heading); "" for story tasks
}

// Story is a "## N. Title" heading and the tasks up to the next "##" heading.
type Story struct {
	ID    string // N as written
	Title string
	Line  int // 1-based line of the heading
	Tasks []Task
}

// Counts returns the number of done tasks and of all tasks in the story.
func (s Story) Counts() (done, total int) { return count(s.Tasks) }

// Complete reports whether every task of the story is done; a story without tasks is complete.
func (s Story) Complete() bool {
	done, total := s.Counts()
	return done == total
}

// OpenTasks returns the tasks of the story that are not done, in file order.
func (s Story) OpenTasks() []Task {
	var open []Task
	for _, t := range s.Tasks {
		if !t.Done {
			open = append(open, t)
		}
	}
	return open
}

// Tasks is a parsed tasks.md: its numbered stories and the tasks outside them.
type Tasks struct {
	Stories []Story
	Orphans []Task // checkbox lines before the first "##" heading or under an unnumbered one
}

// Counts returns the done and total task counts over stories and orphans; they equal
// completedTasks/totalTasks of `openspec list --json`.
func (t Tasks) Counts() (done, total int) {
	done, total = count(t.Orphans)
	for _, s := range t.Stories {
		d, n := s.Counts()
		done, total = done+d, total+n
	}
	return done, total
}

// OrphanLines returns the 1-based line numbers of the orphan tasks, for warnings.
func (t Tasks) OrphanLines() []int {
	lines := make([]int, 0, len(t.Orphans))
	for _, o := range t.Orphans {
		lines = append(lines, o.Line)
	}
	return lines
}

// NextStory returns the first incomplete story in file order.
func (t Tasks) NextStory() (Story, bool) {
	for _, s := range t.Stories {
		if !s.Complete() {
			return s, true
		}
	}
	return Story{}, false
}

// Story returns the first story whose id is id.
func (t Tasks) Story(id string) (Story, bool) {
	for _, s := range t.Stories {
		if s.ID == id {
			return s, true
		}
	}
	return Story{}, false
}

func count(tasks []Task) (done, total int) {
	for _, t := range tasks {
		if t.Done {
			done++
		}
	}
	return done, len(tasks)
}

// ParseTasks parses the content of a tasks.md file. It accepts any input.
func ParseTasks(data []byte) Tasks {
	var t Tasks
	story, section := -1, "" // index of the current story in t.Stories, -1 outside one
	n := 0
	for line := range strings.SplitSeq(strings.TrimPrefix(wellFormed(data), "\ufeff"), "\n") {
		n++
		if ok, id, title := parseHeading(line); ok {
			if id == "" {
				story, section = -1, title
			} else {
				t.Stories = append(t.Stories, Story{ID: id, Title: title, Line: n})
				story = len(t.Stories) - 1
			}
			continue
		}
		desc, done, ok := matchTask(line)
		if !ok {
			continue
		}
		id, text := splitID(desc)
		task := Task{ID: id, Text: text, Done: done, Line: n}
		if story < 0 {
			task.Section = section
			t.Orphans = append(t.Orphans, task)
		} else {
			t.Stories[story].Tasks = append(t.Stories[story].Tasks, task)
		}
	}
	return t
}

// parseHeading reports whether line is a level-2 heading (`^ {0,3}##(?:[ \t](.*))?$` once one
// trailing \r is removed) and, for "## N. Title" (the CLI's numbering lint), the story id.
// title is the trimmed text after "## N." or, for an unnumbered heading, after "##".
func parseHeading(line string) (ok bool, id, title string) {
	line = strings.TrimSuffix(line, "\r")
	i := 0
	for i < 3 && i < len(line) && line[i] == ' ' {
		i++
	}
	rest, ok := strings.CutPrefix(line[i:], "##")
	if !ok || rest != "" && rest[0] != ' ' && rest[0] != '\t' {
		return false, "", ""
	}
	num := strings.TrimLeft(rest, " \t")
	digits := len(num) - len(strings.TrimLeft(num, "0123456789"))
	if digits > 0 && len(num) > digits && num[digits] == '.' &&
		(len(num) == digits+1 || num[digits+1] == ' ' || num[digits+1] == '\t') {
		return true, num[:digits], jsTrim(num[digits+1:])
	}
	return true, "", jsTrim(rest)
}

// matchTask is a port of the CLI's TASK_LINE_PATTERN (task-progress.js):
//
//	/^\s*(?:[-*+]|\d{1,9}[.)])\s*\[(?:\s*([^\]\s]?)\s*\](?![([])|\s+\])\s*(.*)/
//
// with JavaScript semantics: \s is isJSSpace, the box character is one UTF-16 unit
// and '.' stops at \r, U+2028 and U+2029. line holds no '\n'.
func matchTask(line string) (desc string, done, ok bool) {
	i := skipSpace(line, 0)
	if i < len(line) && strings.IndexByte("-*+", line[i]) >= 0 {
		i++
	} else {
		d := len(line[i:]) - len(strings.TrimLeft(line[i:], "0123456789"))
		if d == 0 || d > 9 || i+d >= len(line) || (line[i+d] != '.' && line[i+d] != ')') {
			return "", false, false
		}
		i += d + 1
	}
	i = skipSpace(line, i)
	if i >= len(line) || line[i] != '[' {
		return "", false, false
	}
	j := skipSpace(line, i+1)
	box := j < len(line) && line[j] != ']' // a non-space character in the box
	if box {
		r, size := utf8.DecodeRuneInString(line[j:])
		if r > 0xFFFF { // two UTF-16 units: [^\]\s]? cannot take it
			return "", false, false
		}
		done = r == 'x' || r == 'X'
		j = skipSpace(line, j+size)
	}
	if j >= len(line) || line[j] != ']' {
		return "", false, false
	}
	// (?![([]) applies to the first branch; a box of one or more spaces may use the second.
	if j+1 < len(line) && (line[j+1] == '(' || line[j+1] == '[') && (box || j == i+1) {
		return "", false, false
	}
	desc = line[skipSpace(line, j+1):]
	if k := strings.IndexFunc(desc, func(r rune) bool { return r == '\r' || r == '\u2028' || r == '\u2029' }); k >= 0 {
		desc = desc[:k]
	}
	return jsTrim(desc), done, true
}

var taskIDRE = regexp.MustCompile(`^[0-9]+(?:\.[0-9]+)+[A-Za-z]*`)

// splitID splits the TASK_ID token /^(\d+(?:\.\d+)+(?:[A-Za-z]+)?)(?=\s|$)/ off desc. Only the
// longest token can be followed by a space, so the look-ahead is checked after the match.
func splitID(desc string) (id, text string) {
	id = taskIDRE.FindString(desc)
	if r, _ := utf8.DecodeRuneInString(desc[len(id):]); id == "" || len(id) < len(desc) && !isJSSpace(r) {
		return "", desc
	}
	return id, jsTrim(desc[len(id):])
}

// isJSSpace reports whether r is in JavaScript's \s class (WhiteSpace and LineTerminator).
func isJSSpace(r rune) bool {
	switch r {
	case '\t', '\n', '\v', '\f', '\r', ' ', '\u00a0', '\u1680', '\u2028', '\u2029', '\u202f', '\u205f', '\u3000', '\ufeff':
		return true
	}
	return r >= '\u2000' && r <= '\u200a'
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

// jsTrim is JavaScript's String.prototype.trim.
func jsTrim(s string) string { return strings.TrimFunc(s, isJSSpace) }

// wellFormed decodes data as Node does when it reads a file as UTF-8: every maximal
// ill-formed subpart becomes one U+FFFD (Go's decoder would yield one per byte).
func wellFormed(data []byte) string {
	if utf8.Valid(data) {
		return string(data)
	}
	var b strings.Builder
	b.Grow(len(data) + 16)
	for i := 0; i < len(data); {
		r, size := utf8.DecodeRune(data[i:])
		if r != utf8.RuneError || size > 1 {
			b.Write(data[i : i+size])
			i += size
			continue
		}
		b.WriteRune(utf8.RuneError)
		i += illFormedLen(data[i:])
	}
	return b.String()
}

// illFormedLen returns the length of the maximal subpart of an ill-formed sequence at the
// start of p (Unicode §3.9, "U+FFFD Substitution of Maximal Subparts").
func illFormedLen(p []byte) int {
	lo, hi, need := byte(0x80), byte(0xBF), 0
	switch c := p[0]; {
	case c >= 0xC2 && c <= 0xDF:
		need = 1
	case c == 0xE0:
		lo, need = 0xA0, 2
	case c == 0xED:
		hi, need = 0x9F, 2
	case c >= 0xE1 && c <= 0xEF:
		need = 2
	case c == 0xF0:
		lo, need = 0x90, 3
	case c == 0xF4:
		hi, need = 0x8F, 3
	case c >= 0xF1 && c <= 0xF3:
		need = 3
	}
	n := 1
	for n <= need && n < len(p) && p[n] >= lo && p[n] <= hi {
		n, lo, hi = n+1, 0x80, 0xBF
	}
	return n
}
