package term

import (
	"fmt"
	"strings"
	"sync"
)

// Reporter shows a loop's progress on stderr: one line per attempt, the agent's text
// indented beneath it as it arrives, and the outcome. It implements tell.Reporter.
// Every text it is handed goes through Inert: much of it is the agent's.
type Reporter struct {
	s   *Streams
	p   Palette
	mu  sync.Mutex
	mid bool // the last agent text did not end with a newline
}

// NewReporter returns a Reporter writing to s.Err.
func NewReporter(s *Streams) *Reporter {
	return &Reporter{s: s, p: s.Palette()}
}

func (r *Reporter) endLine() {
	if r.mid {
		fmt.Fprintln(r.s.Err)
		r.mid = false
	}
}

// Step reports something git-ralph did, dimmed.
func (r *Reporter) Step(msg string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.endLine()
	fmt.Fprintln(r.s.Err, r.p.Dim(Inert(msg)))
}

// Warn reports something the user should look at.
func (r *Reporter) Warn(msg string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.endLine()
	fmt.Fprintln(r.s.Err, r.p.Warn("! "+Inert(msg)))
}

// Attempt announces an attempt: `[2/5] story 3 "Title" · attempt 1 of 4`.
func (r *Reporter) Attempt(index, total int, story, title string, n, max int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.endLine()
	fmt.Fprintf(r.s.Err, "%s story %s %q · attempt %d of %d\n",
		r.p.Bold(fmt.Sprintf("[%d/%d]", index, total)), Inert(story), title, n, max)
}

// AgentText streams the agent's words, indented under the attempt line.
func (r *Reporter) AgentText(text string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if text == "" {
		return
	}
	lines := strings.Split(Inert(text), "\n")
	for i, l := range lines {
		if i > 0 {
			fmt.Fprintln(r.s.Err)
			r.mid = false
		}
		if l == "" {
			continue
		}
		if !r.mid {
			fmt.Fprint(r.s.Err, "    ")
		}
		fmt.Fprint(r.s.Err, l)
		r.mid = true
	}
	r.endLine()
}

// AgentTool shows one tool call of the agent, dimmed.
func (r *Reporter) AgentTool(name, summary string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.endLine()
	fmt.Fprintln(r.s.Err, r.p.Dim("    ↳ "+Inert(name+" "+summary)))
}

// Outcome reports how an attempt or an operation ended.
func (r *Reporter) Outcome(ok bool, msg string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.endLine()
	if ok {
		fmt.Fprintln(r.s.Err, r.p.Success("✓ ")+Inert(msg))
	} else {
		fmt.Fprintln(r.s.Err, r.p.Fail("✗ ")+Inert(msg))
	}
}
