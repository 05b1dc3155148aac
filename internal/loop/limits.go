package loop

import (
	"context"
	"fmt"
	"github.com/git-ralph/git-ralph/internal/tell"
	"strconv"

	"github.com/git-ralph/git-ralph/internal/agent"
	"github.com/git-ralph/git-ralph/internal/preflight"
	"github.com/git-ralph/git-ralph/internal/run"
)

// The limits of a run, checked here alone: the budget (--max-cost, --max-tokens) and the
// deadline. preflight refuses a budget the agent cannot be held to; limitReached stops the
// run before an attempt; unreported stops one whose agent did not report what the budget
// counts; withDeadline stops the attempt under way. --timeout and --idle-timeout are
// internal/agent's, --verify-timeout internal/git's.

// withDeadline is ctx, cancelled too when the run's deadline passes (on the limits'
// clock, l.Waits.Clock, which a test moves).
func (s *session) withDeadline(ctx context.Context) (context.Context, context.CancelFunc) {
	if s.r.deadline.IsZero() {
		return ctx, func() {}
	}
	clock := agent.ClockOr(s.Waits.Clock)
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
			tell.UserErr("raise it with --max-cost or 'git config ralph.maxCost', then run 'git ralph start "+r.Change+"' to go on",
				"this run has cost $%.4f, more than the limit of $%s", cost, dollars(r.MaxCost))}
	}
	if r.MaxTokens > 0 && tokens >= r.MaxTokens {
		return &halt{run.Budget, fmt.Sprintf("token budget %s used up", Thousands(r.MaxTokens)),
			tell.UserErr("raise it with --max-tokens or 'git config ralph.maxTokens', then run 'git ralph start "+r.Change+"' to go on",
				"this run has used %s tokens, the budget is %s", Thousands(tokens), Thousands(r.MaxTokens))}
	}
	if !r.deadline.IsZero() {
		// No attempt starts that its own timeout could carry past the deadline.
		if left := r.deadline.Sub(agent.ClockOr(s.Waits.Clock).Now()); left <= 0 || (r.Timeout > 0 && left < r.Timeout) {
			return &halt{run.Interrupted, "deadline reached", tell.ErrDeadline}
		}
	}
	return nil
}

// budget is r's --max-cost and --max-tokens, which preflight checks the agent and the
// judge against.
func budget(r *Resolved) preflight.Budget {
	return preflight.Budget{Cost: r.MaxCost, Tokens: r.MaxTokens}
}

// unreported stops a run whose budget cannot cap it: start refuses an agent that
// reports no cost (tokens) for --max-cost (--max-tokens), but a custom agent speaking
// Claude's stream-json may leave it out (Qwen Code's results carry tokens only), and an
// agent may report 0 tokens. An attempt whose agent gave its result (not a passing API
// error or a limit) without the figure stops the run rather than let it go on uncapped.
func (s *session) unreported(res agent.Result, story string) (string, error) {
	if !res.SawResult || res.Class == agent.ClassTransient || res.Class == agent.ClassLimit {
		return "", nil
	}
	again := "then run 'git ralph start " + s.r.Change + "' to go on"
	switch {
	case s.r.MaxCost > 0 && res.CostUSD == nil:
		return "the agent reported no cost, so --max-cost cannot cap it",
			tell.UserErr("cap it with --max-tokens N (or 'git config ralph.maxTokens N') instead and drop --max-cost, "+again,
				"agent %q reported no cost for story %s, so --max-cost could not stop it; the run stopped rather than go on uncapped", s.r.Driver.Name(), story)
	case s.r.MaxTokens > 0 && res.InputTokens+res.OutputTokens == 0:
		return "the agent reported no tokens, so --max-tokens cannot cap it",
			tell.UserErr("drop --max-tokens (and 'git config ralph.maxTokens'), or use an agent that reports its tokens, "+again,
				"agent %q reported no tokens for story %s, so --max-tokens could not stop it; the run stopped rather than go on uncapped", s.r.Driver.Name(), story)
	}
	return "", nil
}

// dollars prints an amount as the user gave it (0.015, not 0.01 or 0.0150).
func dollars(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
