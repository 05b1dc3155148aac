package cli

import (
	"fmt"

	"github.com/git-ralph/git-ralph/internal/loop"
	"github.com/git-ralph/git-ralph/internal/term"
)

type finishCmd struct {
	Change string `arg:"" optional:"" help:"The change; may be left out when exactly one run exists."`
	Squash bool   `xor:"mode" required:"" help:"Back to the original branch with all the work uncommitted; delete ralph/<change>."`
	Keep   bool   `xor:"mode" required:"" help:"Stay on ralph/<change> with its checkpoint commits."`
}

// Help is the long help of finish.
func (c *finishCmd) Help() string {
	return `--squash switches back to the branch the run started from, squash-merges ralph/<change>
onto it, unstages everything (so the whole change is uncommitted work, as before the
run, plus what the agent did) and deletes the branch. The branch tip stays reachable
under refs/ralph/<change>/backup/. It refuses, changing nothing, while a loop runs, when
the working tree has uncommitted changes, or when the original branch is gone; if the
squash conflicts, the original branch is left as it was and ralph/<change> intact.

--keep stays on (or switches to) ralph/<change> and forgets the run; the branch keeps
its checkpoint commits.`
}

func (c *finishCmd) Run(e *env) error {
	l, err := e.loop()
	if err != nil {
		return err
	}
	mode := loop.Keep
	if c.Squash {
		mode = loop.Squash
	}
	res, err := l.Finish(e.ctx, c.Change, mode)
	if err != nil {
		return err
	}
	printFinish(e.s, res, mode)
	return nil
}

func printFinish(s *term.Streams, res *loop.FinishResult, mode loop.FinishMode) {
	p := s.Palette()
	if res.Worktree != "" {
		printFinishWorktree(s, res, mode)
		return
	}
	if mode == loop.Keep {
		fmt.Fprintf(s.Err, "%s on %s with its checkpoint commits; the run of %s is finished\n", p.Success("✓"), p.Branch(res.Branch), res.Change)
		return
	}
	fmt.Fprintf(s.Err, "%s the work of %s is on %s as %d uncommitted change(s); %s was deleted (its commits are kept as %s)\n",
		p.Success("✓"), res.Change, p.Branch(res.Target), res.Files, res.Branch, res.Backup)
}

// printFinishWorktree says what finish did with a worktree run, and where its worktree is.
func printFinishWorktree(s *term.Streams, res *loop.FinishResult, mode loop.FinishMode) {
	p := s.Palette()
	if mode == loop.Keep {
		fmt.Fprintf(s.Err, "%s %s keeps its checkpoint commits; the run of %s is finished\n", p.Success("✓"), p.Branch(res.Branch), res.Change)
	} else {
		fmt.Fprintf(s.Err, "%s the work of %s is on %s as %d uncommitted change(s); %s was deleted (its commits are kept as %s)\n",
			p.Success("✓"), res.Change, p.Branch(res.Target), res.Files, res.Branch, res.Backup)
	}
	switch {
	case res.RemovedWorktree:
		fmt.Fprintf(s.Err, "removed the worktree %s\n", res.Worktree)
	case res.KeptWorktree:
		fmt.Fprintf(s.Err, "%s kept the worktree %s: it has %d uncommitted change(s); remove it yourself once you have looked (git worktree remove %s)\n",
			p.Warn("!"), res.Worktree, res.KeptChanges, res.Worktree)
	}
}
