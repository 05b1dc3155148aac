package cli

import (
	"fmt"
	"io"
	"strings"

	"github.com/git-ralph/git-ralph/internal/agents"
	"github.com/git-ralph/git-ralph/internal/git"
	"github.com/git-ralph/git-ralph/internal/githubflow"
	"github.com/git-ralph/git-ralph/internal/run"
	"github.com/git-ralph/git-ralph/internal/status"
	"github.com/git-ralph/git-ralph/internal/tell"
	"github.com/git-ralph/git-ralph/internal/term"
)

type logsCmd struct {
	Change  string `arg:"" optional:"" help:"The change whose run to read, here or on GitHub Actions (default: the only run)."`
	Attempt string `help:"Print the log of this attempt, <story>-<n> (default: list the logs)." placeholder:"S-N"`
	Follow  bool   `short:"f" help:"A local run: stream the output of the attempt at work as it comes, and of each one after it, until the run stops (with --attempt, that attempt's)."`
}

// Help is the long help of logs.
func (c *logsCmd) Help() string {
	return `For a run here (in place or in a worktree), lists its attempts with their logs' paths;
--attempt S-N prints one log as it is (the agent's output as it printed it); -f (--follow)
streams the attempt at work as the agent writes it, shown as start shows it, then each
attempt after it, until the run stops ('git ralph status' names the live log).

For a run on GitHub Actions, it reads the artifact the run uploaded when its loop ended: without
--attempt it lists the attempts' logs there, with --attempt S-N it prints that attempt's
log (the end of it: each is cut to its last MiB). GitHub keeps it 14 days; finish does
not need it, since the attempts themselves come home through git.

A run that uploaded no artifact (its job was killed or timed out before the export
step), or whose artifact expired, still has GitHub's own job log: logs then prints the
end (the last MiB) of its "loop" step's log from there, and says so on stderr.`
}

func (c *logsCmd) Run(e *env) error {
	rem, err := e.remote()
	if err != nil {
		return err
	}
	if name, rec, err := rem.LoadRun(c.Change); err == nil && !rec.IsRemote() {
		return c.local(e, rem, name, rec)
	}
	if c.Follow {
		return &usageError{msg: "-f follows a run here, not one on GitHub Actions", hint: "'git ralph status --watch' follows a run on GitHub Actions"}
	}
	res, err := rem.Logs(e.ctx, c.Change, c.Attempt, e.github)
	if err != nil {
		return err
	}
	if jl := res.JobLog; jl != nil {
		why := "uploaded no logs of its attempts (its loop job ended before the export step)"
		if jl.ArtifactExpired {
			why = "has an expired artifact"
		}
		what := `its "loop" step`
		if jl.WholeJob {
			what = `its whole "loop" job (GitHub kept no log per step)`
		}
		fmt.Fprintf(e.s.Err, "run %d of %s %s; this is the log of %s, from the run's job log (%s)\n", res.RunID, res.Change, why, what, jl.File)
		if jl.Cut > 0 {
			fmt.Fprintf(e.s.Err, "only its last %d bytes: %d before them are left out\n", len(res.Data), jl.Cut)
		}
		_, err := e.s.Out.Write(res.Data)
		return err
	}
	if c.Attempt != "" {
		_, err := e.s.Out.Write(res.Data)
		return err
	}
	n := 0
	for _, f := range res.Files {
		if a, ok := strings.CutPrefix(f, "logs/"); ok {
			fmt.Fprintln(e.s.Out, strings.TrimSuffix(a, ".log"))
			n++
		}
	}
	fmt.Fprintf(e.s.Err, "%d attempt log(s) in run %d of %s; print one with: git ralph logs %s --attempt S-N\n", n, res.RunID, res.Change, res.Change)
	return nil
}

// local is logs for a run here: the list of its attempts' logs, one of them, or the
// output as it comes (-f).
func (c *logsCmd) local(e *env, rem *githubflow.Remote, name string, rec *run.Record) error {
	rd := status.Reader{Repo: rem.Repo, Store: rem.Store, Reopen: e.reopenStore}
	if c.Follow {
		// The agent's stream shown as start shows it live: its words, and its tools
		// dimmed, through the driver's own decoder (the raw log for an agent without one).
		out := *e.s
		out.Err = e.s.Out
		rep := term.NewReporter(&out)
		err := rd.Follow(e.ctx, name, c.Attempt, status.WatchPoll, func(a status.AttemptLog, r io.Reader) error {
			fmt.Fprintf(e.s.Err, "== %s: story %s attempt %d (%s) ==\n", name, a.Story, a.N, a.Log)
			drv, err := agents.Lookup(a.Agent)
			if err != nil || a.Agent == "custom" {
				_, err := io.Copy(e.s.Out, r)
				return err
			}
			_, _ = drv.Decode(r, followEvents{rep}) // a stream cut short still showed what it had
			return nil
		})
		if e.ctx.Err() != nil {
			return &tell.Error{Msg: "interrupted", Code: 130, Hint: "nothing was changed; the run goes on"}
		}
		return err
	}
	if c.Attempt != "" {
		a, ok := rd.FindLog(rec, c.Attempt)
		if !ok {
			return tell.UserErr("'git ralph logs "+name+"' lists them", "the run of %q has no attempt %s", name, c.Attempt)
		}
		return rd.Print(a, e.s.Out)
	}
	logs := rd.Logs(rec)
	for _, a := range logs {
		fmt.Fprintln(e.s.Out, term.Inert(status.LogLine(a)))
	}
	fmt.Fprintf(e.s.Err, "%d attempt log(s) of %s; print one with: git ralph logs %s --attempt S-N   (follow the run with -f)\n", len(logs), name, name)
	return nil
}

// followEvents shows a followed attempt's events as start shows them.
type followEvents struct{ r *term.Reporter }

func (f followEvents) Text(t string)         { f.r.AgentText(t) }
func (f followEvents) Tool(name, sum string) { f.r.AgentTool(name, sum) }
func (f followEvents) Terminal()             {}

// reopenStore finds the repository's run store anew (status.Reader.Reopen), not from
// the repository this command opened first: a run's git directory may have moved since.
func (e *env) reopenStore() (*run.Store, error) {
	repo, err := git.Open(e.ctx, ".")
	if err != nil {
		return nil, err
	}
	return run.NewStore(repo.CommonDir), nil
}
