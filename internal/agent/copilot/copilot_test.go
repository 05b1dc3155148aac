package copilot

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/git-ralph/git-ralph/internal/agent"
	"github.com/git-ralph/git-ralph/internal/agent/agenttest"
)

// The copilot-* transcripts are GitHub Copilot CLI 1.0.102's own output,
// recorded against a scripted model on loopback (../testdata/record).
func TestCopilotDecodeRecorded(t *testing.T) {
	const (
		create = "create: /tmp/agentslab/repo/hello.txt"
		commit = `bash: git add hello.txt && git commit -q -m "feat: add hello.txt"`
	)
	for _, tc := range []struct {
		file string
		want agenttest.Want
	}{
		{"copilot-json-complete.ndjson", agenttest.Want{Saw: true, Promise: agenttest.Complete, Text: agenttest.CompleteText,
			Cost: -1, Session: "102aeab1-a0a8-4d93-a13d-3518be4508d6", Model: "gpt-4.1",
			Texts: 2, Tools: []string{create, commit}, Terminals: 1}},
		{"copilot-json-failed.ndjson", agenttest.Want{Saw: true, Promise: agenttest.FailedTests, Text: agenttest.FailedText,
			Cost: -1, Session: "10e5952c-327e-416d-8f05-9d16b0d7c225", Model: "gpt-4.1", Texts: 1, Terminals: 1}},
		{"copilot-json-rate-limit.ndjson", agenttest.Want{Saw: true, IsError: true,
			Errors: []string{"Failed to get response from the AI model; retried 5 times (total retry wait time: 173.19 seconds) Last error: 429 Rate limit reached…"},
			Class:  agent.ClassLimit, RetryAfter: 30 * time.Second,
			Cost: -1, Session: "96a5e1e4-e9a5-4384-a98a-cd334527210e", Model: "gpt-4.1", Terminals: 1}},
		{"copilot-json-api-error-500.ndjson", agenttest.Want{Saw: true, IsError: true,
			Errors: []string{"Failed to get response from the AI model; retried 5 times (total retry wait time: 14.34 seconds) Last error: 500 The server had an error…"},
			Class:  agent.ClassTransient, Cost: -1, Session: "7dbda757-c1c4-4717-9952-ce3afed1251a", Model: "gpt-4.1", Terminals: 1}},
		{"copilot-json-provider-401.ndjson", agenttest.Want{Saw: true, IsError: true,
			Errors: []string{"Authentication failed with provider at http://127.0.0.1:38935/v1 (HTTP 401).…"},
			Class:  agent.ClassAuth, Fatal: true, Cost: -1, Session: "80a91730-c784-4f87-bea8-8814b4d0484f", Model: "gpt-4.1", Terminals: 1}},
		{"copilot-json-provider-unreachable.ndjson", agenttest.Want{Saw: true, IsError: true,
			Errors: []string{"Could not connect to local model provider at http://127.0.0.1:9/v1.…"},
			Class:  agent.ClassTransient, Cost: -1, Session: "f12ab52b-3a79-439f-89f0-0f00e6b77af8", Model: "gpt-4.1", Terminals: 1}},
	} {
		t.Run(tc.file, func(t *testing.T) {
			res, rec := decodeWith(t, Copilot{}, tc.file)
			agenttest.Check(t, res, rec, tc.want)
			if res.IsError && res.Subtype == "" {
				t.Errorf("Subtype empty for an error")
			}
		})
	}
}

