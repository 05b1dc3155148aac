package loop

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/git-ralph/git-ralph/internal/agent"
	"github.com/git-ralph/git-ralph/internal/prompt"
	"github.com/git-ralph/git-ralph/internal/run"
	"github.com/git-ralph/git-ralph/internal/sandbox"
	"github.com/git-ralph/git-ralph/internal/source"
	"github.com/git-ralph/git-ralph/internal/surface"
	"github.com/git-ralph/git-ralph/internal/tasklist"
)

// session is one run of the loop at work: what Start resolved of its options, the run's
// record and task source, and what one attempt hands the next (the trust surface as the
// last check left it, the agent's sandbox, the attempt refs a crash left, the tries per
// story). work, attempt and checkpoint are its methods: no other value holds a run's
// state.
type session struct {
	*Loop
	r   *Resolved
	rec *run.Record
	src *source.Source

	// policy is the agent's sandbox, nil when it runs unrestricted.
	policy *sandbox.Policy
	// gatePolicy is the verify gate's and the commit hooks' (gateHook): the agent's
	// with none of its own files, plus ralph.verifyWritable; nil when they run
	// unrestricted (no sandbox, or ralph.verifySandbox=off).
	gatePolicy *sandbox.Policy
	// taken holds the attempt refs that existed when the session began.
	taken map[string]bool
	// lastSurface is the snapshot of the attempt checked last, which the next
	// attempt's carries on (surface.TakeAfter); surfaceWaited: a wait came in between,
	// so its refs are read anew (the user may have changed them).
	lastSurface   *surface.Snapshot
	surfaceWaited bool
	// fixed is the snapshot of a run whose agent and gate can write nothing of the
	// trust surface (fixedSurface): taken before the first attempt, never saved, and
	// compared once, when the attempts end (lastCheck).
	fixed *surface.Snapshot
	// layout is the git directory as the walk before the attempt under way saw it
	// (surface.CheckLayout).
	layout *surface.Layout
	// nextLayout is the layout the last check left, the next attempt's unless a wait
	// came in between.
	nextLayout *surface.Layout
	// hidden are the index entries git add skipped before the attempt (assume-unchanged,
	// skip-worktree), where the agent could write the index.
	hidden map[string]bool
	// tries are the attempts per story in this invocation; transient, the transient API
	// errors retried per story.
	tries, transient map[string]int

	sum     *Summary
	started time.Time

	// agentPrompt is the prompt of the attempt under way, verifyOut what its verify
	// gate printed: the judge's prompt holds them (judge.go).
	agentPrompt, verifyOut string
}

// session is the run r at work on rec and src.
func (l *Loop) session(r *Resolved, rec *run.Record, src *source.Source) *session {
	return &session{Loop: l, r: r, rec: rec, src: src, tries: map[string]int{}, transient: map[string]int{}}
}

// halt is why the loop stops before (or between) attempts: the status and reason the
// record keeps, and the error Start returns.
type halt struct {
	status run.Status
	reason string
	err    error
}

// work runs attempts until every story is complete, a story runs out of retries, a
// limit of the run is reached, the agent cannot run, or the user interrupts; then it
// checks the trust surface once more (lastCheck).
func (s *session) work(ctx context.Context) (*Summary, error) {
	wctx, cancel := s.withDeadline(ctx)
	defer cancel()
	sum, err := s.attempts(wctx)
	cctx, ccancel := s.checkCtx(ctx)
	defer ccancel()
	if cerr := s.lastCheck(cctx); cerr != nil && err == nil {
		err = cerr
	}
	if err == ErrInterrupted && ctx.Err() == nil && wctx.Err() != nil {
		// The deadline, not the user, stopped the attempt under way; it is saved.
		return sum, s.stop(run.Interrupted, "deadline reached", ErrDeadline)
	}
	return sum, err
}

// lastCheck compares the trust surface with what the last attempt's check left, and puts
// back what differs: after that check git-ralph's own git went on (the checkpoint's add
// and commit, or the failed attempt's save and restore), and a process the agent left
// behind may still have been at work. Each attempt's snapshot catches that for the
// attempt before; after the last one nothing would.
func (s *session) lastCheck(ctx context.Context) error {
	prev, snap := s.lastSurface, s.fixed
	if prev == nil && snap == nil {
		return nil
	}
	if snap == nil {
		var err error
		if snap, err = surface.TakeAfter(ctx, s.Repo, prev, false); err != nil {
			return fmt.Errorf("record the trust surface: %w", err)
		}
	}
	id := "after"
	if a := s.rec.Last(); a != nil {
		id = fmt.Sprintf("%s-%d-after", a.Story, a.N)
	}
	changes, err := s.restoreSurface(ctx, snap, s.rec, id, false)
	if err != nil || len(changes) == 0 {
		return err
	}
	what := strings.TrimPrefix(surface.Reason(changes, s.Repo.Root), "tampered: ")
	if s.fixed != nil {
		s.Report.Warn(what + " during the run, where the agent's sandbox and its gate's could not write it (by a program of the agent's that git's own work ran, " +
			"or by another program of yours): put back as listed above")
		return nil
	}
	s.lastSurface = snap
	s.Report.Warn(what + " after the last attempt was checked (by a process the agent left running, " +
		"or a program of its that git's own work ran): put back as listed above")
	return nil
}

