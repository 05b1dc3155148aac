package preflight

import (
	"os"
	"path/filepath"

	"github.com/git-ralph/git-ralph/internal/agent"
	"github.com/git-ralph/git-ralph/internal/gitdir"
	"github.com/git-ralph/git-ralph/internal/sandbox"
)

// SandboxLevel is the level a run working in tree has (commonDir its git directory): set.Level, with whether the git
// directory is writable to the agent (in place, where it lies inside the working tree
// and cannot move out of it for the run, or under a path the user made writable) or
// moves out of the tree while the run works (internal/gitdir). The policies themselves
// are internal/sandbox's (Settings.AgentPolicy and the others).
func SandboxLevel(set sandbox.Settings, tree, commonDir string) sandbox.Level {
	lvl := set.Level
	if lvl.On() {
		lvl.InPlace = sandbox.Covers([]string{tree}, commonDir)
		if lvl.InPlace {
			if _, err := gitdir.Where(tree, commonDir); err != nil {
				lvl.Stays = err.Error()
			} else {
				lvl.InPlace, lvl.Moved = false, true
			}
		}
		lvl.GitWritable = !lvl.InPlace && !lvl.Moved && sandbox.Covers(set.WritableIn(tree), commonDir)
	}
	return lvl
}

// DescribeSandbox is the dry run's account of the policy an attempt of drv working in
// tree would run under (set, its level resolved for tree), one line each, and of where
// the git directory is while the run works.
func DescribeSandbox(set sandbox.Settings, drv agent.Driver, tree, commonDir string, files []string) []string {
	p, _ := set.AgentPolicy(tree, "", files, false)
	own := ""
	if p != nil {
		env := append(os.Environ(), p.Env...)
		if o, ok := drv.(agent.OwnStater); ok {
			// Its CLI's state is a directory of the attempt's (Run makes it): said, not listed.
			if own = o.OwnState(env).Var; own != "" {
				env = append(env, own+"="+sandbox.OwnStatePlaceholder)
			}
		}
		p = agent.PolicyFor(drv, p, env)
	}
	lines := set.Describe(p, own, tree)
	if set.Level.Moved {
		if home, err := gitdir.Where(tree, commonDir); err == nil {
			lines = append(lines, "  git directory: moved to "+filepath.Join(home, ".git")+" while the run works, .git a link to it; put back when the run ends")
		}
	} else if set.Level.InPlace {
		lines = append(lines, "  git directory: stays in the working tree ("+set.Level.Stays+"), writable to the agent; checked and put back after each attempt")
	}
	return lines
}
