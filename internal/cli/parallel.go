package cli

import (
	"context"
	"fmt"
	"os"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/alecthomas/kong"
	"github.com/cli/go-gh/v2/pkg/tableprinter"

	"github.com/git-ralph/git-ralph/internal/loop"
	"github.com/git-ralph/git-ralph/internal/parallel"
	"github.com/git-ralph/git-ralph/internal/start"
	"github.com/git-ralph/git-ralph/internal/status"
	"github.com/git-ralph/git-ralph/internal/tell"
	"github.com/git-ralph/git-ralph/internal/term"
	"github.com/git-ralph/git-ralph/internal/wtrun"
)

// worktreeMapper decodes --worktree or --worktree=PATH (start.WorktreeOption): a switch
// with an optional value.
type worktreeMapper struct{}

// Decode takes --worktree, or --worktree=PATH (never a separate word: that would read
// a change name as the path).
func (worktreeMapper) Decode(ctx *kong.DecodeContext, target reflect.Value) error {
	w := start.WorktreeOption{On: true}
	if ctx.Scan.Peek().Type == kong.FlagValueToken {
		tok := ctx.Scan.Pop()
		s, ok := tok.Value.(string)
		if !ok {
			return fmt.Errorf("--worktree: expected a path, got %v", tok.Value)
		}
		w.Path = s
	}
	target.Set(reflect.ValueOf(w))
	return nil
}

// IsBool makes kong accept --worktree without a value.
func (worktreeMapper) IsBool() bool { return true }

// checkParallel checks the flags that only make sense together.
func (c *startCmd) checkParallel() error {
	if c.Jobs < 0 {
		return &usageError{msg: fmt.Sprintf("-j must be 1 or more, not %d", c.Jobs), hint: "it is how many loops run at once"}
	}
	if len(c.Changes) < 2 {
		return nil
	}
	if !c.Worktree.On {
		return &usageError{msg: "several changes need --worktree", hint: "each runs in a worktree of its own: git ralph start --worktree " + strings.Join(c.Changes, " ")}
	}
	if c.Worktree.Path != "" {
		return &usageError{msg: "--worktree=PATH names one worktree, but " + strconv.Itoa(len(c.Changes)) + " changes were given", hint: "choose where they go with 'git config " + wtrun.WorktreeDirConfig + " DIR' (each change gets DIR/<change>)"}
	}
	if c.DryRun {
		return &usageError{msg: "--dry-run takes one change", hint: "run 'git ralph start <change> --dry-run' for each"}
	}
	seen := map[string]bool{}
	for _, ch := range c.Changes {
		if seen[ch] {
			return &usageError{msg: fmt.Sprintf("change %q is given twice", ch), hint: "one loop per change"}
		}
		seen[ch] = true
	}
	return nil
}

// runParallel runs one child git-ralph per change, each in its own worktree, at most
// -j at a time, and ends with a table of how each did.
func (c *startCmd) runParallel(e *env, l *loop.Loop) error { return c.runParallelThen(e, l, nil) }

