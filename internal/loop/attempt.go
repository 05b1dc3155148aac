package loop

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"github.com/git-ralph/git-ralph/internal/preflight"
	"github.com/git-ralph/git-ralph/internal/tell"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"text/template"
	"time"
	"unicode/utf8"

	"github.com/git-ralph/git-ralph/internal/agent"
	"github.com/git-ralph/git-ralph/internal/beneath"
	"github.com/git-ralph/git-ralph/internal/git"
	"github.com/git-ralph/git-ralph/internal/judge"
	"github.com/git-ralph/git-ralph/internal/run"
	"github.com/git-ralph/git-ralph/internal/sandbox"
	"github.com/git-ralph/git-ralph/internal/source"
	"github.com/git-ralph/git-ralph/internal/surface"
	"github.com/git-ralph/git-ralph/internal/tasklist"
)

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
// checkpoint or restored to the old one, with the attempt recorded: running the agent
// (runAgent), then settling what came of it (settle).
func (s *session) attempt(ctx context.Context, story tasklist.Story, learnings string) (string, agent.Result, error) {
	n := s.rec.NextAttemptN(story.ID)
	for s.taken[AttemptRef(s.r.Change, story.ID, n)] {
		n++ // a crash after saving an attempt but before recording it
	}
	text, err := s.render(s.r, s.src, story, learnings, s.rec.LastReason(story.ID), s.tries[story.ID])
	if err != nil {
		return "", agent.Result{}, err
	}
	// The surface is saved before the record says an attempt is under way, so that a
	// crash-resume finding a running attempt and no saved surface knows it was removed.
	snap, err := s.watch.Take(context.WithoutCancel(ctx))
	if err != nil {
		return "", agent.Result{}, fromTrust(err)
	}
	s.rec.Attempts = append(s.rec.Attempts, run.Attempt{
		Story: story.ID, N: n, Outcome: run.OutcomeRunning, Log: s.Store.LogPath(s.r.Change, story.ID, n),
		Agent: s.r.Driver.Name(), Model: s.r.Model, Started: s.Time(),
	})
	s.rec.CurrentStory, s.rec.Status, s.rec.PID = story.ID, run.Running, os.Getpid()
	if err := s.Save(s.rec); err != nil {
		s.dropSurface(s.rec.Change) // no attempt recorded: no snapshot to check it against
		return "", agent.Result{}, err
	}
	att := s.rec.Last()
	s.agentPrompt, s.verifyOut = text, ""
	s.Report.Attempt(storyIndex(s.src, story.ID), len(s.src.Stories), story.ID, story.Title, s.tries[story.ID], s.r.MaxRetries+1)
	ran, err := s.runAgent(ctx, att, text, snap)
	if err != nil {
		return "", ran.res, err
	}
	outcome, err := s.settle(ctx, att, story, snap, ran)
	if err != nil && outcome == "" {
		return "", agent.Result{}, err
	}
	return outcome, ran.res, err
}

// ran is what running the agent once came to: its result, the error of a start that
// failed, what the checks after it found the agent changed, and the error of a save of
// the agent's process to the record that failed (the agent was stopped then).
type ran struct {
	res      agent.Result
	startErr error
	tampered string
	unsaved  error
}

// runAgent runs the agent of att with the prompt text, its log and its process in the
// record, then checks the run's records and the trust surface (snap) and puts back
// what the agent changed of them, before any other git runs.
func (s *session) runAgent(ctx context.Context, att *run.Attempt, text string, snap *surface.Snapshot) (ran, error) {
	var out ran
	logf, err := s.Store.Create(att.Log) // a symlink planted there is replaced, never written through
	if err != nil {
		return out, err
	}
	id := attemptID()
	req := s.agentRequest(att, text, id)
	req.Log = logf
	// A crash while the agent runs is met by a resume that stops the agent agent.json
	// names (run.Agent): one that cannot be named stops the agent now, and the run
	// after it.
	actx, stopAgent := context.WithCancel(ctx)
	defer stopAgent()
	req.OnStart = func(pid int, start uint64) {
		if err := s.Store.SaveAgent(s.rec.Change, run.Agent{PID: pid, Start: start, ID: id}); err != nil {
			out.unsaved = err
			stopAgent()
		}
	}
	// What no sandbox refuses, the modes and times of the files in your home you rely
	// on (~/.ssh, the shell's start-up files, ~/bin), is marked before and put back
	// after: found and undone, and named as tampering.
	marks := sandbox.MarkHome(os.Getenv("HOME"))
	req.Note = s.Report.Warn
	out.res, out.startErr = agent.Run(actx, s.r.Driver, req)
	for _, p := range out.res.Restored {
		s.Report.Warn("the agent changed " + p + " (its CLI's settings, read by your next session of it): put back")
	}
	for _, e := range out.res.NotRestored {
		s.Report.Warn("the agent changed its CLI's settings, and they could not be put back: " + e)
	}
	logf.Close()
	if left := (*agent.LeftoversError)(nil); errors.As(out.startErr, &left) {
		// Processes of the attempt still run: nothing is checked, no git runs.
		return out, s.stop(run.Failed, "processes the attempt left are still running", leftoversError(left))
	}
	s.Store.RemoveAgent(s.rec.Change)
	out.tampered, err = s.checkAfterAgent(ctx, att, snap)
	if home := marks.PutBack(); len(home) > 0 && err == nil {
		what := "tampered: " + strings.Join(home, ", ")
		if out.tampered != "" {
			what = out.tampered + "; " + strings.TrimPrefix(what, "tampered: ")
		}
		out.tampered = what
	}
	return out, err
}

