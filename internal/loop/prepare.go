package loop

import (
	"context"
	"errors"
	"fmt"
	"github.com/git-ralph/git-ralph/internal/sandbox"
	"github.com/git-ralph/git-ralph/internal/tell"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/git-ralph/git-ralph/internal/agent"
	"github.com/git-ralph/git-ralph/internal/git"
	"github.com/git-ralph/git-ralph/internal/run"
	"github.com/git-ralph/git-ralph/internal/source"
)

// prepare returns a record in status running with the worktree on the branch at the
// recorded checkpoint: a new run, a resumed one, or one started over with --fresh.
func (l *Loop) prepare(ctx context.Context, r *Resolved) (*run.Record, error) {
	rec, err := l.Store.Load(r.Change)
	if errors.Is(err, run.ErrNoRun) {
		if !r.Adopt {
			return l.newRun(ctx, r)
		}
		rec, err = l.adopt(context.WithoutCancel(ctx), r)
	}
	if err != nil {
		return nil, err
	}
	// Whatever happens next, git steps must not be cut short by a Ctrl-C.
	gctx := context.WithoutCancel(ctx)
	if rec.Status == run.Dispatching || rec.Status == run.Dispatched {
		// A run on GitHub Actions: its result comes home (or its start commit, when it
		// published nothing), and the loop goes on here from there.
		if err := l.resumeRemoteRun(gctx, rec); err != nil {
			return nil, err
		}
	}
	branch := rec.Branch
	exists, err := l.Repo.BranchExists(gctx, branch)
	if err != nil {
		return nil, err
	}
	tamper, config := "", false
	if rec.Status == run.Starting || rec.Status == run.Running || rec.Busy != "" {
		// A crash-resume: the git that died with git-ralph may have left its locks,
		// and so may the orphan agent's git once it is stopped.
		if err := l.stopOrphanAgent(rec); err != nil {
			return nil, err
		}
		if err := l.ClearCrashLocks(gctx, rec, "git ralph start "+r.Change); err != nil {
			return nil, err
		}
		// Before git-ralph's git reads anything of the work tree: the surface as it
		// was before the attempt the crash cut short.
		if tamper, config, err = l.resumeSurface(gctx, rec, r.TrustCurrent); err != nil {
			return nil, err
		}
	}
	if rec.Status == run.Starting {
		return l.finishStarting(gctx, r.Change, rec)
	}
	if !exists {
		if !r.Fresh {
			return nil, tell.UserErr("start over with 'git ralph start "+r.Change+" --fresh'",
				"the run of %q has lost its branch %s", r.Change, branch)
		}
		if err := l.Store.Remove(r.Change); err != nil {
			return nil, err
		}
		return l.newRun(ctx, r)
	}
	if err := l.stopOrphanAgent(rec); err != nil {
		return nil, err
	}
	if err := l.resume(gctx, rec, tamper); err != nil {
		return nil, err
	}
	if config {
		// Its settings came from the agent's config: saved and restored, it stops here.
		rec.Stop(run.Interrupted, "the agent had changed the repository's config; restored", nil)
		if err := l.Save(rec); err != nil {
			return nil, err
		}
		return nil, errReadAgain(r.Change, "git ralph start "+r.Change)
	}
	if r.Fresh {
		if err := l.Busy(rec, "start --fresh", func() error { return l.startOver(gctx, rec) }); err != nil {
			return nil, err
		}
	}
	rec.Agent, rec.Model = r.Agent, r.Model
	rec.Stop(run.Running, "", nil)
	rec.PID, rec.Busy = os.Getpid(), ""
	if r.RunID != 0 {
		MarkRun(rec, r.RunID)
	}
	return rec, l.Save(rec)
}

