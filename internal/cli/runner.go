package cli

import (
	"errors"
	"fmt"
	"os"

	"github.com/git-ralph/git-ralph/internal/git"
	"github.com/git-ralph/git-ralph/internal/githubflow"
	"github.com/git-ralph/git-ralph/internal/tell"
)

// The runner side of a run on GitHub Actions: what the workflow 'ci init' writes runs.
// Hidden from -h: people run dispatch, status and finish; the runner runs these.

type exportCmd struct {
	Change string `arg:"" help:"The change whose run to export."`
	RunID  int64  `name:"run-id" required:"" help:"The Actions run id ($GITHUB_RUN_ID): the bundle names the run's refs refs/ralph/<change>/runs/<run-id>/." placeholder:"ID"`
	Out    string `required:"" type:"path" help:"The directory to write: ralph.bundle, logs/, summary.json." placeholder:"DIR"`
}

// Help is the long help of export.
func (c *exportCmd) Help() string {
	return `Writes the run's work into DIR for the workflow's artifact: ralph.bundle with the branch
ralph/<change>, the run's attempts as refs/ralph/<change>/runs/<run-id>/attempts/<story>-<n> and
a state commit (run record and learnings) as refs/ralph/<change>/runs/<run-id>/state;
logs/<story>-<n>.log, each cut to its last MiB; and summary.json. A loop that was killed has
what it left in the work tree saved as an attempt first. A loop of the change still running
(its step was killed but not the loop, or it is still saving) is waited for (30s), then
stopped as Ctrl-C would (SIGINT: it saves the attempt under way), and killed if it has not
exited 15s later; what it left is then saved as for a killed loop.`
}

func (c *exportCmd) Run(e *env) error {
	l, err := e.loop()
	if err != nil {
		return err
	}
	res, err := e.flow(l).Export(e.ctx, githubflow.ExportOptions{Change: c.Change, RunID: c.RunID, Out: c.Out})
	if err != nil {
		return err
	}
	for _, r := range res.Refs {
		fmt.Fprintf(e.s.Out, "%s %s\n", r.ID, r.Name)
	}
	from := "its whole history"
	if res.Start != "" {
		from = "the commits after " + res.Start[:7]
	}
	fmt.Fprintf(e.s.Err, "exported %d ref(s) with %s to %s, and %d log(s)\n", len(res.Refs), from, res.Bundle, len(res.Logs))
	if res.Partial != "" {
		return &tell.Error{Msg: "the export is partial: " + res.Partial, Code: githubflow.ExitPartial,
			Hint: "the artifact holds the last checkpoint and the attempts saved before; publish pushes them as for any run"}
	}
	return nil
}

type publishCmd struct {
	Change string `arg:"" help:"The change whose run to publish."`
	RunID  int64  `name:"run-id" required:"" help:"The Actions run id ($GITHUB_RUN_ID)." placeholder:"ID"`
	Bundle string `required:"" type:"path" help:"The bundle export wrote." placeholder:"FILE"`
	Start  string `required:"" help:"The full id of the commit the run started from, taken before the agent ran." placeholder:"COMMIT"`
	Remote string `default:"origin" help:"The remote to push to (default ${default})." placeholder:"NAME"`
}

// Help is the long help of publish.
func (c *publishCmd) Help() string {
	return `Checks the bundle of a run and pushes it, all or nothing. It refuses a bundle with any ref
other than ralph/<change> and refs/ralph/<change>/runs/<run-id>/{attempts/*,state}, a commit
that does not descend from --start, a state commit that is not just record.json and
learnings.md, or any change under .github/workflows (printed as a patch, and added to the
job summary on GitHub Actions). The push is atomic, with a lease on ralph/<change> at --start,
and runs no hook.`
}

func (c *publishCmd) Run(e *env) error {
	repo, err := e.openRepo()
	if err != nil {
		return err
	}
	res, err := githubflow.Publish(e.ctx, repo, githubflow.PublishOptions{Change: c.Change, RunID: c.RunID, Bundle: c.Bundle, Start: c.Start, Remote: c.Remote})
	if res != nil && res.WorkflowPatch != "" {
		fmt.Fprint(e.s.Out, res.WorkflowPatch)
		if p := os.Getenv("GITHUB_STEP_SUMMARY"); p != "" {
			appendSummary(p, "### git-ralph: the run changed .github/workflows, so nothing was pushed\n\n```diff\n"+res.WorkflowPatch+"```\n")
		}
	}
	if err != nil {
		return err
	}
	for _, r := range res.Pushed {
		fmt.Fprintf(e.s.Out, "%s %s\n", r.ID, r.Name)
	}
	fmt.Fprintf(e.s.Err, "published %d ref(s) to %s\n", len(res.Pushed), c.Remote)
	return nil
}

// appendSummary adds markdown to the job summary of GitHub Actions; best effort.
func appendSummary(path, md string) {
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return
	}
	defer f.Close()
	_, _ = f.WriteString(md)
}

// runnerIdentity gives the repository a committer when there is none, as on a fresh
// runner: the github-actions bot's noreply identity. A configured or exported identity
// is left alone.
func runnerIdentity(e *env, repo *git.Repo) error {
	for _, k := range []struct{ key, env, value string }{
		{"user.name", "GIT_COMMITTER_NAME", "github-actions[bot]"},
		{"user.email", "GIT_COMMITTER_EMAIL", "41898282+github-actions[bot]@users.noreply.github.com"},
	} {
		if os.Getenv(k.env) != "" {
			continue
		}
		if _, ok, err := repo.Config(e.ctx, k.key); err != nil || ok {
			if err != nil {
				return err
			}
			continue
		}
		if err := repo.SetConfig(e.ctx, k.key, k.value); err != nil {
			return fmt.Errorf("set %s: %w", k.key, err)
		}
	}
	return nil
}

// deadlineError is what start returns when its --deadline stopped it.
func deadlineError(change string, err error) error {
	if !errors.Is(err, tell.ErrDeadline) {
		return err
	}
	return &tell.Error{Msg: "stopped at the --deadline; the run is saved", Code: tell.ExitDeadline,
		Hint: fmt.Sprintf("resume with 'git ralph start %s'", change)}
}
