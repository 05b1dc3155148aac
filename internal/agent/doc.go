// Package agent runs a coding-agent CLI once, headlessly, and reports what it
// did: the driver interface and the driver list (agent.go), one file per
// driver (claude.go, codex.go, gemini.go, opencode.go, amp.go, cursor.go,
// copilot.go, qwen.go and custom.go for a user's own command), process spawning and killing (run.go,
// proc*.go), stream decoding (stream.go), the failure classes (classify.go)
// and promise parsing (promise.go).
//
// It follows SPEC.md §4 ("Each attempt" steps 1–3, "Interrupt") and §7
// (process identity), and the facts collected in
// shared/reference/agents/AGENTS-REFERENCE.md: §1 (cross-cutting facts for a
// Go runner) and one section per agent (§2 Claude Code, §3 Codex, §4
// OpenCode, §5 Gemini, §6 Amp, §7 Cursor), which each driver's doc comment
// cites; GitHub Copilot CLI and Qwen Code, which the reference does not
// cover, cite their own recordings. testdata holds the reference's
// transcripts, synthetic-* ones derived from them (Amp and Cursor could not
// be run: theirs follow the documented schemas), and copilot-* and qwen-*
// transcripts recorded here from the genuine CLIs against a scripted model
// on loopback (testdata/record).
//
// The package imports nothing else of this module. Run is the only place that
// starts an agent: always with an argv (never a shell), in a new session
// (Setsid, so the agent's process group id equals its pid), with the prompt on
// stdin, and with the whole process group killed when the attempt ends.
//
// Every driver decides the outcome from the agent's terminal event only (the
// result line, turn.completed/turn.failed, the last step_finish, an error
// event), never from text elsewhere in the transcript, and classifies a
// failure (Result.Class: transient, limit, auth) the same way, so that the
// loop can back off, stop resumably or stop at once.
//
// Process identity (ProcStart, GroupAlive, KillGroup) is implemented for Linux
// through /proc. Elsewhere ProcStart reports errors.ErrUnsupported, GroupAlive
// is always false and KillGroup does nothing, so a process group recorded by a
// crashed git-ralph is never signalled there.
package agent
