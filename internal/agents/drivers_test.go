package agents

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/git-ralph/git-ralph/internal/agent"
	"github.com/git-ralph/git-ralph/internal/agent/agenttest"
	"github.com/git-ralph/git-ralph/internal/agent/amp"
	"github.com/git-ralph/git-ralph/internal/agent/claude"
	"github.com/git-ralph/git-ralph/internal/agent/codex"
	"github.com/git-ralph/git-ralph/internal/agent/copilot"
	"github.com/git-ralph/git-ralph/internal/agent/cursor"
	"github.com/git-ralph/git-ralph/internal/agent/custom"
	"github.com/git-ralph/git-ralph/internal/agent/gemini"
	"github.com/git-ralph/git-ralph/internal/agent/opencode"
	"github.com/git-ralph/git-ralph/internal/agent/qwen"
)

// TestDecodeLongAndGarbageLines feeds every driver a stream with a 300 KB
// line, a line longer than the decode limit and lines that are not JSON,
// around a complete transcript.
func TestDecodeLongAndGarbageLines(t *testing.T) {
	big300 := strings.Repeat("y", 300<<10)
	huge := strings.Repeat("z", agent.MaxLine+10)
	for _, tc := range []struct {
		d             agent.Driver
		sample        string
		bigLine       string // a valid event carrying big300 (or %s)
		wantTextsPlus int
	}{
		{codex.Codex{}, "codex-exec-json-complete.ndjson", `{"type":"item.completed","item":{"id":"item_9","type":"agent_message","text":"%s"}}`, 1},
		{gemini.Gemini{}, "gemini-stream-json-complete.ndjson", `{"type":"tool_use","tool_name":"write_file","tool_id":"t9","parameters":{"file_path":"big.txt","content":"%s"}}`, 0},
		{opencode.OpenCode{}, "opencode-run-format-json-complete.ndjson", `{"type":"tool_use","sessionID":"ses_deb6dddddffeZwjRg16U1TPchY","part":{"type":"tool","tool":"write","state":{"status":"completed","input":{"filePath":"big.txt","content":"%s"}}}}`, 0},
		{amp.Amp{}, "synthetic-amp-complete.ndjson", `{"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":"%s"}]},"session_id":"T-1"}`, 0},
		{cursor.Cursor{}, "synthetic-cursor-complete.ndjson", `{"type":"tool_call","subtype":"completed","call_id":"x","tool_call":{"writeToolCall":{"args":{"path":"big.txt","fileText":"%s"}}}}`, 0},
	} {
		t.Run(tc.d.Name(), func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join("..", "agent", "testdata", tc.sample))
			if err != nil {
				t.Fatal(err)
			}
			lines := strings.SplitAfter(string(data), "\n")
			var in strings.Builder
			in.WriteString("not json\n\n\x00\xff\n")
			for i, l := range lines {
				in.WriteString(l)
				if i == 1 {
					fmt.Fprintf(&in, tc.bigLine+"\n", big300)
					fmt.Fprintf(&in, tc.bigLine+"\n", huge)
					in.WriteString(`{"type":` + "\n" + `[1,2]` + "\n")
				}
			}
			want, wantRec := decodeWith(t, tc.d, tc.sample)
			var log bytes.Buffer
			rec := &agenttest.Recorder{}
			got, err := tc.d.Decode(io.TeeReader(strings.NewReader(in.String()), &log), rec)
			if err != nil {
				t.Fatal(err)
			}
			if log.Len() != in.Len() {
				t.Fatalf("the reader was not consumed whole: %d of %d bytes", log.Len(), in.Len())
			}
			if got.Text != want.Text || got.SawResult != want.SawResult || got.Promise() != want.Promise() ||
				got.InputTokens != want.InputTokens || got.SessionID != want.SessionID {
				t.Errorf("with long and garbage lines:\n got %+v\nwant %+v", got, want)
			}
			if len(rec.Texts) != len(wantRec.Texts)+tc.wantTextsPlus {
				t.Errorf("%d text events, want %d", len(rec.Texts), len(wantRec.Texts)+tc.wantTextsPlus)
			}
		})
	}
}

