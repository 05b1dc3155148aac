package tasklist

import (
	"regexp"
	"strconv"
	"strings"
	"sync"
)

// Close ends the story being read at the line before line next (1-based; len(lines)+1 at
// the end of the file), not counting the blank lines and thematic breaks ("---") before
// it, and gives its tasks the lines that continue them (Continue). A parser calls it as
// it flushes each story.
func Close(s *Story, lines []string, next int) {
	end := next - 1
	first := max(s.Line, 1)
	for end > first && separator(lines[end-1]) {
		end--
	}
	s.End = end
	Continue(s, lines)
}

// Continue gives each task of s the lines of its section that continue it, as written:
// deeper-indented lines, lazy continuation lines and the blank lines between them; a
// checkbox line is always a task of its own (docs/TASKS.md, "Stories and tasks"). s.Line and
// s.End bound the section; the tasks' Line and Indent say where they are.
func Continue(s *Story, lines []string) {
	if len(s.Tasks) == 0 || s.End == 0 {
		return
	}
	next := 0       // the next task, in line order
	var stack []int // the tasks a deeper line may continue, outermost first
	var rest [][]string
	var last []int
	var fences Fences
	owner := -1   // the task a fenced block under it belongs to, while the block is open
	blanks := 0   // blank lines since the last line kept
	text := false // the line above goes on a task's text (a lazy continuation may follow)
	keep := func(i, n int, line string) {
		if rest == nil {
			rest, last = make([][]string, len(s.Tasks)), make([]int, len(s.Tasks))
		}
		for range blanks {
			rest[i] = append(rest[i], "")
		}
		rest[i], last[i], blanks = append(rest[i], line), n, 0
	}
	for n := max(s.Line, 1); n <= s.End && n <= len(lines); n++ {
		line := strings.TrimSuffix(lines[n-1], "\r")
		for next < len(s.Tasks) && s.Tasks[next].Line < n {
			next++
		}
		if next < len(s.Tasks) && s.Tasks[next].Line == n { // a task
			i := next
			for len(stack) > 0 && s.Tasks[stack[len(stack)-1]].Indent >= s.Tasks[i].Indent {
				stack = stack[:len(stack)-1]
			}
			stack, blanks, text, owner = append(stack, i), 0, true, -1
			fences.Skip(line)
			continue
		}
		inFence := fences.ch != 0
		opens := fences.Skip(line) && !inFence
		if inFence { // inside a fenced block, or its closing line
			if owner >= 0 {
				keep(owner, n, line)
			}
			continue
		}
		if n == s.Line {
			continue // the story's heading
		}
		if lv, _ := HeadingLevel(line); lv > 0 && !opens {
			stack, blanks, text = nil, 0, false
			continue
		}
		if strings.TrimSpace(line) == "" {
			blanks++
			text = false
			continue
		}
		lazy := text && blanks == 0 && !listItem(line) && !opens
		w := IndentOf(line)
		for !lazy && len(stack) > 0 && s.Tasks[stack[len(stack)-1]].Indent >= w {
			stack = stack[:len(stack)-1]
		}
		if len(stack) == 0 {
			blanks, text = 0, false
			continue
		}
		top := stack[len(stack)-1]
		keep(top, n, line)
		text = !listItem(line)
		if opens {
			owner, text = top, false
		}
	}
	for i := range s.Tasks {
		if rest != nil && len(rest[i]) > 0 {
			s.Tasks[i].Rest, s.Tasks[i].End = strings.Join(rest[i], "\n"), last[i]
		} else {
			s.Tasks[i].End = s.Tasks[i].Line
		}
		if t := &s.Tasks[i]; t.Done {
			t.Skipped, _ = SkipNote(t.Text + "\n" + t.Rest)
		}
	}
}

// skipRE is the note of a task ticked without being done, as ralphex's task prompt asks
// for it: "(skipped - not automatable)", with a reason after a colon or a dash.
var skipRE = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?i)\(\s*skipped\b\s*(?:[-–—:]+\s*)?([^()]*?)\s*\)`)
})

// SkipNote returns the reason of text's skip note ("not automatable: needs a phone" in
// "(skipped - not automatable: needs a phone)"), "skipped" for a note that gives none;
// false when text has no such note.
func SkipNote(text string) (reason string, ok bool) {
	m := skipRE().FindStringSubmatch(text)
	if m == nil {
		return "", false
	}
	if r := strings.Join(strings.Fields(m[1]), " "); r != "" {
		return r, true
	}
	return "skipped", true
}

// separator reports whether line is blank or a thematic break ("---", "***", "___").
func separator(line string) bool {
	t := strings.ReplaceAll(strings.TrimSpace(line), " ", "")
	return t == "" || len(t) >= 3 && (strings.Trim(t, "-") == "" || strings.Trim(t, "*") == "" || strings.Trim(t, "_") == "")
}

// listItem reports whether line starts a list item: a marker ("-", "*", "+", "1." or
// "1)") and white space or the end of the line.
func listItem(line string) bool {
	t := strings.TrimLeft(line, " \t")
	if t == "" {
		return false
	}
	if strings.IndexByte("-*+", t[0]) >= 0 {
		return len(t) == 1 || t[1] == ' ' || t[1] == '\t'
	}
	d := len(t) - len(strings.TrimLeft(t, "0123456789"))
	if d == 0 || d > 9 || d >= len(t) || t[d] != '.' && t[d] != ')' {
		return false
	}
	return d+1 == len(t) || t[d+1] == ' ' || t[d+1] == '\t'
}

// maxSkipLine bounds SkipLine: the task's words are the agent's, its reason too.
const maxSkipLine = 200

// SkipLine says a task ticked as skipped on one line, for a Ralph-Skipped trailer,
// status, the report and a pull request: its id (or its line), its text without the
// note, and why: "1.3 Deploy to staging — not automatable: needs credentials".
func (t Task) SkipLine() string {
	name := t.ID
	if name == "" && t.Line > 0 {
		name = "line " + strconv.Itoa(t.Line)
	}
	text := strings.TrimSpace(skipRE().ReplaceAllString(t.Text, ""))
	line := strings.Join(strings.Fields(strings.TrimSpace(name+" "+text)+" — "+t.Skipped), " ")
	if len(line) > maxSkipLine {
		line = strings.ToValidUTF8(line[:maxSkipLine], "") + "…"
	}
	return line
}
