package loop

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"text/template"

	"github.com/git-ralph/git-ralph/internal/agent"
	"github.com/git-ralph/git-ralph/internal/git"
	"github.com/git-ralph/git-ralph/internal/prompt"
	"github.com/git-ralph/git-ralph/internal/run"
	"github.com/git-ralph/git-ralph/internal/sandbox"
	"github.com/git-ralph/git-ralph/internal/source"
	"github.com/git-ralph/git-ralph/internal/surface"
	"github.com/git-ralph/git-ralph/internal/tasklist"
)

// work runs attempts until every story is complete, a story runs out of retries, the
// cost limit is passed, the agent cannot run, or the user interrupts; then it checks the
// trust surface once more (lastCheck).
func (l *Loop) work(ctx context.Context, o Options, ch *source.Source, drv agent.Driver, rec *run.Record) (*Summary, error) {
	sum, err := l.attempts(ctx, o, ch, drv, rec)
	if cerr := l.lastCheck(context.WithoutCancel(ctx), rec); cerr != nil && err == nil {
		err = cerr
	}
	return sum, err
}

// lastCheck compares the trust surface with what the last attempt's check left, and puts
// back what differs: after that check git-ralph's own git went on (the checkpoint's add
// and commit, or the failed attempt's save and restore), and a process the agent left
// behind may still have been at work. Each attempt's snapshot catches that for the
// attempt before; after the last one nothing would.
func (l *Loop) lastCheck(ctx context.Context, rec *run.Record) error {
	prev := l.lastSurface
	if prev == nil {
		return nil
	}
	snap, err := surface.TakeAfter(ctx, l.Repo, prev, false)
	if err != nil {
		return fmt.Errorf("record the trust surface: %w", err)
	}
	id := "after"
	if a := rec.Last(); a != nil {
		id = fmt.Sprintf("%s-%d-after", a.Story, a.N)
	}
	changes, err := l.restoreSurface(ctx, snap, rec, id)
	if err != nil || len(changes) == 0 {
		return err
	}
	l.lastSurface = snap
	l.Report.Warn(strings.TrimPrefix(surface.Reason(changes, l.Repo.Root), "tampered: ") + " after the last attempt was checked (by a process the agent left running, " +
		"or a program of its that git's own work ran): put back as listed above")
	return nil
}

