package agent

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

func decodeWith(t *testing.T, d Driver, name string) (Result, *Recorder) {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rec := &Recorder{}
	res, err := d.Decode(f, rec)
	if err != nil {
		t.Fatalf("Decode(%s): %v", name, err)
	}
	return res, rec
}

// Want is what decoding a transcript must give.
type Want struct {
	Saw, IsError bool
	Promise      Promise
	Text         string   // exact, or a prefix when it ends in "…"
	Errors       []string // each exact or a prefix
	Class        FailureClass
	RetryAfter   time.Duration
	Fatal        bool
	Turns        int
	In, Out      int64
	Cost         float64 // -1: nil
	Session      string
	Model        string
	Texts        int      // Text events
	Tools        []string // Tool events, "name: summary"
	Terminals    int
}

func Check(t *testing.T, res Result, rec *Recorder, w Want) {
	t.Helper()
	if res.SawResult != w.Saw || res.IsError != w.IsError {
		t.Errorf("SawResult, IsError = %v, %v; want %v, %v", res.SawResult, res.IsError, w.Saw, w.IsError)
	}
	if got := res.Promise(); got != w.Promise {
		t.Errorf("Promise() = %+v, want %+v", got, w.Promise)
	}
	if !MatchText(res.Text, w.Text) {
		t.Errorf("Text = %q, want %q", res.Text, w.Text)
	}
	if len(res.Errors) != len(w.Errors) {
		t.Errorf("Errors = %q, want %q", res.Errors, w.Errors)
	} else {
		for i := range w.Errors {
			if !MatchText(res.Errors[i], w.Errors[i]) {
				t.Errorf("Errors[%d] = %q, want %q", i, res.Errors[i], w.Errors[i])
			}
		}
	}
	if res.Class != w.Class || res.RetryAfter != w.RetryAfter {
		t.Errorf("Class, RetryAfter = %v, %v; want %v, %v", res.Class, res.RetryAfter, w.Class, w.RetryAfter)
	}
	if (res.Fatal != "") != w.Fatal {
		t.Errorf("Fatal = %q, want set: %v", res.Fatal, w.Fatal)
	}
	if res.Turns != w.Turns || res.InputTokens != w.In || res.OutputTokens != w.Out {
		t.Errorf("Turns, InputTokens, OutputTokens = %d, %d, %d; want %d, %d, %d",
			res.Turns, res.InputTokens, res.OutputTokens, w.Turns, w.In, w.Out)
	}
	switch {
	case w.Cost < 0 && res.CostUSD != nil:
		t.Errorf("CostUSD = %v, want nil", *res.CostUSD)
	case w.Cost >= 0 && res.CostUSD == nil:
		t.Errorf("CostUSD = nil, want %v", w.Cost)
	case w.Cost >= 0 && math.Abs(*res.CostUSD-w.Cost) > 1e-9:
		t.Errorf("CostUSD = %v, want %v", *res.CostUSD, w.Cost)
	}
	if res.SessionID != w.Session || res.Model != w.Model {
		t.Errorf("SessionID, Model = %q, %q; want %q, %q", res.SessionID, res.Model, w.Session, w.Model)
	}
	if rec != nil {
		if len(rec.Texts) != w.Texts {
			t.Errorf("Text events = %q, want %d", rec.Texts, w.Texts)
		}
		if !slices.Equal(rec.Tools, w.Tools) {
			t.Errorf("Tool events = %q, want %q", rec.Tools, w.Tools)
		}
		if rec.Terminals != w.Terminals {
			t.Errorf("Terminal events = %d, want %d", rec.Terminals, w.Terminals)
		}
	}
}

var (
	Complete     = Promise{Kind: PromiseComplete}
	CompleteText = "Created hello.txt and committed it.\n\n<promise>COMPLETE</promise>"
	FailedTests  = Promise{Kind: PromiseFailed, Reason: "tests did not pass"}
	FailedText   = "I could not finish.\n\n<promise>FAILED: tests did not pass</promise>"
	EchoFailed   = Promise{Kind: PromiseFailed, Reason: "go test ./... fails in pkg/loop"}
	EchoText     = "Tests still fail.\n\n<promise>FAILED: go test ./... fails in pkg/loop</promise>"
)