// SaveKilled settles the run of a killed loop (the record says running or starting; the
// caller holds the lock): the orphan agent is stopped, a killed git's locks removed once no
// git uses them (one still at work is waited for up to gitWait, at least LockWait), the
// attempt's leftovers saved as an attempt and the branch restored; the record says
// interrupted. Any other record is left as it is. again is for the hint.
func (l *Loop) SaveKilled(ctx context.Context, rec *run.Record, again string, gitWait time.Duration) error {
	if rec.Status != run.Running && rec.Status != run.Starting {
		return nil
	}
	if err := l.stopOrphanAgent(rec); err != nil {
		return err
	}
	if err := l.clearKilledLoopLocks(ctx, rec, again, gitWait); err != nil {
		return err
	}
	tamper, _, err := l.resumeSurface(ctx, rec, false)
	if err != nil {
		return err
	}
	if err := l.resume(ctx, rec, tamper); err != nil {
		return err
	}
	rec.Stop(run.Interrupted, "the loop was killed", nil)
	return l.Save(rec)
}

// stopOrphanAgent kills the agent a crashed git-ralph left running, identified by pid
// and start time so that a reused pid is never signalled, and by the markers in its
// environment (RALPH_CHANGE, RALPH_ATTEMPT_ID) so that a record the agent forged
// cannot have git-ralph signal a process of its choosing: another one is left alone,
// with a warning.
func (l *Loop) stopOrphanAgent(rec *run.Record) error {
	// First all that the run's attempts left in their cgroups (a daemon of the agent's
	// in a session of its own too), where the dead loop could make them.
	ended := sandbox.EndStaleOf(rec.PID)
	for _, n := range ended {
		l.Report.Warn(n)
	}
	if l.Store != nil {
		if a, ok := l.Store.LoadAgent(rec.Change); ok && rec.AgentPID == 0 {
			rec.AgentPID, rec.AgentStart, rec.AgentID = a.PID, a.Start, a.ID // the loop's agent (the judge's is in the record)
		}
		defer l.Store.RemoveAgent(rec.Change)
	}
	if rec.AgentPID == 0 || len(ended) > 0 { // the agent started in that cgroup: ended with it
		rec.AgentPID, rec.AgentStart, rec.AgentID = 0, 0, ""
		return nil
	}
	if agent.GroupAlive(rec.AgentPID, rec.AgentStart) && (rec.AgentID == "" ||
		!agent.HasEnv(rec.AgentPID, "RALPH_CHANGE="+rec.Change, "RALPH_ATTEMPT_ID="+rec.AgentID)) {
		l.Report.Warn(fmt.Sprintf("process group %d, recorded as the agent an earlier run left behind, does not carry that agent's RALPH_CHANGE and RALPH_ATTEMPT_ID: left alone", rec.AgentPID))
	} else if agent.GroupAlive(rec.AgentPID, rec.AgentStart) {
		l.Report.Step(fmt.Sprintf("stopping the agent (pid %d) an earlier run left behind", rec.AgentPID))
		if err := agent.KillGroup(rec.AgentPID, rec.AgentStart); err != nil {
			return fmt.Errorf("stop agent process group %d: %w", rec.AgentPID, err)
		}
	}
	rec.AgentPID, rec.AgentStart, rec.AgentID = 0, 0, ""
	return nil
}

// newRun is docs/LOOP.md, "New run"; the order of the steps is what makes a crash anywhere
// recoverable: the record first, then the backup, then the branch, then the commit.
func (l *Loop) newRun(ctx context.Context, r *Resolved) (*run.Record, error) {
	gctx := context.WithoutCancel(ctx)
	branch := BranchName(r.Change)
	cur, head, err := l.StartPoint(gctx, branch, "switch to the branch the work should come back to (e.g. 'git switch main'), then run 'git ralph start "+r.Change+"' again\nthe existing "+branch+" will be kept under refs/ralph/"+r.Change+"/backup/")
	if err != nil {
		return nil, err
	}
	now := l.Time()
	rec := &run.Record{
		Change: r.Change, Branch: branch, Original: cur, OriginalCommit: head,
		Status: run.Starting, Agent: r.Agent, Model: r.Model, Started: now, PID: os.Getpid(),
	}
	source.Record(rec, r.Source)
	if r.RunID != 0 {
		// Export stops only the loop its record says works for its run; a new run
		// starts from nothing the remote has (no start commit): its bundle is whole.
		MarkRun(rec, r.RunID)
	}
	if err := l.Save(rec); err != nil {
		return nil, err
	}
	if err := l.createBranch(gctx, rec); err != nil {
		return nil, err
	}
	return rec, nil
}