// TestDecodersNeverPanic feeds every driver truncated and mangled versions
// of its transcripts.
func TestDecodersNeverPanic(t *testing.T) {
	files, _ := filepath.Glob("../agent/testdata/*")
	for _, d := range []agent.Driver{amp.Amp{}, claude.Claude{}, codex.Codex{}, cursor.Cursor{}, gemini.Gemini{}, opencode.OpenCode{}, custom.Custom{}, custom.Custom{Format: custom.FormatClaudeStreamJSON}} {
		for _, name := range files {
			data, err := os.ReadFile(name)
			if err != nil || len(data) > 64<<10 {
				continue
			}
			for _, cut := range []int{1, len(data) / 3, len(data) / 2, len(data) - 1} {
				res, err := d.Decode(bytes.NewReader(data[:cut]), &agenttest.Recorder{})
				if err != nil || len(res.Text) > agent.MaxText || len(res.Errors) > agent.MaxErrors {
					t.Fatalf("%s on %s[:%d]: err %v, text %d, errors %d", d.Name(), name, cut, err, len(res.Text), len(res.Errors))
				}
			}
			swapped := bytes.ReplaceAll(data, []byte(`"`), []byte(`'`))
			if _, err := d.Decode(bytes.NewReader(swapped), nil); err != nil {
				t.Fatal(err)
			}
		}
	}
}

func TestArgv(t *testing.T) {
	req := agent.Request{Prompt: "never in argv", Model: "M", Args: []string{"--extra", "x"}}
	for _, tc := range []struct {
		d          agent.Driver
		want, bare []string
	}{
		{codex.Codex{}, []string{"codex", "exec", "--json", "--dangerously-bypass-approvals-and-sandbox", "-m", "M",
			"--output-last-message", "<temporary file>", "--extra", "x", "-"},
			[]string{"codex", "exec", "--json", "--dangerously-bypass-approvals-and-sandbox", "--output-last-message", "<temporary file>", "-"}},
		{gemini.Gemini{}, []string{"gemini", "--output-format", "stream-json", "--yolo", "--skip-trust", "-m", "M", "--extra", "x"},
			[]string{"gemini", "--output-format", "stream-json", "--yolo", "--skip-trust"}},
		{opencode.OpenCode{}, []string{"opencode", "run", "--format", "json", "--auto", "-m", "M", "--extra", "x"},
			[]string{"opencode", "run", "--format", "json", "--auto"}},
		{amp.Amp{}, []string{"amp", "--dangerously-allow-all", "-x", "--stream-json", "--mode", "M", "--extra", "x"},
			[]string{"amp", "--dangerously-allow-all", "-x", "--stream-json"}},
		{cursor.Cursor{}, []string{"cursor-agent", "-p", "--output-format", "stream-json", "--force", "--trust", "--model", "M", "--extra", "x"},
			[]string{"cursor-agent", "-p", "--output-format", "stream-json", "--force", "--trust"}},
		{custom.Custom{Command: []string{"./agent.sh", "--fast"}}, []string{"./agent.sh", "--fast", "--extra", "x"}, []string{"./agent.sh", "--fast"}},
		{custom.Custom{}, nil, nil},
	} {
		if got := tc.d.Argv(req); !slices.Equal(got, tc.want) {
			t.Errorf("%s: Argv = %q, want %q", tc.d.Name(), got, tc.want)
		}
		if got := tc.d.Argv(agent.Request{}); !slices.Equal(got, tc.bare) {
			t.Errorf("%s: Argv without model and args = %q, want %q", tc.d.Name(), got, tc.bare)
		}
		if tc.want != nil && tc.d.Binary() != tc.want[0] {
			t.Errorf("%s: Binary %q, argv[0] %q", tc.d.Name(), tc.d.Binary(), tc.want[0])
		}
		if tc.d.InstallHint() == "" {
			t.Errorf("%s: no InstallHint", tc.d.Name())
		}
	}
	// A custom driver runs its command (as git config gave it), then ralph.agentArgs;
	// the one Lookup returns has none and runs nothing.
	got := custom.Custom{Command: []string{"my agent", "-v"}}.Argv(agent.Request{Args: []string{"--x"}})
	if !slices.Equal(got, []string{"my agent", "-v", "--x"}) {
		t.Errorf("custom: %q", got)
	}
	if d, _ := Lookup("custom"); d.Argv(agent.Request{Args: []string{"--x"}}) != nil {
		t.Errorf("custom from Lookup runs %q", d.Argv(agent.Request{}))
	}
	// Codex gets the file Run made.
	got = codex.Codex{}.Argv(agent.Request{OutputFile: "/tmp/x.txt"})
	if i := slices.Index(got, "--output-last-message"); i < 0 || got[i+1] != "/tmp/x.txt" {
		t.Errorf("codex: %q", got)
	}
}