// attempts is work's loop over the stories.
func (l *Loop) attempts(ctx context.Context, o Options, ch *source.Source, drv agent.Driver, rec *run.Record) (*Summary, error) {
	start := l.Time()
	sum := &Summary{Change: o.Change, Branch: rec.Branch, Original: OrDetached(rec), Total: len(ch.Stories)}
	tries := map[string]int{}     // attempts per story in this invocation
	transient := map[string]int{} // transient API errors retried per story
	if err := l.Store.EnsureLearnings(o.Change); err != nil {
		return nil, fmt.Errorf("create learnings file: %w", err)
	}
	if o.Sandbox.Decided() {
		rec.Sandbox = o.Sandbox.Level.String()
		l.Report.Step("sandbox: " + rec.Sandbox)
	}
	pol, err := l.sandboxPolicy(o, l.Repo.Root, agentFiles(ch, l.Store.LearningsPath(o.Change)), true)
	if err != nil {
		return nil, err
	}
	l.sandbox = pol
	// Attempt refs a crash saved before it could record them: their numbers are taken.
	// Listed once: from here on, this process makes (and records) every attempt ref.
	refs, err := l.Repo.Refs(ctx, "refs/ralph/"+o.Change+"/attempts/")
	if err != nil {
		return nil, err
	}
	l.taken = map[string]bool{}
	for _, r := range refs {
		l.taken[r.Name] = true
	}
	rec.MaxCost, rec.MaxTokens = o.MaxCost, o.MaxTokens
	rec.SumAttempts() // the budget counts what the attempts report, never a total as written
	finish := func() *Summary {
		sum.Duration = l.Time().Sub(start)
		sum.CostUSD, sum.CostKnown, sum.Checkpoint = rec.CostUSD, rec.CostKnown, rec.Checkpoint
		sum.Tokens, sum.TokensKnown = rec.Tokens, rec.TokensKnown
		return sum
	}
	for {
		if ctx.Err() != nil {
			return finish(), l.stop(rec, run.Interrupted, "interrupted", ErrInterrupted)
		}
		if err := ch.Reload(); err != nil {
			return finish(), fmt.Errorf("read %s: %w", ch.TasksRel, err)
		}
		story, ok := ch.NextStory()
		if !ok {
			if err := openOutsideStories(ch); err != nil {
				return finish(), l.stop(rec, run.Failed, "open tasks outside every story", err)
			}
			rec.Status, rec.CurrentStory, rec.PID = run.Complete, "", 0
			return finish(), l.Save(rec)
		}
		// The budget is what the accepted attempts report, summed here: never a total
		// a record carried (a remote run's, or a run.json someone edited).
		cost, _, tokens, _ := rec.Spent()
		if o.MaxCost > 0 && cost > o.MaxCost {
			return finish(), l.stop(rec, run.Budget, fmt.Sprintf("cost limit $%s passed", dollars(o.MaxCost)),
				UserErr("raise it with --max-cost or 'git config ralph.maxCost', then run 'git ralph start "+o.Change+"' to go on",
					"this run has cost $%.4f, more than the limit of $%s", cost, dollars(o.MaxCost)))
		}
		if o.MaxTokens > 0 && tokens >= o.MaxTokens {
			return finish(), l.stop(rec, run.Budget, fmt.Sprintf("token budget %s used up", Thousands(o.MaxTokens)),
				UserErr("raise it with --max-tokens or 'git config ralph.maxTokens', then run 'git ralph start "+o.Change+"' to go on",
					"this run has used %s tokens, the budget is %s", Thousands(tokens), Thousands(o.MaxTokens)))
		}
		if !o.deadlineAt.IsZero() {
			// No attempt starts that its own timeout could carry past the deadline.
			if left := o.deadlineAt.Sub(agent.ClockOr(l.Clock).Now()); left <= 0 || (o.Timeout > 0 && left < o.Timeout) {
				return finish(), l.stop(rec, run.Interrupted, "deadline reached", ErrDeadline)
			}
		}
		maxAttempts := o.MaxRetries + 1
		if tries[story.ID] >= maxAttempts {
			return finish(), l.stop(rec, run.Failed, fmt.Sprintf("story %s ran out of retries", story.ID), l.exhausted(rec, story, tries[story.ID]))
		}
		tries[story.ID]++
		sum.Attempts++
		learnings := prompt.ReadLearnings(l.Repo.Root, ch, l.Store.LearningsPath(ch.Name))
		outcome, res, err := l.attempt(ctx, o, ch, drv, rec, story, storyIndex(ch, story.ID), tries[story.ID], learnings)
		if err != nil {
			return finish(), err
		}
		if reason, err := unreported(o, drv, res, story.ID); err != nil {
			return finish(), l.stop(rec, run.Budget, reason, err)
		}
		if outcome == run.OutcomeComplete {
			sum.Stories++
			continue
		}
		switch res.Class {
		case agent.ClassTransient:
			steps := l.backoff()
			if transient[story.ID] >= len(steps) {
				break // out of backoff: it counts as an ordinary failed attempt
			}
			d := steps[transient[story.ID]]
			transient[story.ID]++
			tries[story.ID]-- // a transient API error does not use a story retry
			l.Report.Step(fmt.Sprintf("the agent's API failed for a passing reason; trying again in %s (%d of %d, not counted as a retry)", d, transient[story.ID], len(steps)))
			l.surfaceWaited = true // the user may change refs while we wait
			if err := l.Wait(ctx, d); err != nil {
				return finish(), l.stop(rec, run.Interrupted, "interrupted", ErrInterrupted)
			}
		case agent.ClassLimit:
			now := l.Time()
			until := res.RetryTime(now)
			if o.WaitOnLimit <= 0 {
				reason := "the agent hit a usage or rate limit"
				hint := "run 'git ralph start " + o.Change + "' again once the limit resets"
				if !until.IsZero() {
					reason += "; it resets at " + until.Format("15:04 MST")
					hint = "run 'git ralph start " + o.Change + "' again after " + until.Format("15:04 MST")
				}
				hint += "\nor let git-ralph wait for it: --wait-on-limit D (or 'git config ralph.waitOnLimit D')"
				return finish(), l.stop(rec, run.Failed, reason, UserErr(hint, "%s", reason))
			}
			if until.IsZero() || until.After(now.Add(o.WaitOnLimit)) {
				until = now.Add(o.WaitOnLimit)
			}
			tries[story.ID]-- // waiting out a limit does not use a story retry
			l.Report.Step(fmt.Sprintf("the agent hit a usage or rate limit; waiting until %s (Ctrl-C stops; 'git ralph start %s' resumes)", until.Format("15:04:05 MST"), o.Change))
			l.surfaceWaited = true // the user may change refs while we wait
			if err := l.Wait(ctx, until.Sub(now)); err != nil {
				return finish(), l.stop(rec, run.Interrupted, "interrupted", ErrInterrupted)
			}
		}
	}
}

// stop records why the loop stopped and returns err.
func (l *Loop) stop(rec *run.Record, st run.Status, reason string, err error) error {
	rec.Status, rec.StopReason, rec.PID = st, reason, 0
	if serr := l.Save(rec); serr != nil {
		return serr
	}
	return err
}

// exhausted is the error for a story that ran out of retries.
func (l *Loop) exhausted(rec *run.Record, story tasklist.Story, n int) error {
	var b strings.Builder
	atts := rec.AttemptsOf(story.ID)
	if len(atts) > n {
		atts = atts[len(atts)-n:]
	}
	for _, a := range atts {
		fmt.Fprintf(&b, "attempt %d: %s", a.N, a.Outcome)
		if a.Reason != "" {
			fmt.Fprintf(&b, ": %s", firstLine(a.Reason))
		}
		if a.Ref != "" {
			fmt.Fprintf(&b, " (kept as %s)", a.Ref)
		}
		b.WriteByte('\n')
	}
	fmt.Fprintf(&b, "%s is at the last checkpoint %s; the agent's logs are in %s\n", rec.Branch, Short(rec.Checkpoint), filepath.Join(l.Store.ChangeDir(rec.Change), "logs"))
	fmt.Fprintf(&b, "finish the story by hand and commit it on %s, or change the story, then run 'git ralph start %s' again", rec.Branch, rec.Change)
	return &Error{Msg: fmt.Sprintf("story %s %q failed %d attempt(s)", story.ID, story.Title, n), Hint: b.String()}
}

