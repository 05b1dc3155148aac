package claude

import (
	"bytes"
	"errors"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/git-ralph/git-ralph/internal/agent"
	"github.com/git-ralph/git-ralph/internal/agent/agenttest"
)

func decodeFile(t *testing.T, name string) (agent.Result, *agenttest.Recorder) {
	t.Helper()
	f, err := os.Open(filepath.Join("..", "testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rec := &agenttest.Recorder{}
	res, err := Claude{}.Decode(f, rec)
	if err != nil {
		t.Fatalf("Decode(%s): %v", name, err)
	}
	return res, rec
}

const (
	sampleWrite = "Write: /home/user/repo/repo1/hello.txt"
	sampleBash  = `Bash: git add hello.txt && git commit -q -m "feat: add hello.txt"`
)

func TestClaudeDecodeSamples(t *testing.T) {
	type want struct {
		saw       bool
		isError   bool
		subtype   string
		promise   agent.Promise
		text      string // exact, or prefix when it ends in "…"
		errors    []string
		denials   []string
		turns     int
		in, out   int64
		cost      float64 // -1: nil
		session   string
		model     string
		fatal     bool
		texts     int
		tools     []string
		terminals int
	}
	complete := agent.Promise{Kind: agent.PromiseComplete}
	completeText := "Created hello.txt and committed it.\n\n<promise>COMPLETE</promise>"
	for _, tc := range []struct {
		file string
		want want
	}{
		{"claude-stream-json-complete.ndjson", want{
			saw: true, subtype: "success", promise: complete, text: completeText,
			turns: 3, in: 3609, out: 171, cost: 0.013392, session: "d3ee4755-3e4f-49cf-a25a-6a8b14fb2f7b",
			model: "claude-sonnet-4-5", texts: 2, tools: []string{sampleWrite, sampleBash}, terminals: 1,
		}},
		{"claude-stream-json-failed-signal.ndjson", want{
			saw: true, subtype: "success", promise: agent.Promise{Kind: agent.PromiseFailed, Reason: "tests did not pass"},
			text:  "I could not finish.\n\n<promise>FAILED: tests did not pass</promise>",
			turns: 3, in: 3609, out: 171, cost: 0.013392, session: "654defde-409d-406b-ac4e-d0f801a0bd08",
			model: "claude-sonnet-4-5", texts: 2, tools: []string{sampleWrite, sampleBash}, terminals: 1,
		}},
		{"claude-stream-json-api-error.ndjson", want{
			saw: true, isError: true, subtype: "success", text: "API Error: 500 Internal server error (mock).…",
			errors: []string{"API Error: 500 Internal server error (mock).…"},
			turns:  1, cost: 0, session: "fb893cc3-e6c6-40ec-b5c5-88771c27db5c", model: "claude-sonnet-4-5",
			texts: 1, terminals: 1,
		}},
		{"claude-stream-json-error-max-turns.ndjson", want{
			saw: true, isError: true, subtype: "error_max_turns", text: "I'll create the greeting file.",
			errors: []string{"Reached maximum number of turns (1)"},
			turns:  2, in: 1210, out: 57, cost: 0.004485, session: "4861edb4-fd87-47b9-9062-978d34cc6efa",
			model: "claude-sonnet-4-5", texts: 1, tools: []string{sampleWrite}, terminals: 1,
		}},
		{"claude-stream-json-error-max-budget.ndjson", want{
			saw: true, isError: true, subtype: "error_max_budget_usd", text: "I'll create the greeting file.",
			errors: []string{"Reached maximum budget ($0.001)"},
			turns:  1, cost: 0.004584, session: "aa4b3049-e569-4e38-8f3f-64a46e917427",
			model: "claude-sonnet-4-5", texts: 1, tools: []string{sampleWrite}, terminals: 1,
		}},
		{"claude-stream-json-killed-sigterm.ndjson", want{
			cost: -1, session: "719fde96-0298-469b-937a-183cab799a60", model: "claude-sonnet-4-5",
		}},
		{"claude-stream-json-300kb-lines.ndjson", want{
			// The last assistant message (a Bash tool_use) has no text.
			saw: true, isError: true, subtype: "error_max_turns", text: "",
			errors: []string{"Reached maximum number of turns (2)"},
			turns:  3, in: 2405, out: 114, cost: 0.008925, session: "f84d8a17-51e5-4587-83a3-e42dd5cc74d1",
			model: "claude-sonnet-4-5", texts: 1,
			tools:     []string{"Write: /home/user/repo/repo1/big.txt", sampleBash},
			terminals: 1,
		}},
		{"claude-stream-json-partial-messages.ndjson", want{
			saw: true, subtype: "success", promise: complete, text: completeText,
			turns: 3, in: 3696, out: 171, cost: 0.013653, session: "68815cb7-2b4b-4e4c-8570-9319a78a9db1",
			model: "claude-sonnet-4-5", texts: 2, tools: []string{sampleWrite, sampleBash}, terminals: 1,
		}},
		{"claude-stream-json-permission-denied.ndjson", want{
			saw: true, subtype: "success", promise: complete, text: completeText,
			denials: []string{sampleWrite, sampleBash},
			turns:   3, in: 3678, out: 171, cost: 0.013599, session: "b7872061-721d-49de-bfd9-a7fcd96a6b6b",
			model: "claude-sonnet-4-5", texts: 2, tools: []string{sampleWrite, sampleBash}, terminals: 1,
		}},
		{"claude-stream-json-resume.ndjson", want{
			saw: true, subtype: "success", promise: complete, text: completeText,
			turns: 1, in: 1229, out: 57, cost: 0.004542, session: "b7872061-721d-49de-bfd9-a7fcd96a6b6b",
			model: "claude-sonnet-4-5", texts: 1, terminals: 1,
		}},
		{"claude-stream-json-input-format-stream-json.ndjson", want{
			saw: true, subtype: "success", promise: complete, text: completeText,
			turns: 3, in: 3738, out: 171, cost: 0.013779, session: "b7c244d1-1e08-4ae2-83ec-eb8303599c0c",
			model: "claude-sonnet-4-5", texts: 2, tools: []string{sampleWrite, sampleBash}, terminals: 1,
		}},
		{"claude-output-format-json.json", want{
			saw: true, subtype: "success", promise: complete, text: completeText,
			turns: 3, in: 3621, out: 171, cost: 0.013428, session: "c3a29754-0935-4065-b654-52fa040995dd",
			terminals: 1,
		}},
		{"synthetic-claude-crash-midstream.ndjson", want{
			text: "I'll create the greeting file.", cost: -1, session: "d3ee4755-3e4f-49cf-a25a-6a8b14fb2f7b",
			model: "claude-sonnet-4-5", texts: 1, tools: []string{sampleWrite},
		}},
		{"synthetic-claude-garbage-lines.ndjson", want{
			saw: true, subtype: "success", promise: complete, text: completeText,
			turns: 3, in: 3609, out: 171, cost: 0.013392, session: "d3ee4755-3e4f-49cf-a25a-6a8b14fb2f7b",
			model: "claude-sonnet-4-5", texts: 2, tools: []string{sampleWrite, sampleBash}, terminals: 1,
		}},
		{"synthetic-claude-no-signal.ndjson", want{
			saw: true, subtype: "success", text: "Created hello.txt and committed it.",
			turns: 3, in: 3609, out: 171, cost: 0.013392, session: "d3ee4755-3e4f-49cf-a25a-6a8b14fb2f7b",
			model: "claude-sonnet-4-5", texts: 2, tools: []string{sampleWrite, sampleBash}, terminals: 1,
		}},
		{"synthetic-claude-promise-echo-then-failed.ndjson", want{
			saw: true, subtype: "success", promise: agent.Promise{Kind: agent.PromiseFailed, Reason: "go test ./... fails in pkg/loop"},
			text:  "Tests still fail.\n\n<promise>FAILED: go test ./... fails in pkg/loop</promise>",
			turns: 3, in: 3609, out: 171, cost: 0.013392, session: "d3ee4755-3e4f-49cf-a25a-6a8b14fb2f7b",
			model: "claude-sonnet-4-5", texts: 2, tools: []string{sampleWrite, sampleBash}, terminals: 1,
		}},
	} {
		t.Run(tc.file, func(t *testing.T) {
			res, rec := decodeFile(t, tc.file)
			w := tc.want
			if res.SawResult != w.saw || res.IsError != w.isError || res.Subtype != w.subtype {
				t.Errorf("SawResult, IsError, Subtype = %v, %v, %q; want %v, %v, %q",
					res.SawResult, res.IsError, res.Subtype, w.saw, w.isError, w.subtype)
			}
			if got := res.Promise(); got != w.promise {
				t.Errorf("Promise() = %+v, want %+v", got, w.promise)
			}
			if !agenttest.MatchText(res.Text, w.text) {
				t.Errorf("Text = %q, want %q", res.Text, w.text)
			}
			if len(res.Errors) != len(w.errors) {
				t.Errorf("Errors = %q, want %q", res.Errors, w.errors)
			} else {
				for i := range w.errors {
					if !agenttest.MatchText(res.Errors[i], w.errors[i]) {
						t.Errorf("Errors[%d] = %q, want %q", i, res.Errors[i], w.errors[i])
					}
				}
			}
			if !slices.Equal(res.Denials, w.denials) {
				t.Errorf("Denials = %q, want %q", res.Denials, w.denials)
			}
			if res.Turns != w.turns || res.InputTokens != w.in || res.OutputTokens != w.out {
				t.Errorf("Turns, InputTokens, OutputTokens = %d, %d, %d; want %d, %d, %d",
					res.Turns, res.InputTokens, res.OutputTokens, w.turns, w.in, w.out)
			}
			switch {
			case w.cost < 0 && res.CostUSD != nil:
				t.Errorf("CostUSD = %v, want nil", *res.CostUSD)
			case w.cost >= 0 && res.CostUSD == nil:
				t.Errorf("CostUSD = nil, want %v", w.cost)
			case w.cost >= 0 && math.Abs(*res.CostUSD-w.cost) > 1e-9:
				t.Errorf("CostUSD = %v, want %v", *res.CostUSD, w.cost)
			}
			if res.SessionID != w.session {
				t.Errorf("SessionID = %q, want %q", res.SessionID, w.session)
			}
			if res.Model != w.model {
				t.Errorf("Model = %q, want %q", res.Model, w.model)
			}
			if (res.Fatal != "") != w.fatal {
				t.Errorf("Fatal = %q", res.Fatal)
			}
			if len(rec.Texts) != w.texts {
				t.Errorf("Text events = %q, want %d", rec.Texts, w.texts)
			}
			if !slices.Equal(rec.Tools, w.tools) {
				t.Errorf("Tool events = %q, want %q", rec.Tools, w.tools)
			}
			if rec.Terminals != w.terminals {
				t.Errorf("Terminal events = %d, want %d", rec.Terminals, w.terminals)
			}
		})
	}
}

func TestClaudeDecodeEchoedPromiseIsShownButDoesNotCount(t *testing.T) {
	res, rec := decodeFile(t, "synthetic-claude-promise-echo-then-failed.ndjson")
	if !strings.Contains(rec.Texts[0], "<promise>COMPLETE</promise>") {
		t.Fatalf("the echo should still be shown live: %q", rec.Texts)
	}
	if res.Promise().Kind != agent.PromiseFailed {
		t.Fatalf("Promise() = %+v, want FAILED", res.Promise())
	}
}

// line builds a JSON line from parts, to keep the inline streams readable.
func lines(ls ...string) string { return strings.Join(ls, "\n") + "\n" }

const (
	initLine   = `{"type":"system","subtype":"init","session_id":"s1","model":"claude-sonnet-4-5"}`
	resultLine = `{"type":"result","subtype":"success","is_error":false,"num_turns":1,"result":"done\n<promise>COMPLETE</promise>","session_id":"s1","total_cost_usd":0.5,"usage":{"input_tokens":10,"cache_creation_input_tokens":5,"cache_read_input_tokens":100,"output_tokens":7}}`
)

func assistantText(id, text string) string {
	return `{"type":"assistant","message":{"id":"` + id + `","model":"claude-sonnet-4-5","content":[{"type":"text","text":` + quote(text) + `}]},"parent_tool_use_id":null,"session_id":"s1"}`
}

func quote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\n':
			b.WriteString(`\n`)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

func decodeString(t *testing.T, s string) (agent.Result, *agenttest.Recorder) {
	t.Helper()
	rec := &agenttest.Recorder{}
	res, err := Claude{}.Decode(strings.NewReader(s), rec)
	if err != nil {
		t.Fatal(err)
	}
	return res, rec
}

func TestClaudeDecodeCacheTokensAndCost(t *testing.T) {
	res, _ := decodeString(t, lines(initLine, resultLine))
	if res.InputTokens != 115 || res.OutputTokens != 7 || res.CostUSD == nil || *res.CostUSD != 0.5 {
		t.Fatalf("tokens %d/%d cost %v", res.InputTokens, res.OutputTokens, res.CostUSD)
	}
}

func TestClaudeDecodeNotLoggedIn(t *testing.T) {
	// docs/AGENTS.md, "Claude Code": assistant error authentication_failed, then an
	// is_error result with subtype success.
	stream := lines(initLine,
		`{"type":"assistant","message":{"id":"m1","model":"<synthetic>","content":[{"type":"text","text":"Not logged in · Please run /login"}]},"parent_tool_use_id":null,"session_id":"s1","error":"authentication_failed"}`,
		`{"type":"result","subtype":"success","is_error":true,"num_turns":1,"result":"Not logged in · Please run /login","session_id":"s1","total_cost_usd":0}`)
	res, _ := decodeString(t, stream)
	if !res.IsError || res.Fatal == "" || !strings.Contains(res.Fatal, "log in") {
		t.Fatalf("IsError %v Fatal %q", res.IsError, res.Fatal)
	}
	if len(res.Errors) != 1 || !strings.HasPrefix(res.Errors[0], "Not logged in") {
		t.Fatalf("Errors = %q", res.Errors)
	}
	// The same without a result line (the process died): still fatal.
	res, _ = decodeString(t, lines(initLine,
		`{"type":"assistant","message":{"id":"m1","model":"<synthetic>","content":[{"type":"text","text":"Invalid API key"}]},"session_id":"s1","error":"authentication_failed"}`))
	if res.SawResult || res.Fatal == "" || len(res.Errors) != 1 || res.Errors[0] != "Invalid API key" {
		t.Fatalf("SawResult %v Fatal %q Errors %q", res.SawResult, res.Fatal, res.Errors)
	}
	// A transient API error is not fatal.
	res, _ = decodeFile(t, "claude-stream-json-api-error.ndjson")
	if res.Fatal != "" {
		t.Fatalf("Fatal = %q for a server error", res.Fatal)
	}
}

func TestClaudeDecodeFallbackTextIsLastMainMessage(t *testing.T) {
	stream := lines(initLine,
		assistantText("m1", "first"),
		assistantText("m2", "second part one"),
		`{"type":"assistant","message":{"id":"m2","content":[{"type":"tool_use","id":"t","name":"Bash","input":{"command":"ls\n-la"}}]},"parent_tool_use_id":null}`,
		assistantText("m2", "<promise>COMPLETE</promise>"),
		// A subagent's message is shown but never the final text.
		`{"type":"assistant","message":{"id":"sub","content":[{"type":"text","text":"subagent says"}]},"parent_tool_use_id":"toolu_1"}`,
		`{"type":"result","subtype":"error_max_turns","is_error":true,"num_turns":9,"errors":["Reached maximum number of turns (9)"]}`)
	res, rec := decodeString(t, stream)
	if res.Text != "second part one\n<promise>COMPLETE</promise>" {
		t.Fatalf("Text = %q", res.Text)
	}
	if res.Promise().Kind != agent.PromiseNone {
		t.Fatalf("an error result must give no promise, got %+v", res.Promise())
	}
	if !slices.Equal(rec.Tools, []string{"Bash: ls -la"}) || len(rec.Texts) != 4 {
		t.Fatalf("tools %q texts %q", rec.Tools, rec.Texts)
	}
	if res.Model != "claude-sonnet-4-5" || res.SessionID != "s1" {
		t.Fatalf("Model %q SessionID %q", res.Model, res.SessionID)
	}
}

func TestClaudeDecodeToleratesOddLines(t *testing.T) {
	stream := "\r\n" + initLine + "\r\n" +
		`{"type":"assistant","message":{"id":"m1","content":"not an array"}}` + "\n" +
		`{"type":"assistant","message":null}` + "\n" +
		`{"type":"assistant"}` + "\n" +
		`{"type":"assistant","message":{"id":"m2","content":[{"type":"tool_use","name":"Write","input":"oops"},{"type":"tool_use","name":"Mystery"},{"type":"text","text":7}]}}` + "\n" +
		`[1,2,3]` + "\n" + `"a string"` + "\n" + `{"type":` + "\n" + `{"type":"result"` + "\n" +
		// A field of the wrong type spoils only that field.
		`{"type":"result","subtype":"success","is_error":false,"num_turns":"three","result":"ok\r\n<promise>COMPLETE</promise>\r\n","errors":[1],"usage":7,"total_cost_usd":"x"}` + "\r\n" +
		"\x00\xff garbage"
	res, rec := decodeString(t, stream)
	if !res.SawResult || res.Promise().Kind != agent.PromiseComplete || res.Turns != 0 || res.CostUSD != nil {
		t.Fatalf("res = %+v", res)
	}
	if !slices.Equal(rec.Tools, []string{"Write: ", "Mystery: "}) {
		t.Fatalf("tools %q", rec.Tools)
	}
}

func TestClaudeDecodeLongLineSkipped(t *testing.T) {
	big := strings.Repeat("y", agent.MaxLine+10)
	stream := lines(initLine, assistantText("m1", "before"), assistantText("m2", big), assistantText("m3", "after"), resultLine)
	var log bytes.Buffer
	rec := &agenttest.Recorder{}
	res, err := Claude{}.Decode(io.TeeReader(strings.NewReader(stream), &log), rec)
	if err != nil {
		t.Fatal(err)
	}
	if log.String() != stream {
		t.Fatalf("the reader was not consumed whole: %d of %d bytes", log.Len(), len(stream))
	}
	if !slices.Equal(rec.Texts, []string{"before", "after"}) {
		t.Fatalf("texts %d", len(rec.Texts))
	}
	if !res.SawResult || res.Promise().Kind != agent.PromiseComplete {
		t.Fatalf("res = %+v", res)
	}
	// A line just under the limit is decoded.
	okText := strings.Repeat("z", agent.MaxLine-200)
	res, rec = decodeString(t, lines(initLine, assistantText("m1", okText)))
	if len(rec.Texts) != 1 || len(rec.Texts[0]) != len(okText) {
		t.Fatalf("a %d-byte line was not decoded", len(okText))
	}
	if len(res.Text) != agent.MaxText {
		t.Fatalf("Text is %d bytes, want it bounded to %d", len(res.Text), agent.MaxText)
	}
}

func TestClaudeDecodeReadError(t *testing.T) {
	boom := errors.New("boom")
	r := io.MultiReader(strings.NewReader(lines(initLine, assistantText("m1", "hi"))), errReader{boom})
	res, err := Claude{}.Decode(r, nil)
	if !errors.Is(err, boom) {
		t.Fatalf("err = %v", err)
	}
	if res.Text != "hi" || res.SessionID != "s1" {
		t.Fatalf("res = %+v", res)
	}
}

type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }

func TestClaudeDecodeBoundedLists(t *testing.T) {
	var errs []string
	for range 100 {
		errs = append(errs, quote(strings.Repeat("e", 5000)))
	}
	res, _ := decodeString(t, lines(`{"type":"result","subtype":"error_during_execution","is_error":true,"errors":[`+strings.Join(errs, ",")+`]}`))
	if len(res.Errors) != agent.MaxErrors {
		t.Fatalf("%d errors", len(res.Errors))
	}
	for _, e := range res.Errors {
		if len(e) > agent.MaxErrorLen+len("…") {
			t.Fatalf("error of %d bytes", len(e))
		}
	}
}

func TestClaudeArgv(t *testing.T) {
	got := Claude{}.Argv(agent.Request{Prompt: "ignored", Model: "opus", Args: []string{"--max-turns", "30"}})
	want := []string{"claude", "-p", "--output-format", "stream-json", "--verbose", "--dangerously-skip-permissions",
		"--model", "opus", "--max-turns", "30"}
	if !slices.Equal(got, want) {
		t.Fatalf("Argv = %q", got)
	}
	if got := (Claude{}).Argv(agent.Request{}); slices.Contains(got, "--model") {
		t.Fatalf("Argv without a model = %q", got)
	}
}

func TestClaudeDiagnose(t *testing.T) {
	for _, tc := range []struct {
		stderr, want string
	}{
		{"--dangerously-skip-permissions cannot be used with root/sudo privileges for security reasons\n", "IS_SANDBOX=1"},
		{"error: unknown option '--frobnicate'\n", "--frobnicate"},
		{"Error: When using --print, --output-format=stream-json requires --verbose\n", "requires --verbose"},
		{"some other crash\n", ""},
	} {
		res := agent.Result{Stderr: tc.stderr, ExitCode: 1}
		Claude{}.Diagnose(&res)
		if (tc.want == "") != (res.Fatal == "") || !strings.Contains(res.Fatal, tc.want) {
			t.Errorf("stderr %q: Fatal = %q, want it to mention %q", tc.stderr, res.Fatal, tc.want)
		}
	}
	// A run that produced a result is judged by it, not by stderr noise.
	res := agent.Result{SawResult: true, Stderr: "cannot be used with root/sudo privileges"}
	Claude{}.Diagnose(&res)
	if res.Fatal != "" {
		t.Fatalf("Fatal = %q", res.Fatal)
	}
}

func TestToolSummary(t *testing.T) {
	long := strings.Repeat("x", 300)
	for _, tc := range []struct {
		name string
		in   *toolInput
		want string
	}{
		{"Bash", &toolInput{Command: "go test ./...\n\techo  done", Description: "Run tests"}, "go test ./... echo done"},
		{"Read", &toolInput{FilePath: "/a/b.go"}, "/a/b.go"},
		{"Grep", &toolInput{Pattern: "func main", Path: "cmd"}, "func main in cmd"},
		{"WebFetch", &toolInput{URL: "https://example.com"}, "https://example.com"},
		{"Task", &toolInput{Description: "explore"}, "explore"},
		{"mcp__x__y", &toolInput{Query: "q"}, "q"},
		{"Bash", &toolInput{Command: "\x1b[31mred\x1b[0m"}, "[31mred [0m"},
		{"TodoWrite", &toolInput{}, ""},
		{"Bash", nil, ""},
	} {
		if got := toolSummary(tc.name, tc.in); got != tc.want {
			t.Errorf("toolSummary(%s, %+v) = %q, want %q", tc.name, tc.in, got, tc.want)
		}
	}
	got := toolSummary("Bash", &toolInput{Command: long})
	if n := len([]rune(got)); n != agent.MaxSummary || !strings.HasSuffix(got, "…") {
		t.Fatalf("long summary: %d runes %q", n, got)
	}
}

func FuzzClaudeDecode(f *testing.F) {
	files, _ := filepath.Glob("../testdata/*claude*")
	for _, name := range files {
		data, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		if len(data) < 64<<10 {
			f.Add(data)
		}
	}
	f.Add([]byte(lines(initLine, resultLine)))
	f.Fuzz(func(t *testing.T, data []byte) {
		res, err := Claude{}.Decode(bytes.NewReader(data), &agenttest.Recorder{})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Text) > agent.MaxText || len(res.Errors) > agent.MaxErrors || len(res.Denials) > agent.MaxErrors {
			t.Fatalf("unbounded result: text %d, errors %d", len(res.Text), len(res.Errors))
		}
		_ = res.Promise()
	})
}

