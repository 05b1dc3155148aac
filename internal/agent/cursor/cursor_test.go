package cursor

import (
	"path/filepath"
	"testing"

	"github.com/git-ralph/git-ralph/internal/agent"
	"github.com/git-ralph/git-ralph/internal/agent/agenttest"
)

func TestCursorDecodeSamples(t *testing.T) {
	const cs = "c6b62c6f-7ead-4fd6-9922-e952131177ff"
	const model = "Claude 4 Sonnet"
	for _, tc := range []struct {
		file string
		want agenttest.Want
	}{
		{"synthetic-cursor-complete.ndjson", agenttest.Want{Saw: true, Promise: agenttest.Complete, Text: agenttest.CompleteText, Cost: -1,
			Session: cs, Model: model, Texts: 2,
			Tools:     []string{"write: /home/user/repo/repo6/hello.txt", `shell: git add hello.txt && git commit -q -m "feat: add hello.txt"`},
			Terminals: 1}},
		{"synthetic-cursor-failed.ndjson", agenttest.Want{Saw: true, Promise: agenttest.FailedTests, Text: agenttest.FailedText, Cost: -1,
			Session: cs, Model: model, Texts: 1, Tools: []string{"shell: go test ./..."}, Terminals: 1}},
		{"synthetic-cursor-promise-echo-then-failed.ndjson", agenttest.Want{Saw: true, Promise: agenttest.EchoFailed, Text: agenttest.EchoText, Cost: -1,
			Session: cs, Model: model, Texts: 2, Tools: []string{"shell: cat PROMPT.md"}, Terminals: 1}},
		// result.result holds the echoed instruction too; only the text after
		// the last tool call counts, so there is no COMPLETE.
		{"synthetic-cursor-echo-then-no-signal.ndjson", agenttest.Want{Saw: true, Text: "Created hello.txt.", Cost: -1,
			Session: cs, Model: model, Texts: 2, Tools: []string{"shell: cat PROMPT.md"}, Terminals: 1}},
		{"synthetic-cursor-killed.ndjson", agenttest.Want{Cost: -1, Session: cs, Model: model,
			Texts: 1, Tools: []string{"write: /home/user/repo/repo6/hello.txt"}}},
		{"synthetic-cursor-garbage-lines.ndjson", agenttest.Want{Saw: true, Promise: agenttest.Complete, Text: agenttest.CompleteText, Cost: -1,
			Session: cs, Model: model, Texts: 1, Terminals: 1}},
	} {
		t.Run(tc.file, func(t *testing.T) {
			res, rec := decodeWith(t, Cursor{}, tc.file)
			agenttest.Check(t, res, rec, tc.want)
		})
	}
}

// decodeWith decodes the transcript testdata/name (internal/agent/testdata) with d.
func decodeWith(t *testing.T, d agent.Driver, name string) (agent.Result, *agenttest.Recorder) {
	t.Helper()
	return agenttest.Decode(t, d, filepath.Join("..", "testdata", name))
}