// dollars prints an amount as the user gave it (0.015, not 0.01 or 0.0150).
func dollars(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

// Thousands writes n with thousands separators: 1,250,000.
func Thousands(n int64) string {
	s := strconv.FormatInt(n, 10)
	for i := len(s) - 3; i > 0 && s[i-1] != '-'; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return s
}

// attempt runs the agent once on story and leaves the worktree either at a new
// checkpoint or restored to the old one, with the attempt recorded.
func (l *Loop) attempt(ctx context.Context, o Options, ch *source.Source, drv agent.Driver, rec *run.Record,
	story tasklist.Story, index, try int, learnings string) (string, agent.Result, error) {
	n := rec.NextAttemptN(story.ID)
	for l.taken[AttemptRef(o.Change, story.ID, n)] {
		n++ // a crash after saving an attempt but before recording it
	}
	text, err := l.render(o, ch, story, learnings, rec.LastReason(story.ID), try)
	if err != nil {
		return "", agent.Result{}, err
	}
	// The surface is saved before the record says an attempt is under way, so that a
	// crash-resume finding a running attempt and no saved surface knows it was removed.
	snap, err := l.takeSurface(context.WithoutCancel(ctx), o, rec)
	if err != nil {
		return "", agent.Result{}, err
	}
	logPath := l.Store.LogPath(o.Change, story.ID, n)
	rec.Attempts = append(rec.Attempts, run.Attempt{
		Story: story.ID, N: n, Outcome: run.OutcomeRunning, Log: logPath,
		Agent: drv.Name(), Model: o.Model, Started: l.Time(),
	})
	rec.CurrentStory, rec.Status, rec.PID = story.ID, run.Running, os.Getpid()
	if err := l.Save(rec); err != nil {
		l.dropSurface(rec.Change) // no attempt recorded: no snapshot to check it against
		return "", agent.Result{}, err
	}
	att := rec.Last()
	l.Report.Attempt(index, len(ch.Stories), story.ID, story.Title, try, o.MaxRetries+1)

	logf, err := l.Store.Create(logPath) // a symlink planted there is replaced, never written through
	if err != nil {
		return "", agent.Result{}, err
	}
	// RALPH_ATTEMPT_ID marks this attempt's agent: a crash-resume signals the recorded
	// process only when it carries it (stopOrphanAgent).
	id := attemptID()
	req := l.request(o, text, []string{
		"RALPH_AGENT=1", "RALPH_CHANGE=" + o.Change, "RALPH_STORY=" + story.ID, "RALPH_ATTEMPT=" + itoa(n),
		"RALPH_SOURCE=" + ch.Kind.About().ID, "RALPH_TASKS_FILE=" + ch.TasksFile(),
		"RALPH_ATTEMPT_ID=" + id,
	})
	req.Log = logf
	req.Sink = sink{l.Report}
	if req.Sandbox = l.sandbox; l.sandbox != nil && !sandbox.Covers(l.sandbox.Write, l.Repo.CommonDir) {
		// The git directory is read-only: the agent's git status must not try to
		// refresh the index there.
		req.Env = append(req.Env, "GIT_OPTIONAL_LOCKS=0")
	}
	req.OnStart = func(pid int, start uint64) {
		rec.AgentPID, rec.AgentStart, rec.AgentID = pid, start, id
		_ = l.Save(rec)
	}
	res, runErr := agent.Run(ctx, drv, req)
	logf.Close()
	rec.AgentPID, rec.AgentStart, rec.AgentID = 0, 0, ""
	// The run's records first: they are git-ralph's, and a crash-resume trusts them.
	forged, err := l.checkRecords(rec, snap, fmt.Sprintf("%s-%d", story.ID, n))
	if err != nil {
		return "", res, err
	}
	kindForged, err := l.checkKindRecords(ch, rec, fmt.Sprintf("%s-%d", story.ID, n))
	if err != nil {
		return "", res, err
	}
	forged = append(forged, kindForged...)
	// Before any other git runs: what the agent changed of the surface goes back.
	tampered, err := l.checkSurface(context.WithoutCancel(ctx), snap, rec, att)
	if err != nil {
		return "", res, err
	}
	if len(forged) > 0 {
		what := "tampered: " + strings.Join(forged, " changed, ") + " changed; leave git-ralph's records in .git/ralph as they are"
		if tampered != "" {
			what = tampered + "; " + strings.TrimPrefix(what, "tampered: ")
		}
		tampered = what
	}
	l.lastSurface = snap // the next attempt's refs are those this check left
	// Checked: a crash from here on is no crash during the agent's attempt, and a
	// snapshot left on disk would be stale by the next one. The record says so before
	// the snapshot goes, or a crash-resume would find a running attempt with no
	// snapshot and take it for one the agent removed.
	att.SurfaceChecked = true
	if tampered != "" {
		att.Reason = tampered
	}
	if err := l.Save(rec); err != nil {
		return "", res, err
	}
	l.dropSurface(rec.Change)
	if runErr != nil {
		att.Outcome, att.Reason, att.Ended = run.OutcomeError, runErr.Error(), l.Time()
		return "", res, l.stop(rec, run.Failed, "the agent could not be started",
			&Error{Msg: fmt.Sprintf("start agent %s: %v", drv.Name(), runErr), Hint: "check the agent command and ralph.agentArgs", Err: runErr})
	}
	att.Turns, att.InputTokens, att.OutputTokens, att.CostUSD = res.Turns, res.InputTokens, res.OutputTokens, res.CostUSD
	att.PremiumRequests = res.PremiumRequests
	if res.Model != "" {
		att.Model = res.Model
	}
	rec.SumAttempts()

	gctx := context.WithoutCancel(ctx) // a started git step always finishes
	outcome, reason, passOn := decide(res, o)
	if tampered != "" {
		if outcome != run.OutcomeInterrupted {
			outcome = run.OutcomeFailed
		}
		reason, passOn = tampered, true
	}
	if outcome == run.OutcomeComplete {
		outcome, reason, passOn, err = l.checkpoint(gctx, ctx, o, rec, ch, att, story, snap)
		if err != nil {
			return "", agent.Result{}, err
		}
	}
	if outcome == run.OutcomeComplete {
		l.Report.Outcome(true, fmt.Sprintf("story %s: checkpoint %s", story.ID, Short(rec.Checkpoint)))
		if k, ok := ch.Kind.(source.Outside); ok {
			p := source.Progress{Run: rec.Change, Branch: rec.Branch, Commit: rec.Checkpoint}
			for _, a := range rec.Attempts {
				if a.Story == story.ID {
					p.Attempts++
					if a.Outcome != run.OutcomeComplete && a.Outcome != run.OutcomeRunning && a.Reason != "" {
						p.LastFailure = a.Reason
					}
				}
			}
			if w := k.Checkpointed(ch, story, p); w != "" {
				l.Report.Warn(w)
			}
		}
		return outcome, res, nil
	}
	att.Outcome, att.Reason, att.PassOn = outcome, reason, passOn
	if err := l.saveAndRestore(gctx, rec, att, reason); err != nil {
		return "", res, err
	}
	if k, ok := ch.Kind.(source.Outside); ok {
		if err := k.Undo(ch); err != nil {
			return "", res, err
		}
	}
	msg := fmt.Sprintf("story %s attempt %d: %s", story.ID, try, outcome)
	if reason != "" {
		msg += ": " + firstLine(reason)
	}
	l.Report.Outcome(false, msg+" (kept as "+att.Ref+")")
	switch {
	case outcome == run.OutcomeInterrupted:
		return "", res, l.stop(rec, run.Interrupted, "interrupted", ErrInterrupted)
	case res.Fatal != "":
		return "", res, l.stop(rec, run.Failed, res.Fatal, &Error{Msg: res.Fatal, Hint: "the loop stopped; run 'git ralph start " + o.Change + "' again once that is fixed"})
	}
	return outcome, res, nil
}

// sink forwards the agent's live output to the reporter.
type sink struct{ r Reporter }

func (s sink) Text(t string)         { s.r.AgentText(t) }
func (s sink) Tool(name, sum string) { s.r.AgentTool(name, sum) }

// decide turns the agent's result into an outcome, from the final result only.
// passOn tells whether the reason goes into the next prompt: the agent's own FAILED
// reason does; crashes, timeouts and missing signals do not (SPEC §4 step 3).
func decide(res agent.Result, o Options) (outcome, reason string, passOn bool) {
	switch {
	case res.Interrupted:
		return run.OutcomeInterrupted, "interrupted", false
	case res.TimedOut:
		return run.OutcomeTimeout, fmt.Sprintf("timed out after %s", o.Timeout), false
	case res.Idle:
		return run.OutcomeTimeout, fmt.Sprintf("printed nothing for %s", o.IdleTimeout), false
	case res.Fatal != "":
		return run.OutcomeError, res.Fatal, false
	case !res.SawResult:
		if res.ExitCode == 0 {
			return run.OutcomeNoSignal, "the agent ended without a final result", false
		}
		return run.OutcomeError, exitText(res) + " without a final result" + stderrNote(res), false
	case res.IsError:
		msg := strings.Join(res.Errors, "; ")
		if msg == "" {
			msg = firstLine(res.Text)
		}
		if msg == "" {
			msg = res.Subtype
		}
		return run.OutcomeError, "the agent reported an error: " + msg, false
	case res.ExitCode > 0:
		return run.OutcomeError, exitText(res), false
	}
	p := agent.ParsePromise(res.Text)
	switch p.Kind {
	case agent.PromiseComplete:
		return run.OutcomeComplete, "", false
	case agent.PromiseFailed:
		return run.OutcomeFailed, p.Reason, p.Reason != ""
	}
	return run.OutcomeNoSignal, "the final answer had no <promise> line", false
}

func exitText(res agent.Result) string {
	if res.Signal != "" {
		return "the agent was killed (" + res.Signal + ")"
	}
	return fmt.Sprintf("the agent exited with code %d", res.ExitCode)
}

func stderrNote(res agent.Result) string {
	if s := firstLine(Tail(res.Stderr, 3)); s != "" {
		return ": " + s
	}
	return ""
}

// checkpoint turns a COMPLETE into a checkpoint commit, or into a failure with a
// reason when the story's tasks are still open, the agent left the branch or an
// operation half-way, added a repository of its own as a gitlink, the verify hook
// fails, or the user's commit hooks refuse the commit or change it.
//
// What is committed is what the gate saw: the work tree is staged and its tree taken
// before the gate runs, and the commit must have exactly that tree on the last
// checkpoint. The gate runs the ralph-verify hook as the snapshot before the attempt
// recorded it, from a copy no one can change, not the file in the hooks directory.
func (l *Loop) checkpoint(ctx, parent context.Context, o Options, rec *run.Record, ch *source.Source, att *run.Attempt,
	story tasklist.Story, snap *surface.Snapshot) (outcome, reason string, passOn bool, err error) {
	cur, head, err := l.Repo.HeadState(ctx) // one git call for both
	if err != nil {
		return "", "", false, err
	}
	if cur == "" {
		cur = "detached HEAD"
	}
	if cur != rec.Branch {
		return run.OutcomeFailed, fmt.Sprintf("signalled COMPLETE but switched from %s to %s; stay on %s and do not switch branches", rec.Branch, cur, rec.Branch), true, nil
	}
	if op, err := l.Repo.InProgress(ctx); err != nil {
		return "", "", false, err
	} else if op != "" {
		return run.OutcomeFailed, fmt.Sprintf("signalled COMPLETE but left a %s in progress; finish or abort it, and leave the commits to git-ralph", op), true, nil
	}
	if err := ch.Reload(); err != nil {
		var broken *source.BrokenError
		if errors.As(err, &broken) {
			return run.OutcomeFailed, fmt.Sprintf("signalled COMPLETE but left %s broken: %s; keep it valid JSON, with the same story ids and branchName", broken.File, broken.Reason), true, nil
		}
		return "", "", false, err
	}
	// now is the source as the attempt leaves it: a plan that moved itself to completed/
	// is followed there. ch (and the record) take it only with the checkpoint.
	now := ch
	if !ch.HasTasks {
		if now, err = l.followMoved(ctx, ch, rec); err != nil {
			return "", "", false, err
		}
	}
	s, ok := now.Story(story.ID)
	if !ok {
		return run.OutcomeFailed, fmt.Sprintf("signalled COMPLETE but story %s is gone from %s", story.ID, ch.TasksRel), true, nil
	}
	if why := now.Unfinished(s); why != "" {
		return run.OutcomeFailed, "signalled COMPLETE but " + why, true, nil
	}
	if skipped := skippedTasks(s); o.NoSkip && len(skipped) > 0 {
		return run.OutcomeFailed, fmt.Sprintf("signalled COMPLETE but ticked %s as skipped, and skipping is off here (ralph.allowSkip=false): do it, or end with FAILED saying why it cannot be done", strings.Join(skipped, ", ")), true, nil
	}
	if head != rec.Checkpoint {
		// The agent committed (or rewound): fold it all into one checkpoint.
		if err := l.Repo.SoftReset(ctx, rec.Checkpoint); err != nil {
			return "", "", false, err
		}
		l.Report.Step("folded the agent's own commits into the checkpoint")
	}
	// Once more, right before the gate: a process the agent left behind may have
	// rewritten a hook or the config since the first look, and git-ralph's add runs
	// the config's filters. Files only (no git): the refs do not decide what runs.
	files := *snap
	files.NoRefs = true
	if tampered, err := l.checkSurface(ctx, &files, rec, att); err != nil {
		return "", "", false, err
	} else if tampered != "" {
		return run.OutcomeFailed, tampered, true, nil
	}
	// git-ralph's own move of a plan this checkpoint completes (source.Archiver) is part
	// of what the gate sees and the checkpoint commits; a failed attempt puts it back
	// with the rest of the work tree.
	followed := now != ch
	if now, err = l.archive(ctx, now, rec); err != nil {
		return "", "", false, err
	}
	// The tree the gate sees is the tree committed: staged now, its id taken.
	if err := l.Repo.AddAll(ctx); err != nil {
		return "", "", false, err
	}
	tree, gitlinks, err := l.Repo.StagedTree(ctx)
	if err != nil {
		return "", "", false, err
	}
	if added, err := l.addedGitlinks(ctx, rec.Checkpoint, gitlinks); err != nil {
		return "", "", false, err
	} else if len(added) > 0 {
		return run.OutcomeFailed, fmt.Sprintf("signalled COMPLETE but added %s, a git repository inside the work tree (a gitlink); "+
			"git-ralph commits no repository of the agent's: remove its .git, or leave it out of the work tree", quoteList(added)), true, nil
	}
	att.Verify = "skipped"
	if script, ok := l.recordedHook(snap, "ralph-verify"); ok {
		l.Report.Step("running the ralph-verify hook")
		env := []string{"RALPH_CHANGE=" + rec.Change, "RALPH_STORY=" + story.ID, "RALPH_ATTEMPT=" + itoa(att.N)}
		if o.VerifyTimeout > 0 {
			env = append(env, "RALPH_VERIFY_TIMEOUT="+o.VerifyTimeout.String())
		}
		out, code, err := l.Repo.RecordedHook(parent, "ralph-verify", script, env)
		// The gate runs the project's tests, which the agent may have written, outside
		// the sandbox: what they left running goes before anything is committed.
		if n := sandbox.KillLeftovers(); n > 0 {
			l.Report.Warn(fmt.Sprintf("the ralph-verify hook left %d process(es) running: killed", n))
		}
		if parent.Err() != nil {
			return run.OutcomeInterrupted, "interrupted", false, nil
		}
		if err != nil {
			return "", "", false, err
		}
		if code != 0 {
			att.Verify = "failed"
			return run.OutcomeFailed, fmt.Sprintf("the ralph-verify hook failed (exit %d):\n%s", code, Tail(out, 40)), true, nil
		}
		att.Verify = "passed"
	}
	att.Ended = l.Time()
	done := *rec // the record as the checkpoint leaves it: its trailers name the source where it is now
	source.Record(&done, now.Ref)
	msg, err := checkpointMessage(&done, s, att, o)
	if err != nil {
		return "", "", false, err
	}
	id, err := l.Repo.Commit(ctx, msg, git.CommitOptions{AllowEmpty: true})
	if err != nil {
		var ge *git.Error
		if errors.As(err, &ge) {
			return run.OutcomeFailed, "the checkpoint commit was refused by a commit hook:\n" + Tail(ge.Stderr, 40), true, nil
		}
		return "", "", false, err
	}
	got, parents, err := l.Repo.CommitShape(ctx, id)
	if err != nil {
		return "", "", false, err
	}
	if got != tree || len(parents) != 1 || parents[0] != rec.Checkpoint {
		// A commit hook (or something beside it) changed what was staged after the
		// gate, or the commit grew another parent: not what the gate saw. The commit
		// is kept with the attempt (its second parent), the branch put back.
		return run.OutcomeFailed, fmt.Sprintf("the checkpoint commit %s is not what the verify gate saw (tree %s, parents %s; the gate saw tree %s on %s): "+
			"a commit hook changed what is staged after the gate; git-ralph commits only what the gate saw, so leave the files as the commit hooks want them",
			Short(id), Short(got), shortList(parents), Short(tree), Short(rec.Checkpoint)), true, nil
	}
	if now != ch {
		if followed {
			l.Report.Step(fmt.Sprintf("%s moved to %s: the run follows it", ch.TasksRel, now.TasksRel))
		}
		*ch = *now
		source.Record(rec, ch.Ref)
	}
	rec.Checkpoint = id
	att.Outcome, att.Commit = run.OutcomeComplete, id
	return run.OutcomeComplete, "", false, l.Save(rec)
}

// recordedHook is the hook name as the snapshot recorded it before the attempt (its
// content, or what it linked to), when git would have run it then.
func (l *Loop) recordedHook(snap *surface.Snapshot, name string) ([]byte, bool) {
	f, ok := snap.Recorded(filepath.Join(snap.HooksDir, name))
	if !ok {
		return nil, false
	}
	return f.Runnable()
}

// addedGitlinks are those of gitlinks (the staged ones) that are not gitlinks at
// checkpoint: asked of git only when something is staged as one.
func (l *Loop) addedGitlinks(ctx context.Context, checkpoint string, gitlinks []string) ([]string, error) {
	if len(gitlinks) == 0 {
		return nil, nil
	}
	had, err := l.Repo.GitlinksIn(ctx, checkpoint, gitlinks)
	if err != nil {
		return nil, err
	}
	var added []string
	for _, p := range gitlinks {
		if !slices.Contains(had, p) {
			added = append(added, p)
		}
	}
	return added, nil
}

func quoteList(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = surface.Quote(n)
	}
	return strings.Join(q, ", ")
}