// runParallelThen is runParallel calling done(i) as the loop of c.Changes[i] ends.
func (c *startCmd) runParallelThen(e *env, l *loop.Loop, done func(i int)) error {
	names := make([]string, len(c.Changes)) // the run names: a plan's is not its path
	for i, ch := range c.Changes {
		s, err := l.LoadRunChange(e.ctx, ch)
		if err != nil {
			return err
		}
		names[i] = s.Name
	}
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("find git-ralph's own binary: %w", err)
	}
	jobs := make([]parallel.Job, len(c.Changes))
	for i, ch := range c.Changes {
		jobs[i] = parallel.Job{Name: names[i], Argv: append([]string{exe}, c.childArgs(e, ch)...)}
	}
	n := c.Jobs
	if n == 0 || n > len(jobs) {
		n = len(jobs)
	}
	p := e.s.Palette()
	fmt.Fprintf(e.s.Err, "%d loops, %d at a time, each in a worktree of its own\n", len(jobs), n)
	o := parallel.Options{Max: n, Out: e.s.Err, TTY: e.s.StderrTTY, Width: e.s.ErrWidth, Name: "git-ralph"}
	if o.TTY && e.s.ErrDisplay != nil {
		// The block's own cursor codes must reach the terminal; the display makes
		// the loops' lines inert itself (the filter on Err would show its codes as ␛).
		o.Out = e.s.ErrDisplay
	}
	if done != nil {
		o.Done = func(i int, _ parallel.Result) { done(i) }
	}
	results := parallel.Run(e.ctx, e.kill, jobs, o)

	fmt.Fprintln(e.s.Err)
	t := tableprinter.New(e.s.Err, e.s.StderrTTY, max(e.s.ErrWidth, 120))
	t.AddHeader([]string{"CHANGE", "RESULT", "STORIES", "WORKTREE"})
	var failed, complete []string
	for _, r := range results {
		result, stories, wt := "", "-", "-"
		st, _ := reader(l).Status(context.WithoutCancel(e.ctx), r.Name) // after a Ctrl-C too
		if st != nil && st.Record.Change == r.Name {
			if st.Change != nil {
				stories = fmt.Sprintf("%d/%d", status.Done(status.Stories(st.Change)), len(st.Change.Stories))
			}
			if st.Worktree != nil {
				wt = st.Worktree.Path
			}
			result = st.Status
			if st.Record.StopReason != "" && st.Status != "complete" {
				result += ": " + term.Inert(st.Record.StopReason)
			}
		}
		switch {
		case !r.Started:
			result = "not started"
		case r.Code == 0:
			result = p.Success("complete")
			complete = append(complete, r.Name)
		case r.Code == 130:
			result = p.Warn("interrupted")
		default:
			if result == "" || strings.HasPrefix(result, "complete") {
				result = strings.TrimPrefix(r.Last, "error: ")
			}
			result = p.Fail(result)
			failed = append(failed, r.Name)
		}
		t.AddField(r.Name)
		t.AddField(result)
		t.AddField(stories)
		t.AddField(wt)
		t.EndRow()
	}
	_ = t.Render()
	if e.ctx.Err() != nil {
		return &tell.Error{Msg: "interrupted", Code: 130,
			Hint: "resume them all with 'git ralph start --worktree " + strings.Join(c.Changes, " ") + "'; 'git ralph list' shows where each stands"}
	}
	for _, ch := range complete {
		fmt.Fprintf(e.s.Err, "next: git ralph finish %s --squash   (one at a time: each lands on the original branch uncommitted)\n", ch)
	}
	if len(failed) > 0 {
		return &tell.Error{Msg: fmt.Sprintf("%d of %d loops did not complete: %s", len(failed), len(results), strings.Join(failed, ", ")),
			Hint: "'git ralph status " + failed[0] + "' shows why; 'git ralph start " + failed[0] + "' resumes it"}
	}
	return nil
}

// childArgs is the command line of one change's loop: the flags as this command
// resolved them (from the command line or git config), so every child runs alike.
func (c *startCmd) childArgs(e *env, change string) []string {
	args := []string{}
	if e.verbose {
		args = append(args, "-v")
	}
	args = append(args, "start", change, "--worktree",
		"--max-retries", strconv.Itoa(c.MaxRetries), "--agent", c.Agent, "--sandbox="+c.SandboxMode)
	opt := func(name string, set bool, v string) {
		if set {
			args = append(args, name+"="+v)
		}
	}
	dur := func(name string, d time.Duration) { opt(name, d > 0, d.String()) }
	opt("--model", c.Model != "", c.Model)
	opt("--judge", c.Judge != "", c.Judge)
	opt("--judge-model", c.JudgeModel != "", c.JudgeModel)
	dur("--timeout", c.Timeout)
	dur("--idle-timeout", c.IdleTimeout)
	dur("--verify-timeout", c.VerifyTimeout)
	dur("--wait-on-limit", c.WaitOnLimit)
	opt("--max-cost", c.MaxCost > 0, strconv.FormatFloat(c.MaxCost, 'f', -1, 64))
	for _, name := range c.AgentEnvKeep {
		args = append(args, "--agent-env-keep="+name)
	}
	if c.AllowRefChanges {
		args = append(args, "--allow-ref-changes")
	}
	if !c.AllowSkip {
		args = append(args, "--no-allow-skip")
	}
	opt("--max-tokens", c.MaxTokens > 0, strconv.FormatInt(c.MaxTokens, 10))
	if c.Fresh {
		args = append(args, "--fresh")
	}
	if c.TrustIssueAuthor {
		args = append(args, "--trust-issue-author")
	}
	if c.TrustCurrent {
		args = append(args, "--trust-current")
	}
	return slices.Clip(args)
}
