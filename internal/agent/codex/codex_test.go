package codex

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/git-ralph/git-ralph/internal/agent"
	"github.com/git-ralph/git-ralph/internal/agent/agenttest"
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
		want agenttest.Want
	}{
		{"codex-exec-json-complete.ndjson", agenttest.Want{Saw: true, Promise: agenttest.Complete, Text: agenttest.CompleteText,
			In: 7206, Out: 264, Cost: -1, Session: "01a2148c-6ed2-7240-b153-d188f72b1213",
			Texts: 2, Tools: []string{edit, shell}, Terminals: 1}},
		{"codex-exec-json-complete-shell-only.ndjson", agenttest.Want{Saw: true, Promise: agenttest.Complete, Text: agenttest.CompleteText,
			In: 7206, Out: 264, Cost: -1, Session: "01a2148b-f063-7c02-ad12-672a7a440410", Texts: 2,
			Tools: []string{`shell: printf 'hello from the mock model\n' > hello.txt`, shell}, Terminals: 1}},
		{"codex-exec-json-failed-signal.ndjson", agenttest.Want{Saw: true, Promise: agenttest.FailedTests, Text: agenttest.FailedText,
			In: 7206, Out: 264, Cost: -1, Session: "01a2148c-f060-71a0-8dd2-254d610da71c",
			Texts: 2, Tools: []string{edit, shell}, Terminals: 1}},
		{"codex-exec-json-command-failed.ndjson", agenttest.Want{Saw: true, Promise: agent.Promise{Kind: agent.PromiseFailed, Reason: "ls failed"},
			Text: "Command failed.\n\n<promise>FAILED: ls failed</promise>", In: 4811, Out: 176, Cost: -1,
			Session: "01a2149b-c8ce-7692-b725-98ecb608ee34", Texts: 1,
			Tools: []string{"shell: ls /nonexistent-dir; exit 3"}, Terminals: 1}},
		{"codex-exec-json-turn-failed.ndjson", agenttest.Want{Saw: true, IsError: true,
			Errors: []string{`{"error":{"message":"mock: invalid request","type":"invalid_request_error","code":"bad"}}`},
			Cost:   -1, Session: "01a2148c-ebf9-76c0-9b24-89d4a9dc4b4a", Terminals: 1}},
		{"codex-exec-json-killed-sigterm.ndjson", agenttest.Want{Cost: -1, Session: "01a2148d-07af-7d70-b809-6445713365fd"}},
		{"codex-exec-json-readonly-sandbox-silent-rejects.ndjson", agenttest.Want{Saw: true, Promise: agenttest.Complete, Text: agenttest.CompleteText,
			In: 7215, Out: 264, Cost: -1, Session: "01a2148c-92f5-7ef3-8d9e-713212a1b12c", Texts: 2, Terminals: 1}},
		{"codex-exec-resume-json.ndjson", agenttest.Want{Saw: true, Promise: agenttest.Complete, Text: agenttest.CompleteText,
			In: 9634, Out: 352, Cost: -1, Session: "01a2148d-7cf6-7be3-bff7-ddc5db58d127", Texts: 1, Terminals: 1}},
		{"synthetic-codex-garbage-lines.ndjson", agenttest.Want{Saw: true, Promise: agenttest.Complete, Text: agenttest.CompleteText,
			In: 7206, Out: 264, Cost: -1, Session: tid, Texts: 2, Tools: []string{edit, shell}, Terminals: 1}},
		{"synthetic-codex-no-signal.ndjson", agenttest.Want{Saw: true, Text: "Created hello.txt and committed it.",
			In: 7206, Out: 264, Cost: -1, Session: tid, Texts: 2, Tools: []string{edit, shell}, Terminals: 1}},
		{"synthetic-codex-promise-echo-then-failed.ndjson", agenttest.Want{Saw: true, Promise: agenttest.EchoFailed, Text: agenttest.EchoText,
			In: 7206, Out: 264, Cost: -1, Session: tid, Texts: 2, Tools: []string{"shell: cat PROMPT.md"}, Terminals: 1}},
		{"synthetic-codex-crash-midstream.ndjson", agenttest.Want{Text: starting, Cost: -1, Session: tid, Texts: 1}},
		{"synthetic-codex-api-error-5xx.ndjson", agenttest.Want{Saw: true, IsError: true, Class: agent.ClassTransient,
			Errors: []string{"exceeded retry limit, last status: 500 Internal Server Error"}, Cost: -1, Session: tid, Terminals: 1}},
		{"synthetic-codex-usage-limit.ndjson", agenttest.Want{Saw: true, IsError: true, Class: agent.ClassLimit,
			RetryAfter: 2*time.Hour + 5*time.Minute, Errors: []string{"You've hit your usage limit.…"}, Cost: -1, Session: tid, Terminals: 1}},
		{"synthetic-codex-auth.ndjson", agenttest.Want{Saw: true, IsError: true, Class: agent.ClassAuth, Fatal: true,
			Errors: []string{"unexpected status 401 Unauthorized…"}, Cost: -1, Session: tid, Terminals: 1}},
	} {
		t.Run(tc.file, func(t *testing.T) {
			res, rec := decodeWith(t, Codex{}, tc.file)
			agenttest.Check(t, res, rec, tc.want)
		})
	}
}