func TestCodexDecodeSamples(t *testing.T) {
	const (
		tid      = "01a2148c-6ed2-7240-b153-d188f72b1213"
		edit     = "edit: /home/user/repo/repo2/hello.txt"
		shell    = `shell: git add hello.txt && git commit -q -m "feat: add hello.txt"`
		starting = "I'll create the greeting file."
	)
	for _, tc := range []struct {
		file string
		want Want
	}{
		{"codex-exec-json-complete.ndjson", Want{Saw: true, Promise: Complete, Text: CompleteText,
			In: 7206, Out: 264, Cost: -1, Session: "01a2148c-6ed2-7240-b153-d188f72b1213",
			Texts: 2, Tools: []string{edit, shell}, Terminals: 1}},
		{"codex-exec-json-complete-shell-only.ndjson", Want{Saw: true, Promise: Complete, Text: CompleteText,
			In: 7206, Out: 264, Cost: -1, Session: "01a2148b-f063-7c02-ad12-672a7a440410", Texts: 2,
			Tools: []string{`shell: printf 'hello from the mock model\n' > hello.txt`, shell}, Terminals: 1}},
		{"codex-exec-json-failed-signal.ndjson", Want{Saw: true, Promise: FailedTests, Text: FailedText,
			In: 7206, Out: 264, Cost: -1, Session: "01a2148c-f060-71a0-8dd2-254d610da71c",
			Texts: 2, Tools: []string{edit, shell}, Terminals: 1}},
		{"codex-exec-json-command-failed.ndjson", Want{Saw: true, Promise: Promise{Kind: PromiseFailed, Reason: "ls failed"},
			Text: "Command failed.\n\n<promise>FAILED: ls failed</promise>", In: 4811, Out: 176, Cost: -1,
			Session: "01a2149b-c8ce-7692-b725-98ecb608ee34", Texts: 1,
			Tools: []string{"shell: ls /nonexistent-dir; exit 3"}, Terminals: 1}},
		{"codex-exec-json-turn-failed.ndjson", Want{Saw: true, IsError: true,
			Errors: []string{`{"error":{"message":"mock: invalid request","type":"invalid_request_error","code":"bad"}}`},
			Cost:   -1, Session: "01a2148c-ebf9-76c0-9b24-89d4a9dc4b4a", Terminals: 1}},
		{"codex-exec-json-killed-sigterm.ndjson", Want{Cost: -1, Session: "01a2148d-07af-7d70-b809-6445713365fd"}},
		{"codex-exec-json-readonly-sandbox-silent-rejects.ndjson", Want{Saw: true, Promise: Complete, Text: CompleteText,
			In: 7215, Out: 264, Cost: -1, Session: "01a2148c-92f5-7ef3-8d9e-713212a1b12c", Texts: 2, Terminals: 1}},
		{"codex-exec-resume-json.ndjson", Want{Saw: true, Promise: Complete, Text: CompleteText,
			In: 9634, Out: 352, Cost: -1, Session: "01a2148d-7cf6-7be3-bff7-ddc5db58d127", Texts: 1, Terminals: 1}},
		{"synthetic-codex-garbage-lines.ndjson", Want{Saw: true, Promise: Complete, Text: CompleteText,
			In: 7206, Out: 264, Cost: -1, Session: tid, Texts: 2, Tools: []string{edit, shell}, Terminals: 1}},
		{"synthetic-codex-no-signal.ndjson", Want{Saw: true, Text: "Created hello.txt and committed it.",
			In: 7206, Out: 264, Cost: -1, Session: tid, Texts: 2, Tools: []string{edit, shell}, Terminals: 1}},
		{"synthetic-codex-promise-echo-then-failed.ndjson", Want{Saw: true, Promise: EchoFailed, Text: EchoText,
			In: 7206, Out: 264, Cost: -1, Session: tid, Texts: 2, Tools: []string{"shell: cat PROMPT.md"}, Terminals: 1}},
		{"synthetic-codex-crash-midstream.ndjson", Want{Text: starting, Cost: -1, Session: tid, Texts: 1}},
		{"synthetic-codex-api-error-5xx.ndjson", Want{Saw: true, IsError: true, Class: ClassTransient,
			Errors: []string{"exceeded retry limit, last status: 500 Internal Server Error"}, Cost: -1, Session: tid, Terminals: 1}},
		{"synthetic-codex-usage-limit.ndjson", Want{Saw: true, IsError: true, Class: ClassLimit,
			RetryAfter: 2*time.Hour + 5*time.Minute, Errors: []string{"You've hit your usage limit.…"}, Cost: -1, Session: tid, Terminals: 1}},
		{"synthetic-codex-auth.ndjson", Want{Saw: true, IsError: true, Class: ClassAuth, Fatal: true,
			Errors: []string{"unexpected status 401 Unauthorized…"}, Cost: -1, Session: tid, Terminals: 1}},
	} {
		t.Run(tc.file, func(t *testing.T) {
			res, rec := decodeWith(t, Codex{}, tc.file)
			Check(t, res, rec, tc.want)
		})
	}
}

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

