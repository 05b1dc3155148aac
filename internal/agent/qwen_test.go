package agent

import (
	"slices"
	"strings"
	"testing"
)

// The qwen-* transcripts are Qwen Code 0.24.4's own output, recorded against
// a scripted model on loopback (testdata/record).
func TestQwenDecodeRecorded(t *testing.T) {
	const (
		write  = "write_file: /tmp/agentslab/qrepo/hello.txt"
		commit = `run_shell_command: git add hello.txt && git commit -q -m "feat: add hello.txt"`
	)
	for _, tc := range []struct {
		file string
		want driverWant
	}{
		// usage: input_tokens 3060 of which cache_read_input_tokens 1200:
		// counted once.
		{"qwen-stream-json-complete.ndjson", driverWant{saw: true, promise: complete, text: completeText,
			turns: 3, in: 3060, out: 66, cost: -1, session: "e95f1c92-8938-4da9-a2e7-d8cf31dcf014", model: "qwen3-coder-plus",
			texts: 2, tools: []string{write, commit}, terminals: 1}},
		// The memory helper's model call (after the answer, before the
		// result) is in the result's usage (2 calls: 2030) and nowhere else.
		{"qwen-stream-json-failed-memory-helper.ndjson", driverWant{saw: true, promise: failedTests, text: failedText,
			turns: 1, in: 2030, out: 43, cost: -1, session: "32247032-a667-4020-849f-2b237ae3232b", model: "qwen3-coder-plus",
			texts: 1, terminals: 1}},
		{"qwen-stream-json-provider-401.ndjson", driverWant{saw: true, isError: true,
			errors: []string{"[API Error: 401 Incorrect API key provided: sk-loop***back.]"}, class: ClassAuth, fatal: true,
			turns: 1, cost: -1, session: "cc174c22-085f-4292-87b0-8d526e4eb73a", model: "qwen3-coder-plus", texts: 1, terminals: 1,
			text: "[API Error: 401 Incorrect API key provided: sk-loop***back.]"}},
		// No authentication configured: an error result on stdout, at once.
		{"qwen-stream-json-no-auth.ndjson", driverWant{saw: true, isError: true,
			errors: []string{"No auth type is selected. Please configure an auth type (e.g. via settings or `--auth-type`) before running in non-interactive mode."},
			class:  ClassAuth, fatal: true, cost: -1, session: "4400bb66-4d52-405c-8861-01b4b28e070b", terminals: 1}},
		// The base URL on a closed port: fetch failed, after retries.
		{"qwen-stream-json-provider-unreachable.ndjson", driverWant{saw: true, isError: true,
			errors: []string{"[API Error: Connection error. (cause: fetch failed)]"}, class: ClassTransient,
			turns: 1, cost: -1, session: "d8bdd8ce-e3aa-4fa8-ba0f-825a4d7be78c", model: "qwen3-coder-plus", texts: 1, terminals: 1,
			text: "[API Error: Connection error. (cause: fetch failed)]"}},
		{"qwen-stream-json-api-error-500.ndjson", driverWant{saw: true, isError: true,
			errors: []string{"[API Error: 500 The server had an error while processing your request.]"}, class: ClassTransient,
			turns: 1, cost: -1, session: "f039916d-06ac-4975-86e0-be16127cea51", model: "qwen3-coder-plus", texts: 1, terminals: 1,
			text: "[API Error: 500 The server had an error while processing your request.]"}},
	} {
		t.Run(tc.file, func(t *testing.T) {
			res, rec := decodeWith(t, Qwen{}, tc.file)
			checkResult(t, res, rec, tc.want)
		})
	}
}

func TestQwenArgvAndDiagnose(t *testing.T) {
	got := Qwen{}.Argv(Request{Model: "qwen3-coder-plus", Args: []string{"--max-session-turns", "50"}})
	want := []string{"qwen", "-o", "stream-json", "--yolo", "-m", "qwen3-coder-plus", "--max-session-turns", "50"}
	if !slices.Equal(got, want) {
		t.Errorf("Argv = %q, want %q", got, want)
	}
	res := Result{ExitCode: 1, Stderr: "No auth type is selected. Please configure an auth type (e.g. via settings or --auth-type) before running in non-interactive mode.\n"}
	Qwen{}.Diagnose(&res)
	if res.Class != ClassAuth || res.Fatal != qwenNoAuthFatal {
		t.Errorf("no auth: %+v", res)
	}
	res = Result{ExitCode: 1, Stderr: "Unknown argument: bogus\nUsage: qwen [options] [command]\n…\n  -h, --help  Show help  [boolean]\n"}
	Qwen{}.Diagnose(&res)
	if !strings.HasSuffix(res.Fatal, ": Unknown argument: bogus") || res.Class != ClassNone {
		t.Errorf("unknown argument: %+v", res)
	}
}
