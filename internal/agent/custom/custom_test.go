package custom

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/git-ralph/git-ralph/internal/agent"
	"github.com/git-ralph/git-ralph/internal/agent/agenttest"
	"github.com/git-ralph/git-ralph/internal/agent/claude"
)

// TestCustomClaudeFormatDecodesLikeClaude: a custom agent speaking Claude's
// stream gets the same result from every claude transcript, with its own
// fatal messages.
func TestCustomClaudeFormatDecodesLikeClaude(t *testing.T) {
	files, _ := filepath.Glob("../testdata/*claude*")
	c := Custom{Command: []string{"agent"}, Format: FormatClaudeStreamJSON}
	for _, name := range files {
		want, _ := decodeWith(t, claude.Claude{}, filepath.Base(name))
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
	rec := &agenttest.Recorder{}
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
	if !res.SawResult || res.Promise() != (agent.Promise{Kind: agent.PromiseFailed, Reason: "blocked"}) {
		t.Fatalf("after Diagnose: SawResult %v Promise %+v", res.SawResult, res.Promise())
	}
	for _, bad := range []agent.Result{{ExitCode: 1}, {ExitCode: -1, Signal: "killed"}, {TimedOut: true}, {Idle: true}, {Interrupted: true}} {
		c.Diagnose(&bad)
		if bad.SawResult {
			t.Errorf("%+v counted as a result", bad)
		}
	}
	// Only the last 64 KiB are kept: the promise must be near the end.
	big := "<promise>COMPLETE</promise>\n" + strings.Repeat("y\n", agent.MaxText)
	res, _ = Custom{}.Decode(strings.NewReader(big), nil)
	if len(res.Text) != agent.MaxText || agent.ParsePromise(res.Text).Kind != agent.PromiseNone {
		t.Fatalf("Text %d bytes", len(res.Text))
	}
	// Invalid UTF-8 does not reach the Result.
	res, _ = Custom{}.Decode(strings.NewReader("a\xff\xfeb\n<promise>COMPLETE</promise>\n"), nil)
	if res.Text != "a\uFFFDb\n<promise>COMPLETE</promise>\n" {
		t.Fatalf("Text %q", res.Text)
	}
}

func TestRunCustomTextAgent(t *testing.T) {
	script := agenttest.WriteScript(t, `
prompt=$(cat)
echo "working on $RALPH_CHANGE story $RALPH_STORY attempt $RALPH_ATTEMPT with model $RALPH_MODEL"
echo "prompt bytes: $(printf %s "$prompt" | wc -c | tr -d ' ')"
echo "args: $*"
echo "<promise>COMPLETE</promise>"
`)
	c, err := New([]string{"/bin/sh", script, "--flag"}, "")
	if err != nil {
		t.Fatal(err)
	}
	req := agenttest.ScriptRequest(t)
	req.Prompt = strings.Repeat("p", 200<<10) // bigger than an argv string may be
	req.Model = "m1"
	req.Args = []string{"--extra"}
	req.Env = []string{"RALPH_AGENT=1", "RALPH_CHANGE=add-x", "RALPH_STORY=2", "RALPH_ATTEMPT=3"}
	rec := &agenttest.Recorder{}
	req.Sink = rec
	res, err := agent.Run(context.Background(), c, req)
	if err != nil {
		t.Fatal(err)
	}
	if !res.SawResult || res.IsError || res.Promise().Kind != agent.PromiseComplete || res.CostUSD != nil {
		t.Fatalf("res %+v", res)
	}
	want := []string{"working on add-x story 2 attempt 3 with model m1", "prompt bytes: 204800", "args: --flag --extra", "<promise>COMPLETE</promise>"}
	if !slices.Equal(rec.Texts, want) {
		t.Errorf("texts %q, want %q", rec.Texts, want)
	}

	// A failing exit is no result, whatever it printed; its stderr is
	// classified.
	script = agenttest.WriteScript(t, "cat >/dev/null\necho '<promise>COMPLETE</promise>'\necho 'API Error: 529 overloaded' >&2\nexit 3\n")
	res, err = agent.Run(context.Background(), Custom{Command: []string{script}}, agenttest.ScriptRequest(t))
	if err != nil {
		t.Fatal(err)
	}
	if res.SawResult || res.ExitCode != 3 || res.Class != agent.ClassTransient || res.Promise().Kind != agent.PromiseNone {
		t.Fatalf("failing agent: %+v", res)
	}
}

// decodeWith decodes the transcript testdata/name (internal/agent/testdata) with d.
func decodeWith(t *testing.T, d agent.Driver, name string) (agent.Result, *agenttest.Recorder) {
	t.Helper()
	return agenttest.Decode(t, d, filepath.Join("..", "testdata", name))
}
