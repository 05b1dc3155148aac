package parallel

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

func sh(name, script string) Job { return Job{Name: name, Argv: []string{"/bin/sh", "-c", script}} }

// syncBuffer is a bytes.Buffer safe for the display's writes and the test's reads.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// Without a terminal every line comes out once, prefixed with its job's name, and the
// results keep the jobs' order with their exit codes and last lines.
func TestRunPlain(t *testing.T) {
	var out syncBuffer
	res := Run(t.Context(), nil, []Job{
		sh("alpha", "echo one; echo two >&2"),
		sh("b", "echo failing; exit 3"),
	}, Options{Out: &out})
	for _, want := range []string{"alpha | one\n", "alpha | two\n", "b     | failing\n"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	if res[0].Name != "alpha" || res[0].Code != 0 || res[0].Last != "two" || !res[0].Started {
		t.Errorf("alpha: %+v", res[0])
	}
	if res[1].Code != 3 || res[1].Last != "failing" {
		t.Errorf("b: %+v", res[1])
	}
}

// Max bounds how many run at once.
func TestRunMax(t *testing.T) {
	dir := t.TempDir()
	script := `n=$(ls "$D" | wc -l); touch "$D/$$"; [ "$n" -eq 0 ] || echo overlap; sleep 0.1; rm "$D/$$"`
	t.Setenv("D", dir)
	var out syncBuffer
	Run(t.Context(), nil, []Job{sh("a", script), sh("b", script), sh("c", script)}, Options{Max: 1, Out: &out})
	if strings.Contains(out.String(), "overlap") {
		t.Fatalf("two jobs ran at once with Max 1:\n%s", out.String())
	}
}

// In a terminal each job has one line, redrawn in place (cursor up, clear line), cut
// to the width; escape sequences of the job's own output do not get through.
func TestRunTTY(t *testing.T) {
	var out syncBuffer
	Run(t.Context(), nil, []Job{
		sh("a", "echo short"),
		sh("b", `printf 'x\033[31m%s\n' "$(printf '%0100d' 0)"`),
	}, Options{Out: &out, TTY: true, Width: 40})
	s := out.String()
	if !strings.Contains(s, "\x1b[2A") {
		t.Errorf("no redraw in place: %q", s)
	}
	lines := strings.Split(strings.TrimSuffix(s, "\n"), "\n")
	last := lines[len(lines)-2:]
	if !strings.HasSuffix(last[0], "a  short") {
		t.Errorf("a's line: %q", last[0])
	}
	b := strings.TrimPrefix(last[1], "\r\x1b[K")
	if !strings.HasPrefix(b, "b  x [31m") || !strings.HasSuffix(b, "…") || len([]rune(b)) != 39 {
		t.Errorf("b's line: %q", b)
	}
}

// Cancelling stops the running jobs with one SIGINT each and starts no more.
func TestRunCancel(t *testing.T) {
	dir := t.TempDir()
	ready := filepath.Join(dir, "ready")
	ctx, cancel := context.WithCancel(t.Context())
	go func() {
		for {
			if _, err := os.Stat(ready); err == nil {
				cancel()
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
	}()
	var out syncBuffer
	res := Run(ctx, nil, []Job{
		sh("a", `trap 'echo got INT; exit 7' INT; touch `+ready+`; while :; do sleep 0.05; done`),
		sh("b", "echo should not run"),
	}, Options{Max: 1, Out: &out})
	if res[0].Code != 7 || res[0].Last != "got INT" {
		t.Errorf("a: %+v\n%s", res[0], out.String())
	}
	if res[1].Started || strings.Contains(out.String(), "should not run") {
		t.Errorf("b started: %+v", res[1])
	}
}

// Done hears of each job as it ends, before the others have: the first job ends while
// the second still waits for it to have ended (a start --label gives an issue's claim
// back as its run ends).
func TestRunDoneAsEachEnds(t *testing.T) {
	dir := t.TempDir()
	first := filepath.Join(dir, "first-done")
	var mu sync.Mutex
	var order []int
	var out syncBuffer
	res := Run(t.Context(), nil, []Job{
		sh("a", "exit 0"),
		sh("b", "while [ ! -e "+first+" ]; do sleep 0.01; done"),
	}, Options{Max: 2, Out: &out, Done: func(i int, r Result) {
		mu.Lock()
		order = append(order, i)
		mu.Unlock()
		if i == 0 {
			if err := os.WriteFile(first, nil, 0o644); err != nil {
				t.Error(err)
			}
		}
	}})
	if res[0].Code != 0 || res[1].Code != 0 || fmt.Sprint(order) != "[0 1]" {
		t.Errorf("results %+v, Done order %v", res, order)
	}
}

// The block is written to the terminal unfiltered (for its own cursor codes), so a
// loop's line keeps nothing a terminal would act on: C0 controls become spaces, C1
// controls and bidirectional overrides visible replacements.
func TestTruncateInert(t *testing.T) {
	got := truncate("a\x1b[2Jb\u009b2Jc\u202ed\x07", 80)
	if strings.ContainsAny(got, "\x1b\u009b\u202e\x07") {
		t.Errorf("truncate kept a control: %q", got)
	}
	if got != "a [2Jb\uFFFD2Jc\uFFFDd " {
		t.Errorf("truncate = %q", got)
	}
}
