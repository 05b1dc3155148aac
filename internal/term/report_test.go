package term

import (
	"strings"
	"testing"
)

func TestReporterIndentsAgentTextUnderTheAttempt(t *testing.T) {
	s, _, errOut := Test()
	r := NewReporter(s)
	r.Attempt(2, 5, "3", "Title", 1, 4)
	r.AgentText("first line\nsecond")
	r.AgentTool("Bash", "go test ./...")
	r.Outcome(true, "story 3: checkpoint abc1234")
	r.Outcome(false, "story 4 attempt 1: failed")
	r.Warn("orphan")
	r.Step("did something")
	want := `[2/5] story 3 "Title" · attempt 1 of 4
    first line
    second
    ↳ Bash go test ./...
✓ story 3: checkpoint abc1234
✗ story 4 attempt 1: failed
! orphan
did something
`
	if got := errOut.String(); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

func TestPaletteIsPlainWithoutColour(t *testing.T) {
	s, _, _ := Test()
	if got := s.Palette().Fail("x"); got != "x" {
		t.Errorf("Fail = %q without colour", got)
	}
	s.Color = true
	if got := s.Palette().Fail("x"); !strings.Contains(got, "\x1b[") {
		t.Errorf("Fail = %q with colour", got)
	}
}

func TestTestStreamsNeverPrompt(t *testing.T) {
	s, _, _ := Test()
	if s.CanPrompt() {
		t.Error("Test streams can prompt")
	}
}