// agentRequest is the request of att's agent: its environment (RALPH_ATTEMPT_ID=id marks
// it: a crash-resume signals the recorded process only when it carries it,
// stopOrphanAgent), its output to the reporter, its sandbox.
func (s *session) agentRequest(att *run.Attempt, text, id string) agent.Request {
	req := s.request(s.r, text, []string{
		"RALPH_AGENT=1", "RALPH_CHANGE=" + s.r.Change, "RALPH_STORY=" + att.Story, "RALPH_ATTEMPT=" + itoa(att.N),
		"RALPH_SOURCE=" + s.src.Kind.About().ID, "RALPH_TASKS_FILE=" + s.src.TasksFile(),
		"RALPH_ATTEMPT_ID=" + id,
	})
	req.Sink = sink{s.Report}
	if req.Sandbox = s.policy; s.policy != nil && !sandbox.Covers(s.policy.Write, s.Repo.CommonDir) {
		// The git directory is read-only: the agent's git status must not try to
		// refresh the index there.
		req.Env = append(req.Env, "GIT_OPTIONAL_LOCKS=0")
	}
	return req
}

// checkAfterAgent checks what the agent of att may have changed and puts it back: .git,
// the link to a git directory moved out of the tree, then the run's records and the
// trust surface (trust.Watch.After), before any other git runs. It returns the
// attempt's reason when the agent had changed any ("tampered: …").
func (s *session) checkAfterAgent(ctx context.Context, att *run.Attempt, snap *surface.Snapshot) (string, error) {
	id := fmt.Sprintf("%s-%d", att.Story, att.N)
	// The checks run after a first Ctrl-C too; a second stops them (checkCtx).
	cctx, cancel := s.checkCtx(ctx)
	defer cancel()
	link, err := s.checkGitLink(filepath.Join(s.Store.ChangeDir(s.rec.Change), "tampered", id, ".git"))
	if err != nil {
		return "", err
	}
	reason, err := s.watch.After(cctx, att, snap, link)
	return reason, fromTrust(err)
}

// settle turns what running the agent came to into the attempt's outcome: a checkpoint
// (checkpointed), or the attempt kept and the branch restored (failed). An agent that
// could not start stops the run.
func (s *session) settle(ctx context.Context, att *run.Attempt, story tasklist.Story, snap *surface.Snapshot, ran ran) (string, error) {
	res := ran.res
	if ran.startErr != nil {
		att.Outcome, att.Reason, att.Ended = run.OutcomeError, ran.startErr.Error(), s.Time()
		hint := "check the agent command and ralph.agentArgs"
		if se := (*sandbox.StartError)(nil); errors.As(ran.startErr, &se) {
			hint = "the agent's sandbox could not be made (SECURITY MODEL in git ralph --help: The sandbox)"
		}
		return "", s.stop(run.Failed, "the agent could not be started",
			&tell.Error{Msg: fmt.Sprintf("start agent %s: %v", s.r.Driver.Name(), ran.startErr), Hint: hint, Err: ran.startErr})
	}
	att.Turns, att.InputTokens, att.OutputTokens, att.CostUSD = res.Turns, res.InputTokens, res.OutputTokens, res.CostUSD
	att.PremiumRequests = res.PremiumRequests
	if res.Model != "" {
		att.Model = res.Model
	}
	s.rec.SumAttempts()
	outcome, reason, passOn := decide(res, s.r.Timeout, s.r.IdleTimeout)
	if ran.unsaved != nil {
		// Stopped, whatever it said: no checkpoint of an agent the record did not name.
		outcome, reason, passOn = run.OutcomeInterrupted, "the run record could not name the agent's process", false
	}
	if ran.tampered != "" {
		if outcome != run.OutcomeInterrupted {
			outcome = run.OutcomeFailed
		}
		reason, passOn = ran.tampered, true
	}
	if outcome == run.OutcomeComplete {
		var err error
		if outcome, reason, passOn, err = s.checkpoint(ctx, att, story, snap); err != nil {
			return "", err
		}
	}
	if outcome == run.OutcomeComplete {
		s.checkpointed(story)
		return outcome, nil
	}
	if outcome != run.OutcomeInterrupted {
		// Said where the failure is seen, and passed on: the sandbox, not the agent.
		if rs := s.sandboxRefusals(att); len(rs) > 0 {
			reason, passOn = sandbox.WithRefusals(reason, rs), true
		}
	}
	att.Outcome, att.Reason, att.PassOn = outcome, reason, passOn
	return outcome, s.failed(context.WithoutCancel(ctx), att, ran)
}

