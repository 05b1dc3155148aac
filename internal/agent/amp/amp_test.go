package amp

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/git-ralph/git-ralph/internal/agent"
	"github.com/git-ralph/git-ralph/internal/agent/agenttest"
)

func TestAmpDecodeSamples(t *testing.T) {
	const th = "T-5f3c1a9e-2b7d-4c8e-9f10-1234567890ab"
	for _, tc := range []struct {
		file string
		want agenttest.Want
	}{
		{"synthetic-amp-complete.ndjson", agenttest.Want{Saw: true, Promise: agenttest.Complete, Text: agenttest.CompleteText, Turns: 3,
			In: 4 * 1300, Out: 4 * 57, Cost: -1, Session: th, Texts: 2,
			Tools:     []string{"create_file: /home/user/repo/repo5/hello.txt", `Bash: git add hello.txt && git commit -q -m "feat: add hello.txt"`},
			Terminals: 1}},
		{"synthetic-amp-failed.ndjson", agenttest.Want{Saw: true, Promise: agenttest.FailedTests, Text: agenttest.FailedText, Turns: 2,
			In: 2 * 1300, Out: 2 * 57, Cost: -1, Session: th, Texts: 1, Tools: []string{"Bash: go test ./..."}, Terminals: 1}},
		{"synthetic-amp-promise-echo-then-failed.ndjson", agenttest.Want{Saw: true, Promise: agenttest.EchoFailed, Text: agenttest.EchoText, Turns: 2,
			In: 3 * 1300, Out: 3 * 57, Cost: -1, Session: th, Texts: 2, Tools: []string{"Bash: cat PROMPT.md"}, Terminals: 1}},
		{"synthetic-amp-api-error.ndjson", agenttest.Want{Saw: true, IsError: true, Class: agent.ClassTransient, Turns: 1,
			Errors: []string{"API Error: 529 …"}, Cost: -1, Session: th, Terminals: 1}},
		{"synthetic-amp-rate-limit.ndjson", agenttest.Want{Saw: true, IsError: true, Class: agent.ClassLimit, RetryAfter: 15 * time.Minute,
			Turns: 1, Errors: []string{"Rate limit exceeded. Please try again in 15 minutes."}, Cost: -1, Session: th, Terminals: 1}},
		{"synthetic-amp-killed.ndjson", agenttest.Want{Text: "I'll create the greeting file.", In: 1300, Out: 57, Cost: -1, Session: th, Texts: 1}},
		{"synthetic-amp-garbage-lines.ndjson", agenttest.Want{Saw: true, Promise: agenttest.Complete, Text: agenttest.CompleteText, Turns: 1,
			In: 2 * 1300, Out: 2 * 57, Cost: -1, Session: th, Texts: 2, Terminals: 1}},
	} {
		t.Run(tc.file, func(t *testing.T) {
			res, rec := decodeWith(t, Amp{}, tc.file)
			agenttest.Check(t, res, rec, tc.want)
		})
	}
}

func TestRunAmpWithoutKeyStartsNothing(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	t.Setenv("XDG_DATA_HOME", "")
	t.Setenv("AMP_API_KEY", "")
	t.Setenv("PATH", t.TempDir()) // no amp: a start attempt would say "not found"
	_, err := agent.Run(context.Background(), Amp{}, agenttest.ScriptRequest(t))
	var pe *agent.PreflightError
	if !errors.As(err, &pe) || pe.Agent != "amp" || !strings.Contains(err.Error(), "AMP_API_KEY") {
		t.Fatalf("err = %v", err)
	}
	// With the key, Run gets as far as looking for the binary.
	req := agenttest.ScriptRequest(t)
	req.Env = []string{"AMP_API_KEY=k"}
	_, err = agent.Run(context.Background(), Amp{}, req)
	var nf *agent.NotFoundError
	if !errors.As(err, &nf) || nf.Agent != "amp" {
		t.Fatalf("err = %v", err)
	}
}

// decodeWith decodes the transcript testdata/name (internal/agent/testdata) with d.
func decodeWith(t *testing.T, d agent.Driver, name string) (agent.Result, *agenttest.Recorder) {
	t.Helper()
	return agenttest.Decode(t, d, filepath.Join("..", "testdata", name))
}
