package fakeagent

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/git-ralph/git-ralph/internal/testtmp"
)

// TestMain lets the subprocess tests run this test binary as the agent.
func TestMain(m *testing.M) {
	if os.Getenv("FAKEAGENT_TEST_MAIN") == "1" {
		Main()
	}
	var err error
	if testdata, err = filepath.Abs("testdata"); err != nil {
		panic(err)
	}
	os.Exit(testtmp.Main(m))
}

var (
	// testdata is absolute: most tests change directory.
	testdata string

	claudeArgs = []string{"claude", "-p", "--output-format", "stream-json", "--verbose", "--dangerously-skip-permissions"}
	codexArgs  = []string{"codex", "exec", "--json", "--dangerously-bypass-approvals-and-sandbox", "-"}
)

// lineWrites records every Write and fails the test when one is not a whole
// line: the fake must hand each line over as soon as it is complete.
type lineWrites struct {
	t       *testing.T
	buf     bytes.Buffer
	partial int // writes without a trailing newline (only raw newline:false)
}

func (w *lineWrites) Write(p []byte) (int, error) {
	if len(p) == 0 || p[len(p)-1] != '\n' {
		w.partial++
	} else if i := bytes.IndexByte(p, '\n'); i != len(p)-1 {
		w.t.Errorf("one Write carried more than one line: %.200q", p)
	}
	return w.buf.Write(p)
}

type runResult struct {
	code    int
	stdout  string
	stderr  string
	partial int
}

// mapEnv is an environment for Run.
type mapEnv map[string]string

func (e mapEnv) get(k string) string { return e[k] }

func runFake(t *testing.T, args []string, stdin string, env mapEnv) runResult {
	t.Helper()
	out := &lineWrites{t: t}
	var errBuf bytes.Buffer
	code := Run(args, strings.NewReader(stdin), out, &errBuf, env.get)
	return runResult{code: code, stdout: out.buf.String(), stderr: errBuf.String(), partial: out.partial}
}

func scenarioEnv(t *testing.T, name string) mapEnv {
	t.Helper()
	path := filepath.Join(testdata, "scenarios", name)
	return mapEnv{"FAKE_AGENT_SCENARIO": path, "FAKE_AGENT_STATE_DIR": t.TempDir(),
		"COPILOT_GITHUB_TOKEN": "test-token", "OPENAI_API_KEY": "test-key"}
}

func inlineEnv(t *testing.T, scenario string) mapEnv {
	t.Helper()
	if !json.Valid([]byte(scenario)) {
		t.Fatalf("test scenario is not JSON: %s", scenario)
	}
	// copilot and qwen need credentials to start (the tests of their
	// absence delete these).
	return mapEnv{"FAKE_AGENT_SCENARIO_JSON": scenario, "COPILOT_GITHUB_TOKEN": "test-token", "OPENAI_API_KEY": "test-key"}
}

