// Package issue reads a GitHub issue as git-ralph runs it: the task list of its body
// (GitHub's rule: a checkbox list item outside code and HTML comments), the boxes
// ticked back into the body byte for byte, whose issues run without being told to
// (author_association), and the "Closes #N" lines of a pull request.
//
// It is a leaf like the other task-source parsers (openspec, speckit, plan, prd): it
// works on strings the caller read, imports only tasklist, and neither talks to GitHub
// (internal/github does) nor knows the loop.
package issue

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/git-ralph/git-ralph/internal/tasklist"
)

// RunName is the run name of issue n: its branch is ralph/issue-<n>.
func RunName(n int) string { return "issue-" + strconv.Itoa(n) }

// Tasks returns the task-list items of an issue body, in order, as GitHub shows them
// as checkboxes: a list item ("-", "*", "+", "1." or "1)", at any depth) that starts
// with "[ ]", "[x]" or "[X]" followed by text, outside fenced code blocks and HTML
// comments (issue templates keep their instructions in those). A task's Line is its
// 1-based line in body; its Text the rest of that line.
func Tasks(body string) []tasklist.Task {
	var out []tasklist.Task
	scan(body, func(n int, line string) {
		if desc, done, ok := tasklist.ExactTask(line); ok && desc != "" {
			out = append(out, tasklist.Task{Text: desc, Done: done, Line: n, Indent: tasklist.IndentOf(line)})
		}
	})
	return out
}

// scan calls f with each line of body (without its line ending) that is neither in a
// fenced code block nor in an HTML comment. An HTML comment hides lines when it opens a
// line (CommonMark's HTML block, which ends with the line holding "-->"); one opened
// mid-line does not, as a list item interrupts the paragraph it is in.
func scan(body string, f func(n int, line string)) {
	var fences tasklist.Fences
	inComment := false
	for n, line := range lines(body) {
		text := strings.TrimSuffix(line, "\r")
		if inComment { // an HTML block runs to the end of the line that closes it
			inComment = !strings.Contains(text, "-->")
			continue
		}
		if fences.Skip(text) {
			continue
		}
		if t := strings.TrimLeft(text, " \t"); strings.HasPrefix(t, "<!--") {
			if !strings.Contains(t[4:], "-->") {
				inComment = true
			}
			continue
		}
		f(n+1, text)
	}
}

// lines splits s after each "\n", keeping nothing out: joined they are s again.
func lines(s string) []string {
	var out []string
	for s != "" {
		i := strings.IndexByte(s, '\n')
		if i < 0 {
			out = append(out, s)
			break
		}
		out = append(out, s[:i])
		s = s[i+1:]
	}
	return out
}

// Tick returns body with the boxes of the tasks on the given lines (Task.Line of
// Tasks(body)) ticked: "[ ]" becomes "[x]", and every other byte stays as it was (line
// endings, spacing, the other boxes). A line that holds no task of body is an error,
// and body is returned unchanged with it.
func Tick(body string, taskLines []int) (string, error) {
	tasks := map[int]bool{}
	for _, t := range Tasks(body) {
		tasks[t.Line] = t.Done
	}
	for _, n := range taskLines {
		if _, ok := tasks[n]; !ok {
			return body, fmt.Errorf("line %d of the issue body is not a task", n)
		}
	}
	ls := lines(body)
	var b strings.Builder
	b.Grow(len(body))
	for i, line := range ls {
		if slices.Contains(taskLines, i+1) && !tasks[i+1] {
			box := strings.IndexByte(line, '[') // the list marker holds none: the first is the box
			line = line[:box+1] + "x" + line[box+2:]
		}
		b.WriteString(line)
		if i < len(ls)-1 || strings.HasSuffix(body, "\n") {
			b.WriteByte('\n')
		}
	}
	return b.String(), nil
}

// Trusted reports whether an issue whose author has this association with the
// repository (GitHub's author_association) runs without --trust-issue-author: OWNER,
// MEMBER and COLLABORATOR may push to it already. CONTRIBUTOR, FIRST_TIME_CONTRIBUTOR,
// FIRST_TIMER, MANNEQUIN, NONE and anything new are not.
func Trusted(association string) bool {
	switch association {
	case "OWNER", "MEMBER", "COLLABORATOR":
		return true
	}
	return false
}

// Ref is an issue as a pull request names it.
type Ref struct {
	Repo   string // [HOST/]OWNER/REPO
	Number int
	Open   bool // as last read: a closed issue is never named to be closed
}

// ClosingLines are the lines a pull request into repo ([HOST/]OWNER/REPO) ends with to
// close issues when it merges: "Closes #N" for each open one of refs (the parent, then
// the sub-issues whose stories completed), "Closes OWNER/REPO#N" for one of another
// repository, once each. It is built from what git-ralph read from GitHub, never from
// the agent's text.
func ClosingLines(repo string, refs []Ref) []string {
	var out []string
	for _, r := range refs {
		if !r.Open || r.Number <= 0 {
			continue
		}
		name := "#" + strconv.Itoa(r.Number)
		if !strings.EqualFold(r.Repo, repo) {
			name = r.Repo + name
		}
		if line := "Closes " + name; !slices.Contains(out, line) {
			out = append(out, line)
		}
	}
	return out
}