func TestOpenCodeDecodeSamples(t *testing.T) {
	const ses = "ses_deb6dddddffeZwjRg16U1TPchY"
	write := "write: /home/user/repo/repo3/hello.txt"
	commit := `bash: git add hello.txt && git commit -q -m "feat: add hello.txt"`
	for _, tc := range []struct {
		file string
		want Want
	}{
		{"opencode-run-format-json-complete.ndjson", Want{Saw: true, Promise: Complete, Text: CompleteText,
			Turns: 3, In: 1202 + 1203 + 1204, Out: 57 * 3, Cost: 0.004461 + 0.004464 + 0.004467, Session: ses,
			Texts: 2, Tools: []string{write, commit}, Terminals: 1}},
		// Rejected permissions end the run without a final step: no result.
		{"opencode-run-format-json-permission-auto-rejected.ndjson", Want{Text: "I'll create the greeting file.",
			Turns: 2, In: 1214 + 1215, Out: 114, Cost: 0.004497 + 0.0045, Session: "ses_deb6a7d66ffeVB9bPNTNjy5Gss",
			Texts: 1, Tools: []string{write, commit}}},
		{"opencode-run-format-json-api-error.ndjson", Want{Saw: true, IsError: true, Class: ClassTransient,
			Errors: []string{"HTTP 500: Internal server error (mock)"}, Cost: -1, Session: "ses_deb6c1276ffedZM0wKvly3cBgz", Terminals: 1}},
		{"synthetic-opencode-failed.ndjson", Want{Saw: true, Promise: FailedTests, Text: FailedText,
			Turns: 2, In: 2404, Out: 114, Cost: 2 * 0.004461, Session: ses, Texts: 2,
			Tools: []string{write}, Terminals: 1}},
		{"synthetic-opencode-promise-echo-then-failed.ndjson", Want{Saw: true, Promise: EchoFailed, Text: EchoText,
			Turns: 2, In: 2404, Out: 114, Cost: 2 * 0.004461, Session: ses, Texts: 2,
			Tools: []string{"bash: cat PROMPT.md"}, Terminals: 1}},
		{"synthetic-opencode-killed.ndjson", Want{Text: "I'll create the greeting file.", Cost: -1, Session: ses,
			Texts: 1, Tools: []string{write}}},
		{"synthetic-opencode-garbage-lines.ndjson", Want{Saw: true, Promise: Complete, Text: CompleteText,
			Turns: 2, In: 2404, Out: 114, Cost: 2 * 0.004461, Session: ses, Texts: 2, Terminals: 1}},
		{"synthetic-opencode-rate-limit.ndjson", Want{Saw: true, IsError: true, Class: ClassLimit, RetryAfter: 30 * time.Second,
			Errors: []string{"HTTP 429: Rate limit exceeded: retry after 30 seconds"}, Cost: -1, Session: ses, Terminals: 1}},
		{"synthetic-opencode-overloaded.ndjson", Want{Saw: true, IsError: true, Class: ClassTransient,
			Errors: []string{"HTTP 529: Overloaded"}, Cost: -1, Session: ses, Terminals: 1}},
		{"synthetic-opencode-auth.ndjson", Want{Saw: true, IsError: true, Class: ClassAuth, Fatal: true,
			Errors: []string{"invalid x-api-key"}, Cost: -1, Session: ses, Terminals: 1}},
	} {
		t.Run(tc.file, func(t *testing.T) {
			res, rec := decodeWith(t, OpenCode{}, tc.file)
			Check(t, res, rec, tc.want)
		})
	}
}

func TestAmpDecodeSamples(t *testing.T) {
	const th = "T-5f3c1a9e-2b7d-4c8e-9f10-1234567890ab"
	for _, tc := range []struct {
		file string
		want Want
	}{
		{"synthetic-amp-complete.ndjson", Want{Saw: true, Promise: Complete, Text: CompleteText, Turns: 3,
			In: 4 * 1300, Out: 4 * 57, Cost: -1, Session: th, Texts: 2,
			Tools:     []string{"create_file: /home/user/repo/repo5/hello.txt", `Bash: git add hello.txt && git commit -q -m "feat: add hello.txt"`},
			Terminals: 1}},
		{"synthetic-amp-failed.ndjson", Want{Saw: true, Promise: FailedTests, Text: FailedText, Turns: 2,
			In: 2 * 1300, Out: 2 * 57, Cost: -1, Session: th, Texts: 1, Tools: []string{"Bash: go test ./..."}, Terminals: 1}},
		{"synthetic-amp-promise-echo-then-failed.ndjson", Want{Saw: true, Promise: EchoFailed, Text: EchoText, Turns: 2,
			In: 3 * 1300, Out: 3 * 57, Cost: -1, Session: th, Texts: 2, Tools: []string{"Bash: cat PROMPT.md"}, Terminals: 1}},
		{"synthetic-amp-api-error.ndjson", Want{Saw: true, IsError: true, Class: ClassTransient, Turns: 1,
			Errors: []string{"API Error: 529 …"}, Cost: -1, Session: th, Terminals: 1}},
		{"synthetic-amp-rate-limit.ndjson", Want{Saw: true, IsError: true, Class: ClassLimit, RetryAfter: 15 * time.Minute,
			Turns: 1, Errors: []string{"Rate limit exceeded. Please try again in 15 minutes."}, Cost: -1, Session: th, Terminals: 1}},
		{"synthetic-amp-killed.ndjson", Want{Text: "I'll create the greeting file.", In: 1300, Out: 57, Cost: -1, Session: th, Texts: 1}},
		{"synthetic-amp-garbage-lines.ndjson", Want{Saw: true, Promise: Complete, Text: CompleteText, Turns: 1,
			In: 2 * 1300, Out: 2 * 57, Cost: -1, Session: th, Texts: 2, Terminals: 1}},
	} {
		t.Run(tc.file, func(t *testing.T) {
			res, rec := decodeWith(t, Amp{}, tc.file)
			Check(t, res, rec, tc.want)
		})
	}
}

