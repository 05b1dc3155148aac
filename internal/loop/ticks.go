package loop

import (
	"fmt"
	"strings"

	"github.com/git-ralph/git-ralph/internal/tasklist"
)

// doneCounts is how many tasks of each story are done: what an attempt starts from.
func doneCounts(t tasklist.Tasks) map[string]int {
	m := make(map[string]int, len(t.Stories))
	for _, st := range t.Stories {
		d, _ := st.Counts()
		m[st.ID] = d
	}
	return m
}

// tickedElsewhere says why an attempt on story fails when it ticked tasks of other
// stories (more of their tasks are done than when it started, before): each story is
// done in an attempt of its own, gated by the verify hook and checkpointed apart, so an
// attempt that ticks ahead fails, saying which. "" when it ticked only its own.
func tickedElsewhere(before map[string]int, now tasklist.Tasks, story string) string {
	var stories []string
	for _, st := range now.Stories {
		if st.ID == story {
			continue
		}
		if d, _ := st.Counts(); d > before[st.ID] {
			stories = append(stories, st.ID)
		}
	}
	if len(stories) == 0 {
		return ""
	}
	return fmt.Sprintf("signalled COMPLETE but also ticked tasks of story %s; tick only story %s's tasks: "+
		"every story gets an attempt, a verify gate and a checkpoint of its own", strings.Join(stories, ", "), story)
}