// StartPoint is where a new run starts from: the current branch ("" when HEAD is
// detached) and HEAD's commit. Starting from branch itself, which an earlier run left
// checked out, is refused with hint.
func (l *Loop) StartPoint(ctx context.Context, branch, hint string) (cur, head string, err error) {
	cur, err = l.Repo.Branch(ctx)
	if err != nil {
		return "", "", err
	}
	if cur == branch {
		return "", "", tell.UserErr(hint, "you are on %s, which an earlier run left behind", branch)
	}
	if head, err = l.Repo.Head(ctx); err != nil {
		return "", "", err
	}
	return cur, head, nil
}

// createBranch runs steps 2–4 of a new run from the original HEAD.
func (l *Loop) createBranch(ctx context.Context, rec *run.Record) error {
	if err := l.keepStaged(ctx, rec); err != nil {
		return err
	}
	if err := l.BackupBranch(ctx, rec); err != nil {
		return err
	}
	if err := l.Repo.CheckoutNewBranch(ctx, rec.Branch); err != nil {
		return fmt.Errorf("create branch %s: %w", rec.Branch, err)
	}
	return l.commitInitial(ctx, rec)
}

// keepStaged keeps what the user had staged, when it differs from HEAD, as a commit
// under refs/ralph/<change>/staged/<unix-seconds> before anything changes. "initial
// state" records the work tree, so a file staged and then edited again would otherwise
// keep only its newer version; its staged one would be left unreferenced.
func (l *Loop) keepStaged(ctx context.Context, rec *run.Record) error {
	index, err := l.Repo.IndexTree(ctx)
	if err != nil {
		return fmt.Errorf("read the index: %w", err)
	}
	head, err := l.Repo.TreeOf(ctx, rec.OriginalCommit)
	if err != nil {
		return err
	}
	if index == head {
		return nil
	}
	msg := fmt.Sprintf("staged changes before git ralph start\n\nRalph-Change: %s\n", rec.Change)
	id, err := l.Repo.CommitTree(ctx, index, []string{rec.OriginalCommit}, msg)
	if err != nil {
		return fmt.Errorf("keep the staged changes: %w", err)
	}
	ref, err := l.freeRef(ctx, stagedRef(rec.Change, rec.Started))
	if err != nil {
		return err
	}
	if err := l.Repo.UpdateRef(ctx, ref, id); err != nil {
		return fmt.Errorf("keep the staged changes: %w", err)
	}
	l.Report.Step(fmt.Sprintf("kept what you had staged as %s (\"initial state\" holds the work tree)", ref))
	return nil
}

// BackupBranch keeps the tip of an existing ralph/<change> under refs/ralph/<change>/backup/.
func (l *Loop) BackupBranch(ctx context.Context, rec *run.Record) error {
	tip, ok, err := l.Repo.ResolveRef(ctx, "refs/heads/"+rec.Branch)
	if err != nil || !ok {
		return err
	}
	for _, b := range rec.Backups {
		if id, ok, _ := l.Repo.ResolveRef(ctx, b); ok && id == tip {
			return nil
		}
	}
	ref, err := l.freeRef(ctx, BackupRef(rec.Change, l.Time()))
	if err != nil {
		return err
	}
	if err := l.Repo.UpdateRef(ctx, ref, tip); err != nil {
		return fmt.Errorf("back up %s: %w", rec.Branch, err)
	}
	rec.Backups = append(rec.Backups, ref)
	l.Report.Step(fmt.Sprintf("kept the old %s (%s) as %s", rec.Branch, Short(tip), ref))
	return l.Save(rec)
}