func shortList(ids []string) string {
	if len(ids) == 0 {
		return "none"
	}
	s := make([]string, len(ids))
	for i, id := range ids {
		s[i] = Short(id)
	}
	return strings.Join(s, " ")
}

// followMoved is ch where the attempt moved its tracked file (source.Archiver: a plan that
// moved itself to completed/, as ralphex plans end by doing), found where git's rename
// detection saw it go, or where its kind says such files go; ch itself when it did not
// move or cannot be found (the story is then gone, and the attempt failed).
func (l *Loop) followMoved(ctx context.Context, ch *source.Source, rec *run.Record) (*source.Source, error) {
	a, ok := ch.Kind.(source.Archiver)
	if !ok {
		return ch, nil
	}
	to, err := l.Repo.RenamedSince(ctx, rec.Checkpoint, ch.TasksRel)
	if err != nil {
		return nil, err
	}
	where := l.where(ctx, "")
	ref, ok := a.Moved(where, ch, to)
	if !ok {
		return ch, nil
	}
	moved, err := l.Sources.Open(where, ref)
	if err != nil {
		return ch, nil
	}
	moved.Name = ch.Name
	moved.KeepIDs(source.RecordedIDs(rec))
	return moved, nil
}

// archive moves the tracked file of a source whose last story this checkpoint completes
// where its kind puts a completed one (source.Archiver: a plan of docs/plans to
// docs/plans/completed/, as ralphex does, unless ralph.movePlan is false), in the work
// tree: the checkpoint commits the move. It returns cur, moved, or as it was.
func (l *Loop) archive(ctx context.Context, cur *source.Source, rec *run.Record) (*source.Source, error) {
	a, ok := cur.Kind.(source.Archiver)
	if !ok {
		return cur, nil
	}
	if _, more := cur.NextStory(); more || cur.OpenOutsideStories() > 0 {
		return cur, nil
	}
	where := l.where(ctx, "")
	to, ok := a.Archive(where, cur)
	if !ok {
		return cur, nil
	}
	from, dst := cur.TasksPath, filepath.Join(l.Repo.Root, filepath.FromSlash(to))
	if err := os.MkdirAll(filepath.Dir(dst), 0o777); err != nil {
		return nil, err
	}
	if err := os.Rename(from, dst); err != nil {
		return nil, err
	}
	ref := cur.Ref
	ref.Arg = to
	moved, err := l.Sources.Open(where, ref)
	if err != nil {
		_ = os.Rename(dst, from)
		return nil, sourceErr(err)
	}
	moved.Name = cur.Name
	moved.KeepIDs(source.RecordedIDs(rec))
	l.Report.Step(fmt.Sprintf("moved the completed %s to %s (ralph.movePlan=false leaves it)", cur.TasksRel, to))
	return moved, nil
}