// attempts is work's loop over the stories.
func (s *session) attempts(ctx context.Context) (*Summary, error) {
	s.started = s.Time()
	s.sum = &Summary{Change: s.r.Change, Branch: s.rec.Branch, Original: OriginalName(s.rec), Total: len(s.src.Stories)}
	if err := s.begin(ctx); err != nil {
		return nil, err
	}
	for {
		if ctx.Err() != nil {
			return s.end(halt{run.Interrupted, "interrupted", ErrInterrupted})
		}
		story, h, err := s.next()
		if err != nil {
			return s.summary(), err
		}
		if h != nil {
			return s.end(*h)
		}
		s.tries[story.ID]++
		s.sum.Attempts++
		learnings := prompt.ReadLearnings(s.Repo.Root, s.src, s.Store.LearningsPath(s.src.Name), s.Store.Open)
		outcome, res, err := s.attempt(ctx, story, learnings)
		if err != nil {
			return s.summary(), err
		}
		if reason, err := s.unreported(res, story.ID); err != nil {
			return s.end(halt{run.Budget, reason, err})
		}
		if outcome == run.OutcomeComplete {
			s.sum.Stories++
			continue
		}
		if h := s.waitToRetry(ctx, story, res); h != nil {
			return s.end(*h)
		}
	}
}

// begin readies the session's first attempt: the learnings file, the agent's sandbox,
// the attempt refs a crash saved before it could record them, the budget in the record.
func (s *session) begin(ctx context.Context) error {
	if err := s.Store.EnsureLearnings(s.r.Change); err != nil {
		return fmt.Errorf("create learnings file: %w", err)
	}
	if s.r.Sandbox.Decided() {
		s.rec.Sandbox = s.r.Sandbox.Level.String()
		s.Report.Step("sandbox: " + s.rec.Sandbox)
	}
	if how, ok := sandbox.Containment(); sandbox.IsReaper() && !ok {
		s.Report.Warn(how)
	}
	pol, err := sandboxPolicy(s.r.Sandbox, s.Repo.Root, s.Repo.CommonDir, agentFiles(s.src, s.Store.LearningsPath(s.r.Change)), true)
	if err != nil {
		return err
	}
	if pol != nil {
		// What the agent may read is worked out once, for every attempt of the run.
		pol.Read = sandbox.ReadGrants(pol.Hide, pol.Reveal)
	}
	s.policy = pol
	if pol != nil && !s.r.Sandbox.VerifyOff {
		if s.gatePolicy, err = gatePolicy(s.r.Sandbox, s.Repo.Root, s.Repo.CommonDir); err != nil {
			return err
		}
		s.gatePolicy.Read = pol.Read // the same hidden paths
	}
	// Attempt refs a crash saved before it could record them: their numbers are taken.
	// Listed once: from here on, this process makes (and records) every attempt ref.
	refs, err := s.Repo.Refs(ctx, "refs/ralph/"+s.r.Change+"/attempts/")
	if err != nil {
		return err
	}
	s.taken = map[string]bool{}
	for _, r := range refs {
		s.taken[r.Name] = true
	}
	s.rec.MaxCost, s.rec.MaxTokens = s.r.MaxCost, s.r.MaxTokens
	s.rec.SumAttempts() // the budget counts what the attempts report, never a total as written
	return nil
}

// next is the story the next attempt works on, or why the run stops before it: every
// story is done (or open tasks are left outside every story), a limit of the run is
// reached, or the story ran out of retries.
func (s *session) next() (tasklist.Story, *halt, error) {
	if err := s.src.Reload(); err != nil {
		return tasklist.Story{}, nil, fmt.Errorf("read %s: %w", s.src.TasksRel, err)
	}
	if !s.src.HasTasks {
		// Gone since the last check (a verify hook or a process left behind removed
		// it): no story can be told done, so the run is not complete.
		reason := s.src.TasksRel + " is gone from the working tree"
		return tasklist.Story{}, &halt{run.Failed, reason, UserErr("put it back ('git checkout ralph/"+s.r.Change+" -- "+s.src.TasksRel+"'), then run 'git ralph start "+s.r.Change+"' again", "%s", reason)}, nil
	}
	story, ok := s.src.NextStory()
	if !ok {
		if err := openOutsideStories(s.src); err != nil {
			return story, &halt{run.Failed, "open tasks outside every story", err}, nil
		}
		s.rec.CurrentStory = ""
		return story, &halt{status: run.Complete}, nil
	}
	if h := s.limitReached(); h != nil {
		return story, h, nil
	}
	if n := s.tries[story.ID]; n >= s.r.MaxRetries+1 {
		return story, &halt{run.Failed, fmt.Sprintf("story %s ran out of retries", story.ID), s.exhausted(story, n)}, nil
	}
	return story, nil, nil
}