func TestDiagnoseFromStderr(t *testing.T) {
	for _, tc := range []struct {
		d      agent.Driver
		res    agent.Result
		class  agent.FailureClass
		fatal  string // substring; "" for none
		errors int
	}{
		{cursor.Cursor{}, agent.Result{ExitCode: 1, Stderr: "Error: Authentication required. Please run 'cursor-agent login' first, or set CURSOR_API_KEY\n"}, agent.ClassAuth, "cursor-agent login", 1},
		{cursor.Cursor{}, agent.Result{ExitCode: 1, Stderr: "Error: You've hit your usage limit. Try again in 3 hours.\n"}, agent.ClassLimit, "", 1},
		{cursor.Cursor{}, agent.Result{ExitCode: 1, Stderr: "ConnectError: [unavailable] upstream connect error\n"}, agent.ClassTransient, "", 1},
		{cursor.Cursor{}, agent.Result{ExitCode: 1, Stderr: "Error: something else\n"}, agent.ClassNone, "", 0},
		{cursor.Cursor{}, agent.Result{ExitCode: 1, TimedOut: true, Stderr: "rate limit\n"}, agent.ClassNone, "", 0},
		{cursor.Cursor{}, agent.Result{ExitCode: 1, SawResult: true, Stderr: "rate limit\n"}, agent.ClassNone, "", 0},
		{gemini.Gemini{}, agent.Result{ExitCode: 41, Stderr: "Invalid auth method selected.\n"}, agent.ClassAuth, "GEMINI_API_KEY", 0},
		{gemini.Gemini{}, agent.Result{ExitCode: 55, Stderr: "Gemini CLI is not running in a trusted directory.\n"}, agent.ClassNone, "--skip-trust", 0},
		{gemini.Gemini{}, agent.Result{ExitCode: 1, Stderr: "Unknown arguments: skip-trust, skipTrust\n"}, agent.ClassNone, "0.61", 0},
		{codex.Codex{}, agent.Result{ExitCode: 2, Stderr: "error: unexpected argument '--full-auto' found\n"}, agent.ClassNone, "--full-auto", 0},
		{codex.Codex{}, agent.Result{ExitCode: 1, Stderr: "WARNING: proceeding\nError: Not logged in. Run `codex login`.\n"}, agent.ClassAuth, "codex login", 1},
		{opencode.OpenCode{}, agent.Result{ExitCode: 1, Stderr: "Error: ProviderAuthError: no credentials for anthropic\n"}, agent.ClassAuth, "opencode auth login", 1},
		{amp.Amp{}, agent.Result{ExitCode: -1, Signal: "terminated", TimedOut: true, Stderr: "No API key found. Starting login flow...\n"}, agent.ClassAuth, "AMP_API_KEY", 0},
		{amp.Amp{}, agent.Result{ExitCode: 1, Stderr: "Error: Couldn't connect to the Amp server at https://ampcode.com/.\n"}, agent.ClassTransient, "", 1},
		{amp.Amp{}, agent.Result{ExitCode: 1, Stderr: "error: unknown option '--bogus-flag'\n"}, agent.ClassNone, "--bogus-flag", 0},
		{custom.Custom{Command: []string{"a"}}, agent.Result{ExitCode: 3, Stderr: "upstream says: HTTP 529 overloaded\n"}, agent.ClassTransient, "", 1},
		{custom.Custom{Command: []string{"a"}}, agent.Result{ExitCode: 3, Stderr: "invalid api key\n"}, agent.ClassAuth, "authentication", 1},
	} {
		res := tc.res
		tc.d.(agent.Diagnoser).Diagnose(&res)
		if res.Class != tc.class || (tc.fatal == "") != (res.Fatal == "") || !strings.Contains(res.Fatal, tc.fatal) || len(res.Errors) != tc.errors {
			t.Errorf("%s %q: Class %v Fatal %q Errors %q; want %v, %q, %d errors", tc.d.Name(), tc.res.Stderr, res.Class, res.Fatal, res.Errors, tc.class, tc.fatal, tc.errors)
		}
	}
}