func TestCursorDecodeSamples(t *testing.T) {
	const cs = "c6b62c6f-7ead-4fd6-9922-e952131177ff"
	const model = "Claude 4 Sonnet"
	for _, tc := range []struct {
		file string
		want Want
	}{
		{"synthetic-cursor-complete.ndjson", Want{Saw: true, Promise: Complete, Text: CompleteText, Cost: -1,
			Session: cs, Model: model, Texts: 2,
			Tools:     []string{"write: /home/user/repo/repo6/hello.txt", `shell: git add hello.txt && git commit -q -m "feat: add hello.txt"`},
			Terminals: 1}},
		{"synthetic-cursor-failed.ndjson", Want{Saw: true, Promise: FailedTests, Text: FailedText, Cost: -1,
			Session: cs, Model: model, Texts: 1, Tools: []string{"shell: go test ./..."}, Terminals: 1}},
		{"synthetic-cursor-promise-echo-then-failed.ndjson", Want{Saw: true, Promise: EchoFailed, Text: EchoText, Cost: -1,
			Session: cs, Model: model, Texts: 2, Tools: []string{"shell: cat PROMPT.md"}, Terminals: 1}},
		// result.result holds the echoed instruction too; only the text after
		// the last tool call counts, so there is no COMPLETE.
		{"synthetic-cursor-echo-then-no-signal.ndjson", Want{Saw: true, Text: "Created hello.txt.", Cost: -1,
			Session: cs, Model: model, Texts: 2, Tools: []string{"shell: cat PROMPT.md"}, Terminals: 1}},
		{"synthetic-cursor-killed.ndjson", Want{Cost: -1, Session: cs, Model: model,
			Texts: 1, Tools: []string{"write: /home/user/repo/repo6/hello.txt"}}},
		{"synthetic-cursor-garbage-lines.ndjson", Want{Saw: true, Promise: Complete, Text: CompleteText, Cost: -1,
			Session: cs, Model: model, Texts: 1, Terminals: 1}},
	} {
		t.Run(tc.file, func(t *testing.T) {
			res, rec := decodeWith(t, Cursor{}, tc.file)
			Check(t, res, rec, tc.want)
		})
	}
}

// TestCustomClaudeFormatDecodesLikeClaude: a custom agent speaking Claude's
// stream gets the same result from every claude transcript, with its own
// fatal messages.
func TestCustomClaudeFormatDecodesLikeClaude(t *testing.T) {
	files, _ := filepath.Glob("testdata/*claude*")
	c := Custom{Command: []string{"agent"}, Format: FormatClaudeStreamJSON}
	for _, name := range files {
		want, _ := decodeWith(t, Claude{}, filepath.Base(name))
		got, _ := decodeWith(t, c, filepath.Base(name))
		if want.Fatal != "" && got.Fatal == "" {
			t.Errorf("%s: Fatal lost", name)
		}
		want.Fatal, got.Fatal = "", ""
		if (want.CostUSD == nil) != (got.CostUSD == nil) || want.CostUSD != nil && *want.CostUSD != *got.CostUSD {
			t.Errorf("%s: CostUSD differs", name)
		}
		want.CostUSD, got.CostUSD = nil, nil
		if fmt.Sprint(want) != fmt.Sprint(got) {
			t.Errorf("%s:\n custom %+v\n claude %+v", name, got, want)
		}
	}
}

