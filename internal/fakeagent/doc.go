// Package fakeagent is a scriptable stand-in for the coding-agent CLIs that
// git-ralph drives (Claude Code's `claude -p --output-format stream-json
// --verbose` and `codex exec --json`). It is linked into test binaries only
// (testscript.Main registers Main as "claude" and "codex"), never into
// git-ralph itself. Its output copies the event shapes of the real
// transcripts in shared/reference/agents/samples; it never interprets the
// promise tags, it only prints what the scenario says.
//
// # Environment
//
//	FAKE_AGENT_SCENARIO       path of a scenario JSON file
//	FAKE_AGENT_SCENARIO_JSON  inline scenario; wins over FAKE_AGENT_SCENARIO
//	FAKE_AGENT_STATE_DIR      directory holding the invocation counter (file "invocations")
//	FAKE_AGENT_RECORD         NDJSON file; one line is appended per invocation
//	FAKE_AGENT_DELAY_MS       pause before every stdout line after the first (default 0)
//	FAKE_AGENT_FIXED_TIME     RFC 3339 instant used for every timestamp; durations become 0
//	RALPH_STORY, RALPH_ATTEMPT, RALPH_CHANGE
//	                          select by_story runs, fill {{story}} {{attempt}} {{change}},
//	                          and tell check_story which story and tasks.md to tick
//
// With no scenario the fake prints an error on stderr and exits 64. Every
// other mistake of the test author (bad JSON, unknown key, a step with no or
// two actions, a missing expected argument) also exits 64 with a message
// starting "fake-agent:"; 64 is never used for an emulated agent failure.
//
// A record line is {"argv":[...],"cwd","stdin","stdin_bytes","prompt",
// "env":{...},"pid","started_at","invocation","dialect","run"}. env holds
// every non-empty RALPH_* variable plus GIT_RALPH, IS_SANDBOX, GIT_DIR,
// GIT_INDEX_FILE and GIT_WORK_TREE when set; prompt is the prompt the agent
// ended up with (argument and/or stdin; null when the arguments were refused
// before any input was read); invocation counts from 1 and is 0 when
// nothing is counted; run names the script that ran ("steps", "runs[1]",
// "by_story[2][0]"). Invocations that fail on their arguments are recorded
// too, with the stdin left unread (as the real CLIs leave it).
//
// # Scenario
//
//	{
//	  "dialect": "claude" | "codex",  // default: "codex" if filepath.Base(argv[0]) is "codex", else "claude"
//	  "model": "claude-sonnet-4-5",   // claude: --model wins, then this, then claude-sonnet-4-5
//	  "session_id": "…",              // session_id / thread_id; default: --session-id/--resume id, else a
//	                                  // UUID derived from the scenario, story, attempt and invocation
//	  "expect_args": ["-p", "--verbose"],  // each must be an argv element (--k=v also counts as --k and v)
//	  "emulate_root_check": false,    // claude: as uid 0, --dangerously-skip-permissions without IS_SANDBOX fails
//	  "steps":  [ step, … ],          // what the agent does
//	  "after":  [ step, … ],          // run after the terminal event (e.g. a hang: agents that never exit)
//	  "result": { … },                // how it ends, see below
//	  "turn_failed": "message",       // codex: end with error + turn.failed, exit 1
//	  "runs":   [ run, … ],           // invocation k (0-based) uses runs[k]; the last one repeats
//	  "by_story": {"1": [ run, … ], "*": [ run, … ]}
//	}
//
// A run is an object with the keys steps, after, result, turn_failed,
// expect_args, model and session_id. by_story maps RALPH_STORY to a list of
// runs indexed by RALPH_ATTEMPT-1 (the last one repeats); "*" matches any story.
// Precedence: by_story (exact key, then "*"), then runs, then the top-level
// steps. A selected run inherits model, session_id, result, turn_failed and
// after from the top level when it does not set them, never steps;
// expect_args of both apply. "note" and "comment" keys are allowed anywhere
// and ignored.
//
// The invocation counter lives in FAKE_AGENT_STATE_DIR/invocations and is
// incremented on every invocation when that variable is set. Without it, a
// scenario with runs that was given as a file keeps its counter next to the
// file ("<scenario>.invocations"); an inline scenario with runs then fails
// with exit 64.
//
// # Steps
//
// Each step is an object with exactly one action key (plus "note"):
//
//	{"say": "text"}                   assistant text (claude) / agent_message item (codex); the last say
//	                                  is the final answer (claude result.result, codex -o file)
//	{"say_bytes": N}                  assistant text of N 'y' bytes (one long line)
//	{"spam_lines": {"count": N, "text": "progress"}}   N small text events
//	{"flood": {"bytes": N, "line_bytes": M}}           about N bytes of text events, lines of about M
//	                                  bytes (default 4096), generated with constant memory
//	{"write": {"path": "p", "content": "c"}}            Write tool / file_change; writes the file
//	{"bash": "cmd"}                   Bash tool / command_execution; runs /bin/sh -c cmd in the work dir
//	                                  (codex shows it as /bin/bash -lc 'cmd', like the real CLI)
//	{"commit": "message"}             as bash: git add -A && git commit -q -m 'message'
//	{"check_story": true}             Edit tool / file_change: ticks every open task of story
//	                                  $RALPH_STORY in openspec/changes/$RALPH_CHANGE/tasks.md
//	                                  ("check_story": "2" names the story)
//	{"check_task": "1.2"}             ticks the first open task with that id (same file)
//	{"echo_prompt": true}             Bash tool "cat prompt" whose output is the whole prompt
//	{"event": {…}}                    the object verbatim (claude: session_id and uuid filled in if absent)
//	{"raw": "text", "newline": false} a raw stdout line; newline defaults to true
//	{"stderr": "text"}                a line on stderr
//	{"touch": "$WORK/reached"}        creates an empty file (no event); $VARS expanded
//	{"sleep_ms": N}                   pause
//	{"wait_for_file": "path"}         block until the file exists (polls; $VARS expanded)
//	{"hang": {"ignore_sigterm": b, "ignore_sigint": b, "on_sigterm_exit": 143,
//	          "on_sigint_exit": 0, "spawn_child": b, "pid_file": "path"}}
//	                                  block forever, no terminal event. SIGTERM/SIGINT kill the
//	                                  process by the signal (like codex) unless ignored or trapped
//	                                  with on_sig*_exit (claude exits 143 on SIGTERM, 0 on SIGINT).
//	                                  spawn_child starts `sleep 1000` in the same process group,
//	                                  holding stdout/stderr open; pid_file receives the fake's pid
//	                                  and then the child's, once the signal handling is in place.
//	                                  The handling is installed before the first line is printed.
//	{"exit": code}                    stop now with that code, no terminal event
//	{"crash": {"signal": "SEGV"}}     die by that signal (core dumps off), no terminal event
//
// Relative paths are relative to the working directory (codex: -C/--cd).
// {{story}}, {{attempt}} and {{change}} are replaced in say, write (path and
// content), bash, commit, check_task, stderr, touch and wait_for_file.
// Tools that fail (a bash exit status other than 0, an unwritable file, a task
// that is not there) are reported as failed tool results and the run goes on;
// check_story and check_task also say why on stderr. Child processes inherit
// the process environment, with the RALPH_* and GIT_* variables listed above
// taken from Run's env.
//
// hang and crash need a real process: in Run (in-process) crash returns
// 128+signal instead of dying and hang fails with exit 64.
//
// # Ending
//
// Unless exit, crash or hang stopped it first, the fake ends the turn and
// then runs "after":
//
//	"result": {"subtype": "success", "is_error": false, "text": "…", "omit_result_text": false,
//	           "errors": ["…"], "api_error_status": 500, "exit_code": 1, "num_turns": N,
//	           "stop_reason": "…", "terminal_reason": "…", "cost_usd": 0.0134,
//	           "input_tokens": 3609, "output_tokens": 171,
//	           "cache_read_input_tokens": 0, "cache_creation_input_tokens": 0,       // claude
//	           "cached_input_tokens": 0, "cache_write_input_tokens": 0,
//	           "reasoning_output_tokens": 0}                                          // codex
//
// claude: one result line. result is text, else the last say; it is left
// out with omit_result_text (real error subtypes have none). A subtype other
// than "success" uses the error layout (errors[], no api_error_status).
// num_turns defaults to the number of tool steps plus one; modelUsage is {}
// when api_error_status is set, as in the real API-error transcript. The exit code is
// exit_code, else 1 when is_error, else 0. --output-format json prints only
// the result object and text (the default) only the result text, as the real
// CLI does; the steps still run and raw lines are still printed.
//
// codex: turn.completed with the usage and exit 0 (or exit_code), or with
// turn_failed an error event and turn.failed and exit 1. -o/--output-last-message
// FILE receives the last say when the turn completes.
//
// # Arguments
//
// claude requires -p/--print (else exit 64); --output-format stream-json
// without --verbose prints the real error and exits 1. The prompt is the first
// positional argument; without one stdin is read to EOF; with both, stdin
// (waited for at most 3 s, as the real CLI does) is appended after a newline.
// No prompt at all exits 1. permissionMode in system/init follows
// --dangerously-skip-permissions and --permission-mode.
//
// codex requires exec and --json (else exit 64); an option that codex exec
// 0.169.0 does not have (e.g. --full-auto) exits 2 with clap's message. A
// prompt of "-" or none is read from stdin; a prompt argument gets stdin
// appended as a <stdin> block (and, like the real CLI, blocks until stdin is
// closed). "exec resume ID" keeps thread_id ID.
package fakeagent
