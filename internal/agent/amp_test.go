package agent

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

func TestAmpDecodeSamples(t *testing.T) {
	const th = "T-5f3c1a9e-2b7d-4c8e-9f10-1234567890ab"
	for _, tc := range []struct {
		file string
		want Want
	}{
		{"synthetic-amp-complete.ndjson", Want{Saw: true, Promise: Complete, Text: CompleteText, Turns: 3,
			In: 4 * 1300, Out: 4 * 57, Cost: -1, Session: th, Texts: 2,
			Tools:     []string{"create_file: /home/user/repo/repo5/hello.txt", `Bash: git add hello.txt && git commit -q -m "feat: add hello.txt"`},
			Terminals: 1}},
		{"synthetic-amp-failed.ndjson", Want{Saw: true, Promise: FailedTests, Text: FailedText, Turns: 2,
			In: 2 * 1300, Out: 2 * 57, Cost: -1, Session: th, Texts: 1, Tools: []string{"Bash: go test ./..."}, Terminals: 1}},
		{"synthetic-amp-promise-echo-then-failed.ndjson", Want{Saw: true, Promise: EchoFailed, Text: EchoText, Turns: 2,
			In: 3 * 1300, Out: 3 * 57, Cost: -1, Session: th, Texts: 2, Tools: []string{"Bash: cat PROMPT.md"}, Terminals: 1}},
		{"synthetic-amp-api-error.ndjson", Want{Saw: true, IsError: true, Class: ClassTransient, Turns: 1,
			Errors: []string{"API Error: 529 …"}, Cost: -1, Session: th, Terminals: 1}},
		{"synthetic-amp-rate-limit.ndjson", Want{Saw: true, IsError: true, Class: ClassLimit, RetryAfter: 15 * time.Minute,
			Turns: 1, Errors: []string{"Rate limit exceeded. Please try again in 15 minutes."}, Cost: -1, Session: th, Terminals: 1}},
		{"synthetic-amp-killed.ndjson", Want{Text: "I'll create the greeting file.", In: 1300, Out: 57, Cost: -1, Session: th, Texts: 1}},
		{"synthetic-amp-garbage-lines.ndjson", Want{Saw: true, Promise: Complete, Text: CompleteText, Turns: 1,
			In: 2 * 1300, Out: 2 * 57, Cost: -1, Session: th, Texts: 2, Terminals: 1}},
	} {
		t.Run(tc.file, func(t *testing.T) {
			res, rec := decodeWith(t, Amp{}, tc.file)
			Check(t, res, rec, tc.want)
		})
	}
}

func TestRunAmpWithoutKeyStartsNothing(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	t.Setenv("XDG_DATA_HOME", "")
	t.Setenv("AMP_API_KEY", "")
	t.Setenv("PATH", t.TempDir()) // no amp: a start attempt would say "not found"
	_, err := Run(context.Background(), Amp{}, ScriptRequest(t))
	var pe *PreflightError
	if !errors.As(err, &pe) || pe.Agent != "amp" || !strings.Contains(err.Error(), "AMP_API_KEY") {
		t.Fatalf("err = %v", err)
	}
	// With the key, Run gets as far as looking for the binary.
	req := ScriptRequest(t)
	req.Env = []string{"AMP_API_KEY=k"}
	_, err = Run(context.Background(), Amp{}, req)
	var nf *NotFoundError
	if !errors.As(err, &nf) || nf.Agent != "amp" {
		t.Fatalf("err = %v", err)
	}
}
