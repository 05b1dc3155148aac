package opencode

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/git-ralph/git-ralph/internal/agent"
	"github.com/git-ralph/git-ralph/internal/agent/agenttest"
)

func TestOpenCodeDecodeSamples(t *testing.T) {
	const ses = "ses_deb6dddddffeZwjRg16U1TPchY"
	write := "write: /home/user/repo/repo3/hello.txt"
	commit := `bash: git add hello.txt && git commit -q -m "feat: add hello.txt"`
	for _, tc := range []struct {
		file string
		want agenttest.Want
	}{
		{"opencode-run-format-json-complete.ndjson", agenttest.Want{Saw: true, Promise: agenttest.Complete, Text: agenttest.CompleteText,
			Turns: 3, In: 1202 + 1203 + 1204, Out: 57 * 3, Cost: 0.004461 + 0.004464 + 0.004467, Session: ses,
			Texts: 2, Tools: []string{write, commit}, Terminals: 1}},
		// Rejected permissions end the run without a final step: no result.
		{"opencode-run-format-json-permission-auto-rejected.ndjson", agenttest.Want{Text: "I'll create the greeting file.",
			Turns: 2, In: 1214 + 1215, Out: 114, Cost: 0.004497 + 0.0045, Session: "ses_deb6a7d66ffeVB9bPNTNjy5Gss",
			Texts: 1, Tools: []string{write, commit}}},
		{"opencode-run-format-json-api-error.ndjson", agenttest.Want{Saw: true, IsError: true, Class: agent.ClassTransient,
			Errors: []string{"HTTP 500: Internal server error (mock)"}, Cost: -1, Session: "ses_deb6c1276ffedZM0wKvly3cBgz", Terminals: 1}},
		{"synthetic-opencode-failed.ndjson", agenttest.Want{Saw: true, Promise: agenttest.FailedTests, Text: agenttest.FailedText,
			Turns: 2, In: 2404, Out: 114, Cost: 2 * 0.004461, Session: ses, Texts: 2,
			Tools: []string{write}, Terminals: 1}},
		{"synthetic-opencode-promise-echo-then-failed.ndjson", agenttest.Want{Saw: true, Promise: agenttest.EchoFailed, Text: agenttest.EchoText,
			Turns: 2, In: 2404, Out: 114, Cost: 2 * 0.004461, Session: ses, Texts: 2,
			Tools: []string{"bash: cat PROMPT.md"}, Terminals: 1}},
		{"synthetic-opencode-killed.ndjson", agenttest.Want{Text: "I'll create the greeting file.", Cost: -1, Session: ses,
			Texts: 1, Tools: []string{write}}},
		{"synthetic-opencode-garbage-lines.ndjson", agenttest.Want{Saw: true, Promise: agenttest.Complete, Text: agenttest.CompleteText,
			Turns: 2, In: 2404, Out: 114, Cost: 2 * 0.004461, Session: ses, Texts: 2, Terminals: 1}},
		{"synthetic-opencode-rate-limit.ndjson", agenttest.Want{Saw: true, IsError: true, Class: agent.ClassLimit, RetryAfter: 30 * time.Second,
			Errors: []string{"HTTP 429: Rate limit exceeded: retry after 30 seconds"}, Cost: -1, Session: ses, Terminals: 1}},
		{"synthetic-opencode-overloaded.ndjson", agenttest.Want{Saw: true, IsError: true, Class: agent.ClassTransient,
			Errors: []string{"HTTP 529: Overloaded"}, Cost: -1, Session: ses, Terminals: 1}},
		{"synthetic-opencode-auth.ndjson", agenttest.Want{Saw: true, IsError: true, Class: agent.ClassAuth, Fatal: true,
			Errors: []string{"invalid x-api-key"}, Cost: -1, Session: ses, Terminals: 1}},
	} {
		t.Run(tc.file, func(t *testing.T) {
			res, rec := decodeWith(t, OpenCode{}, tc.file)
			agenttest.Check(t, res, rec, tc.want)
		})
	}
}

// decodeWith decodes the transcript testdata/name (internal/agent/testdata) with d.
func decodeWith(t *testing.T, d agent.Driver, name string) (agent.Result, *agenttest.Recorder) {
	t.Helper()
	return agenttest.Decode(t, d, filepath.Join("..", "testdata", name))
}