func TestCustomTextDecode(t *testing.T) {
	long := strings.Repeat("x", 10000)
	stream := "Working on story 1.\r\n\n" + "The prompt says <promise>COMPLETE</promise> when done.\n" +
		long + "\n" + "<promise>FAILED: blocked</promise>\n" + "bye"
	rec := &Recorder{}
	res, err := Custom{Command: []string{"a"}}.Decode(strings.NewReader(stream), rec)
	if err != nil {
		t.Fatal(err)
	}
	if res.Text != stream || res.SawResult {
		t.Fatalf("Text %q… SawResult %v", res.Text[:20], res.SawResult)
	}
	if len(rec.Texts) != 5 || rec.Texts[0] != "Working on story 1." || rec.Texts[4] != "bye" ||
		len(rec.Texts[2]) != maxShownLine+len("…") || rec.Terminals != 0 {
		t.Fatalf("texts %d %q", len(rec.Texts), rec.Texts[0])
	}
	// The clean exit is the terminal event.
	c := Custom{Command: []string{"a"}}
	c.Diagnose(&res)
	if !res.SawResult || res.Promise() != (Promise{Kind: PromiseFailed, Reason: "blocked"}) {
		t.Fatalf("after Diagnose: SawResult %v Promise %+v", res.SawResult, res.Promise())
	}
	for _, bad := range []Result{{ExitCode: 1}, {ExitCode: -1, Signal: "killed"}, {TimedOut: true}, {Idle: true}, {Interrupted: true}} {
		c.Diagnose(&bad)
		if bad.SawResult {
			t.Errorf("%+v counted as a result", bad)
		}
	}
	// Only the last 64 KiB are kept: the promise must be near the end.
	big := "<promise>COMPLETE</promise>\n" + strings.Repeat("y\n", MaxText)
	res, _ = Custom{}.Decode(strings.NewReader(big), nil)
	if len(res.Text) != MaxText || ParsePromise(res.Text).Kind != PromiseNone {
		t.Fatalf("Text %d bytes", len(res.Text))
	}
	// Invalid UTF-8 does not reach the Result.
	res, _ = Custom{}.Decode(strings.NewReader("a\xff\xfeb\n<promise>COMPLETE</promise>\n"), nil)
	if res.Text != "a\uFFFDb\n<promise>COMPLETE</promise>\n" {
		t.Fatalf("Text %q", res.Text)
	}
}

