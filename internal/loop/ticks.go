package loop

import (
	"fmt"
	"strings"

	"github.com/git-ralph/git-ralph/internal/tasklist"
)

// tickedElsewhere says why an attempt on story fails when it ticked tasks of other
// stories (more of their tasks are done than when it started, before): each story is
// done in an attempt of its own, gated by the verify hook and checkpointed apart, so an
// attempt that ticks ahead fails, saying which. "" when it ticked only its own.
func tickedElsewhere(before map[string]int, now tasklist.Tasks, story string) string {
	stories := now.TickedSince(before, story)
	if len(stories) == 0 {
		return ""
	}
	return fmt.Sprintf("signalled COMPLETE but also ticked tasks of story %s; tick only story %s's tasks: "+
		"every story gets an attempt, a verify gate and a checkpoint of its own", strings.Join(stories, ", "), story)
}
