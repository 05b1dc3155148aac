package agent

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// WriteScript writes an executable shell script and returns its path.
func WriteScript(t *testing.T, body string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "agent.sh")
	if err := os.WriteFile(path, []byte("#!/bin/sh\n"+body), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

// codexScript is the codex driver with a script as its executable.
type codexScript struct {
	Codex
	exe string
}

func (c codexScript) Binary() string { return c.exe }

func (c codexScript) Argv(req Request) []string {
	argv := c.Codex.Argv(req)
	argv[0] = c.exe
	return argv
}

func ScriptRequest(t *testing.T) Request {
	return Request{Dir: t.TempDir(), Grace: 2 * time.Second, KillGrace: 2 * time.Second}
}

func TestRunCodexLastMessageFile(t *testing.T) {
	// Like codex: the prompt is read from stdin ("-"), which must be closed,
	// and the final message goes to the --output-last-message file.
	script := WriteScript(t, `
out=""
last=""
for a in "$@"; do
	[ "$last" = "--output-last-message" ] && out="$a"
	last="$a"
done
[ "$last" = "-" ] || { echo "prompt is not read from stdin" >&2; exit 64; }
prompt=$(cat)
echo "$out" > "$PWD/lastmsg-path"
echo '{"type":"thread.started","thread_id":"t1"}'
echo '{"type":"turn.started"}'
echo '{"type":"item.completed","item":{"id":"item_0","type":"agent_message","text":"from the stream"}}'
printf 'from the file: %s\n<promise>COMPLETE</promise>\n' "$prompt" > "$out"
echo '{"type":"turn.completed","usage":{"input_tokens":10,"cached_input_tokens":4,"output_tokens":2}}'
`)
	req := ScriptRequest(t)
	req.Prompt = "the prompt"
	rec := &Recorder{}
	req.Sink = rec
	res, err := Run(context.Background(), codexScript{exe: script}, req)
	if err != nil {
		t.Fatal(err)
	}
	if res.ExitCode != 0 || !res.SawResult || res.IsError {
		t.Fatalf("res %+v", res)
	}
	if res.Text != "from the file: the prompt\n<promise>COMPLETE</promise>\n" || res.Promise().Kind != PromiseComplete {
		t.Errorf("Text %q", res.Text)
	}
	if res.InputTokens != 10 || res.OutputTokens != 2 || res.CostUSD != nil || res.SessionID != "t1" {
		t.Errorf("accounting %+v", res)
	}
	if !slices.Equal(rec.Texts, []string{"from the stream"}) {
		t.Errorf("live text %q", rec.Texts)
	}
	path, err := os.ReadFile(filepath.Join(req.Dir, "lastmsg-path"))
	if err != nil {
		t.Fatal(err)
	}
	p := strings.TrimSpace(string(path))
	if !filepath.IsAbs(p) || !strings.Contains(filepath.Base(p), "git-ralph-codex-") {
		t.Errorf("--output-last-message %q", p)
	}
	if _, err := os.Stat(p); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the temporary file is still there: %v", err)
	}

	// Without the file, the last agent_message is the final text.
	script = WriteScript(t, `cat >/dev/null
echo '{"type":"thread.started","thread_id":"t2"}'
echo '{"type":"item.completed","item":{"id":"item_0","type":"agent_message","text":"<promise>FAILED: nope</promise>"}}'
echo '{"type":"turn.completed","usage":{"input_tokens":1,"output_tokens":1}}'
`)
	res, err = Run(context.Background(), codexScript{exe: script}, ScriptRequest(t))
	if err != nil || res.Promise() != (Promise{Kind: PromiseFailed, Reason: "nope"}) {
		t.Fatalf("res %+v err %v", res, err)
	}
}

func TestRunCustomTextAgent(t *testing.T) {
	script := WriteScript(t, `
prompt=$(cat)
echo "working on $RALPH_CHANGE story $RALPH_STORY attempt $RALPH_ATTEMPT with model $RALPH_MODEL"
echo "prompt bytes: $(printf %s "$prompt" | wc -c | tr -d ' ')"
echo "args: $*"
echo "<promise>COMPLETE</promise>"
`)
	c, err := NewCustom([]string{"/bin/sh", script, "--flag"}, "")
	if err != nil {
		t.Fatal(err)
	}
	req := ScriptRequest(t)
	req.Prompt = strings.Repeat("p", 200<<10) // bigger than an argv string may be
	req.Model = "m1"
	req.Args = []string{"--extra"}
	req.Env = []string{"RALPH_AGENT=1", "RALPH_CHANGE=add-x", "RALPH_STORY=2", "RALPH_ATTEMPT=3"}
	rec := &Recorder{}
	req.Sink = rec
	res, err := Run(context.Background(), c, req)
	if err != nil {
		t.Fatal(err)
	}
	if !res.SawResult || res.IsError || res.Promise().Kind != PromiseComplete || res.CostUSD != nil {
		t.Fatalf("res %+v", res)
	}
	want := []string{"working on add-x story 2 attempt 3 with model m1", "prompt bytes: 204800", "args: --flag --extra", "<promise>COMPLETE</promise>"}
	if !slices.Equal(rec.Texts, want) {
		t.Errorf("texts %q, want %q", rec.Texts, want)
	}

	// A failing exit is no result, whatever it printed; its stderr is
	// classified.
	script = WriteScript(t, "cat >/dev/null\necho '<promise>COMPLETE</promise>'\necho 'API Error: 529 overloaded' >&2\nexit 3\n")
	res, err = Run(context.Background(), Custom{Command: []string{script}}, ScriptRequest(t))
	if err != nil {
		t.Fatal(err)
	}
	if res.SawResult || res.ExitCode != 3 || res.Class != ClassTransient || res.Promise().Kind != PromiseNone {
		t.Fatalf("failing agent: %+v", res)
	}
}

func TestRunCustomFromRequest(t *testing.T) {
	// The driver Lookup returns reads its command and format from the
	// request.
	script := WriteScript(t, `cat >/dev/null
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
	req := ScriptRequest(t)
	req.Command, req.Format = []string{script}, FormatClaudeStreamJSON
	res, err := Run(context.Background(), d, req)
	if err != nil {
		t.Fatal(err)
	}
	if !res.SawResult || res.Promise().Kind != PromiseComplete || res.CostUSD == nil || *res.CostUSD != 0.25 ||
		res.Model != "scripted" || res.Turns != 1 {
		t.Fatalf("res %+v", res)
	}
	// Without a command, nothing starts.
	_, err = Run(context.Background(), d, ScriptRequest(t))
	var pe *PreflightError
	if !errors.As(err, &pe) || !strings.Contains(pe.Hint(), "ralph.agentCommand") {
		t.Fatalf("err = %v", err)
	}
}

func TestRunAmpWithoutKeyStartsNothing(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	t.Setenv("XDG_DATA_HOME", "")
	t.Setenv("AMP_API_KEY", "")
	t.Setenv("PATH", t.TempDir()) // no amp: a start attempt would say "not found"
	_, err := Run(context.Background(), Amp{}, ScriptRequest(t))
	var pe *PreflightError
	if !errors.As(err, &pe) || pe.Agent != "amp" || !strings.Contains(err.Error(), "AMP_API_KEY") {
		t.Fatalf("err = %v", err)
	}
	// With the key, Run gets as far as looking for the binary.
	req := ScriptRequest(t)
	req.Env = []string{"AMP_API_KEY=k"}
	_, err = Run(context.Background(), Amp{}, req)
	var nf *NotFoundError
	if !errors.As(err, &nf) || nf.Agent != "amp" {
		t.Fatalf("err = %v", err)
	}
}
