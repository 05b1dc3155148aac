package fakeagent

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

var (
	geminiArgs   = []string{"gemini", "--output-format", "stream-json", "--yolo", "--skip-trust"}
	opencodeArgs = []string{"opencode", "run", "--format", "json", "--auto"}
	ampArgs      = []string{"amp", "--dangerously-allow-all", "-x", "--stream-json"}
	cursorArgs   = []string{"cursor-agent", "-p", "--output-format", "stream-json", "--force", "--trust"}
	copilotArgs  = []string{"copilot", "--output-format", "json", "--allow-all-tools"}
	qwenArgs     = []string{"qwen", "-o", "stream-json", "--yolo"}
)

// argsOf returns the headless argv git-ralph uses for dialect.
func argsOf(dialect string) []string {
	switch dialect {
	case dialectCodex:
		return codexArgs
	case dialectGemini:
		return geminiArgs
	case dialectOpenCode:
		return opencodeArgs
	case dialectAmp:
		return ampArgs
	case dialectCursor:
		return cursorArgs
	case dialectCopilot:
		return copilotArgs
	case dialectQwen:
		return qwenArgs
	}
	return claudeArgs
}

// dlabel names an event of any dialect for sequence comparisons.
func dlabel(e event) string {
	m := e.m
	if m == nil {
		return "raw"
	}
	typ := str(m, "type")
	switch typ {
	case "message":
		return "message:" + str(m, "role")
	case "tool_use":
		if n := str(m, "tool_name"); n != "" {
			return "tool_use:" + n
		}
		return "tool_use:" + str(m, "part", "tool")
	case "tool_result":
		return "tool_result:" + str(m, "status")
	case "result":
		if s := str(m, "status"); s != "" {
			return "result:" + s
		}
		return "result/" + str(m, "subtype")
	case "step_finish":
		return "step_finish:" + str(m, "part", "reason")
	case "tool_call":
		return "tool_call:" + str(m, "subtype")
	case "system", "assistant", "user":
		if typ == "assistant" {
			c := get(m, "message", "content", 0)
			if str(c, "type") == "tool_use" {
				return "tool_use:" + str(c, "name")
			}
		}
		if typ == "user" && str(get(m, "message", "content", 0), "type") == "tool_result" {
			return "tool_result"
		}
		return typ + "/" + str(m, "subtype")
	}
	return typ
}

func dlabels(evs []event) []string {
	var ls []string
	for _, e := range evs {
		ls = append(ls, dlabel(e))
	}
	return ls
}

func TestOtherDialectScenarioFiles(t *testing.T) {
	tests := []struct {
		file    string
		dialect string
		labels  []string
	}{
		{"gemini-complete.json", dialectGemini, []string{"init", "message:user", "message:assistant", "tool_use:write_file",
			"tool_result:success", "tool_use:run_shell_command", "tool_result:success", "message:assistant", "result:success"}},
		{"opencode-complete.json", dialectOpenCode, []string{"step_start", "text", "tool_use:write", "step_finish:tool-calls",
			"step_start", "tool_use:bash", "step_finish:tool-calls", "step_start", "text", "step_finish:stop"}},
		{"amp-complete.json", dialectAmp, []string{"system/init", "user/", "assistant/", "tool_use:create_file", "tool_result",
			"tool_use:Bash", "tool_result", "assistant/", "result/success"}},
		{"cursor-complete.json", dialectCursor, []string{"system/init", "user/", "assistant/", "tool_call:started", "tool_call:completed",
			"tool_call:started", "tool_call:completed", "assistant/", "result/success"}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			gitRepo(t)
			env := scenarioEnv(t, tt.file)
			env["AMP_API_KEY"] = "test-key"
			r := runFake(t, argsOf(tt.dialect), "Create hello.txt and commit it.", env)
			if r.code != 0 {
				t.Fatalf("exit %d; stderr:\n%s", r.code, r.stderr)
			}
			evs := parseLines(t, r.stdout)
			if got := dlabels(evs); !slices.Equal(got, tt.labels) {
				t.Fatalf("events\n got %q\nwant %q", got, tt.labels)
			}
			if !strings.Contains(r.stdout, `<promise>COMPLETE</promise>`) || strings.Contains(r.stdout, `\u003c`) {
				t.Error("the promise is not printed literally")
			}
			if log := git(t, "log", "--format=%s"); !strings.HasPrefix(log, "feat: add hello.txt") {
				t.Errorf("the bash step did not commit: git log\n%s", log)
			}
			if data, err := os.ReadFile("hello.txt"); err != nil || string(data) != "hello\n" {
				t.Errorf("hello.txt: %q %v", data, err)
			}
		})
	}
}

