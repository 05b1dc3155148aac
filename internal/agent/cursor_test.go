package agent

import "testing"

func TestCursorDecodeSamples(t *testing.T) {
	const cs = "c6b62c6f-7ead-4fd6-9922-e952131177ff"
	const model = "Claude 4 Sonnet"
	for _, tc := range []struct {
		file string
		want Want
	}{
		{"synthetic-cursor-complete.ndjson", Want{Saw: true, Promise: Complete, Text: CompleteText, Cost: -1,
			Session: cs, Model: model, Texts: 2,
			Tools:     []string{"write: /home/user/repo/repo6/hello.txt", `shell: git add hello.txt && git commit -q -m "feat: add hello.txt"`},
			Terminals: 1}},
		{"synthetic-cursor-failed.ndjson", Want{Saw: true, Promise: FailedTests, Text: FailedText, Cost: -1,
			Session: cs, Model: model, Texts: 1, Tools: []string{"shell: go test ./..."}, Terminals: 1}},
		{"synthetic-cursor-promise-echo-then-failed.ndjson", Want{Saw: true, Promise: EchoFailed, Text: EchoText, Cost: -1,
			Session: cs, Model: model, Texts: 2, Tools: []string{"shell: cat PROMPT.md"}, Terminals: 1}},
		// result.result holds the echoed instruction too; only the text after
		// the last tool call counts, so there is no COMPLETE.
		{"synthetic-cursor-echo-then-no-signal.ndjson", Want{Saw: true, Text: "Created hello.txt.", Cost: -1,
			Session: cs, Model: model, Texts: 2, Tools: []string{"shell: cat PROMPT.md"}, Terminals: 1}},
		{"synthetic-cursor-killed.ndjson", Want{Cost: -1, Session: cs, Model: model,
			Texts: 1, Tools: []string{"write: /home/user/repo/repo6/hello.txt"}}},
		{"synthetic-cursor-garbage-lines.ndjson", Want{Saw: true, Promise: Complete, Text: CompleteText, Cost: -1,
			Session: cs, Model: model, Texts: 1, Terminals: 1}},
	} {
		t.Run(tc.file, func(t *testing.T) {
			res, rec := decodeWith(t, Cursor{}, tc.file)
			Check(t, res, rec, tc.want)
		})
	}
}