// checkpointMessage is "checkpoint: <id>" (or o.CheckpointMessage's subject), the story
// title, and the audit trailers: a Ralph-Skipped one per task of story (as the attempt
// left it) ticked as skipped.
func checkpointMessage(rec *run.Record, story tasklist.Story, att *run.Attempt, o Options) (string, error) {
	subject, err := checkpointSubject(o.CheckpointMessage, rec.Change, story)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s\n\nStory %s: %s\n\n", subject, story.ID, story.Title)
	fmt.Fprintf(&b, "Ralph-Change: %s\nRalph-Story: %s\nRalph-Attempt: %d\n", rec.Change, story.ID, att.N)
	for _, t := range story.Tasks {
		if t.Skipped != "" {
			fmt.Fprintf(&b, "Ralph-Skipped: %s\n", t.SkipLine())
		}
	}
	b.WriteString(source.Trailers(rec)) // what a report rebuilt from git alone reads the stories from
	auditTrailers(&b, att)
	if o.RunID != 0 {
		fmt.Fprintf(&b, "Ralph-Run: %d\n", o.RunID)
	}
	return b.String(), nil
}

// checkpointSubject is a checkpoint's subject: SPEC's "checkpoint: <id>", or tmpl (a
// text/template over .ID, .Title and .Change, ralph.checkpointMessage) as one line; a
// template that says nothing gives SPEC's. git-ralph knows its checkpoints by their
// trailers, whatever the subject.
func checkpointSubject(tmpl, change string, story tasklist.Story) (string, error) {
	if tmpl == "" {
		return "checkpoint: " + story.ID, nil
	}
	t, err := template.New("ralph.checkpointMessage").Option("missingkey=error").Parse(tmpl)
	if err != nil {
		return "", checkpointTmplErr(err)
	}
	var b strings.Builder
	if err := t.Execute(&b, struct{ ID, Title, Change string }{story.ID, story.Title, change}); err != nil {
		return "", checkpointTmplErr(err)
	}
	line := strings.Join(strings.Fields(b.String()), " ")
	if line == "" {
		return "checkpoint: " + story.ID, nil
	}
	return line, nil
}

