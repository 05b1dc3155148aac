package agent

import (
	"fmt"
	"testing"
)

func TestChildEnv(t *testing.T) {
	base := []string{"PATH=/bin", "GIT_DIR=/x/.git", "GIT_WORK_TREE=/x", "GIT_INDEX_FILE=/x/i", "GIT_PREFIX=sub/", "GIT_AUTHOR_NAME=a", "RALPH_STORY=old"}
	got := childEnv(base, []string{"RALPH_STORY=1.2", "RALPH_AGENT=1"})
	want := []string{"PATH=/bin", "GIT_AUTHOR_NAME=a", "RALPH_STORY=1.2", "RALPH_AGENT=1"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("childEnv = %q, want %q", got, want)
	}
}
