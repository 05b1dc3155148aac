package openspec

import (
	"regexp"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/git-ralph/git-ralph/internal/tasklist"
)

// Task, Story and Tasks are the types every source shares (package tasklist).
type (
	Task  = tasklist.Task
	Story = tasklist.Story
	Tasks = tasklist.Tasks
)

// ParseTasks parses the content of a tasks.md file. It accepts any input. Every task
// (a checkbox line OpenSpec counts) belongs to exactly one story: the level-2 section it
// is in, or, before the first level-2 heading, a story titled by the "#" heading above
// it (else "Tasks"). Sections without tasks are not stories.
func ParseTasks(data []byte) Tasks {
	var t Tasks
	seen, seenLegacy := map[string]bool{}, map[string]bool{}
	sub := ""        // the deepest "###"-or-lower heading above the task in its story
	var cur Story    // the section being read; Line 0 before the first "##" heading
	heading := ""    // the text of cur's heading; for the preamble, the "#" heading nearest above its first task
	preamble := true // no level-2 heading yet
	lines := strings.Split(strings.TrimPrefix(wellFormed(data), "\ufeff"), "\n")
	flush := func(next int) {
		if len(cur.Tasks) == 0 {
			return
		}
		if preamble && heading == "" {
			heading = "Tasks"
		}
		id, title := storyName(heading)
		cur.ID, cur.Title = uniqueID(id, seen), title
		legacy, _ := tasklist.LegacyStoryName(heading)
		if legacy = uniqueID(legacy, seenLegacy); legacy != cur.ID {
			cur.LegacyID = legacy
		}
		tasklist.Close(&cur, lines, next)
		t.Stories = append(t.Stories, cur)
	}
	for i, line := range lines {
		n := i + 1
		if ok, text := parseHeading(line); ok {
			flush(n)
			cur, heading, preamble, sub = Story{Line: n}, text, false, ""
			continue
		}
		if lv, text := tasklist.HeadingLevel(line); lv >= 3 {
			sub = text
			continue
		}
		if preamble && len(cur.Tasks) == 0 {
			if ok, text := levelOne(line); ok {
				heading = text
				continue
			}
		}
		desc, done, odd, ok := matchBox(line)
		if !ok {
			continue
		}
		t.Total++
		if done {
			t.Done++
		}
		id, text := splitID(desc)
		cur.Tasks = append(cur.Tasks, Task{ID: id, Text: text, Done: done, Line: n, Box: odd, Heading: sub, Indent: tasklist.IndentOf(line)})
	}
	flush(len(lines) + 1)
	return t
}

func storyName(text string) (id, title string) { return tasklist.StoryName(text) }

// maxSlug is the longest slug id, before a "_2" suffix.
const maxSlug = tasklist.MaxSlug

func uniqueID(id string, seen map[string]bool) string { return tasklist.UniqueID(id, seen) }

// levelOne reports whether line is a level-1 ATX heading ("# Title") and returns its text.
func levelOne(line string) (ok bool, text string) {
	return atxHeading(line, "#")
}

// parseHeading reports whether line is a level-2 heading (`^ {0,3}##(?:[ \t](.*))?$` once
// one trailing \r is removed) and returns its text, trimmed.
func parseHeading(line string) (ok bool, text string) {
	return atxHeading(line, "##")
}

func atxHeading(line, marker string) (ok bool, text string) { return tasklist.ATXHeading(line, marker) }

// matchTask is a port of the CLI's TASK_LINE_PATTERN (task-progress.js):
//
//	/^\s*(?:[-*+]|\d{1,9}[.)])\s*\[(?:\s*([^\]\s]?)\s*\](?![([])|\s+\])\s*(.*)/
//
// with JavaScript semantics: \s is isJSSpace, the box character is one UTF-16 unit
// and '.' stops at \r, U+2028 and U+2029. line holds no '\n'.
func matchTask(line string) (desc string, done, ok bool) {
	desc, done, _, ok = matchBox(line)
	return desc, done, ok
}

// matchBox is matchTask that also returns what an open box holds when it is not
// blank ("~", "-"), "" otherwise.
func matchBox(line string) (desc string, done bool, odd string, ok bool) {
	i := skipSpace(line, 0)
	if i < len(line) && strings.IndexByte("-*+", line[i]) >= 0 {
		i++
	} else {
		d := len(line[i:]) - len(strings.TrimLeft(line[i:], "0123456789"))
		if d == 0 || d > 9 || i+d >= len(line) || (line[i+d] != '.' && line[i+d] != ')') {
			return "", false, "", false
		}
		i += d + 1
	}
	i = skipSpace(line, i)
	if i >= len(line) || line[i] != '[' {
		return "", false, "", false
	}
	j := skipSpace(line, i+1)
	box := j < len(line) && line[j] != ']' // a non-space character in the box
	if box {
		r, size := utf8.DecodeRuneInString(line[j:])
		if r > 0xFFFF { // two UTF-16 units: [^\]\s]? cannot take it
			return "", false, "", false
		}
		done = r == 'x' || r == 'X'
		if !done {
			odd = string(r)
		}
		j = skipSpace(line, j+size)
	}
	if j >= len(line) || line[j] != ']' {
		return "", false, "", false
	}
	// (?![([]) applies to the first branch; a box of one or more spaces may use the second.
	if j+1 < len(line) && (line[j+1] == '(' || line[j+1] == '[') && (box || j == i+1) {
		return "", false, "", false
	}
	desc = line[skipSpace(line, j+1):]
	if k := strings.IndexFunc(desc, func(r rune) bool { return r == '\r' || r == '\u2028' || r == '\u2029' }); k >= 0 {
		desc = desc[:k]
	}
	return jsTrim(desc), done, odd, true
}

var taskIDRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[0-9]+(?:\.[0-9]+)+[A-Za-z]*`) })

// splitID splits the TASK_ID token /^(\d+(?:\.\d+)+(?:[A-Za-z]+)?)(?=\s|$)/ off desc. Only the
// longest token can be followed by a space, so the look-ahead is checked after the match.
func splitID(desc string) (id, text string) {
	id = taskIDRE().FindString(desc)
	if r, _ := utf8.DecodeRuneInString(desc[len(id):]); id == "" || len(id) < len(desc) && !isJSSpace(r) {
		return "", desc
	}
	return id, jsTrim(desc[len(id):])
}

func isJSSpace(r rune) bool { return tasklist.IsJSSpace(r) }

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
func jsTrim(s string) string { return tasklist.Trim(s) }

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
