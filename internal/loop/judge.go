package loop

import (
	"context"
	"fmt"
	"strings"

	"github.com/git-ralph/git-ralph/internal/agent"
	"github.com/git-ralph/git-ralph/internal/judge"
	"github.com/git-ralph/git-ralph/internal/preflight"
	"github.com/git-ralph/git-ralph/internal/run"
	"github.com/git-ralph/git-ralph/internal/sandbox"
	"github.com/git-ralph/git-ralph/internal/surface"
	"github.com/git-ralph/git-ralph/internal/tasklist"
)

// The judge (start --judge AGENT; internal/judge) as the loop runs it: checked before
// the run, run read-only in the sandbox (judgePolicy) on a COMPLETE attempt, recorded.

// checkJudge resolves r's judge, when it has one, and checks it (preflight.Judge).
func (l *Loop) checkJudge(r *Resolved) (err error) {
	if r.Options.Judge != "" {
		r.JudgeDriver, err = preflight.Judge(r.Options.Judge, l.JudgeDriver, l.judgeRequest(r, "", nil), budget(r), r.DryRun, l.Report.Warn)
	}
	return err
}

// judgeRequest is the request of r's judge: the agent's but for its model (--judge-model),
// no extra arguments (ralph.agentArgs are the agent's CLI's), and no secret kept.
func (l *Loop) judgeRequest(r *Resolved, text string, env []string) agent.Request {
	req := l.request(r, text, env)
	req.Model, req.Args, req.KeepEnv = r.JudgeModel, nil, nil
	return req
}

// judgePolicy is the judge's sandbox (sandbox.Settings.JudgePolicy): read-only to the
// working tree and the git directory. nil when the run is not sandboxed.
func (s *session) judgePolicy() *sandbox.Policy {
	return s.r.Sandbox.JudgePolicy(s.policy, s.Repo.Root, s.Repo.GitDir, s.Repo.CommonDir)
}

// judge runs the judge on att (judge.Review), whose story (done: as the attempt left it)
// passed the gate with tree staged on the last checkpoint. outcome is "" when the
// checkpoint may go on (no judge, or PASS); else the attempt's outcome and why, and
// whether the reason goes into the next prompt.
func (s *session) judge(ctx context.Context, att *run.Attempt, done tasklist.Story, snap *surface.Snapshot, tree string) (outcome, why string, passOn bool, err error) {
	drv := s.r.JudgeDriver
	if drv == nil {
		return "", "", false, nil
	}
	v := &judge.Review{Driver: drv, Model: s.r.JudgeModel, Store: s.Store, Repo: s.Repo, Report: s.Report,
		Record: s.rec, Save: s.Save, Sink: sink{s.Report}, Policy: s.judgePolicy(),
		Request:     func(text string, env []string) agent.Request { return s.judgeRequest(s.r, text, env) },
		Limits:      judge.Limits{Timeout: s.r.Timeout, Idle: s.r.IdleTimeout, Cost: s.r.MaxCost > 0, Tokens: s.r.MaxTokens > 0},
		AgentPrompt: s.agentPrompt, VerifyOutput: Tail(s.verifyOut, 40), ID: attemptID()}
	interrupted, err := v.Do(ctx, att, done, tree)
	if err != nil {
		return "", "", false, err
	} else if interrupted {
		return run.OutcomeInterrupted, "interrupted", false, nil
	}
	j := att.Judge
	s.Report.Step("the judge (" + drv.Name() + ") says " + strings.ToUpper(j.Verdict) + judgeUse(j))
	// Without the sandbox the judge could have written: what it changed of the trust
	// surface goes back, and a work tree that is no longer what it judged is no checkpoint.
	if why, err := s.afterJudge(context.WithoutCancel(ctx), att, snap, tree); err != nil || why != "" {
		return failure(why, err)
	}
	switch j.Verdict {
	case run.VerdictPass:
		return "", "", false, nil
	case run.VerdictFail:
		return run.OutcomeFailed, "judge: " + orText(j.Reason, "FAIL, without a reason"), true, nil
	}
	return run.OutcomeFailed, "judge: " + j.Reason, false, nil // not the agent's reason
}

// judgeUse is what the judge reported of its use, " · $0.0123 · 1,234 tokens", or "".
func judgeUse(j *run.Judge) string {
	s := ""
	if j.CostUSD != nil {
		s += fmt.Sprintf(" · $%.4f", *j.CostUSD)
	}
	if n := j.InputTokens + j.OutputTokens; n > 0 {
		s += " · " + Thousands(n) + " tokens"
	}
	return s
}

// afterJudge is why the attempt cannot be checkpointed after its judge ran unsandboxed
// (the sandbox leaves it nothing to write): the trust surface it changed, put back, or
// a work tree that is no longer the tree it judged.
func (s *session) afterJudge(ctx context.Context, att *run.Attempt, snap *surface.Snapshot, tree string) (string, error) {
	if s.policy != nil {
		return "", nil
	}
	files := *snap
	files.NoRefs = true
	if tampered, err := s.checkSurface(ctx, &files, s.rec, att); err != nil || tampered != "" {
		return strings.Replace(tampered, "tampered: ", "tampered (by the judge): ", 1), err
	}
	if err := s.Repo.AddAll(ctx); err != nil {
		return "", err
	}
	now, _, err := s.Repo.StagedTree(ctx)
	if err != nil || now == tree {
		return "", err
	}
	return fmt.Sprintf("judge: the judge changed the work tree it judged (tree %s, it judged %s); a judge only reads", Short(now), Short(tree)), nil
}