// checkpointed says that story has a checkpoint, and tells its kind of source when it
// keeps its tracked file itself (source.Outside: a GitHub issue is told).
func (s *session) checkpointed(story tasklist.Story) {
	rec := s.rec
	s.Report.Outcome(true, fmt.Sprintf("story %s: checkpoint %s", story.ID, Short(rec.Checkpoint)))
	k, ok := s.src.Kind.(source.Outside)
	if !ok {
		return
	}
	p := source.Progress{Run: rec.Change, Branch: rec.Branch, Commit: rec.Checkpoint}
	for _, a := range rec.Attempts {
		if a.Story == story.ID {
			p.Attempts++
			if a.Outcome != run.OutcomeComplete && a.Outcome != run.OutcomeRunning && a.Reason != "" {
				p.LastFailure = a.Reason
			}
		}
	}
	if w := k.Checkpointed(s.src, story, p); w != "" {
		s.Report.Warn(w)
	}
}

// failed keeps the failed attempt att and restores the branch, then stops the run when
// the attempt was interrupted, its agent cannot go on, or its process could not be
// recorded.
func (s *session) failed(ctx context.Context, att *run.Attempt, ran ran) error {
	if err := s.saveAndRestore(ctx, s.rec, att, att.Reason); err != nil {
		return err
	}
	if k, ok := s.src.Kind.(source.Outside); ok {
		if err := k.Undo(s.src); err != nil {
			return err
		}
	}
	msg := fmt.Sprintf("story %s attempt %d: %s", att.Story, s.tries[att.Story], att.Outcome)
	// The output the reason carries (a failing verify hook's last lines), bounded,
	// under the line: the failure is said where it is seen.
	tail := run.ReasonTail(att.Reason, run.ReasonTailLines)
	if att.Reason != "" && att.Reason != att.Outcome { // never "interrupted: interrupted"
		first := firstLine(att.Reason)
		if len(tail) > 0 {
			first = strings.TrimSuffix(first, ":")
		}
		msg += ": " + first
	}
	msg += " (kept as " + att.Ref + ")"
	for _, l := range tail {
		msg += "\n    " + l
	}
	s.Report.Outcome(false, msg)
	switch {
	case ran.unsaved != nil:
		return s.stop(run.Failed, "the agent's process could not be recorded", s.unsavedAgent(att, ran.unsaved))
	case att.Outcome == run.OutcomeInterrupted:
		return s.stop(run.Interrupted, "interrupted", tell.ErrInterrupted)
	case ran.res.Fatal != "":
		return s.stop(run.Failed, ran.res.Fatal, &tell.Error{Msg: ran.res.Fatal, Hint: "the loop stopped; run 'git ralph start " + s.r.Change + "' again once that is fixed"})
	}
	return nil
}

// unsavedAgent is the error of an attempt whose agent was stopped because the record
// could not name its process (err): a crash then would have left it running unseen.
func (s *session) unsavedAgent(att *run.Attempt, err error) error {
	return &tell.Error{Msg: "the run record could not name the agent's process, so the agent was stopped: " + err.Error(),
		Hint: "the attempt is kept as " + att.Ref + "; once " + s.Store.RecordPath(s.r.Change) + " can be written, run 'git ralph start " + s.r.Change + "' again",
		Err:  err}
}

// sink forwards the agent's live output to the reporter.
type sink struct{ r tell.Reporter }

