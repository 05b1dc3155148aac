package openspec

import (
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Task is one checkbox line of tasks.md, counted exactly as OpenSpec 1.13.2 counts it.
type Task struct {
	ID   string // leading N.M token ("1.2", "3.1.2a"), "" if none
	Text string // description without the id, trimmed
	Done bool   // the box holds exactly x or X (spaces around allowed)
	Line int    // 1-based line in tasks.md
}

// Story is a section of tasks.md that holds at least one task: a level-2 heading and the
// tasks up to the next level-2 heading, or the tasks before the first level-2 heading.
type Story struct {
	ID    string // the heading's number ("1", "2.3"), else a slug of its title; unique in the file
	Title string
	Line  int // 1-based line of the heading; 0 for the tasks before the first "##" heading
	Tasks []Task
}

// Counts returns the number of done tasks and of all tasks in the story.
func (s Story) Counts() (done, total int) { return count(s.Tasks) }

// Complete reports whether every task of the story is done.
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

// Tasks is a parsed tasks.md: its stories, which hold every task OpenSpec counts.
type Tasks struct {
	Stories []Story

	done, total int // OpenSpec's own count, taken line by line, whatever the stories hold
}

// Counts returns the done and total task counts of the file, counted line by line as
// OpenSpec counts them: completedTasks/totalTasks of `openspec list --json`.
func (t Tasks) Counts() (done, total int) { return t.done, t.total }

// OpenOutsideStories returns how many open tasks OpenSpec counts that no story holds.
// ParseTasks puts every task in a story, so it is 0; the loop checks it all the same
// before it calls a change complete.
func (t Tasks) OpenOutsideStories() int {
	open := t.total - t.done
	for _, s := range t.Stories {
		open -= len(s.OpenTasks())
	}
	return open
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

// Story returns the story whose id is id.
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

// ParseTasks parses the content of a tasks.md file. It accepts any input. Every task
// (a checkbox line OpenSpec counts) belongs to exactly one story: the level-2 section it
// is in, or, before the first level-2 heading, a story titled by the "#" heading above
// it (else "Tasks"). Sections without tasks are not stories.
func ParseTasks(data []byte) Tasks {
	var t Tasks
	seen := map[string]bool{}
	var cur Story    // the section being read; Line 0 before the first "##" heading
	heading := ""    // the text of cur's heading; for the preamble, the "#" heading nearest above its first task
	preamble := true // no level-2 heading yet
	flush := func() {
		if len(cur.Tasks) == 0 {
			return
		}
		if preamble && heading == "" {
			heading = "Tasks"
		}
		id, title := storyName(heading)
		cur.ID, cur.Title = uniqueID(id, seen), title
		t.Stories = append(t.Stories, cur)
	}
	n := 0
	for line := range strings.SplitSeq(strings.TrimPrefix(wellFormed(data), "\ufeff"), "\n") {
		n++
		if ok, text := parseHeading(line); ok {
			flush()
			cur, heading, preamble = Story{Line: n}, text, false
			continue
		}
		if preamble && len(cur.Tasks) == 0 {
			if ok, text := levelOne(line); ok {
				heading = text
				continue
			}
		}
		desc, done, ok := matchTask(line)
		if !ok {
			continue
		}
		t.total++
		if done {
			t.done++
		}
		id, text := splitID(desc)
		cur.Tasks = append(cur.Tasks, Task{ID: id, Text: text, Done: done, Line: n})
	}
	flush()
	return t
}

// storyWords may stand before a heading's number: "## Phase 2: Zsh" is story 2.
var storyWords = []string{"phase", "step", "stage", "part", "milestone", "story"}

// storyName returns a story's id and title from its heading text. The id is the
// heading's number (after an optional word such as Phase), else a slug of the text;
// the title is the text without that number and the separator after it.
func storyName(text string) (id, title string) {
	rest := text
	for _, w := range storyWords {
		if len(rest) > len(w) && strings.EqualFold(rest[:len(w)], w) && !isAlnum(rest[len(w)]) {
			rest = jsTrim(rest[len(w):])
			break
		}
	}
	num := numberRE.FindString(rest)
	if num == "" || len(num) > maxSlug || len(num) < len(rest) && isAlnum(rest[len(num)]) {
		return slug(text), text
	}
	rest = jsTrim(rest[len(num):])
	if rest != "" && strings.ContainsRune(".):-–—", []rune(rest)[0]) {
		_, size := utf8.DecodeRuneInString(rest)
		rest = jsTrim(rest[size:])
	}
	if rest == "" {
		rest = text
	}
	return num, rest
}

var numberRE = regexp.MustCompile(`^[0-9]+(?:\.[0-9]+)*`)

func isAlnum(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80
}

// maxSlug is the longest slug id, before a "_2" suffix.
const maxSlug = 40

// slug turns a heading into an id: lower-case ASCII letters, digits and single dashes,
// at most maxSlug characters; accented Latin letters lose their accents. A heading with
// nothing to keep (only punctuation or another script) gives "story".
func slug(text string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(text) {
		if f, ok := foldLatin[r]; ok {
			r = f
		}
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			if dash && b.Len() > 0 {
				b.WriteByte('-')
			}
			b.WriteRune(r)
			dash = false
		} else {
			dash = true
		}
	}
	s := b.String()
	if len(s) > maxSlug {
		s = strings.TrimRight(s[:maxSlug], "-")
	}
	if s == "" {
		return "story"
	}
	return s
}

// foldLatin maps the accented lower-case Latin letters of Latin-1 and Latin Extended-A
// that people write in headings to their base letter.
var foldLatin = func() map[rune]rune {
	m := map[rune]rune{}
	for base, letters := range map[rune]string{
		'a': "àáâãäåāăą", 'c': "çćĉċč", 'd': "ďđ", 'e': "èéêëēĕėęě", 'g': "ĝğġģ", 'h': "ĥħ",
		'i': "ìíîïĩīĭįı", 'j': "ĵ", 'k': "ķ", 'l': "ĺļľŀł", 'n': "ñńņňŉ", 'o': "òóôõöøōŏő",
		'r': "ŕŗř", 's': "śŝşšß", 't': "ţťŧ", 'u': "ùúûüũūŭůűų", 'w': "ŵ", 'y': "ýÿŷ", 'z': "źżž",
	} {
		for _, r := range letters {
			m[r] = base
		}
	}
	return m
}()

// uniqueID returns id, or id_2, id_3… when an earlier story of the file has it.
func uniqueID(id string, seen map[string]bool) string {
	u := id
	for k := 2; seen[u]; k++ {
		u = id + "_" + strconv.Itoa(k)
	}
	seen[u] = true
	return u
}

// levelOne reports whether line is a level-1 ATX heading ("# Title") and returns its text.
func levelOne(line string) (ok bool, text string) {
	return atxHeading(line, "#")
}

// parseHeading reports whether line is a level-2 heading (`^ {0,3}##(?:[ \t](.*))?$` once
// one trailing \r is removed) and returns its text, trimmed.
func parseHeading(line string) (ok bool, text string) {
	return atxHeading(line, "##")
}

// atxHeading reports whether line is an ATX heading opened by exactly marker (up to
// three spaces before it, then a space, a tab or the end) and returns its text, trimmed.
func atxHeading(line, marker string) (ok bool, text string) {
	line = strings.TrimSuffix(line, "\r")
	i := 0
	for i < 3 && i < len(line) && line[i] == ' ' {
		i++
	}
	rest, ok := strings.CutPrefix(line[i:], marker)
	if !ok || rest != "" && rest[0] != ' ' && rest[0] != '\t' {
		return false, ""
	}
	return true, jsTrim(rest)
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