// commitInitial commits whatever the user had uncommitted as "initial state" on the
// branch. If the user's own commit hooks refuse it, everything is put back as it was.
func (l *Loop) commitInitial(ctx context.Context, rec *run.Record) error {
	if err := l.Repo.AddAll(ctx); err != nil {
		return err
	}
	id, err := l.Repo.Commit(ctx, "initial state", git.CommitOptions{AllowEmpty: true})
	if err != nil {
		l.rollbackStart(ctx, rec)
		return initialCommitError(err)
	}
	rec.Initial, rec.Checkpoint, rec.Status = id, id, run.Running
	if err := l.Save(rec); err != nil {
		return err
	}
	from := rec.Original
	if from == "" {
		from = Short(rec.OriginalCommit)
	}
	l.Report.Step(fmt.Sprintf("on branch %s from %s; initial state %s", rec.Branch, from, Short(id)))
	if other, ok := strings.CutPrefix(rec.Original, "ralph/"); ok && other != rec.Change {
		if names, err := l.Store.Changes(); err == nil && slices.Contains(names, other) {
			// Said, not refused: going on from a run's work may be what was meant.
			l.Report.Warn(fmt.Sprintf("%s is the branch of the run %q: %s starts from its work, its checkpoints included, "+
				"and finish lands it back on %s", rec.Original, other, rec.Branch, rec.Original))
		}
	}
	return nil
}

// initialCommitError is the error of an "initial state" commit that failed (err): refused
// by the user's commit hooks only when git says one was there and the commit exited as a
// refusal does (a *git.CommitHookError); else git's own failure. Nothing was changed.
func initialCommitError(err error) error {
	var hook *git.CommitHookError
	if errors.As(err, &hook) {
		return &tell.Error{Msg: "the \"initial state\" commit was refused",
			Hint: "git-ralph commits your uncommitted work as \"initial state\" and your commit hooks (" + strings.Join(hook.Hooks, " or ") + ") refused it:\n" +
				Tail(hook.Err.Stderr, 10) + "\ncommit or stash your work first, or fix the hook; nothing was changed",
			Err: err}
	}
	detail := err.Error()
	var ge *git.Error
	if errors.As(err, &ge) && ge.Stderr != "" {
		detail = Tail(ge.Stderr, 10)
	}
	return &tell.Error{Msg: "the \"initial state\" commit failed",
		Hint: "git-ralph commits your uncommitted work as \"initial state\", and git could not:\n" + detail + "\nnothing was changed",
		Err:  err}
}

// rollbackStart undoes a new run whose initial commit failed: unstage, go back to the
// original branch with the work still uncommitted, put the branch back, drop the record.
func (l *Loop) rollbackStart(ctx context.Context, rec *run.Record) {
	if err := l.Repo.MixedReset(ctx); err != nil {
		l.Report.Warn(fmt.Sprintf("could not unstage your work on %s (%v)", rec.Branch, err))
	}
	target := rec.Original
	if target == "" {
		target = rec.OriginalCommit
	}
	if err := l.Repo.Checkout(ctx, target); err != nil {
		// Leave everything where it is: the record says where we were.
		l.Report.Warn(fmt.Sprintf("could not go back to %s (%v): you are on %s with your work uncommitted, and the run's record is kept",
			BranchOrDetached(rec.Original, rec.OriginalCommit), err, rec.Branch))
		return
	}
	l.DropNewRun(ctx, rec)
}

