package loop

import (
	"context"
	"fmt"

	"github.com/git-ralph/git-ralph/internal/agent"
	"github.com/git-ralph/git-ralph/internal/run"
)

// The limits of a run: its budget (--max-cost, --max-tokens) and its deadline
// (--deadline). The user's other limits bound one attempt (--timeout, --idle-timeout,
// in internal/agent) or the gate (--verify-timeout, in internal/git).

// withDeadline is ctx, cancelled too when the run's deadline passes (on the limits'
// clock, l.Clock, which a test moves).
func (s *session) withDeadline(ctx context.Context) (context.Context, context.CancelFunc) {
	if s.r.deadline.IsZero() {
		return ctx, func() {}
	}
	clock := agent.ClockOr(s.Clock)
	wctx, cancel := context.WithCancel(ctx)
	go func() {
		select {
		case <-clock.After(s.r.deadline.Sub(clock.Now())):
			cancel()
		case <-wctx.Done():
		}
	}()
	return wctx, cancel
}

// limitReached says why no attempt may start: the run has cost more than --max-cost
// or used --max-tokens, or its deadline has passed or would before the attempt's own
// --timeout; nil when none is reached. The budget is what the accepted attempts report,
// summed here: never a total a record carried (a remote run's, or a run.json someone
// edited).
func (s *session) limitReached() *halt {
	r := s.r
	cost, _, tokens, _ := s.rec.Spent()
	if r.MaxCost > 0 && cost > r.MaxCost {
		return &halt{run.Budget, fmt.Sprintf("cost limit $%s passed", dollars(r.MaxCost)),
			UserErr("raise it with --max-cost or 'git config ralph.maxCost', then run 'git ralph start "+r.Change+"' to go on",
				"this run has cost $%.4f, more than the limit of $%s", cost, dollars(r.MaxCost))}
	}
	if r.MaxTokens > 0 && tokens >= r.MaxTokens {
		return &halt{run.Budget, fmt.Sprintf("token budget %s used up", Thousands(r.MaxTokens)),
			UserErr("raise it with --max-tokens or 'git config ralph.maxTokens', then run 'git ralph start "+r.Change+"' to go on",
				"this run has used %s tokens, the budget is %s", Thousands(tokens), Thousands(r.MaxTokens))}
	}
	if !r.deadline.IsZero() {
		// No attempt starts that its own timeout could carry past the deadline.
		if left := r.deadline.Sub(agent.ClockOr(s.Clock).Now()); left <= 0 || (r.Timeout > 0 && left < r.Timeout) {
			return &halt{run.Interrupted, "deadline reached", ErrDeadline}
		}
	}
	return nil
}
