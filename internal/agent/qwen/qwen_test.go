package qwen

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/git-ralph/git-ralph/internal/agent"
	"github.com/git-ralph/git-ralph/internal/agent/agenttest"
)

// The qwen-* transcripts are Qwen Code 0.24.4's own output, recorded against
// a scripted model on loopback (../testdata/record).
func TestQwenDecodeRecorded(t *testing.T) {
	const (
		write  = "write_file: /tmp/agentslab/qrepo/hello.txt"
		commit = `run_shell_command: git add hello.txt && git commit -q -m "feat: add hello.txt"`
	)
	for _, tc := range []struct {
		file string
		want agenttest.Want
	}{
		// usage: input_tokens 3060 of which cache_read_input_tokens 1200:
		// counted once.
		{"qwen-stream-json-complete.ndjson", agenttest.Want{Saw: true, Promise: agenttest.Complete, Text: agenttest.CompleteText,
			Turns: 3, In: 3060, Out: 66, Cost: -1, Session: "e95f1c92-8938-4da9-a2e7-d8cf31dcf014", Model: "qwen3-coder-plus",
			Texts: 2, Tools: []string{write, commit}, Terminals: 1}},
		// The memory helper's model call (after the answer, before the
		// result) is in the result's usage (2 calls: 2030) and nowhere else.
		{"qwen-stream-json-failed-memory-helper.ndjson", agenttest.Want{Saw: true, Promise: agenttest.FailedTests, Text: agenttest.FailedText,
			Turns: 1, In: 2030, Out: 43, Cost: -1, Session: "32247032-a667-4020-849f-2b237ae3232b", Model: "qwen3-coder-plus",
			Texts: 1, Terminals: 1}},
		{"qwen-stream-json-provider-401.ndjson", agenttest.Want{Saw: true, IsError: true,
			Errors: []string{"[API Error: 401 Incorrect API key provided: sk-loop***back.]"}, Class: agent.ClassAuth, Fatal: true,
			Turns: 1, Cost: -1, Session: "cc174c22-085f-4292-87b0-8d526e4eb73a", Model: "qwen3-coder-plus", Texts: 1, Terminals: 1,
			Text: "[API Error: 401 Incorrect API key provided: sk-loop***back.]"}},
		// No authentication configured: an error result on stdout, at once.
		{"qwen-stream-json-no-auth.ndjson", agenttest.Want{Saw: true, IsError: true,
			Errors: []string{"No auth type is selected. Please configure an auth type (e.g. via settings or `--auth-type`) before running in non-interactive mode."},
			Class:  agent.ClassAuth, Fatal: true, Cost: -1, Session: "4400bb66-4d52-405c-8861-01b4b28e070b", Terminals: 1}},
		// The base URL on a closed port: fetch failed, after retries.
		{"qwen-stream-json-provider-unreachable.ndjson", agenttest.Want{Saw: true, IsError: true,
			Errors: []string{"[API Error: Connection error. (cause: fetch failed)]"}, Class: agent.ClassTransient,
			Turns: 1, Cost: -1, Session: "d8bdd8ce-e3aa-4fa8-ba0f-825a4d7be78c", Model: "qwen3-coder-plus", Texts: 1, Terminals: 1,
			Text: "[API Error: Connection error. (cause: fetch failed)]"}},
		{"qwen-stream-json-api-error-500.ndjson", agenttest.Want{Saw: true, IsError: true,
			Errors: []string{"[API Error: 500 The server had an error while processing your request.]"}, Class: agent.ClassTransient,
			Turns: 1, Cost: -1, Session: "f039916d-06ac-4975-86e0-be16127cea51", Model: "qwen3-coder-plus", Texts: 1, Terminals: 1,
			Text: "[API Error: 500 The server had an error while processing your request.]"}},
	} {
		t.Run(tc.file, func(t *testing.T) {
			res, rec := decodeWith(t, Qwen{}, tc.file)
			agenttest.Check(t, res, rec, tc.want)
		})
	}
}

func TestQwenArgvAndDiagnose(t *testing.T) {
	got := Qwen{}.Argv(agent.Request{Model: "qwen3-coder-plus", Args: []string{"--max-session-turns", "50"}})
	want := []string{"qwen", "-o", "stream-json", "--yolo", "-m", "qwen3-coder-plus", "--max-session-turns", "50"}
	if !slices.Equal(got, want) {
		t.Errorf("Argv = %q, want %q", got, want)
	}
	res := agent.Result{ExitCode: 1, Stderr: "No auth type is selected. Please configure an auth type (e.g. via settings or --auth-type) before running in non-interactive mode.\n"}
	Qwen{}.Diagnose(&res)
	if res.Class != agent.ClassAuth || res.Fatal != noAuthFatal {
		t.Errorf("no auth: %+v", res)
	}
	res = agent.Result{ExitCode: 1, Stderr: "Unknown argument: bogus\nUsage: qwen [options] [command]\n…\n  -h, --help  Show help  [boolean]\n"}
	Qwen{}.Diagnose(&res)
	if !strings.HasSuffix(res.Fatal, ": Unknown argument: bogus") || res.Class != agent.ClassNone {
		t.Errorf("unknown argument: %+v", res)
	}
}

// decodeWith decodes the transcript testdata/name (internal/agent/testdata) with d.
func decodeWith(t *testing.T, d agent.Driver, name string) (agent.Result, *agenttest.Recorder) {
	t.Helper()
	return agenttest.Decode(t, d, filepath.Join("..", "testdata", name))
}