// DropNewRun ends a run that could not be made: ralph/<change> goes back to what it
// was before (its last backup, or no branch at all) and the record goes. The caller
// reports the error that made it give up; a step of this that fails is a warning.
func (l *Loop) DropNewRun(ctx context.Context, rec *run.Record) {
	var err error
	if n := len(rec.Backups); n > 0 {
		var tip string
		var ok bool
		if tip, ok, err = l.Repo.ResolveRef(ctx, rec.Backups[n-1]); ok {
			err = l.Repo.UpdateRef(ctx, "refs/heads/"+rec.Branch, tip)
		}
	} else if exists, berr := l.Repo.BranchExists(ctx, rec.Branch); berr != nil {
		err = berr
	} else if exists {
		err = l.Repo.DeleteBranch(ctx, rec.Branch)
	}
	if err != nil {
		l.Report.Warn(fmt.Sprintf("could not put %s back as it was before the run (%v)", rec.Branch, err))
	}
	if err := l.Store.Remove(rec.Change); err != nil {
		l.Report.Warn(fmt.Sprintf("could not remove the record of the run that was not made (%v)", err))
	}
}

// finishStarting completes a new run that crashed before its initial state commit was
// recorded, from what git shows, never committing onto a branch it did not create.
func (l *Loop) finishStarting(ctx context.Context, change string, rec *run.Record) (*run.Record, error) {
	cur, err := l.Repo.Branch(ctx)
	if err != nil {
		return nil, err
	}
	head, err := l.Repo.Head(ctx)
	if err != nil {
		return nil, err
	}
	switch {
	case cur == rec.Branch && head == rec.OriginalCommit:
		// Branch created, initial commit not made.
		if err := l.commitInitial(ctx, rec); err != nil {
			return nil, err
		}
	case cur == rec.Branch:
		c, err := l.Repo.Log(ctx, head, 1)
		if err != nil {
			return nil, err
		}
		if len(c) == 0 || c[0].Subject != "initial state" || len(c[0].Parents) == 0 || c[0].Parents[0] != rec.OriginalCommit {
			return nil, tell.UserErr("start over with 'git ralph start "+change+" --fresh'", "the interrupted start of %q left %s in an unexpected state", change, rec.Branch)
		}
		rec.Initial, rec.Checkpoint, rec.Status = head, head, run.Running
	case cur == rec.Original && head == rec.OriginalCommit:
		// Nothing happened in git yet (or only the backup).
		if err := l.createBranch(ctx, rec); err != nil {
			return nil, err
		}
	default:
		return nil, tell.UserErr("switch back to "+OriginalName(rec)+" and run 'git ralph start "+change+"' again, or start over with --fresh",
			"an interrupted start of %q is pending, but HEAD moved since", change)
	}
	rec.Status, rec.PID = run.Running, os.Getpid()
	return rec, l.Save(rec)
}

// OriginalName names the branch rec's run started from, or its start commit, cut short,
// when HEAD was detached (BranchOrDetached says "detached HEAD <commit>").
func OriginalName(rec *run.Record) string {
	if rec.Original != "" {
		return rec.Original
	}
	return Short(rec.OriginalCommit)
}