// TestOtherDialectShapes compares every line's keys and value kinds with
// the real transcripts of the same run.
func TestOtherDialectShapes(t *testing.T) {
	tests := []struct {
		dialect, scenario, sample string
		last                      int      // compare only the last n lines; 0: all
		args                      []string // default: argsOf(dialect)
	}{
		{dialectGemini, `{"steps":[{"say":"I'll create the greeting file."},{"write":{"path":"hello.txt","content":"hello\n"}},
			{"bash":"true"},{"say":"<promise>COMPLETE</promise>"}]}`, "gemini-stream-json-no-yolo-tools-not-registered.ndjson", 0,
			[]string{"gemini", "--output-format", "stream-json", "--skip-trust"}},
		{dialectGemini, `{"session_id":"s","steps":[{"say":"I'll create the greeting file."},{"write":{"path":"hello.txt","content":"hello\n"}},
			{"bash":"true"},{"say":"<promise>COMPLETE</promise>"}]}`, "gemini-stream-json-complete.ndjson", 0, nil},
		{dialectOpenCode, `{"steps":[{"say":"I'll create the greeting file."},{"write":{"path":"hello.txt","content":"hello\n"}},
			{"bash":"true"},{"say":"<promise>COMPLETE</promise>"}]}`, "opencode-run-format-json-complete.ndjson", 0, nil},
		{dialectGemini, `{"fail":{"kind":"api_error"}}`, "gemini-stream-json-api-error.ndjson", 0, nil},
		{dialectOpenCode, `{"fail":{"kind":"api_error"}}`, "opencode-run-format-json-api-error.ndjson", 0, nil},
		{dialectCodex, `{"fail":{"kind":"api_error"}}`, "codex-exec-json-turn-failed.ndjson", 2, nil},
		{dialectClaude, `{"fail":{"kind":"api_error"}}`, "claude-stream-json-api-error.ndjson", 4, nil},
		{dialectCopilot, `{"steps":[{"write":{"path":"hello.txt","content":"hello\n"}},{"bash":"true"},{"say":"<promise>COMPLETE</promise>"}]}`,
			"copilot-json-complete.ndjson", 0, nil},
		{dialectCopilot, `{"fail":{"kind":"api_error"}}`, "copilot-json-api-error-500.ndjson", 2, nil},
		{dialectQwen, `{"steps":[{"write":{"path":"hello.txt","content":"hello\n"}},
			{"bash":"true"},{"say":"<promise>COMPLETE</promise>"}]}`, "qwen-stream-json-complete.ndjson", 6, nil},
		{dialectQwen, `{"fail":{"kind":"auth","status":401}}`, "qwen-stream-json-provider-401.ndjson", 2, nil},
		{dialectQwen, `{"fail":{"kind":"auth"}}`, "qwen-stream-json-no-auth.ndjson", 0, nil},
	}
	for _, tt := range tests {
		t.Run(tt.sample, func(t *testing.T) {
			gitRepo(t)
			args := tt.args
			if args == nil {
				args = argsOf(tt.dialect)
			}
			r := runFake(t, args, "Create hello.txt and commit it.", inlineEnv(t, tt.scenario))
			data, err := os.ReadFile(filepath.Join(testdata, "samples", tt.sample))
			if err != nil {
				t.Fatal(err)
			}
			fake, real := dropEphemeral(parseLines(t, r.stdout)), dropEphemeral(parseLines(t, string(data)))
			if tt.last > 0 {
				fake, real = fake[max(len(fake)-tt.last, 0):], real[len(real)-tt.last:]
			}
			if len(fake) != len(real) {
				t.Fatalf("%d lines, the real transcript has %d:\n%s", len(fake), len(real), r.stdout)
			}
			for i := range fake {
				for _, d := range shapeDiff(keyShape(fake[i].m), keyShape(real[i].m), fmt.Sprintf("line %d", i+1)) {
					if strings.Contains(d, ".toolTelemetry:") || strings.Contains(d, ".shellToolInfo:") {
						continue // copilot's telemetry: left out
					}
					t.Error(d)
				}
			}
		})
	}
}

