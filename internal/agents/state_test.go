package agents

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/git-ralph/git-ralph/internal/agent"
)

// Every driver but custom (whose user names what it writes in ralph.sandboxWritable)
// declares the state its CLI writes outside the working tree, under HOME or the XDG
// directories, so that it can work in the sandbox; qwen and codex ask for a terminal
// (their shell tools open one: internal/agent/testdata/record/README.md).
func TestEveryDriverDeclaresItsState(t *testing.T) {
	home := "/home/ada"
	env := []string{"HOME=" + home, "XDG_CONFIG_HOME=/xdg/config"}
	for _, name := range Names() {
		d, err := Lookup(name)
		if err != nil {
			t.Fatal(err)
		}
		st := agent.StateOf(d, env)
		if name == "custom" {
			if len(st.Paths()) != 0 {
				t.Errorf("custom declares %v", st.Paths())
			}
			continue
		}
		if len(st.Paths()) == 0 {
			t.Errorf("%s declares no state", name)
		}
		for _, p := range st.Paths() {
			if !filepath.IsAbs(p) || !(strings.HasPrefix(p, home+"/") || strings.HasPrefix(p, "/xdg/config/")) {
				t.Errorf("%s: state %q is not under HOME or XDG_CONFIG_HOME", name, p)
			}
		}
		if st.PTY != (name == "qwen" || name == "codex") {
			t.Errorf("%s: PTY %v", name, st.PTY)
		}
	}
	if got := agent.StateOf(mustLookup(t, "codex"), append(env, "CODEX_HOME=/c")).Paths(); len(got) != 1 || got[0] != "/c" {
		t.Errorf("codex with CODEX_HOME: %v", got)
	}
	if got := agent.StateOf(mustLookup(t, "claude"), env).Files; len(got) != 1 || got[0].Path != home+"/.claude.json" || got[0].Initial != "{}" {
		t.Errorf("claude's files: %+v", got)
	}
	if got := agent.StateOf(mustLookup(t, "claude"), append(env, "CLAUDE_CONFIG_DIR=/cc")).Paths(); len(got) != 1 || got[0] != "/cc" {
		t.Errorf("claude with CLAUDE_CONFIG_DIR: %v", got)
	}
}

func mustLookup(t *testing.T, name string) agent.Driver {
	t.Helper()
	d, err := Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// Every driver's CLI that reads settings its agent could change keeps them from the
// user's next session: a configuration directory of its own for the attempt, or its
// guarded files, each directly in a directory of its state (where Run can put them back).
func TestEveryDriverKeepsItsSettings(t *testing.T) {
	env := []string{"HOME=/home/ada", "XDG_CONFIG_HOME=/xdg/config"}
	for _, name := range Names() {
		d, _ := Lookup(name)
		_, own := d.(agent.OwnStater)
		g, guarded := d.(agent.Guarder)
		if name == "custom" {
			if own || guarded {
				t.Error("custom declares settings")
			}
			continue
		}
		if own == guarded {
			t.Errorf("%s: a configuration of its own %v, guarded files %v: want one", name, own, guarded)
		}
		if guarded {
			dirs := agent.StateOf(d, env).Dirs
			for _, p := range g.Guarded(env) {
				if !slices.Contains(dirs, filepath.Dir(p)) {
					t.Errorf("%s: guarded %s is not directly in its state %q", name, p, dirs)
				}
			}
		}
	}
}