// checkpointTmplErr is a bad ralph.checkpointMessage: a bad config value is a usage
// error, as for every other key.
func checkpointTmplErr(err error) error {
	e := UserErr("write it as a Go template over .ID, .Title and .Change, e.g. git config ralph.checkpointMessage 'feat: {{.ID}} - {{.Title}}', or unset it",
		"git config ralph.checkpointMessage: %v", err)
	e.Code = 2
	return e
}

// trailerTime is RFC 3339 to the millisecond: a demo's attempts last less than a second.
const trailerTime = "2006-01-02T15:04:05.000Z07:00"

// auditTrailers writes what is known of an attempt as trailers, so that a report can
// be rebuilt from git alone once the run record is gone (git ralph report after finish).
func auditTrailers(b *strings.Builder, att *run.Attempt) {
	fmt.Fprintf(b, "Ralph-Agent: %s\n", att.Agent)
	if att.Model != "" {
		fmt.Fprintf(b, "Ralph-Model: %s\n", att.Model)
	}
	if att.Turns > 0 {
		fmt.Fprintf(b, "Ralph-Turns: %d\n", att.Turns)
	}
	if att.InputTokens+att.OutputTokens > 0 {
		fmt.Fprintf(b, "Ralph-Tokens: %d\n", att.InputTokens+att.OutputTokens)
	}
	if att.CostUSD != nil {
		fmt.Fprintf(b, "Ralph-Cost-USD: %.4f\n", *att.CostUSD)
	}
	if att.Verify != "" {
		fmt.Fprintf(b, "Ralph-Verify: %s\n", att.Verify)
	}
	fmt.Fprintf(b, "Ralph-Started: %s\n", att.Started.UTC().Format(trailerTime))
	if !att.Ended.IsZero() {
		fmt.Fprintf(b, "Ralph-Ended: %s\n", att.Ended.UTC().Format(trailerTime))
	}
}