// TestDecodeLongAndGarbageLines feeds every driver a stream with a 300 KB
// line, a line longer than the decode limit and lines that are not JSON,
// around a complete transcript.
func TestDecodeLongAndGarbageLines(t *testing.T) {
	big300 := strings.Repeat("y", 300<<10)
	huge := strings.Repeat("z", MaxLine+10)
	for _, tc := range []struct {
		d             Driver
		sample        string
		bigLine       string // a valid event carrying big300 (or %s)
		wantTextsPlus int
	}{
		{Codex{}, "codex-exec-json-complete.ndjson", `{"type":"item.completed","item":{"id":"item_9","type":"agent_message","text":"%s"}}`, 1},
		{Gemini{}, "gemini-stream-json-complete.ndjson", `{"type":"tool_use","tool_name":"write_file","tool_id":"t9","parameters":{"file_path":"big.txt","content":"%s"}}`, 0},
		{OpenCode{}, "opencode-run-format-json-complete.ndjson", `{"type":"tool_use","sessionID":"ses_deb6dddddffeZwjRg16U1TPchY","part":{"type":"tool","tool":"write","state":{"status":"completed","input":{"filePath":"big.txt","content":"%s"}}}}`, 0},
		{Amp{}, "synthetic-amp-complete.ndjson", `{"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":"%s"}]},"session_id":"T-1"}`, 0},
		{Cursor{}, "synthetic-cursor-complete.ndjson", `{"type":"tool_call","subtype":"completed","call_id":"x","tool_call":{"writeToolCall":{"args":{"path":"big.txt","fileText":"%s"}}}}`, 0},
	} {
		t.Run(tc.d.Name(), func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join("testdata", tc.sample))
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
			rec := &Recorder{}
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
	files, _ := filepath.Glob("testdata/*")
	for _, d := range []Driver{Amp{}, Claude{}, Codex{}, Cursor{}, Gemini{}, OpenCode{}, Custom{}, Custom{Format: FormatClaudeStreamJSON}} {
		for _, name := range files {
			data, err := os.ReadFile(name)
			if err != nil || len(data) > 64<<10 {
				continue
			}
			for _, cut := range []int{1, len(data) / 3, len(data) / 2, len(data) - 1} {
				res, err := d.Decode(bytes.NewReader(data[:cut]), &Recorder{})
				if err != nil || len(res.Text) > MaxText || len(res.Errors) > MaxErrors {
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
	req := Request{Prompt: "never in argv", Model: "M", Args: []string{"--extra", "x"}}
	for _, tc := range []struct {
		d          Driver
		want, bare []string
	}{
		{Codex{}, []string{"codex", "exec", "--json", "--dangerously-bypass-approvals-and-sandbox", "-m", "M",
			"--output-last-message", "<temporary file>", "--extra", "x", "-"},
			[]string{"codex", "exec", "--json", "--dangerously-bypass-approvals-and-sandbox", "--output-last-message", "<temporary file>", "-"}},
		{Gemini{}, []string{"gemini", "--output-format", "stream-json", "--yolo", "--skip-trust", "-m", "M", "--extra", "x"},
			[]string{"gemini", "--output-format", "stream-json", "--yolo", "--skip-trust"}},
		{OpenCode{}, []string{"opencode", "run", "--format", "json", "--auto", "-m", "M", "--extra", "x"},
			[]string{"opencode", "run", "--format", "json", "--auto"}},
		{Amp{}, []string{"amp", "--dangerously-allow-all", "-x", "--stream-json", "--mode", "M", "--extra", "x"},
			[]string{"amp", "--dangerously-allow-all", "-x", "--stream-json"}},
		{Cursor{}, []string{"cursor-agent", "-p", "--output-format", "stream-json", "--force", "--trust", "--model", "M", "--extra", "x"},
			[]string{"cursor-agent", "-p", "--output-format", "stream-json", "--force", "--trust"}},
		{Custom{Command: []string{"./agent.sh", "--fast"}}, []string{"./agent.sh", "--fast", "--extra", "x"}, []string{"./agent.sh", "--fast"}},
		{Custom{}, nil, nil},
	} {
		if got := tc.d.Argv(req); !slices.Equal(got, tc.want) {
			t.Errorf("%s: Argv = %q, want %q", tc.d.Name(), got, tc.want)
		}
		if got := tc.d.Argv(Request{}); !slices.Equal(got, tc.bare) {
			t.Errorf("%s: Argv without model and args = %q, want %q", tc.d.Name(), got, tc.bare)
		}
		if tc.want != nil && tc.d.Binary() != tc.want[0] {
			t.Errorf("%s: Binary %q, argv[0] %q", tc.d.Name(), tc.d.Binary(), tc.want[0])
		}
		if tc.d.InstallHint() == "" {
			t.Errorf("%s: no InstallHint", tc.d.Name())
		}
	}
	// The custom driver of Lookup takes its command from the request.
	d, _ := Lookup("custom")
	got := d.Argv(Request{Command: []string{"my agent", "-v"}, Args: []string{"--x"}})
	if !slices.Equal(got, []string{"my agent", "-v", "--x"}) {
		t.Errorf("custom from Request: %q", got)
	}
	// Codex gets the file Run made.
	got = Codex{}.Argv(Request{OutputFile: "/tmp/x.txt"})
	if i := slices.Index(got, "--output-last-message"); i < 0 || got[i+1] != "/tmp/x.txt" {
		t.Errorf("codex: %q", got)
	}
}

func TestClassifyError(t *testing.T) {
	at := time.Date(2026, 11, 25, 22, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		status int
		msg    string
		class  FailureClass
		after  time.Duration
		at     time.Time
	}{
		{0, "API Error: 500 Internal server error (mock).", ClassTransient, 0, time.Time{}},
		{0, `API Error: 529 {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`, ClassTransient, 0, time.Time{}},
		{0, "exceeded retry limit, last status: 502 Bad Gateway", ClassTransient, 0, time.Time{}},
		{0, "stream disconnected before completion: connection reset by peer", ClassTransient, 0, time.Time{}},
		{503, "whatever", ClassTransient, 0, time.Time{}},
		{0, "API Error: 429 rate_limit_error: retry after 20 seconds", ClassLimit, 20 * time.Second, time.Time{}},
		{0, "Claude AI usage limit reached|1795644000", ClassLimit, 0, time.Unix(1795644000, 0).UTC()},
		{0, "You've hit your usage limit. Try again in 1 day 3h 2 min.", ClassLimit, 27*time.Hour + 2*time.Minute, time.Time{}},
		{0, `quota exceeded, "retryDelay": "12s"`, ClassLimit, 12 * time.Second, time.Time{}},
		{0, "usage limit reached, resets at 2026-11-25T22:00:00Z", ClassLimit, 0, at},
		{0, "Retry-After: 90\nToo Many Requests", ClassLimit, 90 * time.Second, time.Time{}},
		{429, "slow down", ClassLimit, 0, time.Time{}},
		{0, "Invalid API key · Please run /login", ClassAuth, 0, time.Time{}},
		{0, "unexpected status 401 Unauthorized: try again in 5 minutes", ClassAuth, 0, time.Time{}},
		{403, "", ClassAuth, 0, time.Time{}},
		{0, "Credit balance is too low", ClassAuth, 0, time.Time{}},
		{0, "Reached maximum number of turns (3)", ClassNone, 0, time.Time{}},
		{0, "Reached maximum budget ($0.001)", ClassNone, 0, time.Time{}},
		{400, `{"error":{"message":"mock: invalid request","type":"invalid_request_error"}}`, ClassNone, 0, time.Time{}},
		{0, "wrote 500 lines", ClassNone, 0, time.Time{}},
		{0, "", ClassNone, 0, time.Time{}},
	} {
		f := ClassifyError(tc.status, tc.msg)
		if f.Class != tc.class || f.After != tc.after || !f.At.Equal(tc.at) {
			t.Errorf("classifyError(%d, %q) = %v %v %v; want %v %v %v", tc.status, tc.msg, f.Class, f.After, f.At, tc.class, tc.after, tc.at)
		}
	}
}

func TestResultRetryTime(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		r    Result
		want time.Time
	}{
		{Result{}, time.Time{}},
		{Result{RetryAfter: time.Hour}, now.Add(time.Hour)},
		{Result{RetryAt: now.Add(2 * time.Hour)}, now.Add(2 * time.Hour)},
		{Result{RetryAfter: 3 * time.Hour, RetryAt: now.Add(2 * time.Hour)}, now.Add(3 * time.Hour)},
	} {
		if got := tc.r.RetryTime(now); !got.Equal(tc.want) {
			t.Errorf("RetryTime(%+v) = %v, want %v", tc.r, got, tc.want)
		}
	}
	if ClassLimit.String() != "limit" || ClassNone.String() != "none" || ClassTransient.String() != "transient" || ClassAuth.String() != "auth" {
		t.Error("FailureClass.String")
	}
}

func TestClaudeClassification(t *testing.T) {
	res, _ := decodeFile(t, "claude-stream-json-api-error.ndjson")
	if res.Class != ClassTransient || res.Fatal != "" {
		t.Fatalf("api error: Class %v Fatal %q", res.Class, res.Fatal)
	}
	for _, f := range []string{"claude-stream-json-complete.ndjson", "claude-stream-json-error-max-turns.ndjson",
		"claude-stream-json-error-max-budget.ndjson", "claude-stream-json-killed-sigterm.ndjson"} {
		if res, _ := decodeFile(t, f); res.Class != ClassNone {
			t.Errorf("%s: Class %v", f, res.Class)
		}
	}
	limit := lines(initLine,
		`{"type":"assistant","message":{"id":"m1","model":"<synthetic>","content":[{"type":"text","text":"Claude AI usage limit reached|1795644000"}]},"parent_tool_use_id":null,"session_id":"s1","error":"rate_limit"}`,
		`{"type":"result","subtype":"success","is_error":true,"num_turns":1,"result":"Claude AI usage limit reached|1795644000","session_id":"s1","total_cost_usd":0}`)
	res, _ = decodeString(t, limit)
	if res.Class != ClassLimit || !res.RetryAt.Equal(time.Unix(1795644000, 0)) || res.Fatal != "" {
		t.Fatalf("limit: %+v", res)
	}
	overloaded := lines(initLine,
		`{"type":"result","subtype":"success","is_error":true,"api_error_status":529,"num_turns":1,"result":"API Error: Repeated 529 Overloaded errors","session_id":"s1"}`)
	if res, _ = decodeString(t, overloaded); res.Class != ClassTransient {
		t.Fatalf("overloaded: %+v", res)
	}
	// An API error the agent got past does not classify a later error.
	recovered := lines(initLine,
		`{"type":"assistant","message":{"id":"m1","model":"<synthetic>","content":[{"type":"text","text":"API Error: 500"}]},"parent_tool_use_id":null,"error":"server_error"}`,
		assistantText("m2", "carrying on"),
		`{"type":"result","subtype":"error_max_turns","is_error":true,"num_turns":9,"errors":["Reached maximum number of turns (9)"]}`)
	if res, _ = decodeString(t, recovered); res.Class != ClassNone {
		t.Fatalf("recovered: %+v", res)
	}
	// Text inside tool results or earlier messages never classifies.
	quiet := lines(initLine, assistantText("m1", "rate limit exceeded, API Error: 500, Please run /login"),
		`{"type":"user","message":{"role":"user","content":[{"type":"tool_result","content":"HTTP 429 Too Many Requests"}]}}`,
		resultLine)
	if res, _ = decodeString(t, quiet); res.Class != ClassNone || res.Fatal != "" {
		t.Fatalf("transcript text classified the run: %+v", res)
	}
}

func TestDiagnoseFromStderr(t *testing.T) {
	for _, tc := range []struct {
		d      Driver
		res    Result
		class  FailureClass
		fatal  string // substring; "" for none
		errors int
	}{
		{Cursor{}, Result{ExitCode: 1, Stderr: "Error: Authentication required. Please run 'cursor-agent login' first, or set CURSOR_API_KEY\n"}, ClassAuth, "cursor-agent login", 1},
		{Cursor{}, Result{ExitCode: 1, Stderr: "Error: You've hit your usage limit. Try again in 3 hours.\n"}, ClassLimit, "", 1},
		{Cursor{}, Result{ExitCode: 1, Stderr: "ConnectError: [unavailable] upstream connect error\n"}, ClassTransient, "", 1},
		{Cursor{}, Result{ExitCode: 1, Stderr: "Error: something else\n"}, ClassNone, "", 0},
		{Cursor{}, Result{ExitCode: 1, TimedOut: true, Stderr: "rate limit\n"}, ClassNone, "", 0},
		{Cursor{}, Result{ExitCode: 1, SawResult: true, Stderr: "rate limit\n"}, ClassNone, "", 0},
		{Gemini{}, Result{ExitCode: 41, Stderr: "Invalid auth method selected.\n"}, ClassAuth, "GEMINI_API_KEY", 0},
		{Gemini{}, Result{ExitCode: 55, Stderr: "Gemini CLI is not running in a trusted directory.\n"}, ClassNone, "--skip-trust", 0},
		{Gemini{}, Result{ExitCode: 1, Stderr: "Unknown arguments: skip-trust, skipTrust\n"}, ClassNone, "0.61", 0},
		{Codex{}, Result{ExitCode: 2, Stderr: "error: unexpected argument '--full-auto' found\n"}, ClassNone, "--full-auto", 0},
		{Codex{}, Result{ExitCode: 1, Stderr: "WARNING: proceeding\nError: Not logged in. Run `codex login`.\n"}, ClassAuth, "codex login", 1},
		{OpenCode{}, Result{ExitCode: 1, Stderr: "Error: ProviderAuthError: no credentials for anthropic\n"}, ClassAuth, "opencode auth login", 1},
		{Amp{}, Result{ExitCode: -1, Signal: "terminated", TimedOut: true, Stderr: "No API key found. Starting login flow...\n"}, ClassAuth, "AMP_API_KEY", 0},
		{Amp{}, Result{ExitCode: 1, Stderr: "Error: Couldn't connect to the Amp server at https://ampcode.com/.\n"}, ClassTransient, "", 1},
		{Amp{}, Result{ExitCode: 1, Stderr: "error: unknown option '--bogus-flag'\n"}, ClassNone, "--bogus-flag", 0},
		{Custom{Command: []string{"a"}}, Result{ExitCode: 3, Stderr: "upstream says: HTTP 529 overloaded\n"}, ClassTransient, "", 1},
		{Custom{Command: []string{"a"}}, Result{ExitCode: 3, Stderr: "invalid api key\n"}, ClassAuth, "authentication", 1},
	} {
		res := tc.res
		tc.d.(Diagnoser).Diagnose(&res)
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
	err := Preflight(Amp{}, Request{})
	var pe *PreflightError
	if !errors.As(err, &pe) || !strings.Contains(err.Error(), "AMP_API_KEY") || !strings.Contains(pe.Hint(), "AMP_API_KEY") {
		t.Fatalf("amp without a key: %v", err)
	}
	if err := Preflight(Amp{}, Request{Env: []string{"AMP_API_KEY=k"}}); err != nil {
		t.Fatalf("amp with a key in Request.Env: %v", err)
	}
	if err := os.MkdirAll(filepath.Join(home, ".local", "share", "amp"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, ".local", "share", "amp", "secrets.json"), []byte(`{"apiKey@https://ampcode.com/":"k"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := Preflight(Amp{}, Request{}); err != nil {
		t.Fatalf("amp after 'amp login': %v", err)
	}
	for _, tc := range []struct {
		d    Driver
		req  Request
		want string
	}{
		{Custom{}, Request{}, `agent "custom": no command configured`},
		{Custom{}, Request{Command: []string{"a"}, Format: "yaml"}, `agent "custom": unknown output format "yaml"`},
		{Custom{}, Request{Command: []string{"a"}, Format: FormatClaudeStreamJSON}, ""},
		{Custom{Command: []string{"a"}}, Request{}, ""},
		{Claude{}, Request{}, ""},
	} {
		err := Preflight(tc.d, tc.req)
		if (err == nil) != (tc.want == "") || err != nil && err.Error() != tc.want {
			t.Errorf("Preflight(%s, %+v) = %v, want %q", tc.d.Name(), tc.req, err, tc.want)
		}
	}
	if _, err := NewCustom(nil, ""); err == nil {
		t.Error("NewCustom without a command")
	}
	if _, err := NewCustom([]string{"a"}, "json"); err == nil {
		t.Error("NewCustom with an unknown format")
	}
	c, err := NewCustom([]string{"a", "b"}, "")
	if err != nil || c.Binary() != "a" {
		t.Errorf("NewCustom = %+v, %v", c, err)
	}
	// LookPath of a custom driver without a command.
	_, err = LookPath(Custom{})
	var nf *NotFoundError
	if !errors.As(err, &nf) || err.Error() != `agent "custom" has no command` || !strings.Contains(nf.Hint(), "ralph.agentCommand") {
		t.Errorf("LookPath(Custom{}) = %v", err)
	}
}

func TestReports(t *testing.T) {
	for _, tc := range []struct {
		d            Driver
		req          Request
		cost, tokens bool
	}{
		{Claude{}, Request{}, true, true},
		{OpenCode{}, Request{}, true, true},
		{Codex{}, Request{}, false, true},
		{Gemini{}, Request{}, false, true},
		{Amp{}, Request{}, false, true},
		{Copilot{}, Request{}, false, true},
		{Qwen{}, Request{}, false, true},
		{Cursor{}, Request{}, false, false},
		{Custom{}, Request{Command: []string{"x"}}, false, false},
		{Custom{}, Request{Command: []string{"x"}, Format: FormatClaudeStreamJSON}, true, true},
	} {
		cost, tokens := Reports(tc.d, tc.req)
		if cost != tc.cost || tokens != tc.tokens {
			t.Errorf("Reports(%s %+v) = %v, %v; want %v, %v", tc.d.Name(), tc.req.Format, cost, tokens, tc.cost, tc.tokens)
		}
	}
}
