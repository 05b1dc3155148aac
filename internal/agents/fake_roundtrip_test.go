package agents

import (
	"bytes"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/git-ralph/git-ralph/internal/agent"
	"github.com/git-ralph/git-ralph/internal/agent/agenttest"
	"github.com/git-ralph/git-ralph/internal/agent/amp"
	"github.com/git-ralph/git-ralph/internal/agent/claude"
	"github.com/git-ralph/git-ralph/internal/agent/codex"
	"github.com/git-ralph/git-ralph/internal/agent/copilot"
	"github.com/git-ralph/git-ralph/internal/agent/cursor"
	"github.com/git-ralph/git-ralph/internal/agent/gemini"
	"github.com/git-ralph/git-ralph/internal/agent/opencode"
	"github.com/git-ralph/git-ralph/internal/agent/qwen"

	"github.com/git-ralph/git-ralph/internal/fakeagent"
)

// runFake plays scenario with the fake agent speaking d's dialect, called
// with d's argv, and decodes its output with d, as Run would.
func runFake(t *testing.T, d agent.Driver, scenario string) agent.Result {
	t.Helper()
	t.Chdir(t.TempDir())
	req := agent.Request{Model: ""}
	if _, ok := d.(agent.OutputFiler); ok {
		req.OutputFile = filepath.Join(t.TempDir(), "output-file")
	}
	argv := d.Argv(req)
	env := map[string]string{"FAKE_AGENT_SCENARIO_JSON": scenario, "AMP_API_KEY": "k",
		"COPILOT_GITHUB_TOKEN": "t", "OPENAI_API_KEY": "k",
		"FAKE_AGENT_FIXED_TIME": "2026-01-02T03:04:05Z"}
	var out, errb bytes.Buffer
	code := fakeagent.Run(argv, strings.NewReader("the prompt"), &out, &errb, func(k string) string { return env[k] })
	res, err := d.Decode(&out, &agenttest.Recorder{})
	if err != nil {
		t.Fatal(err)
	}
	res.ExitCode, res.Stderr = code, errb.String()
	if of, ok := d.(agent.OutputFiler); ok {
		of.ReadOutputFile(&res, req.OutputFile)
	}
	if dg, ok := d.(agent.Diagnoser); ok {
		dg.Diagnose(&res)
	}
	return res
}

// TestDriversDecodeTheFake checks that each driver and the fake agent's
// dialect agree: the outcome of complete and failed runs, and the class of
// every failure kind.
func TestDriversDecodeTheFake(t *testing.T) {
	drivers := []agent.Driver{claude.Claude{}, codex.Codex{}, gemini.Gemini{}, opencode.OpenCode{}, amp.Amp{}, cursor.Cursor{}, copilot.Copilot{}, qwen.Qwen{}}
	for _, d := range drivers {
		t.Run(d.Name(), func(t *testing.T) {
			res := runFake(t, d, `{"steps":[{"say":"The prompt says <promise>COMPLETE</promise>."},{"bash":"echo '<promise>COMPLETE</promise>'"},
				{"say":"Done.\n<promise>COMPLETE</promise>"}],"result":{"input_tokens":10,"output_tokens":5,"cost_usd":0.5}}`)
			if !res.SawResult || res.IsError || res.Promise().Kind != agent.PromiseComplete || res.ExitCode != 0 || res.Class != agent.ClassNone {
				t.Errorf("complete: %+v", res)
			}
			if res.InputTokens != 10 || res.OutputTokens != 5 {
				switch d.(type) {
				case cursor.Cursor: // reports no tokens
				default:
					t.Errorf("tokens %d/%d, want 10/5", res.InputTokens, res.OutputTokens)
				}
			}
			switch d.(type) {
			case claude.Claude, opencode.OpenCode:
				if res.CostUSD == nil || *res.CostUSD != 0.5 {
					t.Errorf("cost %v", res.CostUSD)
				}
			default:
				if res.CostUSD != nil {
					t.Errorf("cost %v, want nil (n/a)", *res.CostUSD)
				}
			}
			res = runFake(t, d, `{"steps":[{"say":"<promise>COMPLETE</promise> is what I would say"},{"write":{"path":"a.txt","content":"<promise>COMPLETE</promise>\n"}},
				{"say":"Stuck.\n<promise>FAILED: no idea</promise>"}]}`)
			if res.Promise() != (agent.Promise{Kind: agent.PromiseFailed, Reason: "no idea"}) {
				t.Errorf("failed: %+v", res)
			}
			res = runFake(t, d, `{"steps":[{"say":"I think it works.\n"}]}`)
			if res.Promise().Kind != agent.PromiseNone {
				t.Errorf("no signal: %+v", res)
			}
			for _, tc := range []struct {
				kind  string
				class agent.FailureClass
				after time.Duration
			}{
				{"api_error", agent.ClassTransient, 0},
				{"overloaded", agent.ClassTransient, 0},
				{"rate_limit", agent.ClassLimit, 30 * time.Second},
				{"usage_limit", agent.ClassLimit, 7500 * time.Second},
				{"auth", agent.ClassAuth, 0},
			} {
				res := runFake(t, d, fmt.Sprintf(`{"steps":[{"say":"starting"}],"fail":{"kind":%q,"retry_after_s":%d}}`,
					tc.kind, int(tc.after/time.Second)))
				if res.Class != tc.class || res.Promise().Kind != agent.PromiseNone || res.ExitCode == 0 {
					t.Errorf("%s: Class %v, exit %d, %+v", tc.kind, res.Class, res.ExitCode, res)
				}
				got := res.RetryTime(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)).Sub(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
				if tc.after != 0 && got != tc.after {
					t.Errorf("%s: retry after %v, want %v (%+v)", tc.kind, got, tc.after, res)
				}
				if (res.Fatal != "") != (tc.class == agent.ClassAuth) {
					t.Errorf("%s: Fatal %q", tc.kind, res.Fatal)
				}
				if tc.class != agent.ClassAuth && len(res.Errors) == 0 {
					t.Errorf("%s: no Errors", tc.kind)
				}
			}
		})
	}
}