func TestOtherDialectFromArgv0(t *testing.T) {
	t.Chdir(t.TempDir())
	for argv0, want := range map[string]string{"/opt/bin/gemini": dialectGemini, "opencode": dialectOpenCode,
		"amp": dialectAmp, "cursor-agent": dialectCursor, "codex": dialectCodex, "claude": dialectClaude, "my-agent": dialectClaude} {
		rec := filepath.Join(t.TempDir(), "rec")
		env := inlineEnv(t, `{"steps":[{"say":"hi"}]}`)
		env["FAKE_AGENT_RECORD"], env["AMP_API_KEY"] = rec, "k"
		args := slices.Clone(argsOf(want))
		args[0] = argv0
		r := runFake(t, args, "prompt", env)
		if r.code != 0 {
			t.Fatalf("%s: exit %d: %s", argv0, r.code, r.stderr)
		}
		if got := readRecord(t, rec)[0].Dialect; got != want {
			t.Errorf("%s: dialect %q, want %q", argv0, got, want)
		}
	}
}

func TestOtherDialectArguments(t *testing.T) {
	t.Chdir(t.TempDir())
	say := `{"steps":[{"say":"hi"}]}`
	tests := []struct {
		name   string
		args   []string
		code   int
		stdout string // exact, when not "*"
		stderr string // substring
	}{
		{"gemini untrusted", []string{"gemini", "--output-format", "stream-json", "--yolo"}, 55, "", "not running in a trusted directory"},
		{"gemini unknown option", []string{"gemini", "--skip-trust", "--frobnicate"}, 1, "", "Unknown argument: frobnicate"},
		{"gemini bad format", []string{"gemini", "--skip-trust", "-o", "yaml"}, 1, "", "Argument: output-format"},
		{"gemini text", []string{"gemini", "--skip-trust", "--yolo"}, 0, "hi\n", ""},
		{"gemini -m", []string{"gemini", "--skip-trust", "-o", "stream-json", "-m", "gemini-2.5-flash"}, 0, "*", ""},
		{"opencode without run", []string{"opencode", "--format", "json"}, 64, "", "without the run subcommand"},
		{"opencode unknown option", []string{"opencode", "run", "--yolo"}, 1, "", "Unknown argument: yolo"},
		{"opencode model without provider", []string{"opencode", "run", "-m", "sonnet"}, 1, "", "provider/model"},
		{"opencode default format", []string{"opencode", "run", "-m", "anthropic/claude-sonnet-4-5"}, 0, "hi\n", ""},
		{"amp unknown option", []string{"amp", "-x", "--bogus-flag"}, 1, "", "error: unknown option '--bogus-flag'"},
		{"amp subcommand", []string{"amp", "threads", "continue"}, 64, "", "not emulated"},
		{"amp plain", []string{"amp", "-x"}, 0, "hi\n", ""},
		{"cursor untrusted", []string{"cursor-agent", "-p", "--force"}, 1, "", "Pass --trust"},
		{"cursor unknown option", []string{"cursor-agent", "-p", "--trust", "--dangerously-skip-permissions"}, 1, "", "unknown option"},
		{"cursor text", []string{"cursor-agent", "-p", "--trust"}, 0, "hi\n", ""},
		{"copilot unknown option", []string{"copilot", "--bogus"}, 1, "", "error: unexpected argument '--bogus' found"},
		{"copilot bad format", []string{"copilot", "--output-format", "xml"}, 1, "", "invalid value 'xml'"},
		{"copilot text", []string{"copilot", "--allow-all-tools"}, 0, "hi\n", ""},
		{"qwen unknown option", []string{"qwen", "--bogus"}, 1, "", "Unknown argument: bogus"},
		{"qwen text", []string{"qwen", "--yolo"}, 0, "hi\n", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := inlineEnv(t, say)
			env["AMP_API_KEY"] = "k"
			r := runFake(t, tt.args, "prompt", env)
			if r.code != tt.code {
				t.Fatalf("exit %d, want %d; stderr %q", r.code, tt.code, r.stderr)
			}
			if tt.stdout != "*" && r.stdout != tt.stdout {
				t.Errorf("stdout %q, want %q", r.stdout, tt.stdout)
			}
			if !strings.Contains(r.stderr, tt.stderr) {
				t.Errorf("stderr %q, want it to contain %q", r.stderr, tt.stderr)
			}
			if tt.name == "gemini -m" && !strings.Contains(r.stdout, `"model":"gemini-2.5-flash"`) {
				t.Errorf("model not used: %s", r.stdout)
			}
		})
	}
}