func (s sink) Text(t string)         { s.r.AgentText(t) }
func (s sink) Tool(name, sum string) { s.r.AgentTool(name, sum) }

// decide turns the agent's result into an outcome, from the final result only.
// passOn tells whether the reason goes into the next prompt: the agent's own FAILED
// reason does; crashes, timeouts and missing signals do not (docs/LOOP.md, "Each attempt" step 3).
// timeout and idle are the limits it ran with (--timeout, --idle-timeout).
func decide(res agent.Result, timeout, idle time.Duration) (outcome, reason string, passOn bool) {
	switch {
	case res.Interrupted:
		return run.OutcomeInterrupted, "interrupted", false
	case res.TimedOut:
		return run.OutcomeTimeout, fmt.Sprintf("timed out after %s", timeout), false
	case res.Idle:
		return run.OutcomeTimeout, fmt.Sprintf("printed nothing for %s", idle), false
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

// checkpoint turns a COMPLETE into a checkpoint commit of exactly the tree the gate
// saw, or into a failure with a reason (tasks still open, the branch or an operation
// left, a gitlink added, the gate or the commit hooks refusing). Only the gate stops
// when ctx is cancelled. The checks and why: docs/LOOP.md, "Each attempt".
func (s *session) checkpoint(ctx context.Context, att *run.Attempt, story tasklist.Story, snap *surface.Snapshot) (outcome, reason string, passOn bool, err error) {
	gctx := context.WithoutCancel(ctx)
	cur, head, err := s.Repo.HeadState(gctx) // one git call for both
	if err != nil {
		return failure("", err)
	}
	if cur != s.rec.Branch {
		return failure(fmt.Sprintf("signalled COMPLETE but switched from %s to %s; stay on %s and do not switch branches", s.rec.Branch, cmp.Or(cur, "detached HEAD"), s.rec.Branch), nil)
	}
	now, done, why, err := s.storyDone(gctx, story)
	if err != nil || why != "" {
		return failure(why, err)
	}
	if head != s.rec.Checkpoint {
		// The agent committed (or rewound): fold it all into one checkpoint.
		if err := s.Repo.SoftReset(gctx, s.rec.Checkpoint); err != nil {
			return failure("", err)
		}
		s.Report.Step("folded the agent's own commits into the checkpoint")
	}
	// Once more, right before the gate: a process the agent left behind may have
	// rewritten a hook or the config since the first look, and git-ralph's add runs
	// the config's filters. Files only (no git): the refs do not decide what runs.
	if !s.watch.Fixed() {
		files := *snap
		files.NoRefs = true
		if tampered, err := s.checkSurface(gctx, &files, s.rec, att); err != nil || tampered != "" {
			return failure(tampered, err)
		}
	}
	// git-ralph's own move of a plan this checkpoint completes (source.Archiver) is part
	// of what the gate sees and the checkpoint commits; a failed attempt puts it back
	// with the rest of the work tree.
	followed := now != s.src
	if now, err = s.archive(gctx, now, s.rec); err != nil {
		return failure("", err)
	}
	tree, outcome, why, err := s.gate(ctx, att, story, snap)
	if err != nil || outcome != "" {
		return outcome, why, outcome == run.OutcomeFailed, err
	}
	if outcome, why, passOn, err := s.judge(ctx, att, done, snap, tree); err != nil || outcome != "" {
		return outcome, why, passOn, err // no judge, or its PASS, goes on
	}
	id, why, err := s.commitCheckpoint(gctx, att, done, now, tree, snap)
	if err != nil || why != "" {
		return failure(why, err)
	}
	if now != s.src {
		if followed {
			s.Report.Step(fmt.Sprintf("%s moved to %s: the run follows it", s.src.TasksRel, now.TasksRel))
		}
		*s.src = *now
		source.Record(s.rec, s.src.Ref)
	}
	s.rec.Checkpoint = id
	att.Outcome, att.Commit = run.OutcomeComplete, id
	return run.OutcomeComplete, "", false, s.Save(s.rec)
}

// leftoversError is the error that stops a run whose attempt left processes that could
// not all be ended: nothing of the attempt was checked or committed.
func leftoversError(err error) error {
	return &tell.Error{Msg: err.Error(),
		Hint: "git-ralph checks and commits nothing while a process of the attempt runs; end them (kill -9), then run 'git ralph start' again: it takes the attempt up where it stopped",
		Err:  err}
}

// failure is checkpoint's result for an attempt that failed for the reason why (passed
// on to the next attempt), or for an error.
func failure(why string, err error) (outcome, reason string, passOn bool, _ error) {
	if err != nil {
		return "", "", false, err
	}
	return run.OutcomeFailed, why, true, nil
}

// storyDone checks what an attempt that signalled COMPLETE left besides its branch: no
// operation half-way, the tracked file readable and story done in it, no task skipped
// where skipping is off. It returns the source as the attempt leaves it (now: a plan
// that moved itself to completed/ is followed there; the session's source and the
// record take it only with the checkpoint) and story in it, or why the attempt failed.
func (s *session) storyDone(ctx context.Context, story tasklist.Story) (now *source.Source, done tasklist.Story, why string, err error) {
	rec, src := s.rec, s.src
	if op, err := s.Repo.InProgress(); err != nil {
		return nil, done, "", err
	} else if op != "" {
		return nil, done, fmt.Sprintf("signalled COMPLETE but left a %s in progress; finish or abort it, and leave the commits to git-ralph", op), nil
	}
	before := src.Tasks.DoneCounts() // as the attempt started: the source is read before each
	if err := src.Reload(); err != nil {
		var broken *source.BrokenError
		if errors.As(err, &broken) {
			return nil, done, fmt.Sprintf("signalled COMPLETE but left %s broken: %s; keep it valid JSON, with the same story ids and branchName", broken.File, broken.Reason), nil
		}
		return nil, done, "", err
	}
	now = src
	if !src.HasTasks {
		if now, err = s.followMoved(ctx, src, rec); err != nil {
			return nil, done, "", err
		}
	}
	done, ok := now.Story(story.ID)
	if !ok {
		return nil, done, fmt.Sprintf("signalled COMPLETE but story %s is gone from %s", story.ID, src.TasksRel), nil
	}
	if why := now.Unfinished(done); why != "" {
		return nil, done, "signalled COMPLETE but " + why, nil
	}
	if why := tickedElsewhere(before, now.Tasks, story.ID); why != "" {
		return nil, done, why, nil
	}
	if skipped := skippedTasks(done); !s.r.AllowSkip && len(skipped) > 0 {
		return nil, done, fmt.Sprintf("signalled COMPLETE but ticked %s as skipped, and skipping is off here (ralph.allowSkip=false): do it, or end with FAILED saying why it cannot be done", strings.Join(skipped, ", ")), nil
	}
	return now, done, "", nil
}

// gate stages the work tree and takes its tree id (what the checkpoint must commit),
// refuses a repository the agent added as a gitlink, and runs the ralph-verify hook as
// snap recorded it, in the sandbox (gateHook). outcome is "" when the gate passed; else the attempt's outcome
// (failed, or interrupted when ctx was cancelled while the hook ran) and why.
func (s *session) gate(ctx context.Context, att *run.Attempt, story tasklist.Story, snap *surface.Snapshot) (tree, outcome, why string, err error) {
	gctx := context.WithoutCancel(ctx)
	// The tree the gate sees is the tree committed: staged now, its id taken, whatever
	// bits the agent set in the index.
	if err := s.watch.Unhide(gctx); err != nil {
		return "", "", "", err
	}
	if err := s.Repo.AddAll(gctx); err != nil {
		return "", "", "", err
	}
	tree, gitlinks, err := s.Repo.StagedTree(gctx)
	if err != nil {
		return "", "", "", err
	}
	if added, err := s.addedGitlinks(gctx, s.rec.Checkpoint, gitlinks); err != nil {
		return "", "", "", err
	} else if len(added) > 0 {
		return "", run.OutcomeFailed, fmt.Sprintf("signalled COMPLETE but added %s, a git repository inside the work tree (a gitlink); "+
			"git-ralph commits no repository of the agent's: remove its .git, or leave it out of the work tree", quoteList(added)), nil
	}
	att.Verify = "skipped"
	script, ok := s.recordedHook(snap, "ralph-verify")
	if !ok {
		return tree, "", "", nil
	}
	s.Report.Step("running the ralph-verify hook")
	env := []string{"RALPH_CHANGE=" + s.rec.Change, "RALPH_STORY=" + story.ID, "RALPH_ATTEMPT=" + itoa(att.N)}
	if s.r.VerifyTimeout > 0 {
		env = append(env, "RALPH_VERIFY_TIMEOUT="+s.r.VerifyTimeout.String())
	}
	out, code, err := s.gateHook(ctx, "ralph-verify", script, nil, env)
	if left := (*agent.LeftoversError)(nil); errors.As(err, &left) {
		return "", "", "", err // what it left runs on: nothing is saved, no git runs
	}
	if ctx.Err() != nil {
		return "", run.OutcomeInterrupted, "interrupted", nil
	}
	if err != nil {
		return "", "", "", err
	}
	if code != 0 {
		att.Verify = "failed"
		return "", run.OutcomeFailed, fmt.Sprintf("the ralph-verify hook failed (exit %d):\n%s", code, Tail(out, 40)), nil
	}
	if why, err := s.afterGate(ctx, snap); err != nil || why != "" {
		return "", run.OutcomeFailed, why, err
	}
	att.Verify, s.verifyOut = "passed", out
	return tree, "", "", nil
}

// commitCheckpoint commits what is staged as the checkpoint of story (as the attempt
// left it in now), and checks that the commit is what the gate saw: tree, on the last
// checkpoint alone. It returns the commit, or why the attempt failed.
func (s *session) commitCheckpoint(ctx context.Context, att *run.Attempt, story tasklist.Story, now *source.Source, tree string, snap *surface.Snapshot) (id, why string, err error) {
	rec := s.rec
	att.Ended = s.Time()
	done := *rec // the record as the checkpoint leaves it: its trailers name the source where it is now
	source.Record(&done, now.Ref)
	msg, err := checkpointMessage(&done, story, att, s.r.CheckpointMessage, s.r.RunID)
	if err != nil {
		return "", "", err
	}
	// The user's commit hooks, as snap recorded them, run here in the sandbox, never
	// from git's commit over the agent's files: the commit is made with none.
	if msg, why, err = s.commitHooks(ctx, snap, msg); err != nil || why != "" {
		return "", why, err
	}
	id, err = s.Repo.Commit(ctx, msg, git.CommitOptions{AllowEmpty: true, NoHooks: true})
	var hook *git.CommitHookError
	var ge *git.Error
	switch {
	case errors.As(err, &hook):
		return "", fmt.Sprintf("the checkpoint commit was refused by a commit hook (%s):\n%s", strings.Join(hook.Hooks, " or "), Tail(hook.Err.Stderr, 40)), nil
	case errors.As(err, &ge):
		return "", fmt.Sprintf("the checkpoint commit failed (git exited %d):\n%s", ge.ExitCode, Tail(orText(ge.Stderr, ge.Error()), 40)), nil
	case err != nil:
		return "", "", err
	}
	got, parents, err := s.Repo.CommitShape(ctx, id)
	if err != nil {
		return "", "", err
	}
	if got != tree || len(parents) != 1 || parents[0] != rec.Checkpoint {
		// A commit hook (or something beside it) changed what was staged after the
		// gate, or the commit grew another parent: not what the gate saw. The commit
		// is kept with the attempt (its second parent), the branch put back.
		return "", fmt.Sprintf("the checkpoint commit %s is not what the verify gate saw (tree %s, parents %s; the gate saw tree %s on %s): "+
			"a commit hook changed what is staged after the gate; git-ralph commits only what the gate saw, so leave the files as the commit hooks want them",
			Short(id), Short(got), shortList(parents), Short(tree), Short(rec.Checkpoint)), nil
	}
	return id, "", nil
}

// commitHooks runs the commit hooks git would run for the checkpoint, as snap recorded
// them, in the sandbox (gateHook), and returns the message as they left it, or why the
// attempt failed. See docs/SANDBOX.md, "The verify gate and the commit hooks".
func (s *session) commitHooks(ctx context.Context, snap *surface.Snapshot, msg string) (string, string, error) {
	type hook struct {
		name   string
		script []byte
	}
	var hooks []hook
	for _, name := range []string{"pre-commit", "prepare-commit-msg", "commit-msg"} {
		if script, ok := s.recordedHook(snap, name); ok {
			hooks = append(hooks, hook{name, script})
		}
	}
	if len(hooks) == 0 {
		return msg, "", nil
	}
	dir, err := os.MkdirTemp("", "git-ralph-msg-")
	if err != nil {
		return "", "", err
	}
	defer os.RemoveAll(dir)
	file := filepath.Join(dir, "COMMIT_EDITMSG")
	if err := os.WriteFile(file, []byte(msg), 0o600); err != nil {
		return "", "", err
	}
	s.Report.Step("running the commit hooks (" + hookNames(hooks, func(h hook) string { return h.name }) + ")")
	for _, h := range hooks {
		var args []string
		switch h.name {
		case "prepare-commit-msg":
			args = []string{file, "message"}
		case "commit-msg":
			args = []string{file}
		}
		out, code, err := s.gateHook(ctx, h.name, h.script, args, []string{"GIT_EDITOR=:"}, dir)
		if err != nil {
			return "", "", err
		}
		if code != 0 {
			return "", fmt.Sprintf("the checkpoint commit was refused by a commit hook (%s):\n%s", h.name, Tail(out, 40)), nil
		}
	}
	b, err := os.ReadFile(file)
	if err != nil {
		return "", "", err
	}
	if why, err := s.afterGate(ctx, snap); err != nil || why != "" {
		return "", why, err
	}
	return string(b), "", nil
}

func hookNames[T any](hs []T, name func(T) string) string {
	n := make([]string, len(hs))
	for i, h := range hs {
		n[i] = name(h)
	}
	return strings.Join(n, ", ")
}

// gateHook runs hook name (script, as recorded) with args and env for the gate, in the
// sandbox under gatePolicy plus write, or unrestricted without one; what it leaves
// running is killed after it. See docs/SANDBOX.md, "The verify gate and the commit hooks".
func (s *session) gateHook(ctx context.Context, name string, script []byte, args, env []string, write ...string) (string, int, error) {
	tmp, err := os.MkdirTemp("", "git-ralph-gate-")
	if err != nil {
		return "", -1, err
	}
	defer os.RemoveAll(tmp)
	env = append(slices.Clone(env), "TMPDIR="+tmp)
	var base []string
	pol := s.gatePolicy.Clone()
	if pol != nil {
		pol.AddWrite(append([]string{tmp}, write...)...)
		base = agent.WithoutSecrets(os.Environ(), s.r.AgentEnvKeep)
		env = append(env, pol.Env...) // the agents' caches, not the user's
		if !sandbox.Covers(pol.Write, s.Repo.CommonDir) {
			env = append(env, "GIT_OPTIONAL_LOCKS=0") // git status must not try to refresh the index
			scratch, err := s.Repo.ScratchEnv(tmp)
			if err != nil {
				return "", -1, err
			}
			env = append(env, scratch...)
		}
	}
	start := func(cmd *exec.Cmd) (*exec.Cmd, error) {
		sandbox.Contain(cmd)
		if pol == nil {
			return cmd, cmd.Start()
		}
		return sandbox.Start(pol, cmd)
	}
	out, code, err := s.Repo.SandboxedHook(ctx, name, script, args, base, env, start)
	// The gate runs the project's tests, which the agent may have written: what they
	// left running goes before anything is committed, or nothing is.
	n, left := sandbox.KillLeftovers(ctx, s.Report.Warn)
	if left != nil {
		return out, code, s.stop(run.Failed, "processes the "+name+" hook left are still running", leftoversError(&agent.LeftoversError{Err: left}))
	}
	if n > 0 {
		s.Report.Warn(fmt.Sprintf("the %s hook left %d process(es) running: killed", name, n))
	}
	return out, code, err
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

// followMoved is src where the attempt moved its tracked file (source.Archiver: a plan that
// moved itself to completed/, as ralphex plans end by doing), found where git's rename
// detection saw it go, or where its kind says such files go; src itself when it did not
// move or cannot be found (the story is then gone, and the attempt failed).
func (l *Loop) followMoved(ctx context.Context, src *source.Source, rec *run.Record) (*source.Source, error) {
	a, ok := src.Kind.(source.Archiver)
	if !ok {
		return src, nil
	}
	to, err := l.Repo.RenamedSince(ctx, rec.Checkpoint, src.TasksRel)
	if err != nil {
		return nil, err
	}
	where := l.where(ctx, "")
	ref, ok := a.Moved(where, src, to)
	if !ok {
		return src, nil
	}
	moved, err := l.Sources.Open(where, ref)
	if err != nil {
		return src, nil
	}
	moved.Name = src.Name
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
	// git-ralph moves it, outside the sandbox, so no link on the way is followed: the
	// agent's docs/plans/completed -> ~/.bashrc.d is moved aside (kept, in the work
	// tree) and a directory made in its place.
	from, dst := filepath.FromSlash(cur.TasksRel), filepath.FromSlash(to)
	if err := beneath.Rename(l.Repo.Root, from, l.Repo.Root, dst); err != nil {
		return nil, err
	}
	ref := cur.Ref
	ref.Arg = to
	moved, err := l.Sources.Open(where, ref)
	if err != nil {
		_ = beneath.Rename(l.Repo.Root, dst, l.Repo.Root, from)
		return nil, preflight.SourceErr(err)
	}
	moved.Name = cur.Name
	moved.KeepIDs(source.RecordedIDs(rec))
	l.Report.Step(fmt.Sprintf("moved the completed %s to %s (ralph.movePlan=false leaves it)", cur.TasksRel, to))
	return moved, nil
}

// IsCheckpoint reports whether commit (a full object id) is a checkpoint of story on
// change's branch: on ralph/<change>, with its Ralph-Change and Ralph-Story trailers.
// What a record outside git says of a checkpoint is taken only when git says so too.
func (l *Loop) IsCheckpoint(ctx context.Context, commit, change, story string) bool {
	if !git.IsObjectID(commit) {
		return false
	}
	if on, err := l.Repo.IsAncestor(ctx, commit, "refs/heads/"+BranchName(change)); err != nil || !on {
		return false
	}
	cs, err := l.Repo.Log(ctx, commit, 1)
	return err == nil && len(cs) == 1 && cs[0].Trailers["Ralph-Change"] == change && cs[0].Trailers["Ralph-Story"] == story
}

// checkpointMessage is "checkpoint: <id>" (or the subject tmpl makes, ralph.checkpointMessage),
// the story title, and the audit trailers: a Ralph-Skipped one per task of story (as the
// attempt left it) ticked as skipped, and Ralph-Run when runID (--run-id) is set.
func checkpointMessage(rec *run.Record, story tasklist.Story, att *run.Attempt, tmpl string, runID int64) (string, error) {
	subject, err := checkpointSubject(tmpl, rec.Change, story)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s\n\nStory %s: %s\n\n", subject, story.ID, inertKeywords(story.Title))
	fmt.Fprintf(&b, "Ralph-Change: %s\nRalph-Story: %s\nRalph-Attempt: %d\n", rec.Change, story.ID, att.N)
	for _, t := range story.Tasks {
		if t.Skipped != "" {
			fmt.Fprintf(&b, "Ralph-Skipped: %s\n", inertKeywords(t.SkipLine()))
		}
	}
	b.WriteString(source.Trailers(rec)) // what a report rebuilt from git alone reads the stories from
	auditTrailers(&b, att)
	if runID != 0 {
		fmt.Fprintf(&b, "Ralph-Run: %d\n", runID)
	}
	return b.String(), nil
}

// checkpointSubject is a checkpoint's subject: docs/LOOP.md's "checkpoint: <id>", or tmpl (a
// text/template over .ID, .Title and .Change, ralph.checkpointMessage) as one line; a
// template that says nothing gives that one. git-ralph knows its checkpoints by their
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
	return inertKeywords(line), nil
}

// closingRE is a GitHub closing keyword followed by what it closes: "#N", "owner/repo#N"
// or an issue's URL.
var closingRE = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?i)\b(close[sd]?|fix(?:e[sd])?|resolve[sd]?)(\s*:?\s*)([\w.-]+/[\w.-]+#\d|#\d|https?://)`)
})

