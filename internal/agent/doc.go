// Package agent is the core every agent driver shares: it runs a coding-agent
// CLI once, headlessly, and reports what it did. It holds the Driver interface
// and the optional ones Run and the loop look for (Diagnoser, Preflighter,
// Reporter, EnvAdder, OutputFiler), Request, Result, Events and Sink
// (agent.go), process spawning and killing (run.go, proc*.go), the bounded line
// reader and the small helpers the decoders share (stream.go), the failure
// classes and their classifier (classify.go), what a driver reports it used
// (usage.go), the secrets no agent sees (secrets.go) and promise parsing
// (promise.go).
//
// Each agent is a package of its own beside it, named after it:
// internal/agent/claude, codex, gemini, opencode, amp, cursor, copilot, qwen,
// and custom for a user's own command. Those that print Claude Code's
// stream-json (amp, qwen, custom's claude-stream-json format) decode it with
// package claude's DecodeStream. internal/agents is the list of them (Lookup,
// Names); internal/agent/agenttest holds what their tests share.
//
// It follows docs/LOOP.md ("Each attempt", "Interrupt", "Process identity") and
// docs/AGENTS.md: "Common to every agent" here, and one section per agent,
// which each driver's package comment cites. testdata holds the transcripts
// every driver's tests read: ones captured from the CLIs, synthetic-* ones derived from them
// (Amp and Cursor could not be run: theirs follow the documented schemas),
// and copilot-* and qwen-* transcripts recorded here from the genuine CLIs
// against a scripted model on loopback (testdata/record).
//
// The package imports nothing else of this module but internal/sandbox (a leaf:
// the policy, and sandbox.Start, which starts a sandboxed agent), no driver
// included: the drivers import it. Run is the only place that starts an agent: always with
// an argv (never a shell), in a new session (Setsid, so the agent's process
// group id equals its pid), with the prompt on stdin, and with the whole
// process group killed when the attempt ends.
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