func TestOtherDialectPromptSources(t *testing.T) {
	t.Chdir(t.TempDir())
	tests := []struct {
		name  string
		args  []string
		stdin string
		want  string
		code  int
	}{
		{"gemini stdin", geminiArgs, "from stdin", "from stdin", 0},
		{"gemini -p appended to stdin", append(slices.Clone(geminiArgs), "-p", "arg"), "from stdin", "from stdin\n\narg", 0},
		{"gemini nothing", geminiArgs, "", "", 1},
		{"opencode stdin", opencodeArgs, "from stdin", "from stdin", 0},
		{"opencode message", append(slices.Clone(opencodeArgs), "do", "it"), "", "do it", 0},
		{"opencode nothing", opencodeArgs, "", "", 1},
		{"amp stdin", ampArgs, "from stdin", "from stdin", 0},
		{"amp -x message", []string{"amp", "--dangerously-allow-all", "--stream-json", "-x", "msg"}, "more", "msg\nmore", 0},
		{"amp nothing", ampArgs, "", "", 1},
		{"cursor stdin", cursorArgs, "from stdin", "from stdin", 0},
		{"cursor nothing", cursorArgs, "", "", 1},
		{"copilot stdin", copilotArgs, "from stdin", "from stdin", 0},
		{"copilot -p", append(slices.Clone(copilotArgs), "-p", "arg"), "", "arg", 0},
		{"qwen stdin", qwenArgs, "from stdin", "from stdin", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := filepath.Join(t.TempDir(), "rec")
			env := inlineEnv(t, `{"steps":[{"echo_prompt":true},{"say":"done"}]}`)
			env["FAKE_AGENT_RECORD"], env["AMP_API_KEY"] = rec, "k"
			r := runFake(t, tt.args, tt.stdin, env)
			if r.code != tt.code {
				t.Fatalf("exit %d, want %d: %s", r.code, tt.code, r.stderr)
			}
			if tt.code != 0 {
				return
			}
			if p := readRecord(t, rec)[0].Prompt; p == nil || *p != tt.want {
				t.Errorf("recorded prompt %v, want %q", p, tt.want)
			}
		})
	}
}

// TestRefusedTools: without the flag that allows unattended work, the real
// CLIs do not act, and neither does the fake.
func TestRefusedTools(t *testing.T) {
	scenario := `{"steps":[{"write":{"path":"w.txt","content":"x"}},{"bash":"touch b.txt"},{"say":"<promise>COMPLETE</promise>"}]}`
	tests := []struct {
		name         string
		args         []string
		wrote, ran   bool
		refusalMatch string
	}{
		{"gemini without --yolo", []string{"gemini", "-o", "stream-json", "--skip-trust"}, false, false, "tool_not_registered"},
		{"gemini auto_edit", []string{"gemini", "-o", "stream-json", "--skip-trust", "--approval-mode", "auto_edit"}, true, false, "tool_not_registered"},
		{"gemini --yolo", geminiArgs, true, true, ""},
		{"cursor without --force", []string{"cursor-agent", "-p", "--output-format", "stream-json", "--trust"}, true, false, `"rejected"`},
		{"cursor --force", cursorArgs, true, true, ""},
		{"amp without --dangerously-allow-all", []string{"amp", "-x", "--stream-json"}, true, false, "requires confirmation"},
		{"amp --dangerously-allow-all", ampArgs, true, true, ""},
		{"copilot without --allow-all-tools", []string{"copilot", "--output-format", "json"}, false, false, "Permission denied"},
		{"copilot --allow-all-tools", copilotArgs, true, true, ""},
		{"qwen without --yolo", []string{"qwen", "-o", "stream-json"}, false, false, "declined in non-interactive mode"},
		{"qwen auto-edit", []string{"qwen", "-o", "stream-json", "--approval-mode", "auto-edit"}, true, false, "declined in non-interactive mode"},
		{"qwen --yolo", qwenArgs, true, true, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			t.Chdir(dir)
			env := inlineEnv(t, scenario)
			env["AMP_API_KEY"] = "k"
			r := runFake(t, tt.args, "p", env)
			if r.code != 0 {
				t.Fatalf("exit %d: %s", r.code, r.stderr)
			}
			_, werr := os.Stat("w.txt")
			_, berr := os.Stat("b.txt")
			if (werr == nil) != tt.wrote || (berr == nil) != tt.ran {
				t.Errorf("wrote %v ran %v, want %v %v", werr == nil, berr == nil, tt.wrote, tt.ran)
			}
			if tt.refusalMatch != "" && !strings.Contains(r.stdout, tt.refusalMatch) {
				t.Errorf("no refusal %q in\n%s", tt.refusalMatch, r.stdout)
			}
			if !strings.Contains(r.stdout, "<promise>COMPLETE</promise>") {
				t.Error("the run does not end as the real CLI does: it still claims success")
			}
		})
	}
}

