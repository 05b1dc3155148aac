package agent

import (
	"testing"
	"time"
)

func TestGeminiDecodeSamples(t *testing.T) {
	const sid = "200da705-5ff0-43fd-acb8-6d91fffadbbc"
	write := "write_file: /home/user/repo/repo4/hello.txt"
	commit := `run_shell_command: git add hello.txt && git commit -q -m "feat: add hello.txt"`
	for _, tc := range []struct {
		file string
		want Want
	}{
		{"gemini-stream-json-complete.ndjson", Want{Saw: true, Promise: Complete, Text: CompleteText,
			In: 9006, Out: 120, Cost: -1, Session: sid, Model: "gemini-2.5-pro",
			Texts: 2, Tools: []string{write, commit}, Terminals: 1}},
		// The run "succeeds" although no tool ran (AGENTS-REFERENCE.md §5);
		// only git can tell. The tools are still shown.
		{"gemini-stream-json-no-yolo-tools-not-registered.ndjson", Want{Saw: true, Promise: Complete, Text: CompleteText,
			In: 9024, Out: 120, Cost: -1, Session: "c479de68-07f1-48fb-9958-336195970437", Model: "gemini-2.5-pro",
			Texts: 2, Tools: []string{write, commit}, Terminals: 1}},
		{"gemini-stream-json-api-error.ndjson", Want{Saw: true, IsError: true, Class: ClassTransient,
			Errors: []string{`[API Error: {"error":{"code":500,"message":"mock internal error","status":"INTERNAL"}}]`},
			Cost:   -1, Session: "976acafc-5fa3-476e-b1ef-8e013b959627", Model: "gemini-2.5-pro", Terminals: 1}},
		{"synthetic-gemini-failed.ndjson", Want{Saw: true, Promise: FailedTests, Text: FailedText,
			In: 9006, Out: 120, Cost: -1, Session: sid, Model: "gemini-2.5-pro", Texts: 2, Tools: []string{write}, Terminals: 1}},
		{"synthetic-gemini-promise-echo-then-failed.ndjson", Want{Saw: true, Promise: EchoFailed, Text: EchoText,
			In: 9006, Out: 120, Cost: -1, Session: sid, Model: "gemini-2.5-pro", Texts: 2,
			Tools: []string{"run_shell_command: cat PROMPT.md"}, Terminals: 1}},
		{"synthetic-gemini-killed.ndjson", Want{Text: "I'll create the greeting file.", Cost: -1, Session: sid,
			Model: "gemini-2.5-pro", Texts: 1, Tools: []string{write}}},
		{"synthetic-gemini-garbage-lines.ndjson", Want{Saw: true, Promise: Complete, Text: CompleteText,
			In: 9006, Out: 120, Cost: -1, Session: sid, Model: "gemini-2.5-pro", Texts: 2, Tools: []string{write}, Terminals: 1}},
		{"synthetic-gemini-rate-limit.ndjson", Want{Saw: true, IsError: true, Class: ClassLimit, RetryAfter: 47500 * time.Millisecond,
			Errors: []string{`[API Error: {"error":{"code":429,…`}, Cost: -1, Session: sid, Model: "gemini-2.5-pro", Terminals: 1}},
		{"synthetic-gemini-overloaded.ndjson", Want{Saw: true, IsError: true, Class: ClassTransient,
			Errors: []string{`[API Error: {"error":{"code":503,…`}, Cost: -1, Session: sid, Model: "gemini-2.5-pro", Terminals: 1}},
		{"synthetic-gemini-auth.ndjson", Want{Saw: true, IsError: true, Class: ClassAuth, Fatal: true,
			Errors: []string{`[API Error: {"error":{"code":400,"message":"API key not valid.…`}, Cost: -1, Session: sid,
			Model: "gemini-2.5-pro", Terminals: 1}},
	} {
		t.Run(tc.file, func(t *testing.T) {
			res, rec := decodeWith(t, Gemini{}, tc.file)
			Check(t, res, rec, tc.want)
		})
	}
}