// saveAndRestore keeps the attempt's whole worktree under refs/ralph/<change>/attempts/
// and then puts the branch back at the recorded checkpoint. If saving fails, nothing is
// restored: the work stays where the agent left it.
func (l *Loop) saveAndRestore(ctx context.Context, rec *run.Record, att *run.Attempt, reason string) error {
	ref := AttemptRef(rec.Change, att.Story, att.N)
	if att.Ended.IsZero() {
		att.Ended = l.Time()
	}
	outcome := att.Outcome
	if outcome == run.OutcomeRunning {
		outcome = run.OutcomeInterrupted
	}
	// The subject is the reason's first line; the body keeps all of it, then the trailers.
	var b strings.Builder
	fmt.Fprintf(&b, "ralph attempt %s-%d: %s\n\n", att.Story, att.N, firstLine(orText(reason, outcome)))
	if r := strings.TrimSpace(reason); r != "" {
		b.WriteString(r + "\n\n")
	}
	fmt.Fprintf(&b, "Ralph-Change: %s\nRalph-Story: %s\nRalph-Attempt: %d\nRalph-Outcome: %s\n", rec.Change, att.Story, att.N, outcome)
	auditTrailers(&b, att)
	msg := b.String()
	if _, err := l.Repo.SaveAttempt(ctx, rec.Checkpoint, ref, msg); err != nil {
		rec.Status, rec.StopReason = run.Failed, "could not save a failed attempt"
		_ = l.Save(rec)
		return &Error{Msg: "could not save the failed attempt: " + err.Error(),
			Hint: "nothing was reset: the working tree is as the agent left it\nthe last checkpoint is " + Short(rec.Checkpoint) + " on " + rec.Branch, Err: err}
	}
	att.Ref = ref
	if att.Outcome == run.OutcomeRunning {
		att.Outcome, att.Reason = run.OutcomeInterrupted, reason
	}
	if err := l.Save(rec); err != nil {
		return err
	}
	if err := l.Repo.Restore(ctx, rec.Branch, rec.Checkpoint); err != nil {
		return fmt.Errorf("restore %s to checkpoint %s: %w", rec.Branch, Short(rec.Checkpoint), err)
	}
	return nil
}

