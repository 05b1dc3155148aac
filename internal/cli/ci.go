package cli

import (
	"errors"
	"fmt"
	"path/filepath"

	"github.com/git-ralph/git-ralph/internal/ci"
	"github.com/git-ralph/git-ralph/internal/repofile"
	"github.com/git-ralph/git-ralph/internal/tell"
)

type ciCmd struct {
	Init ciInitCmd `cmd:"" help:"Write .github/workflows/ralph.yml, the workflow that runs a change's loop on GitHub Actions."`
}

type ciInitCmd struct {
	Agent  string `config:"ralph.agent" default:"claude" help:"The agent the runner installs and runs (ralph.agent; default ${default})." placeholder:"NAME"`
	Secret string `help:"The repository secret that holds the agent's API key (default: the agent's own variable, e.g. ANTHROPIC_API_KEY)." placeholder:"NAME"`
	Print  bool   `help:"Print the workflow on stdout and write nothing."`
}

// Help is the long help of ci init.
func (c *ciInitCmd) Help() string { return ciInitHelp }

const ciInitHelp = `Writes .github/workflows/ralph.yml at the top of the work tree. Its first line marks it as
git-ralph's: running ci init again updates such a file, and leaves any other file of that
name alone (delete the marker line to keep your own edits).

The workflow has two jobs. "loop" checks out ralph/<change> with a read-only token, installs
git-ralph and the agent, and runs the loop; the agent's API key is in that step's
environment only. "publish" never runs the agent: it checks the loop's git bundle (only
ralph/<change> and refs/ralph/<change>/runs/<run-id>/..., descending from the commit the
run started from, no change under .github/workflows) and pushes it with a lease.

The agent can read its API key in any design: use a key with a spend limit.`

func (c *ciInitCmd) Run(e *env) error {
	if _, ok := ci.LookupAgent(c.Agent); !ok {
		return &usageError{msg: fmt.Sprintf("ci init cannot set up agent %q", c.Agent),
			hint: "choose one of " + joinComma(ci.AgentNames()) + " with --agent"}
	}
	if c.Secret != "" {
		if err := ci.CheckSecret(c.Secret); err != nil {
			return &usageError{msg: err.Error(), hint: "name the secret as GitHub does, e.g. --secret ANTHROPIC_API_KEY"}
		}
	}
	content, err := ci.Render(ci.Options{Agent: c.Agent, Secret: c.Secret, RalphVersion: version()})
	if err != nil {
		return err
	}
	if c.Print {
		_, err := e.s.Out.Write(content)
		return err
	}
	repo, err := e.openRepo()
	if err != nil {
		return err
	}
	head, _, _ := repofile.ReadHead(repo.Root, filepath.Join(repo.Root, filepath.FromSlash(ci.Path))) // only to say why it is updated
	old := head.Data
	action, err := ci.Write(repo.Root, content)
	if errors.Is(err, ci.ErrForeign) {
		return &tell.Error{Msg: ci.Path + " is not git-ralph's; left it alone",
			Hint: "move it away and run 'git ralph ci init' again\nor merge by hand what 'git ralph ci init --print' shows"}
	}
	if err != nil {
		return fmt.Errorf("write %s: %w", ci.Path, err)
	}
	p := e.s.Palette()
	switch action {
	case ci.Created:
		fmt.Fprintf(e.s.Err, "%s wrote %s (agent %s)\n", p.Success("✓"), ci.Path, c.Agent)
	case ci.Updated:
		fmt.Fprintf(e.s.Err, "%s updated %s (agent %s)\n", p.Success("✓"), ci.Path, c.Agent)
		if ci.Outdated(old) {
			fmt.Fprintf(e.s.Err, "      its loop step now runs git-ralph itself, not through git: a cancelled run publishes the story under way\n")
		}
	case ci.Unchanged:
		fmt.Fprintf(e.s.Err, "%s %s is already up to date (agent %s)\n", p.Success("✓"), ci.Path, c.Agent)
	}
	a, _ := ci.LookupAgent(c.Agent)
	secret := c.Secret
	if secret == "" {
		secret = a.KeyEnv
	}
	fmt.Fprintf(e.s.Err, "next: set the secret %s to the agent's API key: gh secret set %s\n", secret, secret)
	fmt.Fprintf(e.s.Err, "      (the agent can read it: use a key with a spend limit)\n")
	fmt.Fprintf(e.s.Err, "then: commit this to the default branch and push it: git add %s && git commit -m 'Run git-ralph on GitHub Actions'\n",
		filepath.ToSlash(ci.Path))
	return nil
}

func joinComma(s []string) string {
	out := ""
	for i, v := range s {
		if i > 0 {
			out += ", "
		}
		out += v
	}
	return out
}