// inertKeywords is s, text of the task list (which the agent may have written), with
// each GitHub closing keyword that names an issue broken by a word joiner after its
// first letter: a checkpoint merged into the default branch closes nothing the user did
// not write, and reads the same.
func inertKeywords(s string) string {
	return closingRE().ReplaceAllStringFunc(s, func(m string) string {
		_, size := utf8.DecodeRuneInString(m)
		return m[:size] + "\u2060" + m[size:]
	})
}

// checkpointTmplErr is a bad ralph.checkpointMessage: a bad config value is a usage
// error, as for every other key.
func checkpointTmplErr(err error) error {
	e := tell.UserErr("write it as a Go template over .ID, .Title and .Change, e.g. git config ralph.checkpointMessage 'feat: {{.ID}} - {{.Title}}', or unset it",
		"git config ralph.checkpointMessage: %v", err).WithCause(err)
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
	judge.Trailers(b, att.Judge)
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
		rec.Stop(run.Failed, "could not save a failed attempt", err)
		hint := "nothing was reset: the working tree is as the agent left it\nthe last checkpoint is " + Short(rec.Checkpoint) + " on " + rec.Branch
		if serr := l.Save(rec); serr != nil {
			hint += "\nthe run record could not be written either (" + serr.Error() + "): the next 'git ralph start " + rec.Change + "' takes the attempt for one a crash cut short, and saves it then"
		}
		return &tell.Error{Msg: "could not save the failed attempt: " + err.Error(), Hint: hint, Err: err}
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
