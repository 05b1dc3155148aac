package gemini

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/git-ralph/git-ralph/internal/agent"
	"github.com/git-ralph/git-ralph/internal/agent/agenttest"
)

func TestGeminiDecodeSamples(t *testing.T) {
	const sid = "200da705-5ff0-43fd-acb8-6d91fffadbbc"
	write := "write_file: /home/user/repo/repo4/hello.txt"
	commit := `run_shell_command: git add hello.txt && git commit -q -m "feat: add hello.txt"`
	for _, tc := range []struct {
		file string
		want agenttest.Want
	}{
		{"gemini-stream-json-complete.ndjson", agenttest.Want{Saw: true, Promise: agenttest.Complete, Text: agenttest.CompleteText,
			In: 9006, Out: 120, Cost: -1, Session: sid, Model: "gemini-2.5-pro",
			Texts: 2, Tools: []string{write, commit}, Terminals: 1}},
		// The run "succeeds" although no tool ran (docs/AGENTS.md, "Gemini CLI");
		// only git can tell. The tools are still shown.
		{"gemini-stream-json-no-yolo-tools-not-registered.ndjson", agenttest.Want{Saw: true, Promise: agenttest.Complete, Text: agenttest.CompleteText,
			In: 9024, Out: 120, Cost: -1, Session: "c479de68-07f1-48fb-9958-336195970437", Model: "gemini-2.5-pro",
			Texts: 2, Tools: []string{write, commit}, Terminals: 1}},
		{"gemini-stream-json-api-error.ndjson", agenttest.Want{Saw: true, IsError: true, Class: agent.ClassTransient,
			Errors: []string{`[API Error: {"error":{"code":500,"message":"mock internal error","status":"INTERNAL"}}]`},
			Cost:   -1, Session: "976acafc-5fa3-476e-b1ef-8e013b959627", Model: "gemini-2.5-pro", Terminals: 1}},
		{"synthetic-gemini-failed.ndjson", agenttest.Want{Saw: true, Promise: agenttest.FailedTests, Text: agenttest.FailedText,
			In: 9006, Out: 120, Cost: -1, Session: sid, Model: "gemini-2.5-pro", Texts: 2, Tools: []string{write}, Terminals: 1}},
		{"synthetic-gemini-promise-echo-then-failed.ndjson", agenttest.Want{Saw: true, Promise: agenttest.EchoFailed, Text: agenttest.EchoText,
			In: 9006, Out: 120, Cost: -1, Session: sid, Model: "gemini-2.5-pro", Texts: 2,
			Tools: []string{"run_shell_command: cat PROMPT.md"}, Terminals: 1}},
		{"synthetic-gemini-killed.ndjson", agenttest.Want{Text: "I'll create the greeting file.", Cost: -1, Session: sid,
			Model: "gemini-2.5-pro", Texts: 1, Tools: []string{write}}},
		{"synthetic-gemini-garbage-lines.ndjson", agenttest.Want{Saw: true, Promise: agenttest.Complete, Text: agenttest.CompleteText,
			In: 9006, Out: 120, Cost: -1, Session: sid, Model: "gemini-2.5-pro", Texts: 2, Tools: []string{write}, Terminals: 1}},
		{"synthetic-gemini-rate-limit.ndjson", agenttest.Want{Saw: true, IsError: true, Class: agent.ClassLimit, RetryAfter: 47500 * time.Millisecond,
			Errors: []string{`[API Error: {"error":{"code":429,…`}, Cost: -1, Session: sid, Model: "gemini-2.5-pro", Terminals: 1}},
		{"synthetic-gemini-overloaded.ndjson", agenttest.Want{Saw: true, IsError: true, Class: agent.ClassTransient,
			Errors: []string{`[API Error: {"error":{"code":503,…`}, Cost: -1, Session: sid, Model: "gemini-2.5-pro", Terminals: 1}},
		{"synthetic-gemini-auth.ndjson", agenttest.Want{Saw: true, IsError: true, Class: agent.ClassAuth, Fatal: true,
			Errors: []string{`[API Error: {"error":{"code":400,"message":"API key not valid.…`}, Cost: -1, Session: sid,
			Model: "gemini-2.5-pro", Terminals: 1}},
	} {
		t.Run(tc.file, func(t *testing.T) {
			res, rec := decodeWith(t, Gemini{}, tc.file)
			agenttest.Check(t, res, rec, tc.want)
		})
	}
}

// decodeWith decodes the transcript testdata/name (internal/agent/testdata) with d.
func decodeWith(t *testing.T, d agent.Driver, name string) (agent.Result, *agenttest.Recorder) {
	t.Helper()
	return agenttest.Decode(t, d, filepath.Join("..", "testdata", name))
}
