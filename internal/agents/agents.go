// Package agents is the list of the agents git-ralph can run: Lookup finds one by
// name (--agent, ralph.agent), Names lists them (the error for an unknown name,
// shell completion). The list is explicit code, not registration at init time:
// adding an agent is adding its package under internal/agent and one entry
// here. The tests that run over every driver live here too (argv, diagnoses,
// preflights, what each reports, every transcript through every decoder,
// FuzzDecode, the fake agent's dialects decoded by the drivers).
//
// It holds no driver code of its own and starts nothing: the drivers are in
// internal/agent/<name>, and agent.Run runs them.
package agents

import (
	"fmt"
	"slices"
	"strings"

	"github.com/git-ralph/git-ralph/internal/agent"
	"github.com/git-ralph/git-ralph/internal/agent/amp"
	"github.com/git-ralph/git-ralph/internal/agent/claude"
	"github.com/git-ralph/git-ralph/internal/agent/codex"
	"github.com/git-ralph/git-ralph/internal/agent/copilot"
	"github.com/git-ralph/git-ralph/internal/agent/cursor"
	"github.com/git-ralph/git-ralph/internal/agent/custom"
	"github.com/git-ralph/git-ralph/internal/agent/gemini"
	"github.com/git-ralph/git-ralph/internal/agent/opencode"
	"github.com/git-ralph/git-ralph/internal/agent/qwen"
)

// drivers returns every known driver, sorted by name.
func drivers() []agent.Driver {
	return []agent.Driver{amp.Amp{}, claude.Claude{}, codex.Codex{}, copilot.Copilot{}, cursor.Cursor{}, custom.Custom{}, gemini.Gemini{}, opencode.OpenCode{}, qwen.Qwen{}}
}

// Lookup returns the driver called name. For an unknown name the error lists
// the known ones.
func Lookup(name string) (agent.Driver, error) {
	for _, d := range drivers() {
		if d.Name() == name {
			return d, nil
		}
	}
	return nil, fmt.Errorf("unknown agent %q (known agents: %s)", name, strings.Join(Names(), ", "))
}

// StateDirs are the directories every known driver's agent writes in env (its
// State): what an agent of any run may write.
func StateDirs(env []string) []string {
	var out []string
	for _, d := range drivers() {
		out = append(out, agent.StateOf(d, env).Dirs...)
	}
	return out
}

// Names returns the names of the known drivers, sorted.
func Names() []string {
	var names []string
	for _, d := range drivers() {
		names = append(names, d.Name())
	}
	slices.Sort(names)
	return names
}