func TestPreflight(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_DATA_HOME", "")
	t.Setenv("AMP_API_KEY", "")
	err := agent.Preflight(amp.Amp{}, agent.Request{})
	var pe *agent.PreflightError
	if !errors.As(err, &pe) || !strings.Contains(err.Error(), "AMP_API_KEY") || !strings.Contains(pe.Hint(), "AMP_API_KEY") {
		t.Fatalf("amp without a key: %v", err)
	}
	if err := agent.Preflight(amp.Amp{}, agent.Request{Env: []string{"AMP_API_KEY=k"}}); err != nil {
		t.Fatalf("amp with a key in Request.Env: %v", err)
	}
	if err := os.MkdirAll(filepath.Join(home, ".local", "share", "amp"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, ".local", "share", "amp", "secrets.json"), []byte(`{"apiKey@https://ampcode.com/":"k"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := agent.Preflight(amp.Amp{}, agent.Request{}); err != nil {
		t.Fatalf("amp after 'amp login': %v", err)
	}
	for _, tc := range []struct {
		d    agent.Driver
		req  agent.Request
		want string
	}{
		{custom.Custom{}, agent.Request{}, `agent "custom": no command configured`},
		{custom.Custom{Command: []string{"a"}, Format: "yaml"}, agent.Request{}, `agent "custom": unknown output format "yaml"`},
		{custom.Custom{Command: []string{"a"}, Format: custom.FormatClaudeStreamJSON}, agent.Request{}, ""},
		{custom.Custom{Command: []string{"a"}}, agent.Request{}, ""},
		{claude.Claude{}, agent.Request{}, ""},
	} {
		err := agent.Preflight(tc.d, tc.req)
		if (err == nil) != (tc.want == "") || err != nil && err.Error() != tc.want {
			t.Errorf("Preflight(%s, %+v) = %v, want %q", tc.d.Name(), tc.req, err, tc.want)
		}
	}
	if _, err := custom.New(nil, ""); err == nil {
		t.Error("custom.New without a command")
	}
	if _, err := custom.New([]string{"a"}, "json"); err == nil {
		t.Error("custom.New with an unknown format")
	}
	c, err := custom.New([]string{"a", "b"}, "")
	if err != nil || c.Binary() != "a" {
		t.Errorf("custom.New = %+v, %v", c, err)
	}
	// LookPath of a custom driver without a command.
	_, err = agent.LookPath(custom.Custom{})
	var nf *agent.NotFoundError
	if !errors.As(err, &nf) || err.Error() != `agent "custom" has no command` || !strings.Contains(nf.Hint(), "ralph.agentCommand") {
		t.Errorf("LookPath(Custom{}) = %v", err)
	}
}

func TestReports(t *testing.T) {
	for _, tc := range []struct {
		d            agent.Driver
		cost, tokens bool
	}{
		{claude.Claude{}, true, true},
		{opencode.OpenCode{}, true, true},
		{codex.Codex{}, false, true},
		{gemini.Gemini{}, false, true},
		{amp.Amp{}, false, true},
		{copilot.Copilot{}, false, true},
		{qwen.Qwen{}, false, true},
		{cursor.Cursor{}, false, false},
		{custom.Custom{Command: []string{"x"}}, false, false},
		{custom.Custom{Command: []string{"x"}, Format: custom.FormatClaudeStreamJSON}, true, true},
	} {
		cost, tokens := agent.Reports(tc.d)
		if cost != tc.cost || tokens != tc.tokens {
			t.Errorf("Reports(%s %+v) = %v, %v; want %v, %v", tc.d.Name(), tc.d, cost, tokens, tc.cost, tc.tokens)
		}
	}
}

func TestRunCustom(t *testing.T) {
	// A custom driver runs its command, in its format; the one Lookup returns has
	// none.
	script := agenttest.WriteScript(t, `cat >/dev/null
cat <<'EOF'
{"type":"system","subtype":"init","session_id":"s9","model":"scripted"}
{"type":"assistant","message":{"id":"m1","content":[{"type":"text","text":"done"}]},"parent_tool_use_id":null}
{"type":"result","subtype":"success","is_error":false,"num_turns":1,"result":"done\n<promise>COMPLETE</promise>","session_id":"s9","total_cost_usd":0.25,"usage":{"input_tokens":3,"output_tokens":4}}
EOF
`)
	d, err := Lookup("custom")
	if err != nil {
		t.Fatal(err)
	}
	req := agenttest.ScriptRequest(t)
	res, err := agent.Run(context.Background(), custom.Custom{Command: []string{script}, Format: custom.FormatClaudeStreamJSON}, req)
	if err != nil {
		t.Fatal(err)
	}
	if !res.SawResult || res.Promise().Kind != agent.PromiseComplete || res.CostUSD == nil || *res.CostUSD != 0.25 ||
		res.Model != "scripted" || res.Turns != 1 {
		t.Fatalf("res %+v", res)
	}
	// Without a command, nothing starts.
	_, err = agent.Run(context.Background(), d, agenttest.ScriptRequest(t))
	var pe *agent.PreflightError
	if !errors.As(err, &pe) || !strings.Contains(pe.Hint(), "ralph.agentCommand") {
		t.Fatalf("err = %v", err)
	}
}

// The *-loop-attempt-* logs are the attempt logs git-ralph kept when it ran the
// genuine CLIs in its loop (testdata/record/loop.sh): the agent's stdout and
// git-ralph's trailer. Decoding a log gives the attempt's verdict again.
func TestDecodeLoopLogs(t *testing.T) {
	failed := agent.Promise{Kind: agent.PromiseFailed, Reason: "greeting test fails"}
	const tasks = "openspec/changes/greet/tasks.md"
	for _, tc := range []struct {
		d       agent.Driver
		file    string
		promise agent.Promise
		tools   []string
	}{
		{copilot.Copilot{}, "copilot-loop-attempt-1-1.log", agent.Promise{Kind: agent.PromiseFailed, Reason: "greeting test fails"},
			[]string{"create: /tmp/agentslab/loop-copilot/greeting.txt"}},
		{copilot.Copilot{}, "copilot-loop-attempt-1-2.log", agenttest.Complete,
			[]string{"create: /tmp/agentslab/loop-copilot/greeting.txt", "edit: /tmp/agentslab/loop-copilot/openspec/changes/greet/tasks.md"}},
		{qwen.Qwen{}, "qwen-loop-attempt-1-2.log", agenttest.Complete,
			[]string{"write_file: /tmp/agentslab/loop-qwen/greeting.txt", "read_file: /tmp/agentslab/loop-qwen/openspec/changes/greet/tasks.md",
				"edit: /tmp/agentslab/loop-qwen/openspec/changes/greet/tasks.md"}},
		// Claude Code 2.1.328, Codex 0.169.0, OpenCode 1.18.33 and Gemini CLI 0.61.0,
		// in the sandbox: story 1's failed attempt and story 2's, which ran a shell command.
		{claude.Claude{}, "claude-loop-attempt-1-1.log", failed, []string{"Write: " + loopDir("claude", "greeting.txt")}},
		{claude.Claude{}, "claude-loop-attempt-2-1.log", agenttest.Complete,
			[]string{"Write: " + loopDir("claude", "farewell.txt"), "Read: " + loopDir("claude", tasks), "Edit: " + loopDir("claude", tasks),
				`Bash: git status --short && cat farewell.txt && echo "tmp=$TMPDIR"`}},
		{codex.Codex{}, "codex-loop-attempt-1-1.log", failed, []string{"edit: " + loopDir("codex", "greeting.txt")}},
		{codex.Codex{}, "codex-loop-attempt-2-1.log", agenttest.Complete,
			[]string{"edit: " + loopDir("codex", "farewell.txt"), "edit: " + loopDir("codex", tasks),
				`shell: tty; git status --short && cat farewell.txt && echo "tmp=$TMPDIR"`}},
		{opencode.OpenCode{}, "opencode-loop-attempt-1-1.log", failed, []string{"write: " + loopDir("opencode", "greeting.txt")}},
		{opencode.OpenCode{}, "opencode-loop-attempt-2-1.log", agenttest.Complete,
			[]string{"write: " + loopDir("opencode", "farewell.txt"), "read: " + loopDir("opencode", tasks), "edit: " + loopDir("opencode", tasks),
				`bash: git status --short && cat farewell.txt && echo "tmp=$TMPDIR"`}},
		{gemini.Gemini{}, "gemini-loop-attempt-1-1.log", failed, []string{"write_file: " + loopDir("gemini", "greeting.txt")}},
		{gemini.Gemini{}, "gemini-loop-attempt-2-1.log", agenttest.Complete,
			[]string{"write_file: " + loopDir("gemini", "farewell.txt"), "replace: " + loopDir("gemini", tasks),
				`run_shell_command: tty; git status --short && cat farewell.txt && echo "tmp=$TMPDIR"`}},
	} {
		res, rec := decodeWith(t, tc.d, tc.file)
		if !res.SawResult || res.IsError || res.Promise() != tc.promise || !slices.Equal(rec.Tools, tc.tools) ||
			(res.InputTokens == 0) != (tc.d.Name() == "copilot") { // copilot's come from its usage file
			t.Errorf("%s: %+v, tools %q", tc.file, res, rec.Tools)
		}
	}
}

// loopDir is path in the scratch repository loop.sh ran agent in.
func loopDir(agent, path string) string { return "/tmp/agentslab/loop-" + agent + "/" + path }

func TestLookup(t *testing.T) {
	d, err := Lookup("claude")
	if err != nil || d.Name() != "claude" || d.Binary() != "claude" {
		t.Fatalf("Lookup(claude) = %v, %v", d, err)
	}
	_, err = Lookup("gpt-9")
	if err == nil || !strings.Contains(err.Error(), `"gpt-9"`) || !strings.Contains(err.Error(), "claude") {
		t.Fatalf("Lookup(gpt-9) err = %v", err)
	}
	want := []string{"amp", "claude", "codex", "copilot", "cursor", "custom", "gemini", "opencode", "qwen"}
	if names := Names(); !slices.Equal(names, want) {
		t.Fatalf("Names() = %q, want %q", names, want)
	}
	for _, name := range want {
		d, err := Lookup(name)
		if err != nil || d.Name() != name {
			t.Errorf("Lookup(%s) = %v, %v", name, d, err)
		}
	}
}

// decodeWith decodes the transcript testdata/name (internal/agent/testdata) with d.
func decodeWith(t *testing.T, d agent.Driver, name string) (agent.Result, *agenttest.Recorder) {
	t.Helper()
	return agenttest.Decode(t, d, filepath.Join("..", "agent", "testdata", name))
}

// StateDirs are every driver's state directories, whichever agent a run uses: what
// another run's agent may write.
func TestStateDirs(t *testing.T) {
	env := []string{"HOME=/h"}
	got := StateDirs(env)
	for _, d := range drivers() {
		for _, want := range agent.StateOf(d, env).Dirs {
			if !slices.Contains(got, want) {
				t.Errorf("%s's %s is not in %q", d.Name(), want, got)
			}
		}
	}
	if !slices.Contains(got, "/h/.cache/opencode") || !slices.Contains(got, "/h/.claude") {
		t.Errorf("StateDirs = %q", got)
	}
}