func TestCopilotUsageFile(t *testing.T) {
	res := agent.Result{}
	Copilot{}.ReadOutputFile(&res, filepath.Join("..", "testdata", "copilot-usage-complete.json"))
	// modelMetrics.gpt-4.1.usage: inputTokens 3060 (of which cacheReadTokens
	// 1200, already counted), outputTokens 66.
	if res.InputTokens != 3060 || res.OutputTokens != 66 || res.Model != "gpt-4.1" {
		t.Errorf("tokens %d/%d model %q, want 3060/66 gpt-4.1", res.InputTokens, res.OutputTokens, res.Model)
	}
	dir := t.TempDir()
	for name, content := range map[string]string{"empty": "", "garbled": `{"modelMetrics":{"m":{"usage":{"inputTokens":`,
		"big": `{"x":"` + strings.Repeat("y", maxUsageFile) + `"}`} {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		res := agent.Result{InputTokens: 0, Model: "kept"}
		Copilot{}.ReadOutputFile(&res, path)
		if res.InputTokens != 0 || res.OutputTokens != 0 || res.Model != "kept" {
			t.Errorf("%s: %+v", name, res)
		}
	}
	Copilot{}.ReadOutputFile(&res, filepath.Join(dir, "missing"))
	// Two models (a helper's calls): summed.
	path := filepath.Join(dir, "two")
	_ = os.WriteFile(path, []byte(`{"modelMetrics":{"a":{"usage":{"inputTokens":10,"outputTokens":1}},"b":{"usage":{"inputTokens":5,"outputTokens":2}}}}`), 0o644)
	res = agent.Result{}
	Copilot{}.ReadOutputFile(&res, path)
	if res.InputTokens != 15 || res.OutputTokens != 3 {
		t.Errorf("two models: %d/%d", res.InputTokens, res.OutputTokens)
	}
}

func TestCopilotArgvAndDiagnose(t *testing.T) {
	got := Copilot{}.Argv(agent.Request{Model: "gpt-4.1", Args: []string{"--allow-all-paths"}, OutputFile: "/tmp/u.json"})
	want := []string{"copilot", "--output-format", "json", "--allow-all-tools", "--model", "gpt-4.1",
		"--usage-output-file", "/tmp/u.json", "--allow-all-paths"}
	if !slices.Equal(got, want) {
		t.Errorf("Argv = %q, want %q", got, want)
	}
	if got := (Copilot{}).Argv(agent.Request{}); !slices.Contains(got, agent.OutputFilePlaceholder) {
		t.Errorf("dry-run Argv %q lacks the placeholder", got)
	}
	diagnoses := []struct {
		file  string
		class agent.FailureClass
		fatal string
	}{
		{"copilot-no-auth.stderr", agent.ClassAuth, "COPILOT_GITHUB_TOKEN"},
		{"copilot-byok-no-model.stderr", agent.ClassNone, "needs a model"},
	}
	for _, tc := range diagnoses {
		data, err := os.ReadFile(filepath.Join("..", "testdata", tc.file))
		if err != nil {
			t.Fatal(err)
		}
		res := agent.Result{ExitCode: 1, Stderr: string(data)}
		Copilot{}.Diagnose(&res)
		if res.Class != tc.class || !strings.Contains(res.Fatal, tc.fatal) {
			t.Errorf("%s: Class %v Fatal %q", tc.file, res.Class, res.Fatal)
		}
	}
}

func TestCopilotPreflight(t *testing.T) {
	byok := []string{"COPILOT_PROVIDER_BASE_URL=http://127.0.0.1:9/v1"}
	for _, tc := range []struct {
		req  agent.Request
		env  []string
		fail bool
	}{
		{agent.Request{}, nil, false},
		{agent.Request{}, byok, true},
		{agent.Request{Model: "gpt-4.1"}, byok, false},
		{agent.Request{Args: []string{"--model=gpt-4.1"}}, byok, false},
		{agent.Request{}, append(byok, "COPILOT_MODEL=gpt-4.1"), false},
	} {
		err := Copilot{}.Preflight(tc.req, tc.env)
		if (err != nil) != tc.fail {
			t.Errorf("Preflight(%+v, %q) = %v", tc.req, tc.env, err)
		}
	}
}

// decodeWith decodes the transcript testdata/name (internal/agent/testdata) with d.
func decodeWith(t *testing.T, d agent.Driver, name string) (agent.Result, *agenttest.Recorder) {
	t.Helper()
	return agenttest.Decode(t, d, filepath.Join("..", "testdata", name))
}