// TestFailures plays every failure kind in every dialect; the drivers'
// tests decode the same output (internal/agents).
func TestFailures(t *testing.T) {
	t.Chdir(t.TempDir())
	kinds := []string{failAPIError, failOverloaded, failRateLimit, failUsageLimit, failAuth}
	wantCode := map[string]map[string]int{
		dialectGemini: {failAuth: 41},
	}
	wantText := map[string][]string{ // a phrase per kind, in stdout or stderr
		dialectClaude:   {"API Error: 500", "overloaded_error", "try again in 30 seconds", "usage limit reached|", "Please run /login"},
		dialectCodex:    {"last status: 500", "overloaded", "retry after 30 seconds", "try again in 2 hours 5 minutes", "401 Unauthorized"},
		dialectGemini:   {`\"code\":500`, `\"code\":503`, "retry in 30s", "retry in 7500s", "API key not valid"},
		dialectOpenCode: {`"statusCode":500`, `"statusCode":529`, `"retry-after":"30"`, "usage limit", "ProviderAuthError"},
		dialectAmp:      {"API Error: 500", "API Error: 529", "try again in 30 seconds", "Try again in 7500 seconds", "Invalid API key"},
		dialectCursor:   {"HTTP 500", "overloaded", "Try again in 30 seconds", "usage limit", "cursor-agent login"},
		dialectCopilot:  {"Last error: 500", "overloaded", "try again in 30s", "premium request allowance", "No authentication information found"},
		dialectQwen:     {"API Error: 500", "overloaded", "try again in 30s", "exceeded your current quota", "No auth type is selected"},
	}
	for _, d := range dialects {
		for i, kind := range kinds {
			t.Run(d+"/"+kind, func(t *testing.T) {
				env := scenarioEnv(t, "failures.json")
				env["AMP_API_KEY"], env["FAKE_AGENT_FIXED_TIME"] = "k", "2026-01-02T03:04:05Z"
				// runs[i]: count i invocations first.
				for range i {
					if _, err := bumpCounter(filepath.Join(env["FAKE_AGENT_STATE_DIR"], "invocations")); err != nil {
						t.Fatal(err)
					}
				}
				r := runFake(t, argsOf(d), "p", env)
				want := 1
				if c, ok := wantCode[d][kind]; ok {
					want = c
				}
				if r.code != want {
					t.Fatalf("exit %d, want %d; stderr %q", r.code, want, r.stderr)
				}
				if !strings.Contains(r.stdout+r.stderr, wantText[d][i]) {
					t.Errorf("no %q in\nstdout %s\nstderr %s", wantText[d][i], r.stdout, r.stderr)
				}
				if d == dialectClaude && kind == failUsageLimit && !strings.Contains(r.stdout, "|1767330545") {
					t.Errorf("usage limit reset time: %s", r.stdout)
				}
			})
		}
	}
}

func TestAmpWithoutKey(t *testing.T) {
	t.Chdir(t.TempDir())
	r := runFake(t, ampArgs, "p", inlineEnv(t, `{"steps":[{"say":"hi"}]}`))
	// In-process the login wait cannot be emulated (it needs a real
	// process); the message comes first.
	if r.code != exitUsage || !strings.HasPrefix(r.stderr, "No API key found. Starting login flow...\n") || r.stdout != "" {
		t.Fatalf("exit %d stdout %q stderr %q", r.code, r.stdout, r.stderr)
	}
}

// dropEphemeral leaves out copilot's ephemeral events (deltas, model call
// bookkeeping) and qwen's goal_state stream events, which no decoder reads
// and the fake does not print.
func dropEphemeral(evs []event) []event {
	var keep []event
	for _, e := range evs {
		if e.m["ephemeral"] == true || e.m["type"] == "stream_event" {
			continue
		}
		keep = append(keep, e)
	}
	return keep
}
