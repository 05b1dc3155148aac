package loop

import (
	"context"
	"fmt"
	"strings"

	"github.com/git-ralph/git-ralph/internal/agent"
	"github.com/git-ralph/git-ralph/internal/judge"
	"github.com/git-ralph/git-ralph/internal/preflight"
	"github.com/git-ralph/git-ralph/internal/prompt"
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

// judge runs the judge on att, whose story (done: as the attempt left it) passed the
// gate with tree staged on the last checkpoint. outcome is "" when the checkpoint may go
// on (no judge, or PASS); else the attempt's outcome and why, and whether the reason
// goes into the next prompt.
func (s *session) judge(ctx context.Context, att *run.Attempt, done tasklist.Story, snap *surface.Snapshot, tree string) (outcome, why string, passOn bool, err error) {
	drv := s.r.JudgeDriver
	if drv == nil {
		return "", "", false, nil
	}
	gctx := context.WithoutCancel(ctx)
	text, err := s.judgePrompt(gctx, att, done, tree)
	if err != nil {
		return "", "", false, err
	}
	logPath := s.Store.JudgeLogPath(s.r.Change, att.Story, att.N)
	logf, err := s.Store.Create(logPath)
	if err != nil {
		return "", "", false, err
	}
	defer logf.Close()
	j := &run.Judge{Agent: drv.Name(), Model: s.r.JudgeModel, Log: logPath}
	att.Judge = j
	s.Report.Step("the judge (" + drv.Name() + ") reviews the diff")
	id := attemptID()
	req := s.judgeRequest(s.r, text, []string{
		"RALPH_AGENT=1", "RALPH_JUDGE=1", "RALPH_CHANGE=" + s.r.Change, "RALPH_STORY=" + att.Story,
		"RALPH_ATTEMPT=" + itoa(att.N), "RALPH_ATTEMPT_ID=" + id,
		"GIT_OPTIONAL_LOCKS=0", // it reads: its git status must not try to refresh the index
	})
	req.Log, req.Sink, req.Sandbox = logf, sink{s.Report}, s.judgePolicy()
	// As the agent's: a crash while the judge runs is met by a resume that stops it.
	jctx, stop := context.WithCancel(ctx)
	defer stop()
	var unsaved error
	req.OnStart = func(pid int, start uint64) {
		s.rec.AgentPID, s.rec.AgentStart, s.rec.AgentID = pid, start, id
		if err := s.Save(s.rec); err != nil {
			unsaved = err
			stop()
		}
	}
	res, startErr := agent.Run(jctx, drv, req)
	s.rec.AgentPID, s.rec.AgentStart, s.rec.AgentID = 0, 0, ""
	judge.Record(j, res)
	s.rec.SumAttempts()
	var verdict, reason string
	switch {
	case startErr != nil:
		verdict, reason = run.VerdictNone, "could not be started: "+startErr.Error()
	case unsaved != nil:
		verdict, reason = run.VerdictNone, "the run record could not name its process: "+unsaved.Error()
	case res.Interrupted || ctx.Err() != nil:
		j.Verdict, j.Reason = run.VerdictNone, "interrupted"
		return run.OutcomeInterrupted, "interrupted", false, nil
	default:
		verdict, reason = judge.Verdict(res, judge.Limits{Timeout: s.r.Timeout, Idle: s.r.IdleTimeout, Cost: s.r.MaxCost > 0, Tokens: s.r.MaxTokens > 0})
	}
	j.Verdict, j.Reason = verdict, reason
	s.Report.Step("the judge (" + drv.Name() + ") says " + strings.ToUpper(verdict) + judgeUse(j))
	// Without the sandbox the judge could have written: what it changed of the trust
	// surface goes back, and a work tree that is no longer what it judged is no checkpoint.
	if why, err := s.afterJudge(gctx, att, snap, tree); err != nil || why != "" {
		return failure(why, err)
	}
	switch verdict {
	case run.VerdictPass:
		return "", "", false, nil
	case run.VerdictFail:
		return run.OutcomeFailed, "judge: " + orText(reason, "FAIL, without a reason"), true, nil
	}
	return run.OutcomeFailed, "judge: " + reason, false, nil // not the agent's reason
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

// judgePrompt is the judge's prompt for att: the story as its agent got it, the tasks
// ticked, the gate's output and the diff from the last checkpoint to tree, whole in
// the prompt when short, else its beginning, the whole written beside the judge's log.
func (s *session) judgePrompt(ctx context.Context, att *run.Attempt, done tasklist.Story, tree string) (string, error) {
	d := prompt.JudgeData{Change: s.r.Change, Story: done.ID, Title: done.Title, Attempt: att.N, AgentPrompt: strings.TrimSpace(s.agentPrompt),
		Verify: orText(att.Verify, "skipped"), VerifyOutput: Tail(s.verifyOut, 40), Checkpoint: s.rec.Checkpoint, Tree: tree}
	d.Tasks = judge.Tasks(done)
	diffPath := s.Store.JudgeDiffPath(s.r.Change, att.Story, att.N)
	f, err := s.Store.Create(diffPath)
	if err != nil {
		return "", err
	}
	w := &judge.Diff{File: f, FileMax: judge.MaxDiffFile, HeadMax: prompt.MaxJudgeDiff}
	err = s.Repo.DiffStaged(ctx, s.rec.Checkpoint, w) // the index holds tree
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return "", fmt.Errorf("the diff for the judge: %w", err)
	}
	d.Diff, d.DiffBytes = strings.ToValidUTF8(string(w.Head), "\uFFFD"), w.Total
	if w.Total > len(w.Head) {
		d.DiffFile = diffPath
		if w.Total > w.FileMax {
			d.DiffCut = w.FileMax
		}
	} else {
		_ = s.Store.RemoveFile(diffPath) // whole in the prompt: no file to name
	}
	return prompt.RenderJudge(d)
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
