// Package agent runs a coding-agent CLI once, headlessly, and reports what it
// did: the driver interface (one file per agent: claude.go, …), process
// spawning and killing (run.go, proc*.go), stream decoding, and promise
// parsing (promise.go).
//
// It follows SPEC.md §4 ("Each attempt" steps 1–3, "Interrupt") and §7
// (process identity), and the facts collected in
// shared/reference/agents/AGENTS-REFERENCE.md §1 (cross-cutting facts for a Go
// runner) and §2 (Claude Code).
//
// The package imports nothing else of this module. Run is the only place that
// starts an agent: always with an argv (never a shell), in a new session
// (Setsid, so the agent's process group id equals its pid), with the prompt on
// stdin, and with the whole process group killed when the attempt ends.
//
// Process identity (ProcStart, GroupAlive, KillGroup) is implemented for Linux
// through /proc. Elsewhere ProcStart reports errors.ErrUnsupported, GroupAlive
// is always false and KillGroup does nothing, so a process group recorded by a
// crashed git-ralph is never signalled there.
package agent