func TestClaudeClassification(t *testing.T) {
	res, _ := decodeFile(t, "claude-stream-json-api-error.ndjson")
	if res.Class != agent.ClassTransient || res.Fatal != "" {
		t.Fatalf("api error: Class %v Fatal %q", res.Class, res.Fatal)
	}
	for _, f := range []string{"claude-stream-json-complete.ndjson", "claude-stream-json-error-max-turns.ndjson",
		"claude-stream-json-error-max-budget.ndjson", "claude-stream-json-killed-sigterm.ndjson"} {
		if res, _ := decodeFile(t, f); res.Class != agent.ClassNone {
			t.Errorf("%s: Class %v", f, res.Class)
		}
	}
	limit := lines(initLine,
		`{"type":"assistant","message":{"id":"m1","model":"<synthetic>","content":[{"type":"text","text":"Claude AI usage limit reached|1795644000"}]},"parent_tool_use_id":null,"session_id":"s1","error":"rate_limit"}`,
		`{"type":"result","subtype":"success","is_error":true,"num_turns":1,"result":"Claude AI usage limit reached|1795644000","session_id":"s1","total_cost_usd":0}`)
	res, _ = decodeString(t, limit)
	if res.Class != agent.ClassLimit || !res.RetryAt.Equal(time.Unix(1795644000, 0)) || res.Fatal != "" {
		t.Fatalf("limit: %+v", res)
	}
	overloaded := lines(initLine,
		`{"type":"result","subtype":"success","is_error":true,"api_error_status":529,"num_turns":1,"result":"API Error: Repeated 529 Overloaded errors","session_id":"s1"}`)
	if res, _ = decodeString(t, overloaded); res.Class != agent.ClassTransient {
		t.Fatalf("overloaded: %+v", res)
	}
	// An API error the agent got past does not classify a later error.
	recovered := lines(initLine,
		`{"type":"assistant","message":{"id":"m1","model":"<synthetic>","content":[{"type":"text","text":"API Error: 500"}]},"parent_tool_use_id":null,"error":"server_error"}`,
		assistantText("m2", "carrying on"),
		`{"type":"result","subtype":"error_max_turns","is_error":true,"num_turns":9,"errors":["Reached maximum number of turns (9)"]}`)
	if res, _ = decodeString(t, recovered); res.Class != agent.ClassNone {
		t.Fatalf("recovered: %+v", res)
	}
	// Text inside tool results or earlier messages never classifies.
	quiet := lines(initLine, assistantText("m1", "rate limit exceeded, API Error: 500, Please run /login"),
		`{"type":"user","message":{"role":"user","content":[{"type":"tool_result","content":"HTTP 429 Too Many Requests"}]}}`,
		resultLine)
	if res, _ = decodeString(t, quiet); res.Class != agent.ClassNone || res.Fatal != "" {
		t.Fatalf("transcript text classified the run: %+v", res)
	}
}

// A sandboxed Claude Code gets a CLAUDE_CONFIG_DIR of its own, with copies of the
// user's login, settings, memory and .claude.json: from CLAUDE_CONFIG_DIR, which then
// holds .claude.json too, else ~/.claude and ~/.claude.json.
func TestClaudeOwnState(t *testing.T) {
	for env, want := range map[string][]string{
		"HOME=/h": {"/h/.claude/.credentials.json>.credentials.json", "/h/.claude/settings.json>settings.json",
			"/h/.claude/CLAUDE.md>CLAUDE.md", "/h/.claude.json>.claude.json"},
		"CLAUDE_CONFIG_DIR=/c": {"/c/.credentials.json>.credentials.json", "/c/settings.json>settings.json",
			"/c/CLAUDE.md>CLAUDE.md", "/c/.claude.json>.claude.json"},
	} {
		st := Claude{}.OwnState([]string{"HOME=/h", env})
		var from []string
		for _, f := range st.Files {
			from = append(from, f.From+">"+f.Name)
		}
		if st.Var != "CLAUDE_CONFIG_DIR" || !slices.Equal(from, want) {
			t.Errorf("%s: %s %q, want %q", env, st.Var, from, want)
		}
	}
}