// resume brings the worktree back to the branch at the recorded checkpoint. After a crash
// (the record says running, the lock was free) what the worktree holds is the cut attempt's:
// saved as an attempt ref (failed with tamper as its reason, when the check found the
// surface changed), then the branch restored. After a clean stop, a difference is the
// user's: uncommitted changes are refused, commits on the branch become the checkpoint.
func (l *Loop) resume(ctx context.Context, rec *run.Record, tamper string) error {
	cur, err := l.Repo.Branch(ctx)
	if err != nil {
		return err
	}
	st, err := l.Repo.Status(ctx)
	if err != nil {
		return err
	}
	dirty := len(st) > 0
	crashed := rec.Status == run.Running // the lock is ours, so whoever wrote "running" died
	tip, _, err := l.Repo.ResolveRef(ctx, "refs/heads/"+rec.Branch)
	if err != nil {
		return err
	}
	head, err := l.Repo.Head(ctx)
	if err != nil {
		return err
	}
	if !crashed && dirty && rec.Busy != "" {
		// A resume after a clean stop was killed while it switched to the branch (the
		// worktree was clean then): what differs is its half-done checkout. Take the
		// user's commits as it did, then keep the leftovers and restore, as after a crash.
		if tip != rec.Checkpoint {
			if err := l.adoptUserTip(ctx, rec, tip); err != nil {
				return err
			}
		}
		crashed = true
	}
	if !crashed {
		if dirty {
			where := BranchOrDetached(cur, head)
			hint := "commit or stash them, then run 'git ralph start " + rec.Change + "' again"
			if cur == rec.Branch {
				hint = "commit them on " + rec.Branch + " (the commit becomes the new checkpoint) or stash them, then run 'git ralph start " + rec.Change + "' again"
			}
			return tell.UserErr(hint, "you have uncommitted changes on %s", where)
		}
		if tip == rec.Checkpoint && cur == rec.Branch {
			return nil
		}
		return l.Busy(rec, "resume", func() error {
			if tip != rec.Checkpoint {
				if err := l.adoptUserTip(ctx, rec, tip); err != nil {
					return err
				}
			}
			if cur != rec.Branch {
				return l.Repo.CheckoutNoHooks(ctx, rec.Branch) // what the agent wrote: no post-checkout over it
			}
			return nil
		})
	}
	if !dirty && cur == rec.Branch && head == rec.Checkpoint {
		if a := rec.Last(); tamper != "" && a != nil && a.Outcome == run.OutcomeRunning {
			a.Outcome, a.Reason, a.PassOn, a.Ended = run.OutcomeFailed, tamper, true, l.Time()
			return l.Save(rec)
		}
		return nil
	}
	if !dirty && cur == rec.Branch && tip != rec.Checkpoint {
		if ok, err := l.adoptCheckpoint(ctx, rec, tip); err != nil || ok {
			return err
		}
	}
	story := rec.CurrentStory
	if story == "" {
		story = "resume"
	}
	att, err := l.leftoverAttempt(ctx, rec, story)
	if err != nil {
		return err
	}
	if tamper != "" {
		att.Outcome, att.Reason, att.PassOn = run.OutcomeFailed, tamper, true
		return l.saveAndRestore(ctx, rec, att, tamper)
	}
	return l.saveAndRestore(ctx, rec, att, "left over from an interrupted run")
}

// BranchOrDetached names branch cur, or "detached HEAD <head>" when cur is "" (OriginalName
// is the short form for where a run started).
func BranchOrDetached(cur, head string) string {
	if cur != "" {
		return cur
	}
	return "detached HEAD " + Short(head)
}

// adoptCheckpoint records a checkpoint commit whose recording a crash cut short: the
// branch tip is "checkpoint: <current story>" of this change, right on the checkpoint.
func (l *Loop) adoptCheckpoint(ctx context.Context, rec *run.Record, tip string) (bool, error) {
	c, err := l.Repo.Log(ctx, tip, 1)
	if err != nil || len(c) == 0 {
		return false, err
	}
	if len(c[0].Parents) == 0 || c[0].Parents[0] != rec.Checkpoint || rec.CurrentStory == "" ||
		c[0].Trailers["Ralph-Story"] != rec.CurrentStory || c[0].Trailers["Ralph-Change"] != rec.Change {
		return false, nil
	}
	if ref, ok := source.RefOfTrailers(rec.Change, c[0].Trailers); ok {
		ref.StoryLevel = rec.StoryLevel
		source.Record(rec, ref) // a plan the checkpoint moved to completed/: the run follows it
	}
	if a := rec.Last(); a != nil && a.Story == rec.CurrentStory && a.Outcome == run.OutcomeRunning {
		a.Outcome, a.Commit, a.Ended = run.OutcomeComplete, tip, l.Time()
	}
	l.Report.Step(fmt.Sprintf("recorded checkpoint %s for story %s, made just before the last run stopped", Short(tip), rec.CurrentStory))
	rec.Checkpoint = tip
	return true, l.Save(rec)
}