func orText(s, alt string) string {
	if s == "" {
		return alt
	}
	return s
}

// attemptID is a fresh random id for an attempt's agent (RALPH_ATTEMPT_ID).
func attemptID() string {
	b := make([]byte, 12)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// unreported stops a run whose budget cannot cap it: start refuses an agent that
// reports no cost (tokens) for --max-cost (--max-tokens), but a custom agent speaking
// Claude's stream-json may leave it out (Qwen Code's results carry tokens only), and an
// agent may report 0 tokens. An attempt whose agent gave its result (not a passing API
// error or a limit) without the figure stops the run rather than let it go on uncapped.
func unreported(o Options, drv agent.Driver, res agent.Result, story string) (string, error) {
	if !res.SawResult || res.Class == agent.ClassTransient || res.Class == agent.ClassLimit {
		return "", nil
	}
	again := "then run 'git ralph start " + o.Change + "' to go on"
	switch {
	case o.MaxCost > 0 && res.CostUSD == nil:
		return "the agent reported no cost, so --max-cost cannot cap it",
			UserErr("cap it with --max-tokens N (or 'git config ralph.maxTokens N') instead and drop --max-cost, "+again,
				"agent %q reported no cost for story %s, so --max-cost could not stop it; the run stopped rather than go on uncapped", drv.Name(), story)
	case o.MaxTokens > 0 && res.InputTokens+res.OutputTokens == 0:
		return "the agent reported no tokens, so --max-tokens cannot cap it",
			UserErr("drop --max-tokens (and 'git config ralph.maxTokens'), or use an agent that reports its tokens, "+again,
				"agent %q reported no tokens for story %s, so --max-tokens could not stop it; the run stopped rather than go on uncapped", drv.Name(), story)
	}
	return "", nil
}

// skippedTasks names the tasks of story ticked as skipped: their ids, else their lines.
func skippedTasks(story tasklist.Story) []string {
	var out []string
	for _, t := range story.Tasks {
		if t.Skipped == "" {
			continue
		}
		name := t.ID
		if name == "" && t.Line > 0 {
			name = "line " + itoa(t.Line)
		}
		if name == "" {
			name = strconv.Quote(t.Text)
		}
		out = append(out, name)
	}
	return out
}
