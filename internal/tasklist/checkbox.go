package tasklist

import "strings"

// ExactTask reports whether line is a checkbox line whose box is exactly "[ ]", "[x]" or
// "[X]" (spec-kit's and ralphex's rule): any indent, a list marker ("-", "*", "+",
// "1." or "1)"), white space, the box, then white space or the end of the line. It
// returns the description after the box, trimmed. "- [P] tasks = …" (spec-kit's note),
// "- [~] …" and "- [ ](link)" are not tasks.
func ExactTask(line string) (desc string, done, ok bool) {
	line = strings.TrimSuffix(line, "\r")
	s := strings.TrimLeft(line, " \t")
	switch {
	case s != "" && strings.IndexByte("-*+", s[0]) >= 0:
		s = s[1:]
	default:
		d := len(s) - len(strings.TrimLeft(s, "0123456789"))
		if d == 0 || d > 9 || d >= len(s) || s[d] != '.' && s[d] != ')' {
			return "", false, false
		}
		s = s[d+1:]
	}
	rest := strings.TrimLeft(s, " \t")
	if len(rest) == len(s) || len(rest) < 3 || rest[0] != '[' || rest[2] != ']' {
		return "", false, false
	}
	switch rest[1] {
	case ' ':
	case 'x', 'X':
		done = true
	default:
		return "", false, false
	}
	after := rest[3:]
	if after != "" && after[0] != ' ' && after[0] != '\t' {
		return "", false, false
	}
	return Trim(after), done, true
}

// Fences follows fenced code blocks line by line (CommonMark: an opening run of at least
// three backticks or tildes; the block ends at a line holding only a run of the same
// character at least as long). Indentation is not limited, so a fence inside a list
// item counts as one too.
type Fences struct {
	ch byte // '`' or '~' while inside a block
	n  int  // the opening run's length
}

// Skip reports whether line is a fence line or inside a fenced block, and so holds
// neither tasks nor headings.
func (f *Fences) Skip(line string) bool {
	t := strings.Trim(strings.TrimSuffix(line, "\r"), " \t")
	run := 0
	if t != "" && (t[0] == '`' || t[0] == '~') {
		run = len(t) - len(strings.TrimLeft(t, t[:1]))
	}
	if f.ch != 0 {
		if run >= f.n && t[0] == f.ch && strings.TrimLeft(t, t[:1]) == "" {
			f.ch, f.n = 0, 0
		}
		return true
	}
	if run >= 3 && (t[0] == '~' || !strings.Contains(t[run:], "`")) {
		f.ch, f.n = t[0], run
		return true
	}
	return false
}

// Rules say how ParseMarkdown reads a file.
type Rules struct {
	// StoryLevel: headings of level 2 to StoryLevel start a story (2 when 0, as docs/TASKS.md says;
	// 3 makes every "###" section a story too).
	StoryLevel int
	// TaskID splits a task's id off its description ("T012 [P] …" → "T012"); nil: none.
	TaskID func(desc string) (id, text string)
}

// ParseMarkdown reads a markdown task list by spec-kit's and plans' rule: a task is an
// ExactTask line outside fenced code; a story is a section opened by a heading of level
// 2 to StoryLevel that holds a task, and the tasks before the first such heading form
// a story titled by the "#" heading above them, else "Tasks". Headings inside fenced
// code are not headings. Every task is in exactly one story.
func ParseMarkdown(data []byte, r Rules) Tasks {
	level := r.StoryLevel
	if level < 2 {
		level = 2
	}
	var t Tasks
	seen := map[string]bool{}
	var cur Story
	heading := "" // the story's heading; for the preamble, the "#" heading nearest above its first task
	sub := ""     // the deepest heading below the story's, above the task
	preamble := true
	lines := strings.Split(strings.TrimPrefix(string(data), "\ufeff"), "\n")
	flush := func(next int) {
		if len(cur.Tasks) == 0 {
			return
		}
		if preamble && heading == "" {
			heading = "Tasks"
		}
		id, title := StoryName(heading)
		cur.ID, cur.Title = UniqueID(id, seen), title
		Close(&cur, lines, next)
		t.Stories = append(t.Stories, cur)
	}
	var fences Fences
	for i, line := range lines {
		n := i + 1
		if fences.Skip(line) {
			continue
		}
		if lv, text := HeadingLevel(line); lv > 0 {
			switch {
			case lv >= 2 && lv <= level:
				flush(n)
				cur, heading, sub, preamble = Story{Line: n}, text, "", false
			case lv == 1 && preamble && len(cur.Tasks) == 0:
				heading = text
			case lv > level:
				sub = text
			}
			continue
		}
		desc, done, ok := ExactTask(line)
		if !ok {
			continue
		}
		t.Total++
		if done {
			t.Done++
		}
		task := Task{Text: desc, Done: done, Line: n, Heading: sub, Indent: IndentOf(line)}
		if r.TaskID != nil {
			task.ID, task.Text = r.TaskID(desc)
		}
		cur.Tasks = append(cur.Tasks, task)
	}
	flush(len(lines) + 1)
	return t
}