// waitToRetry waits before the next attempt at story when the agent's API failed for a
// passing reason (a backoff) or it hit a usage limit (--wait-on-limit); neither uses a
// story retry. It says why the run stops instead: the user interrupted the wait, or a
// limit the run does not wait for.
func (s *session) waitToRetry(ctx context.Context, story tasklist.Story, res agent.Result) *halt {
	var d time.Duration
	switch res.Class {
	case agent.ClassTransient:
		steps := s.backoff()
		if s.transient[story.ID] >= len(steps) {
			return nil // out of backoff: it counts as an ordinary failed attempt
		}
		d = steps[s.transient[story.ID]]
		s.transient[story.ID]++
		s.Report.Step(fmt.Sprintf("the agent's API failed for a passing reason; trying again in %s (%d of %d, not counted as a retry)", d, s.transient[story.ID], len(steps)))
	case agent.ClassLimit:
		now := s.Time()
		until := res.RetryTime(now)
		if s.r.WaitOnLimit <= 0 {
			return s.limitHit(until)
		}
		if until.IsZero() || until.After(now.Add(s.r.WaitOnLimit)) {
			until = now.Add(s.r.WaitOnLimit)
		}
		d = until.Sub(now)
		s.Report.Step(fmt.Sprintf("the agent hit a usage or rate limit; waiting until %s (Ctrl-C stops; 'git ralph start %s' resumes)", until.Format("15:04:05 MST"), s.r.Change))
	default:
		return nil
	}
	s.tries[story.ID]--    // a transient API error, or waiting out a limit, does not use a story retry
	s.surfaceWaited = true // the user may change refs while we wait
	if err := s.Wait(ctx, d); err != nil {
		return &halt{run.Interrupted, "interrupted", ErrInterrupted}
	}
	return nil
}

// limitHit is the stop of a run whose agent hit a usage or rate limit that resets at
// until (zero: it did not say), when the run does not wait for it.
func (s *session) limitHit(until time.Time) *halt {
	reason := "the agent hit a usage or rate limit"
	hint := "run 'git ralph start " + s.r.Change + "' again once the limit resets"
	if !until.IsZero() {
		reason += "; it resets at " + until.Format("15:04 MST")
		hint = "run 'git ralph start " + s.r.Change + "' again after " + until.Format("15:04 MST")
	}
	hint += "\nor let git-ralph wait for it: --wait-on-limit D (or 'git config ralph.waitOnLimit D')"
	return &halt{run.Failed, reason, UserErr(hint, "%s", reason)}
}

// summary is what the session did so far, its duration up to now.
func (s *session) summary() *Summary {
	s.sum.Duration = s.Time().Sub(s.started)
	s.sum.CostUSD, s.sum.CostKnown, s.sum.Checkpoint = s.rec.CostUSD, s.rec.CostKnown, s.rec.Checkpoint
	s.sum.Tokens, s.sum.TokensKnown = s.rec.Tokens, s.rec.TokensKnown
	return s.sum
}

// end is the summary and the error of a session that stops as h says, recorded.
func (s *session) end(h halt) (*Summary, error) {
	sum := s.summary()
	return sum, s.stop(h.status, h.reason, h.err)
}

// stop records why the loop stopped (and what caused err, when it says) and returns err.
func (s *session) stop(st run.Status, reason string, err error) error {
	var cause error
	var e *Error
	if errors.As(err, &e) {
		cause = e.Err
	}
	s.rec.Stop(st, reason, cause)
	if serr := s.Save(s.rec); serr != nil {
		return serr
	}
	return err
}

// exhausted is the error for a story that ran out of retries.
func (s *session) exhausted(story tasklist.Story, n int) error {
	rec := s.rec
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
	fmt.Fprintf(&b, "%s is at the last checkpoint %s; the agent's logs are in %s\n", rec.Branch, Short(rec.Checkpoint), s.Repo.Shown(filepath.Join(s.Store.ChangeDir(rec.Change), "logs")))
	fmt.Fprintf(&b, "finish the story by hand and commit it on %s, or change the story, then run 'git ralph start %s' again", rec.Branch, rec.Change)
	return &Error{Msg: fmt.Sprintf("story %s %q failed %d attempt(s)", story.ID, story.Title, n), Hint: b.String()}
}
