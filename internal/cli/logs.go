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
not need it, since the attempts themselves come home through git.`
}

func (c *logsCmd) Run(e *env) error {
	l, err := e.loop()
	if err != nil {
		return err
	}
	res, err := l.Logs(e.ctx, c.Change, c.Attempt, e.github)
	if err != nil {
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
