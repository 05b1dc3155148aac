package cli

import (
	"fmt"
)

type cancelCmd struct {
	Change string `arg:"" optional:"" help:"The change whose run on GitHub Actions to cancel (default: the only run)."`
	Force  bool   `help:"Force-cancel: also skips the steps that save and publish the run's work."`
}

// Help is the long help of cancel.
func (c *cancelCmd) Help() string {
	return `Asks GitHub to cancel a change's run on GitHub Actions. The loop gets the runner's
SIGINT, saves the attempt under way and stops; the run then still publishes the
checkpoints so far and its attempts, so 'git ralph finish' or 'git ralph start' can go on
from them. --force skips that saving. A run that has already ended is left as it is.`
}

func (c *cancelCmd) Run(e *env) error {
	rem, err := e.remote()
	if err != nil {
		return err
	}
	res, err := rem.CancelRemote(e.ctx, c.Change, c.Force, e.github)
	if err != nil {
		return err
	}
	p := e.s.Palette()
	if res.AlreadyComplete {
		fmt.Fprintf(e.s.Err, "%s run %d of %s is already completed; nothing to cancel\n", p.Success("✓"), res.RunID, res.Change)
		return nil
	}
	fmt.Fprintf(e.s.Err, "%s asked GitHub to cancel run %d of %s\n", p.Success("✓"), res.RunID, res.Change)
	if !c.Force {
		fmt.Fprintf(e.s.Err, "the loop saves its attempt and the run publishes what it has; then: git ralph finish %s --squash|--keep, or git ralph start %s\n", res.Change, res.Change)
	}
	return nil
}