// gitRepo makes an empty-ish repository the current directory, with a
// hermetic git configuration.
func gitRepo(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	t.Chdir(dir)
	// The global config is a file of the test's own, never /dev/null: a `git config
	// --global` write there, run as root, replaces the device with a regular file.
	global := filepath.Join(t.TempDir(), "gitconfig")
	if err := os.WriteFile(global, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for k, v := range map[string]string{
		"HOME": dir, "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": global,
		"GIT_AUTHOR_NAME": "A", "GIT_AUTHOR_EMAIL": "a@example.com",
		"GIT_COMMITTER_NAME": "C", "GIT_COMMITTER_EMAIL": "c@example.com",
	} {
		t.Setenv(k, v)
	}
	if err := os.WriteFile("README.md", []byte("# repo\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	git(t, "init", "-q")
	git(t, "add", "-A")
	git(t, "commit", "-q", "-m", "base")
	return dir
}

func git(t *testing.T, args ...string) string {
	t.Helper()
	out, err := exec.Command("git", args...).CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return string(out)
}

// event is one parsed stdout line; raw lines have a nil map.
type event struct {
	raw string
	m   map[string]any
}

func parseLines(t *testing.T, stdout string) []event {
	t.Helper()
	var evs []event
	sc := bufio.NewScanner(strings.NewReader(stdout))
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		var m map[string]any
		if json.Unmarshal(sc.Bytes(), &m) != nil {
			m = nil
		}
		evs = append(evs, event{raw: sc.Text(), m: m})
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return evs
}

func get(m any, path ...any) any {
	for _, p := range path {
		switch k := p.(type) {
		case string:
			mm, _ := m.(map[string]any)
			m = mm[k]
		case int:
			a, _ := m.([]any)
			if k >= len(a) {
				return nil
			}
			m = a[k]
		}
	}
	return m
}

func str(m any, path ...any) string {
	s, _ := get(m, path...).(string)
	return s
}

// label names an event for sequence comparisons.
func label(e event) string {
	m := e.m
	if m == nil {
		return "raw"
	}
	typ := str(m, "type")
	switch typ {
	case "system", "result":
		return typ + "/" + str(m, "subtype")
	case "assistant":
		c := get(m, "message", "content", 0)
		if str(c, "type") == "tool_use" {
			return "tool_use:" + str(c, "name")
		}
		return "assistant:" + str(c, "type")
	case "user":
		if get(m, "message", "content", 0, "is_error") == true {
			return "tool_result!"
		}
		return "tool_result"
	case "item.started", "item.completed":
		return typ + ":" + str(m, "item", "type")
	}
	return typ
}

func labels(evs []event) []string {
	var ls []string
	for _, e := range evs {
		ls = append(ls, label(e))
	}
	return ls
}

// finalText is what git-ralph will take as the final answer.
func finalText(evs []event) string {
	var text string
	for _, e := range evs {
		switch {
		case str(e.m, "type") == "result":
			text = str(e.m, "result")
		case str(e.m, "type") == "item.completed" && str(e.m, "item", "type") == "agent_message":
			text = str(e.m, "item", "text")
		}
	}
	return text
}

func TestScenarioFiles(t *testing.T) {
	tests := []struct {
		file     string
		codex    bool
		code     int
		labels   []string
		final    string
		stdinLen int
	}{
		{file: "complete-with-commit.json", labels: []string{"system/init", "assistant:text", "tool_use:Write", "tool_result",
			"tool_use:Bash", "tool_result", "assistant:text", "result/success"}, final: "Done.\n\n<promise>COMPLETE</promise>"},
		{file: "failed.json", labels: []string{"system/init", "assistant:text", "tool_use:Bash", "tool_result!",
			"assistant:text", "result/success"}, final: "Tests fail and I cannot fix them.\n\n<promise>FAILED: go test ./... fails in pkg/loop</promise>"},
		{file: "no-signal-dirty-tree.json", labels: []string{"system/init", "tool_use:Write", "tool_result", "tool_use:Write",
			"tool_result", "assistant:text", "result/success"}, final: "I edited README.md but did not commit."},
		{file: "promise-echo-then-failed.json", labels: []string{"system/init", "assistant:text", "tool_use:Bash", "tool_result",
			"assistant:text", "result/success"}, final: "Blocked.\n\n<promise>FAILED: missing credentials for integration test</promise>"},
		{file: "api-error-result.json", code: 1, labels: []string{"system/init", "system/api_retry", "system/api_retry", "result/success"},
			final: "API Error: 500 Internal server error. This is a server-side issue, usually temporary — try again in a moment."},
		{file: "max-turns.json", code: 1, labels: []string{"system/init", "tool_use:Write", "tool_result", "result/error_max_turns"}},
		{file: "crash-midstream.json", code: 2, labels: []string{"system/init", "assistant:text", "raw"}, final: ""},
		{file: "codex-complete.json", codex: true, labels: []string{"thread.started", "turn.started", "item.completed:agent_message",
			"item.started:file_change", "item.completed:file_change", "item.started:command_execution",
			"item.completed:command_execution", "item.completed:agent_message", "turn.completed"},
			final: "Created hello.txt and committed it.\n\n<promise>COMPLETE</promise>"},
	}
	// Tested on their own: TestGarbageAndLongLines, TestMultiIterationRuns, proc_test.go.
	covered := map[string]bool{"garbage-and-long-lines.json": true, "multi-iteration.json": true,
		"hang-after-init.json": true, "hang-ignore-sigterm.json": true,
		// dialects_test.go
		"gemini-complete.json": true, "opencode-complete.json": true, "amp-complete.json": true,
		"cursor-complete.json": true, "failures.json": true}
	for _, tt := range tests {
		covered[tt.file] = true
		t.Run(strings.TrimSuffix(tt.file, ".json"), func(t *testing.T) {
			gitRepo(t)
			if err := os.WriteFile("PROMPT.md", []byte("When done print <promise>COMPLETE</promise>\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			git(t, "add", "-A")
			git(t, "commit", "-q", "-m", "prompt")
			args := claudeArgs
			if tt.codex {
				args = codexArgs
			}
			r := runFake(t, args, "the prompt", scenarioEnv(t, tt.file))
			if r.code != tt.code {
				t.Fatalf("exit %d, want %d; stderr:\n%s", r.code, tt.code, r.stderr)
			}
			evs := parseLines(t, r.stdout)
			if got := labels(evs); !slices.Equal(got, tt.labels) {
				t.Fatalf("events\n got %q\nwant %q", got, tt.labels)
			}
			if got := finalText(evs); got != tt.final {
				t.Errorf("final text %q, want %q", got, tt.final)
			}
			if strings.Contains(r.stdout, `\u003c`) {
				t.Error("output escapes < as \\u003c; the real CLIs print it literally")
			}
			for _, e := range evs {
				if e.m != nil && !tt.codex && str(e.m, "session_id") == "" {
					t.Errorf("line without session_id: %s", e.raw)
				}
			}
			switch tt.file {
			case "complete-with-commit.json", "codex-complete.json":
				if log := git(t, "log", "--format=%s"); !strings.HasPrefix(log, "feat: ") {
					t.Errorf("the bash step did not commit: git log\n%s", log)
				}
			case "no-signal-dirty-tree.json":
				status := git(t, "status", "--porcelain")
				if status != " M README.md\n?? scratch/\n" {
					t.Errorf("git status:\n%s", status)
				}
			case "promise-echo-then-failed.json":
				if got := str(evs[3].m, "message", "content", 0, "content"); !strings.Contains(got, "<promise>COMPLETE</promise>") {
					t.Errorf("tool result %q does not echo PROMPT.md", got)
				}
			case "failed.json":
				if got := str(evs[3].m, "message", "content", 0, "content"); got != "Exit code 1" {
					t.Errorf("failed tool result %q", got)
				}
			case "max-turns.json":
				res := evs[len(evs)-1].m
				if _, ok := res["result"]; ok {
					t.Error("error_max_turns result has a result key")
				}
				if !reflect.DeepEqual(res["errors"], []any{"Reached maximum number of turns (1)"}) || res["is_error"] != true {
					t.Errorf("result %v", res)
				}
			case "crash-midstream.json":
				if r.partial != 1 || !strings.HasSuffix(r.stdout, `"type":"tool_res`) {
					t.Errorf("want a truncated last line without newline, got %q", r.stdout[max(len(r.stdout)-40, 0):])
				}
				if !strings.Contains(r.stderr, "panic: runtime error") {
					t.Errorf("stderr %q", r.stderr)
				}
			case "api-error-result.json":
				res := evs[len(evs)-1].m
				if res["is_error"] != true || res["api_error_status"] != float64(500) {
					t.Errorf("result %v", res)
				}
			}
		})
	}
	files, _ := filepath.Glob(filepath.Join(testdata, "scenarios", "*.json"))
	for _, f := range files {
		if !covered[filepath.Base(f)] {
			t.Errorf("scenario %s is not tested", f)
		}
	}
}

func TestGarbageAndLongLines(t *testing.T) {
	t.Chdir(t.TempDir())
	r := runFake(t, claudeArgs, "p", scenarioEnv(t, "garbage-and-long-lines.json"))
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	evs := parseLines(t, r.stdout)
	ls := labels(evs)
	want := []string{"system/init", "raw", "raw", "assistant:text", "raw"}
	if len(ls) != 1+4+20000+2 || !slices.Equal(ls[:5], want) || ls[len(ls)-1] != "result/success" {
		t.Fatalf("%d events, first %q", len(ls), ls[:min(len(ls), 6)])
	}
	if n := len(str(evs[3].m, "message", "content", 0, "text")); n != 300000 {
		t.Errorf("say_bytes text has %d bytes", n)
	}
	if got := finalText(evs); got != "<promise>COMPLETE</promise>" {
		t.Errorf("final %q", got)
	}
}

func TestMultiIterationRuns(t *testing.T) {
	dir := gitRepo(t)
	env := scenarioEnv(t, "multi-iteration.json")
	want := []string{"<promise>COMPLETE</promise>", "Could not finish.\n\n<promise>FAILED: flaky test</promise>",
		"<promise>COMPLETE</promise>", "<promise>COMPLETE</promise>"}
	for i, w := range want {
		r := runFake(t, claudeArgs, "p", env)
		if r.code != 0 {
			t.Fatalf("run %d: exit %d: %s", i, r.code, r.stderr)
		}
		if got := finalText(parseLines(t, r.stdout)); got != w {
			t.Errorf("run %d: final %q, want %q", i, got, w)
		}
	}
	for _, f := range []string{"s1.txt", "s2.txt"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Error(err)
		}
	}
}

// keyShape reduces a JSON value to its keys and value kinds.
func keyShape(v any) any {
	switch x := v.(type) {
	case map[string]any:
		m := map[string]any{}
		for k, e := range x {
			m[k] = keyShape(e)
		}
		return m
	case []any:
		if len(x) == 0 {
			return "[]"
		}
		return []any{keyShape(x[0])}
	case nil:
		return "null"
	default:
		return fmt.Sprintf("%T", v)
	}
}

func shapeDiff(a, b any, path string) []string {
	am, aok := a.(map[string]any)
	bm, bok := b.(map[string]any)
	if aok && bok {
		var diffs []string
		keys := map[string]bool{}
		for k := range am {
			keys[k] = true
		}
		for k := range bm {
			keys[k] = true
		}
		sorted := make([]string, 0, len(keys))
		for k := range keys {
			sorted = append(sorted, k)
		}
		sort.Strings(sorted)
		for _, k := range sorted {
			diffs = append(diffs, shapeDiff(am[k], bm[k], path+"."+k)...)
		}
		return diffs
	}
	if as, ok := a.([]any); ok {
		if bs, ok := b.([]any); ok {
			return shapeDiff(as[0], bs[0], path+"[0]")
		}
	}
	if !reflect.DeepEqual(a, b) {
		return []string{fmt.Sprintf("%s: fake %v, real %v", path, a, b)}
	}
	return nil
}

// TestShapeMatchesRealTranscripts compares every line's keys and value kinds
// with the real transcript of the same run.
func TestShapeMatchesRealTranscripts(t *testing.T) {
	tests := []struct {
		scenario, sample string
		codex            bool
		onlyLast         bool
	}{
		{scenario: "complete-with-commit.json", sample: "claude-stream-json-complete.ndjson"},
		{scenario: "codex-complete.json", sample: "codex-exec-json-complete.ndjson", codex: true},
		{scenario: "max-turns.json", sample: "claude-stream-json-error-max-turns.ndjson", onlyLast: true},
		{scenario: "api-error-result.json", sample: "claude-stream-json-api-error.ndjson", onlyLast: true},
	}
	for _, tt := range tests {
		t.Run(tt.scenario, func(t *testing.T) {
			gitRepo(t)
			args := claudeArgs
			if tt.codex {
				args = codexArgs
			}
			r := runFake(t, args, "p", scenarioEnv(t, tt.scenario))
			data, err := os.ReadFile(filepath.Join(testdata, "samples", tt.sample))
			if err != nil {
				t.Fatal(err)
			}
			fake, real := parseLines(t, r.stdout), parseLines(t, string(data))
			if tt.onlyLast {
				fake, real = fake[len(fake)-1:], real[len(real)-1:]
			}
			if len(fake) != len(real) {
				t.Fatalf("%d lines, the real transcript has %d", len(fake), len(real))
			}
			for i := range fake {
				for _, d := range shapeDiff(keyShape(fake[i].m), keyShape(real[i].m), fmt.Sprintf("line %d", i+1)) {
					t.Error(d)
				}
			}
		})
	}
}

func TestCodexDialectFromArgv0(t *testing.T) {
	t.Chdir(t.TempDir())
	last := filepath.Join(t.TempDir(), "last.txt")
	env := inlineEnv(t, `{"steps":[{"say":"one"},{"say":"two <promise>COMPLETE</promise>"}],
		"result":{"input_tokens":5,"output_tokens":7}}`)
	r := runFake(t, []string{"/usr/local/bin/codex", "exec", "--json", "-o", last}, "prompt on stdin", env)
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	evs := parseLines(t, r.stdout)
	if got := labels(evs); !slices.Equal(got, []string{"thread.started", "turn.started",
		"item.completed:agent_message", "item.completed:agent_message", "turn.completed"}) {
		t.Fatalf("events %q", got)
	}
	if get(evs[4].m, "usage", "output_tokens") != float64(7) {
		t.Errorf("usage %v", evs[4].m)
	}
	if data, _ := os.ReadFile(last); string(data) != "two <promise>COMPLETE</promise>" {
		t.Errorf("-o file %q", data)
	}
}

func TestCodexTurnFailed(t *testing.T) {
	t.Chdir(t.TempDir())
	env := inlineEnv(t, `{"dialect":"codex","turn_failed":"mock: invalid request"}`)
	r := runFake(t, codexArgs, "p", env)
	evs := parseLines(t, r.stdout)
	if r.code != 1 || !slices.Equal(labels(evs), []string{"thread.started", "turn.started", "error", "turn.failed"}) {
		t.Fatalf("exit %d, events %q", r.code, labels(evs))
	}
	if str(evs[3].m, "error", "message") != "mock: invalid request" {
		t.Errorf("turn.failed %v", evs[3].m)
	}
}

func TestArguments(t *testing.T) {
	t.Chdir(t.TempDir())
	say := `{"steps":[{"say":"hi"}]}`
	tests := []struct {
		name     string
		args     []string
		scenario string
		code     int
		stdout   string // exact, when not "*"
		stderr   string // substring
	}{
		{"claude without -p", []string{"claude", "--output-format", "stream-json", "--verbose"}, say, 64, "", "without -p/--print"},
		{"stream-json without --verbose", []string{"claude", "-p", "--output-format", "stream-json"}, say, 1, "",
			"Error: When using --print, --output-format=stream-json requires --verbose\n"},
		{"text output", []string{"claude", "-p"}, say, 0, "hi\n", ""},
		{"json output", []string{"claude", "--print", "--output-format=json"}, say, 0, "*", ""},
		{"expect_args", []string{"claude", "-p", "--output-format", "stream-json", "--verbose"},
			`{"expect_args":["--model","opus"],"steps":[]}`, 64, "", `missing expected args ["--model" "opus"]`},
		{"expect_args with =", []string{"claude", "-p", "--model=opus"},
			`{"expect_args":["--model","opus"],"steps":[{"say":"ok"}]}`, 0, "ok\n", ""},
		{"codex without --json", []string{"codex", "exec", "-"}, say, 64, "", "without --json"},
		{"codex without exec", []string{"codex", "--json"}, say, 64, "", "without the exec subcommand"},
		{"codex --full-auto", []string{"codex", "exec", "--json", "--full-auto", "-"}, say, 2, "",
			"error: unexpected argument '--full-auto' found"},
		{"unknown scenario key", claudeArgs, `{"steps":[{"sya":"typo"}]}`, 64, "", `unknown field "sya"`},
		{"two actions", claudeArgs, `{"steps":[{"say":"a","bash":"true"}]}`, 64, "", "more than one action"},
		{"inline runs without state dir", claudeArgs, `{"runs":[{"steps":[]}]}`, 64, "", "FAKE_AGENT_STATE_DIR"},
		{"by_story without match", claudeArgs, `{"by_story":{"7":[{"steps":[]}]}}`, 64, "", "no entry for RALPH_STORY"},
		{"hang in-process", claudeArgs, `{"steps":[{"hang":{}}]}`, 64, "*", "needs a real process"},
		{"crash in-process", claudeArgs, `{"steps":[{"crash":{"signal":"SIGSEGV"}}]}`, 139, "*", "crash by signal 11"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := runFake(t, tt.args, "prompt", inlineEnv(t, tt.scenario))
			if r.code != tt.code {
				t.Fatalf("exit %d, want %d; stderr %q", r.code, tt.code, r.stderr)
			}
			if tt.stdout != "*" && r.stdout != tt.stdout {
				t.Errorf("stdout %q, want %q", r.stdout, tt.stdout)
			}
			if !strings.Contains(r.stderr, tt.stderr) {
				t.Errorf("stderr %q, want it to contain %q", r.stderr, tt.stderr)
			}
			if tt.name == "json output" {
				evs := parseLines(t, r.stdout)
				if len(evs) != 1 || label(evs[0]) != "result/success" || str(evs[0].m, "result") != "hi" {
					t.Errorf("json output %q", r.stdout)
				}
			}
		})
	}
}

func TestUnconfigured(t *testing.T) {
	r := runFake(t, claudeArgs, "p", mapEnv{})
	if r.code != 64 || r.stdout != "" || !strings.Contains(r.stderr, "FAKE_AGENT_SCENARIO") {
		t.Fatalf("exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
}

func TestRootCheck(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs uid 0")
	}
	t.Chdir(t.TempDir())
	env := inlineEnv(t, `{"emulate_root_check":true,"steps":[{"say":"hi"}]}`)
	r := runFake(t, claudeArgs, "p", env)
	if r.code != 1 || r.stdout != "" || r.stderr != "--dangerously-skip-permissions cannot be used with root/sudo privileges for security reasons\n" {
		t.Fatalf("exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	env["IS_SANDBOX"] = "1"
	if r := runFake(t, claudeArgs, "p", env); r.code != 0 {
		t.Fatalf("with IS_SANDBOX=1: exit %d: %s", r.code, r.stderr)
	}
}

type recordLine struct {
	Argv       []string          `json:"argv"`
	Cwd        string            `json:"cwd"`
	Stdin      string            `json:"stdin"`
	StdinBytes int               `json:"stdin_bytes"`
	Prompt     *string           `json:"prompt"`
	Env        map[string]string `json:"env"`
	PID        int               `json:"pid"`
	StartedAt  string            `json:"started_at"`
	Invocation int               `json:"invocation"`
	Dialect    string            `json:"dialect"`
	Run        string            `json:"run"`
}

func readRecord(t *testing.T, path string) []recordLine {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var recs []recordLine
	for _, line := range strings.Split(strings.TrimSuffix(string(data), "\n"), "\n") {
		var r recordLine
		dec := json.NewDecoder(strings.NewReader(line))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&r); err != nil {
			t.Fatalf("record line %q: %v", line, err)
		}
		recs = append(recs, r)
	}
	return recs
}

func TestRecord(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	rec := filepath.Join(t.TempDir(), "agent.ndjson")
	env := inlineEnv(t, `{"steps":[{"say":"story {{story}} attempt {{attempt}} of {{change}}"}]}`)
	for k, v := range map[string]string{"FAKE_AGENT_RECORD": rec, "FAKE_AGENT_STATE_DIR": t.TempDir(),
		"FAKE_AGENT_FIXED_TIME": "2026-01-02T03:04:05Z", "RALPH_AGENT": "1", "RALPH_CHANGE": "add-login",
		"RALPH_STORY": "2", "RALPH_ATTEMPT": "3", "IS_SANDBOX": "1"} {
		env[k] = v
	}
	prompt := "Story 2: <promise>COMPLETE</promise>\n"
	r := runFake(t, claudeArgs, prompt, env)
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	if got := finalText(parseLines(t, r.stdout)); got != "story 2 attempt 3 of add-login" {
		t.Errorf("placeholders: %q", got)
	}
	r = runFake(t, []string{"claude", "-p", "argument prompt"}, "", env)
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	r = runFake(t, []string{"claude", "-p", "--output-format", "stream-json"}, "unread", env)
	if r.code != 1 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	recs := readRecord(t, rec)
	if len(recs) != 3 {
		t.Fatalf("%d record lines", len(recs))
	}
	first := recs[0]
	wantEnv := map[string]string{"RALPH_AGENT": "1", "RALPH_CHANGE": "add-login", "RALPH_STORY": "2", "RALPH_ATTEMPT": "3", "IS_SANDBOX": "1"}
	if !slices.Equal(first.Argv, claudeArgs) || first.Cwd != dir || first.Stdin != prompt || first.StdinBytes != len(prompt) ||
		first.Prompt == nil || *first.Prompt != prompt || !reflect.DeepEqual(first.Env, wantEnv) || first.PID != os.Getpid() ||
		first.StartedAt != "2026-01-02T03:04:05Z" || first.Invocation != 1 || first.Dialect != "claude" || first.Run != "steps" {
		t.Errorf("record %+v", first)
	}
	if p := recs[1].Prompt; recs[1].Invocation != 2 || p == nil || *p != "argument prompt" || recs[1].StdinBytes != 0 {
		t.Errorf("second record %+v", recs[1])
	}
	if recs[2].Prompt != nil || recs[2].Stdin != "" {
		t.Errorf("an invocation refused for its arguments must not read stdin: %+v", recs[2])
	}
}

func TestPromptSources(t *testing.T) {
	t.Chdir(t.TempDir())
	tests := []struct {
		name  string
		args  []string
		stdin string
		want  string
		code  int
	}{
		{"claude stdin", []string{"claude", "-p"}, "from stdin", "from stdin", 0},
		{"claude arg and stdin", []string{"claude", "-p", "arg"}, "more", "arg\nmore", 0},
		{"claude value options", []string{"claude", "--model", "opus", "-p", "--allowedTools", "Bash", "Edit", "--", "arg"}, "", "arg", 0},
		{"claude nothing", []string{"claude", "-p"}, "", "", 1},
		{"codex dash", []string{"codex", "exec", "--json", "-"}, "from stdin", "from stdin", 0},
		{"codex none", []string{"codex", "exec", "-m", "gpt-5.5", "--json"}, "from stdin", "from stdin", 0},
		{"codex arg and stdin", []string{"codex", "exec", "--json", "arg"}, "more", "arg\n\n<stdin>\nmore\n</stdin>", 0},
		{"codex resume", []string{"codex", "exec", "--json", "resume", "0199-thread", "next"}, "", "next", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := filepath.Join(t.TempDir(), "rec")
			env := inlineEnv(t, `{"steps":[{"echo_prompt":true},{"say":"done"}]}`)
			env["FAKE_AGENT_RECORD"] = rec
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
			if tt.name == "codex resume" && !strings.Contains(r.stdout, `"thread_id":"0199-thread"`) {
				t.Errorf("resume did not keep the thread id: %s", r.stdout)
			}
		})
	}
}

func TestEchoPrompt(t *testing.T) {
	t.Chdir(t.TempDir())
	prompt := "Work on story 1.\nEnd with <promise>COMPLETE</promise> or <promise>FAILED: reason</promise>.\n"
	env := inlineEnv(t, `{"steps":[{"echo_prompt":true},{"say":"<promise>FAILED: blocked</promise>"}]}`)
	r := runFake(t, claudeArgs, prompt, env)
	evs := parseLines(t, r.stdout)
	if !slices.Equal(labels(evs), []string{"system/init", "tool_use:Bash", "tool_result", "assistant:text", "result/success"}) {
		t.Fatalf("events %q", labels(evs))
	}
	if got := str(evs[2].m, "message", "content", 0, "content"); got != strings.TrimRight(prompt, "\n") {
		t.Errorf("tool result %q", got)
	}
	if finalText(evs) != "<promise>FAILED: blocked</promise>" {
		t.Errorf("final %q", finalText(evs))
	}
}

func TestByStoryAndRuns(t *testing.T) {
	t.Chdir(t.TempDir())
	byStory := `{"result":{"cost_usd":0.5},
		"by_story":{"1":[{"steps":[{"say":"s1a1"}]},{"steps":[{"say":"s1a2"}],"result":{"cost_usd":0.25}}],
		            "*":[{"steps":[{"say":"any {{story}}/{{attempt}}"}]}]}}`
	tests := []struct {
		story, attempt, want string
		cost                 float64
	}{
		{"1", "1", "s1a1", 0.5},
		{"1", "2", "s1a2", 0.25},
		{"1", "9", "s1a2", 0.25},
		{"1", "", "s1a1", 0.5},
		{"3", "2", "any 3/2", 0.5},
	}
	for _, tt := range tests {
		env := inlineEnv(t, byStory)
		env["RALPH_STORY"], env["RALPH_ATTEMPT"] = tt.story, tt.attempt
		r := runFake(t, claudeArgs, "p", env)
		evs := parseLines(t, r.stdout)
		if got := finalText(evs); got != tt.want {
			t.Errorf("story %s attempt %s: %q, want %q", tt.story, tt.attempt, got, tt.want)
		}
		if got := get(evs[len(evs)-1].m, "total_cost_usd"); got != tt.cost {
			t.Errorf("story %s attempt %s: cost %v, want %v", tt.story, tt.attempt, got, tt.cost)
		}
	}

	// runs, counted in FAKE_AGENT_STATE_DIR; by_story without "*" falls back to them.
	state := t.TempDir()
	runs := `{"by_story":{"9":[{"steps":[{"say":"nine"}]}]},"runs":[{"steps":[{"say":"r0"}]},{"steps":[{"say":"r1"}]}]}`
	for i, want := range []string{"r0", "r1", "nine", "r1"} {
		env := inlineEnv(t, runs)
		env["FAKE_AGENT_STATE_DIR"] = state
		if want == "nine" {
			env["RALPH_STORY"] = "9"
		}
		r := runFake(t, claudeArgs, "p", env)
		if got := finalText(parseLines(t, r.stdout)); got != want {
			t.Errorf("invocation %d: %q, want %q (%s)", i+1, got, want, r.stderr)
		}
	}

	// Without a state dir, a scenario file counts next to itself.
	path := filepath.Join(t.TempDir(), "s.json")
	if err := os.WriteFile(path, []byte(`{"runs":[{"steps":[{"say":"a"}]},{"steps":[{"say":"b"}]}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"a", "b", "b"} {
		r := runFake(t, claudeArgs, "p", mapEnv{"FAKE_AGENT_SCENARIO": path})
		if got := finalText(parseLines(t, r.stdout)); got != want {
			t.Errorf("file counter: %q, want %q (%s)", got, want, r.stderr)
		}
	}
	if _, err := os.Stat(path + ".invocations"); err != nil {
		t.Error(err)
	}
}

func TestDeterministicOutput(t *testing.T) {
	t.Chdir(t.TempDir())
	env := inlineEnv(t, `{"steps":[{"say":"a"},{"event":{"type":"system","subtype":"api_retry","attempt":1}},{"bash":"echo out; echo err >&2"}]}`)
	env["FAKE_AGENT_FIXED_TIME"] = "2026-01-02T03:04:05Z"
	a, b := runFake(t, claudeArgs, "p", env), runFake(t, claudeArgs, "p", env)
	if a.stdout != b.stdout {
		t.Fatalf("two runs differ:\n%s\n%s", a.stdout, b.stdout)
	}
	evs := parseLines(t, a.stdout)
	if str(evs[2].m, "uuid") == "" || str(evs[2].m, "session_id") != str(evs[0].m, "session_id") {
		t.Errorf("event without filled ids: %s", evs[2].raw)
	}
	if got := str(evs[4].m, "message", "content", 0, "content"); got != "out\nerr" {
		t.Errorf("bash output %q", got)
	}
	if got := str(evs[4].m, "timestamp"); got != "2026-01-02T03:04:05.000Z" {
		t.Errorf("timestamp %q", got)
	}
	env["RALPH_STORY"] = "2"
	if c := runFake(t, claudeArgs, "p", env); c.stdout == a.stdout {
		t.Error("another story got the same session id")
	}
}

// TestStreamsLineByLine checks that lines reach the reader before the fake
// goes on, with wait_for_file and touch as the handshake.
func TestStreamsLineByLine(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	env := inlineEnv(t, `{"steps":[{"say":"first"},{"touch":"$MARK/reached"},{"wait_for_file":"go"},{"say":"second"}]}`)
	env["MARK"] = dir
	pr, pw := io.Pipe()
	done := make(chan int, 1)
	go func() {
		done <- Run(claudeArgs, strings.NewReader("p"), pw, io.Discard, env.get)
		pw.Close()
	}()
	br := bufio.NewReader(pr)
	for _, want := range []string{`"subtype":"init"`, `"text":"first"`} {
		line, err := br.ReadString('\n')
		if err != nil || !strings.Contains(line, want) {
			t.Fatalf("line %q (%v), want %s", line, err, want)
		}
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "reached")); err == nil {
			break
		}
		time.Sleep(time.Millisecond)
	}
	if err := os.WriteFile(filepath.Join(dir, "go"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	rest, _ := io.ReadAll(br)
	if code := <-done; code != 0 || !strings.Contains(string(rest), `"result":"second"`) {
		t.Fatalf("exit %d, rest %s", code, rest)
	}
}

// countingWriter checks a flood without keeping it.
type countingWriter struct {
	bytes, lines, writes int64
	bad                  string
}

func (w *countingWriter) Write(p []byte) (int, error) {
	w.writes++
	w.bytes += int64(len(p))
	w.lines += int64(bytes.Count(p, []byte{'\n'}))
	if w.bad == "" && (p[len(p)-1] != '\n' || (w.writes%101 == 0 && !json.Valid(p))) {
		w.bad = string(p[:min(len(p), 200)])
	}
	return len(p), nil
}

func TestFloodMemoryBounded(t *testing.T) {
	t.Chdir(t.TempDir())
	const total = 50 << 20
	for _, args := range [][]string{claudeArgs, codexArgs} {
		env := inlineEnv(t, fmt.Sprintf(`{"steps":[{"flood":{"bytes":%d}},{"say":"<promise>COMPLETE</promise>"}]}`, total))
		w := &countingWriter{}
		var before, after runtimeMem
		before.read()
		code := Run(args, strings.NewReader("p"), w, io.Discard, env.get)
		after.read()
		if code != 0 || w.bad != "" {
			t.Fatalf("%s: exit %d, bad line %q", args[0], code, w.bad)
		}
		if w.bytes < total || w.bytes > total+8192 || w.lines != w.writes {
			t.Errorf("%s: %d bytes in %d lines and %d writes", args[0], w.bytes, w.lines, w.writes)
		}
		if perLine := w.bytes / w.lines; perLine < 3500 || perLine > 4200 {
			t.Errorf("%s: %d bytes per line, want about 4096", args[0], perLine)
		}
		if alloc := after.totalAlloc - before.totalAlloc; alloc > 8<<20 {
			t.Errorf("%s: allocated %d bytes to print %d", args[0], alloc, w.bytes)
		}
	}
}

func TestFloodLineBytes(t *testing.T) {
	t.Chdir(t.TempDir())
	env := inlineEnv(t, `{"steps":[{"flood":{"bytes":100000,"line_bytes":1000}}]}`)
	r := runFake(t, claudeArgs, "p", env)
	evs := parseLines(t, r.stdout)
	for _, e := range evs[1 : len(evs)-2] {
		if e.m == nil || len(e.raw) != 999 {
			t.Fatalf("flood line of %d bytes: %.100s", len(e.raw), e.raw)
		}
	}
}

type runtimeMem struct{ totalAlloc uint64 }

func (m *runtimeMem) read() {
	var s runtime.MemStats
	runtime.ReadMemStats(&s)
	m.totalAlloc = s.TotalAlloc
}

func TestCodexCdAndDelay(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	if err := os.Mkdir("sub", 0o755); err != nil {
		t.Fatal(err)
	}
	env := inlineEnv(t, `{"dialect":"codex","steps":[{"write":{"path":"a.txt","content":"a"}},{"bash":"pwd"}]}`)
	env["FAKE_AGENT_DELAY_MS"] = "15"
	start := time.Now()
	r := runFake(t, []string{"codex", "exec", "--json", "-C", "sub", "-"}, "p", env)
	elapsed := time.Since(start)
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	evs := parseLines(t, r.stdout)
	if len(evs) != 7 || elapsed < 6*15*time.Millisecond {
		t.Errorf("%d lines in %v, want 7 lines 15ms apart", len(evs), elapsed)
	}
	sub := filepath.Join(dir, "sub")
	if data, err := os.ReadFile(filepath.Join(sub, "a.txt")); err != nil || string(data) != "a" {
		t.Errorf("write under -C: %q %v", data, err)
	}
	if got := str(evs[5].m, "item", "aggregated_output"); got != sub+"\n" || str(evs[5].m, "item", "command") != "/bin/bash -lc 'pwd'" {
		t.Errorf("command item %s", evs[5].raw)
	}
}
