package speckit

import (
	"reflect"
	"strings"
	"testing"
)

// A tasks.md saved with CRLF line ends (an editor on Windows, a checkout with
// core.autocrlf) gives the same stories, tasks, continuation lines and skip notes as
// with LF: no "\r" in a task's text or the lines that follow it.
func TestCRLFSameAsLF(t *testing.T) {
	lf := "# Tasks\n\n## Phase 1: Setup\n\n**Goal**: set up\n\n- [ ] T001 Create the project that\n  spans two lines\n  - note: nested\n- [X] T002 Done one\n- [x] T003 (skipped - not automatable) deploy\n\n## Phase 2: Core\n\n- [ ] T004 Core\n"
	a, b := ParseTasks([]byte(lf)), ParseTasks([]byte(strings.ReplaceAll(lf, "\n", "\r\n")))
	if !reflect.DeepEqual(a, b) {
		t.Errorf("CRLF parses differently:\n LF   %+v\n CRLF %+v", a, b)
	}
	if len(a.Stories) != 2 || a.Done != 2 || a.Total != 4 || a.Stories[0].Tasks[2].Skipped != "not automatable" {
		t.Errorf("parsed %+v", a)
	}
}