// adoptUserTip takes a branch the user moved after a clean stop (commits made by hand,
// say to finish a story, or a reset to redo one) as the new checkpoint. A checkpoint
// that the new tip does not contain is kept under refs/ralph/<change>/backup/.
func (l *Loop) adoptUserTip(ctx context.Context, rec *run.Record, tip string) error {
	contains, err := l.Repo.IsAncestor(ctx, rec.Checkpoint, tip)
	if err != nil {
		return err
	}
	if !contains {
		ref := BackupRef(rec.Change, l.Time())
		if err := l.Repo.UpdateRef(ctx, ref, rec.Checkpoint); err != nil {
			return err
		}
		rec.Backups = append(rec.Backups, ref)
		l.Report.Step(fmt.Sprintf("%s was moved off the last checkpoint %s; that checkpoint is kept as %s", rec.Branch, Short(rec.Checkpoint), ref))
	}
	l.Report.Step(fmt.Sprintf("continuing from %s as it is now (%s)", rec.Branch, Short(tip)))
	rec.Checkpoint = tip
	return l.Save(rec)
}

// leftoverAttempt returns the record's running attempt at story, or a new one. An
// attempt whose ref a crash already wrote (after saving, before recording) is not
// reused: the leftovers get a ref of their own, so nothing saved is ever overwritten.
func (l *Loop) leftoverAttempt(ctx context.Context, rec *run.Record, story string) (*run.Attempt, error) {
	if a := rec.Last(); a != nil && a.Story == story && a.Outcome == run.OutcomeRunning {
		_, saved, err := l.Repo.ResolveRef(ctx, AttemptRef(rec.Change, a.Story, a.N))
		if err != nil || !saved {
			return a, err
		}
		a.Outcome, a.Ref, a.Ended = run.OutcomeInterrupted, AttemptRef(rec.Change, a.Story, a.N), l.Time()
	}
	n := rec.NextAttemptN(story)
	for {
		_, taken, err := l.Repo.ResolveRef(ctx, AttemptRef(rec.Change, story, n))
		if err != nil {
			return nil, err
		}
		if !taken {
			break
		}
		n++
	}
	rec.Attempts = append(rec.Attempts, run.Attempt{Story: story, N: n, Outcome: run.OutcomeRunning, Started: l.Time()})
	return rec.Last(), nil
}

// startOver is --fresh on an existing run: the branch tip is kept under backup/, the
// branch goes back to its "initial state" commit (which holds the user's uncommitted
// work), and the attempts are forgotten.
func (l *Loop) startOver(ctx context.Context, rec *run.Record) error {
	if rec.Initial == "" {
		// A dispatched run that continued a branch begun from another commit than the
		// one recorded: no initial state commit was recorded, and none is taken from a
		// remote record.
		return tell.UserErr("keep the branch with 'git ralph finish "+rec.Change+" --keep', then start a new run with 'git ralph start "+rec.Change+"'",
			"the run of %q has no initial state commit recorded to start over from", rec.Change)
	}
	if err := l.BackupBranch(ctx, rec); err != nil {
		return err
	}
	if err := l.Repo.Restore(ctx, rec.Branch, rec.Initial); err != nil {
		return fmt.Errorf("reset %s to its initial state: %w", rec.Branch, err)
	}
	rec.Checkpoint, rec.Attempts, rec.CostUSD, rec.CostKnown, rec.CurrentStory = rec.Initial, nil, 0, false, ""
	rec.Tokens, rec.TokensKnown = 0, false
	rec.Started = l.Time()
	l.Report.Step(fmt.Sprintf("started %s over from its initial state %s", rec.Branch, Short(rec.Initial)))
	return l.Save(rec)
}

// MarkRun records the Actions run a runner works for. A new run id starts from the
// checkpoint the runner has now.
func MarkRun(rec *run.Record, id int64) {
	if rec.Remote == nil {
		rec.Remote = &run.Remote{}
	}
	if rec.Remote.RunID != id {
		rec.Remote.RunID, rec.Remote.StartCommit = id, rec.Checkpoint
	}
}