// codexScript is the codex driver with a script as its executable.
type codexScript struct {
	Codex
	exe string
}

func (c codexScript) Binary() string { return c.exe }

func (c codexScript) Argv(req agent.Request) []string {
	argv := c.Codex.Argv(req)
	argv[0] = c.exe
	return argv
}

func TestRunCodexLastMessageFile(t *testing.T) {
	// Like codex: the prompt is read from stdin ("-"), which must be closed,
	// and the final message goes to the --output-last-message file.
	script := agenttest.WriteScript(t, `
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
	req := agenttest.ScriptRequest(t)
	req.Prompt = "the prompt"
	rec := &agenttest.Recorder{}
	req.Sink = rec
	res, err := agent.Run(context.Background(), codexScript{exe: script}, req)
	if err != nil {
		t.Fatal(err)
	}
	if res.ExitCode != 0 || !res.SawResult || res.IsError {
		t.Fatalf("res %+v", res)
	}
	if res.Text != "from the file: the prompt\n<promise>COMPLETE</promise>\n" || res.Promise().Kind != agent.PromiseComplete {
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
	if !filepath.IsAbs(p) || !strings.HasPrefix(filepath.Base(filepath.Dir(p)), "git-ralph-codex-") {
		t.Errorf("--output-last-message %q, want a file in the attempt's own directory", p)
	}
	if _, err := os.Stat(filepath.Dir(p)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the attempt's directory is still there: %v", err)
	}

	// Without the file, the last agent_message is the final text.
	script = agenttest.WriteScript(t, `cat >/dev/null
echo '{"type":"thread.started","thread_id":"t2"}'
echo '{"type":"item.completed","item":{"id":"item_0","type":"agent_message","text":"<promise>FAILED: nope</promise>"}}'
echo '{"type":"turn.completed","usage":{"input_tokens":1,"output_tokens":1}}'
`)
	res, err = agent.Run(context.Background(), codexScript{exe: script}, agenttest.ScriptRequest(t))
	if err != nil || res.Promise() != (agent.Promise{Kind: agent.PromiseFailed, Reason: "nope"}) {
		t.Fatalf("res %+v err %v", res, err)
	}
}

// decodeWith decodes the transcript testdata/name (internal/agent/testdata) with d.
func decodeWith(t *testing.T, d agent.Driver, name string) (agent.Result, *agenttest.Recorder) {
	t.Helper()
	return agenttest.Decode(t, d, filepath.Join("..", "testdata", name))
}

// Codex writes CODEX_HOME (~/.codex by default) and opens a pseudo-terminal for an
// exec_command the model asks to run on one: the genuine 0.169.0 failed such a command
// in the sandbox without /dev/ptmx ("failed to openpty", testdata/record/README.md).
func TestCodexState(t *testing.T) {
	st := Codex{}.State([]string{"HOME=/home/ada"})
	if !slices.Equal(st.Paths(), []string{"/home/ada/.codex"}) || !st.PTY {
		t.Errorf("State = %+v", st)
	}
	st = Codex{}.State([]string{"HOME=/home/ada", "CODEX_HOME=/srv/codex"})
	if !slices.Equal(st.Paths(), []string{"/srv/codex"}) || !st.PTY {
		t.Errorf("State with CODEX_HOME = %+v", st)
	}
}

// A sandboxed Codex gets a CODEX_HOME of its own, with copies of the user's login,
// config.toml and its instructions file, from CODEX_HOME or ~/.codex.
func TestCodexOwnState(t *testing.T) {
	for env, dir := range map[string]string{"HOME=/h": "/h/.codex", "CODEX_HOME=/c": "/c"} {
		st := Codex{}.OwnState([]string{"HOME=/h", env})
		var from []string
		for _, f := range st.Files {
			from = append(from, f.From+">"+f.Name)
		}
		want := []string{dir + "/auth.json>auth.json", dir + "/config.toml>config.toml", dir + "/AGENTS.md>AGENTS.md"}
		if st.Var != "CODEX_HOME" || !slices.Equal(from, want) {
			t.Errorf("%s: %s %q, want %q", env, st.Var, from, want)
		}
	}
}
