package loop

import (
	"context"
	"errors"
	"fmt"
	"github.com/git-ralph/git-ralph/internal/preflight"
	"github.com/git-ralph/git-ralph/internal/start"
	"github.com/git-ralph/git-ralph/internal/tell"
	"path/filepath"
	"strings"
	"time"

	"github.com/git-ralph/git-ralph/internal/agent"
	"github.com/git-ralph/git-ralph/internal/prompt"
	"github.com/git-ralph/git-ralph/internal/run"
	"github.com/git-ralph/git-ralph/internal/sandbox"
	"github.com/git-ralph/git-ralph/internal/source"
	"github.com/git-ralph/git-ralph/internal/tasklist"
	"github.com/git-ralph/git-ralph/internal/trust"
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
	// watch is the trust surface around the attempts (internal/trust), made once the
	// sandbox is decided (begin).
	watch *trust.Watch
	// tries are the attempts per story in this invocation; transient, the transient API
	// errors retried per story.
	tries, transient map[string]int

	sum     *start.Summary
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
func (s *session) work(ctx context.Context) (*start.Summary, error) {
	wctx, cancel := s.withDeadline(ctx)
	defer cancel()
	sum, err := s.attempts(wctx)
	cctx, ccancel := s.checkCtx(ctx)
	defer ccancel()
	if s.watch != nil {
		if cerr := fromTrust(s.watch.LastCheck(cctx)); cerr != nil && err == nil {
			err = cerr
		}
	}
	if err == tell.ErrInterrupted && ctx.Err() == nil && wctx.Err() != nil {
		// The deadline, not the user, stopped the attempt under way; it is saved.
		return sum, s.stop(run.Interrupted, "deadline reached", tell.ErrDeadline)
	}
	return sum, err
}

// attempts is work's loop over the stories.
func (s *session) attempts(ctx context.Context) (*start.Summary, error) {
	s.started = s.Time()
	s.sum = &start.Summary{Change: s.r.Change, Branch: s.rec.Branch, Original: OriginalName(s.rec), Total: len(s.src.Stories)}
	if err := s.begin(ctx); err != nil {
		return nil, err
	}
	for {
		if ctx.Err() != nil {
			return s.end(halt{run.Interrupted, "interrupted", tell.ErrInterrupted})
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
	pol, err := s.r.Sandbox.AgentPolicy(s.Repo.Root, s.Repo.CommonDir, agentFiles(s.src, s.Store.LearningsPath(s.r.Change)), true)
	if err != nil {
		return err
	}
	if pol != nil {
		// What the agent may read is worked out once, for every attempt of the run.
		pol.Read = sandbox.ReadGrants(pol.Hide, pol.Reveal)
	}
	s.policy = pol
	if pol != nil && !s.r.Sandbox.VerifyOff {
		if s.gatePolicy, err = s.r.Sandbox.GatePolicy(s.Repo.Root, s.Repo.CommonDir); err != nil {
			return err
		}
		s.gatePolicy.Read = pol.Read // the same hidden paths
	}
	s.watch = s.newWatch()
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
		return tasklist.Story{}, &halt{run.Failed, reason, tell.UserErr("put it back ('git checkout ralph/"+s.r.Change+" -- "+s.src.TasksRel+"'), then run 'git ralph start "+s.r.Change+"' again", "%s", reason)}, nil
	}
	story, ok := s.src.NextStory()
	if !ok {
		if err := preflight.OpenOutsideStories(s.src); err != nil {
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
	s.tries[story.ID]-- // a transient API error, or waiting out a limit, does not use a story retry
	s.watch.Waited()    // the user may change refs while we wait
	if err := s.Wait(ctx, d); err != nil {
		return &halt{run.Interrupted, "interrupted", tell.ErrInterrupted}
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
	return &halt{run.Failed, reason, tell.UserErr(hint, "%s", reason)}
}

// summary is what the session did so far, its duration up to now.
func (s *session) summary() *start.Summary {
	s.sum.Duration = s.Time().Sub(s.started)
	s.sum.CostUSD, s.sum.CostKnown, s.sum.Checkpoint = s.rec.CostUSD, s.rec.CostKnown, s.rec.Checkpoint
	s.sum.Tokens, s.sum.TokensKnown = s.rec.Tokens, s.rec.TokensKnown
	return s.sum
}

// end is the summary and the error of a session that stops as h says, recorded.
func (s *session) end(h halt) (*start.Summary, error) {
	sum := s.summary()
	return sum, s.stop(h.status, h.reason, h.err)
}

// stop records why the loop stopped (and what caused err, when it says) and returns err.
func (s *session) stop(st run.Status, reason string, err error) error {
	var cause error
	var e *tell.Error
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
	return &tell.Error{Msg: fmt.Sprintf("story %s %q failed %d attempt(s)", story.ID, story.Title, n), Hint: b.String()}
}

// checkCtx is the context of the checks after an attempt: they run after a first
// Ctrl-C too (the attempt is saved, what the agent changed put back), and a second one
// (Loop.Kill) that comes while they run stops them before their next git; the next
// start finishes what they left from the saved snapshot. A second Ctrl-C that came
// before them killed the agent; they run then, bounded (one ref transaction).
func (l *Loop) checkCtx(ctx context.Context) (context.Context, context.CancelFunc) {
	c, cancel := context.WithCancel(context.WithoutCancel(ctx))
	killed := false
	if l.Kill != nil {
		select {
		case <-l.Kill:
			killed = true
		default:
		}
	}
	if l.Kill != nil && !killed {
		go func() {
			select {
			case <-l.Kill:
				cancel()
			case <-c.Done():
			}
		}()
	}
	return c, cancel
}
