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
// repository (or for any, when repo is ""), once each. It is built from what git-ralph read from GitHub, never from
// the agent's text.
func ClosingLines(repo string, refs []Ref) []string {
	var out []string
	for _, r := range refs {
		if !r.Open || r.Number <= 0 {
			continue
		}
		name := "#" + strconv.Itoa(r.Number)
		if !strings.EqualFold(r.Repo, repo) {
			name = ownerRepo(r.Repo) + name // GitHub's cross-repository reference names no host
		}
		if line := "Closes " + name; !slices.Contains(out, line) {
			out = append(out, line)
		}
	}
	return out
}

// Issue is what git-ralph keeps of an issue it read.
type Issue struct {
	Number int    `json:"number"`
	Title  string `json:"title"`
	Body   string `json:"body,omitempty"`
	URL    string `json:"url,omitempty"`
	State  string `json:"state"` // open or closed
	Author string `json:"author,omitempty"`
	// Association is the author's author_association with the repository.
	Association string   `json:"association,omitempty"`
	Labels      []string `json:"labels,omitempty"`
	// CommentID is git-ralph's progress comment on it, once written.
	CommentID int64 `json:"commentId,omitempty"`
}

// Open reports whether the issue was open when read.
func (is Issue) Open() bool { return is.State == "open" }

// Snapshot is an issue and its sub-issues as git-ralph read them when a run started:
// what the run works from. A run records it, so that a resume, status and the report
// need no network; start reads it again.
type Snapshot struct {
	Repo   string  `json:"repo"` // [HOST/]OWNER/REPO
	Parent Issue   `json:"parent"`
	Subs   []Issue `json:"subs,omitempty"` // in GitHub's order, open and closed
}

// StoryID is the story id of issue n's story: "issue-<n>".
func StoryID(n int) string { return RunName(n) }

// Stories are the snapshot's stories in the order they run: one per sub-issue, in
// GitHub's order (a closed one is done, every task ticked), or, with no sub-issues, the
// issue itself. A story's tasks are its issue's task list; an issue without one is a
// single task, its title. A task of a body keeps its line (for Tick); a title has none.
func (s *Snapshot) Stories() []tasklist.Story {
	issues := s.Subs
	if len(issues) == 0 {
		issues = []Issue{s.Parent}
	}
	out := make([]tasklist.Story, 0, len(issues))
	for _, is := range issues {
		st := tasklist.Story{ID: StoryID(is.Number), Title: is.Title, Tasks: Tasks(is.Body)}
		if len(s.Subs) > 0 {
			st.Description = strings.TrimSpace(is.Body) // what the sub-issue says besides its tasks
		}
		if len(st.Tasks) == 0 {
			st.Tasks = []tasklist.Task{{Text: is.Title}}
		}
		if !is.Open() {
			for i := range st.Tasks {
				st.Tasks[i].Done = true
			}
		}
		out = append(out, st)
	}
	return out
}

// Tasks are the snapshot's stories with their counts, as every source's are.
func (s *Snapshot) Tasks() tasklist.Tasks {
	t := tasklist.Tasks{Stories: s.Stories()}
	for _, st := range t.Stories {
		d, n := st.Counts()
		t.Done += d
		t.Total += n
	}
	return t
}

// UntrustedError refuses issues whose authors are not trusted (see Trusted).
type UntrustedError struct {
	Repo   string
	Issues []Issue
}

func (e *UntrustedError) Error() string {
	var names []string
	for _, is := range e.Issues {
		assoc := is.Association
		if assoc == "" {
			assoc = "NONE"
		}
		names = append(names, fmt.Sprintf("#%d by @%s (%s)", is.Number, is.Author, assoc))
	}
	return fmt.Sprintf("%s: git-ralph runs only issues written by the repository's owners, members and collaborators, not %s",
		e.Repo, strings.Join(names, ", "))
}

// Hint says how to run them all the same.
func (e *UntrustedError) Hint() string {
	return "an issue's text becomes the agent's instructions: read it first; to run it as written, add --trust-issue-author (or git config ralph.trustIssueAuthors true)"
}

// CheckTrust returns an *UntrustedError naming the issues that would run (the parent and
// its open sub-issues) whose authors are not trusted, unless trustAll; nil when there
// are none.
func (s *Snapshot) CheckTrust(trustAll bool) error {
	if trustAll {
		return nil
	}
	var bad []Issue
	for _, is := range append([]Issue{s.Parent}, s.Subs...) {
		if (is.Open() || is.Number == s.Parent.Number) && !Trusted(is.Association) {
			bad = append(bad, is)
		}
	}
	if len(bad) == 0 {
		return nil
	}
	return &UntrustedError{Repo: s.Repo, Issues: bad}
}

// Candidate is an open issue of a label queue, with the issues it is blocked by.
type Candidate struct {
	Issue     Issue
	BlockedBy []Issue
}

// Decision is what a label queue does with a candidate.
type Decision struct {
	Issue Issue
	Take  bool
	Why   string // why it is skipped; "" when taken
}

// Queue decides which candidates of a label queue run, in their order: not one that
// carries the claim label (another run has it), is closed, or is blocked by an open
// issue. Each skip says why, for --dry-run.
func Queue(cands []Candidate, claim string) []Decision {
	out := make([]Decision, 0, len(cands))
	for _, c := range cands {
		d := Decision{Issue: c.Issue}
		var open []string
		for _, b := range c.BlockedBy {
			if b.Open() {
				open = append(open, "#"+strconv.Itoa(b.Number))
			}
		}
		switch {
		case !c.Issue.Open():
			d.Why = "closed"
		case slices.ContainsFunc(c.Issue.Labels, func(l string) bool { return strings.EqualFold(l, claim) }):
			d.Why = "claimed: it has the label " + claim + " (another run is working on it)"
		case len(open) > 0:
			d.Why = "blocked by " + strings.Join(open, ", ")
		default:
			d.Take = true
		}
		out = append(out, d)
	}
	return out
}

// Find returns the snapshot's issue numbered n (the parent or a sub-issue), nil if none.
func (s *Snapshot) Find(n int) *Issue {
	if s.Parent.Number == n {
		return &s.Parent
	}
	for i := range s.Subs {
		if s.Subs[i].Number == n {
			return &s.Subs[i]
		}
	}
	return nil
}

// ownerRepo is OWNER/REPO of [HOST/]OWNER/REPO.
func ownerRepo(r string) string {
	parts := strings.Split(r, "/")
	if len(parts) > 2 {
		parts = parts[len(parts)-2:]
	}
	return strings.Join(parts, "/")
}
