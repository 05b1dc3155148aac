package cli

import (
	"fmt"
	"strings"
)

type logsCmd struct {
	Change  string `arg:"" optional:"" help:"The change whose run on GitHub Actions to read (default: the only run)."`
	Attempt string `help:"Print the log of this attempt, <story>-<n> (default: list the logs)." placeholder:"S-N"`
}

// Help is the long help of logs.
func (c *logsCmd) Help() string {
	return `Reads the artifact a run on GitHub Actions uploaded when its loop ended: without
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
