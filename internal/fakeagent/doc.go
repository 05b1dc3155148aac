// Package fakeagent is a scriptable stand-in for the coding-agent CLIs that
// git-ralph drives: Claude Code (`claude -p --output-format stream-json
// --verbose`), Codex (`codex exec --json`), Gemini (`gemini --output-format
// stream-json`), OpenCode (`opencode run --format json`), Amp (`amp -x
// --stream-json`), Cursor (`cursor-agent -p --output-format stream-json`),
// GitHub Copilot CLI (`copilot --output-format json`) and Qwen Code (`qwen -o
// stream-json`). It is linked into test binaries only (testscript.Main
// registers Main under the real binaries' names: claude, codex, gemini,
// opencode, amp, cursor-agent, copilot, qwen), never into git-ralph itself.
// Copilot's and Qwen's shapes copy the recordings in
// internal/agent/testdata (copilot-*, qwen-*). Its output copies the event
// shapes of the real transcripts in internal/agent/testdata (for Amp and
// Cursor, of which no transcript exists, the documented schemas of
// docs/AGENTS.md, "Amp" and "Cursor"); it never interprets the promise tags, it
// only prints what the scenario says.
//
// # Environment
//
//	FAKE_AGENT_SCENARIO       path of a scenario JSON file
//	FAKE_AGENT_SCENARIO_JSON  inline scenario; wins over FAKE_AGENT_SCENARIO
//	FAKE_AGENT_STATE_DIR      directory holding the invocation counter (file "invocations")
//	FAKE_AGENT_RECORD         NDJSON file; one line is appended per invocation
//	FAKE_AGENT_DELAY_MS       pause before every stdout line after the first (default 0)
//	FAKE_AGENT_FIXED_TIME     RFC 3339 instant used for every timestamp; durations become 0
//	FAKE_AGENT_TIMES          file; "<began> <ended>\n" (Unix ns, the real clock) is appended
//	                          when an invocation returns (BenchmarkStoryPhases)
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
//	  "dialect": "claude" | "codex" | "gemini" | "opencode" | "amp" | "cursor" | "copilot" | "qwen",
//	                                  // default: from filepath.Base(argv[0]): codex, gemini, opencode,
//	                                  // amp, cursor-agent (cursor), copilot, qwen; anything else is claude
//	  "model": "claude-sonnet-4-5",   // claude: --model wins, then this, then claude-sonnet-4-5
//	  "session_id": "…",              // session_id / thread_id; default: --session-id/--resume id, else a
//	                                  // UUID derived from the scenario, story, attempt and invocation
//	  "expect_args": ["-p", "--verbose"],  // each must be an argv element (--k=v also counts as --k and v)
//	  "emulate_root_check": false,    // claude: as uid 0, --dangerously-skip-permissions without IS_SANDBOX fails
//	  "steps":  [ step, … ],          // what the agent does
//	  "after":  [ step, … ],          // run after the terminal event (e.g. a hang: agents that never exit)
//	  "result": { … },                // how it ends, see below
//	  "turn_failed": "message",       // codex: end with error + turn.failed, exit 1
//	  "fail":   { … },                // end with a provider or account failure, see "Failures"
//	  "runs":   [ run, … ],           // invocation k (0-based) uses runs[k]; the last one repeats
//	  "by_story": {"1": [ run, … ], "*": [ run, … ]},
//	  "judge":  [ run, … ]            // the fake as git-ralph's judge (RALPH_JUDGE set): run
//	                                  // RALPH_ATTEMPT-1, the last one repeating; wins over the rest
//	}
//
// A run is an object with the keys steps, after, result, turn_failed, fail,
// expect_args, model and session_id. by_story maps RALPH_STORY to a list of
// runs indexed by RALPH_ATTEMPT-1 (the last one repeats); "*" matches any story.
// Precedence: by_story (exact key, then "*"), then runs, then the top-level
// steps. A selected run inherits model, session_id, result, turn_failed,
// fail and after from the top level when it does not set them (fail and
// turn_failed count as one), never steps;
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
//	{"say": "text"}                   assistant text in the dialect's shape (claude assistant, codex
//	                                  agent_message, gemini message chunk, opencode text part, …); the
//	                                  last say is the final answer (claude result.result, codex -o file)
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
//	                                  ("check_story": "2" names the story); with RALPH_SOURCE and
//	                                  RALPH_TASKS_FILE set, the story of that file as git-ralph
//	                                  reads it: spec-kit boxes become [X], plan boxes [x], a
//	                                  prd.json story's "passes" becomes true, and a GitHub
//	                                  issue's tasks file (an absolute RALPH_TASKS_FILE outside
//	                                  the work tree) has the boxes of its story's section [x]
//	{"check_task": "1.2"}             ticks the first open task with that id (same file)
//	{"echo_prompt": true}             Bash tool "cat prompt" whose output is the whole prompt
//	{"event": {…}}                    the object verbatim (claude: session_id and uuid filled in if absent)
//	{"raw": "text", "newline": false} a raw stdout line; newline defaults to true
//	{"stderr": "text"}                a line on stderr
//	{"touch": "$WORK/reached"}        creates an empty file (no event); $VARS expanded
//	{"sleep_ms": N}                   pause (only where the time itself is the point:
//	                                  never to wait for the test's next step)
//	{"advance_clock": "2s"}           move the test binary's clock, which measures git-ralph's
//	                                  --timeout, --idle-timeout and --deadline, forward by that
//	                                  (appends to the file GIT_RALPH_TEST_TIME names)
//	{"wait_for_file": "path"}         block until the file exists (polls; $VARS expanded)
//	{"hang": {"ignore_sigterm": b, "ignore_sigint": b, "on_sigterm_exit": 143,
//	          "on_sigint_exit": 0, "spawn_child": b, "pid_file": "path", "signal_log": "path"}}
//	                                  block forever, no terminal event. SIGTERM/SIGINT kill the
//	                                  process by the signal (like codex) unless ignored or trapped
//	                                  with on_sig*_exit (claude exits 143 on SIGTERM, 0 on SIGINT).
//	                                  spawn_child starts `sleep 1000` in the same process group,
//	                                  holding stdout/stderr open; pid_file receives the fake's pid
//	                                  and then the child's, once the signal handling is in place.
//	                                  The handling is installed before the first line is printed.
//	                                  signal_log gets a line per SIGINT or SIGTERM received
//	                                  (ignored ones too), so a test can wait until the agent
//	                                  has been signalled. advance_clock: "2s" moves git-ralph's
//	                                  test clock (see the step) once the pid file is written,
//	                                  and again every 100ms while it hangs (the agent's last
//	                                  output may be read after the first move, and an idle
//	                                  timeout counts from that read).
//	                                  hang and wait_for_file also end (exit 0, the child killed)
//	                                  once the test is over: when the parent directory of
//	                                  FAKE_AGENT_STATE_DIR (the script's $WORK) is gone. So a fake
//	                                  that must outlive git-ralph until the next command stops it
//	                                  hangs, rather than sleeping for a time a loaded machine
//	                                  may overrun.
//	{"attack": "VERB ARG"}             a hostile agent's move, outcome on stderr as
//	                                  "fake-agent attack VERB ARG: done" or "…: denied (why)":
//	                                  write PATH (append a line), mkdir PATH, read PATH,
//	                                  environ (read git-ralph's /proc/<ppid>/environ), signal
//	                                  (SIGSTOP git-ralph, then SIGCONT), prlimit (set
//	                                  git-ralph's CPU limit to what it is), link TARGET PATH
//	                                  (replace PATH with a link to TARGET), daemon PIDFILE TARGET
//	                                  (leave the fake, re-executed, in a session of its own:
//	                                  it writes its pid to PIDFILE, appends to TARGET once
//	                                  git-ralph has exited, and ends when its test is gone),
//	                                  starve N PIDFILE TARGET (SCHED_IDLE on git-ralph's
//	                                  threads, and N busy processes like daemon's, pids in
//	                                  PIDFILE), rewrite-object REV (the loose object REV names,
//	                                  other content under the same id; attack.go lists the rest)
//	{"exit": code}                    stop now with that code, no terminal event
//	{"crash": {"signal": "SEGV"}}     die by that signal (core dumps off), no terminal event
//
// Relative paths are relative to the working directory (codex: -C/--cd).
// {{story}}, {{attempt}} and {{change}} are replaced in say, write (path and
// content), bash, commit, check_task, stderr, touch, wait_for_file and attack.
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
// gemini: a result line with status "success" and stats (the input and output
// tokens); the text format prints the assistant text after the last tool
// result, the json format one object with session_id, response and stats.
//
// opencode: the open step (or a new, empty one) ends with a step_finish whose
// reason is "stop" and which carries the whole cost_usd and tokens; the
// earlier steps, each ended by a tool call with reason "tool-calls", cost 0.
// The default format prints the text parts only.
//
// amp: a result line with subtype "success", num_turns and result (no cost,
// no usage); the tokens are carried by the first assistant message's usage.
// Without --stream-json only the final text is printed.
//
// cursor: a result line whose result concatenates every say (no cost).
//
// copilot: assistant.turn_end and a result line with exitCode 0 and
// usage.premiumRequests (premium_requests); --usage-output-file FILE
// receives modelMetrics.<model>.usage with the input, output and
// cache_read_input tokens. The text format prints the last say.
//
// qwen: a result line with subtype success, num_turns and usage (the input,
// output and cache_read_input tokens, no cost).
//
// # Failures
//
// "fail" ends the turn, after the steps, with a failure in the dialect's own
// shape:
//
//	"fail": {"kind": "api_error" | "overloaded" | "rate_limit" | "usage_limit" | "auth",
//	         "message": "…",       // replaces the default error text
//	         "status": 503,        // the HTTP status, where the dialect shows one
//	         "retry_after_s": 30,  // said in the error ("try again in 30 seconds", …)
//	         "exit_code": 1}       // replaces the dialect's exit code
//
//	claude    api_retry lines (5xx), an assistant message from model "<synthetic>" carrying
//	          "error" (server_error, overloaded, rate_limit, authentication_failed), then an
//	          is_error result with subtype success and api_error_status (none for auth);
//	          usage_limit says "Claude AI usage limit reached|<unix time>"; exit 1
//	codex     "Reconnecting..." error events (5xx), an error event and turn.failed with
//	          codex's message ("exceeded retry limit, last status: 500 …", "You've hit your
//	          usage limit. … try again in 2 hours 5 minutes.", "unexpected status 401 …"); exit 1
//	gemini    a result with status "error" and error {type, message: "[API Error: {…}]"};
//	          exit 1. auth: before any output, a message on stderr and exit 41
//	opencode  one error event: APIError {message, statusCode, isRetryable, responseHeaders
//	          (retry-after), responseBody}, or ProviderAuthError; exit 1
//	amp       a result with subtype error_during_execution, is_error and an "error" string;
//	          exit 1. auth: before any output, a message on stderr and exit 1
//	cursor    a message on stderr and exit 1, no result (auth: before any output)
//	copilot   session.error {errorType, message, statusCode} and a result with exitCode 1; exit 1.
//	          auth: before any output, "Error: No authentication information found." and exit 1
//	qwen      an assistant message "[API Error: <status> …]" and an error_during_execution result
//	          with error.message; exit 1. auth without a status: at once, only such a result whose
//	          message is "No auth type is selected…" (text format: on stderr), exit 1; with a
//	          status (401), the API error
//
// The limit messages and Amp's and Cursor's failures follow the vendors'
// documented wording: no capture of them exists.
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
//
// gemini, opencode, amp and cursor refuse an option their CLI does not have
// (exit 1, with the CLI's message: yargs' "Unknown argument: x", commander's
// "error: unknown option '--x'") and read stdin to EOF unless it is a
// terminal; no prompt at all exits 1. The prompt is the prompt argument,
// then stdin after a newline; gemini's -p text is appended to the stdin
// input instead (after a blank line).
//
//   - gemini: without --skip-trust (or GEMINI_CLI_TRUST_WORKSPACE=true) it
//     exits 55 with the real message. Without --yolo (or --approval-mode yolo)
//     the write and shell tools are not registered: those steps print a
//     tool_result error "tool_not_registered" and do nothing (auto_edit allows
//     the file steps). -m sets the model (default gemini-2.5-pro).
//   - opencode: requires the run subcommand (else exit 64); -m must be
//     provider/model (else exit 1); --dir sets the work dir.
//   - amp: without AMP_API_KEY it prints "No API key found. Starting login
//     flow..." on stderr and blocks like the real CLI (in Run it exits 64).
//     Without --dangerously-allow-all a bash step is refused (an is_error
//     tool result) and not run. Execute mode is implied; --stream-json picks
//     the JSON output.
//   - copilot: without credentials (COPILOT_GITHUB_TOKEN, GH_TOKEN,
//     GITHUB_TOKEN, or COPILOT_PROVIDER_BASE_URL) it exits 1 with the real
//     message; with COPILOT_PROVIDER_BASE_URL but no model (--model,
//     COPILOT_MODEL, the scenario's) it exits 1 ("BYOK providers require an
//     explicit model"). Without --allow-all-tools (--allow-all, --yolo,
//     COPILOT_ALLOW_ALL) write and bash steps are denied and not run.
//   - qwen: without OPENAI_API_KEY (or --auth-type) it ends as the auth
//     failure without a status does ("No auth type is selected", exit 1). Without --yolo (or --approval-mode yolo) write and bash
//     steps are declined and not run (auto-edit allows the file steps); -m,
//     then OPENAI_MODEL, sets the model.
//   - cursor: without --trust it exits 1 (a headless run cannot answer the
//     trust prompt). Without --force (or --yolo) a bash step is rejected and
//     not run. --model sets the model in system/init; --workspace the work
//     dir.
package fakeagent
