package judge

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/git-ralph/git-ralph/internal/agent"
	"github.com/git-ralph/git-ralph/internal/git"
	"github.com/git-ralph/git-ralph/internal/prompt"
	"github.com/git-ralph/git-ralph/internal/run"
	"github.com/git-ralph/git-ralph/internal/sandbox"
	"github.com/git-ralph/git-ralph/internal/tasklist"
	"github.com/git-ralph/git-ralph/internal/tell"
)

// Review is one run of the judge on an attempt, with what it needs of the loop that
// runs it. What the verdict means for the attempt is the loop's.
type Review struct {
	Driver agent.Driver
	Model  string
	Store  *run.Store
	Repo   *git.Repo
	Report tell.Reporter
	// Record is the run's record, which names the judge's process while it runs (as the
	// agent's: a crash meanwhile is met by a resume that stops it); Save writes it.
	Record *run.Record
	Save   func(*run.Record) error
	// Request is the judge's request for its prompt text, env added to its environment;
	// Review sets its Log, Sink and Sandbox.
	Request func(text string, env []string) agent.Request
	Sink    agent.Sink
	Policy  *sandbox.Policy // the judge's sandbox; nil: none
	Limits  Limits
	// AgentPrompt and VerifyOutput are the story as its agent got it and the last lines
	// of the gate's output.
	AgentPrompt, VerifyOutput string
	ID                        string // the judge's RALPH_ATTEMPT_ID, fresh for each review
}

// Do runs the judge on att, whose story (done: as the attempt left it) passed the gate
// with tree staged on the last checkpoint, and records it in att.Judge with its verdict
// and reason. interrupted says Ctrl-C (or the deadline) stopped it.
func (v *Review) Do(ctx context.Context, att *run.Attempt, done tasklist.Story, tree string) (interrupted bool, err error) {
	change := v.Record.Change
	text, err := v.prompt(context.WithoutCancel(ctx), att, done, tree)
	if err != nil {
		return false, err
	}
	logPath := v.Store.JudgeLogPath(change, att.Story, att.N)
	logf, err := v.Store.Create(logPath)
	if err != nil {
		return false, err
	}
	defer logf.Close()
	j := &run.Judge{Agent: v.Driver.Name(), Model: v.Model, Log: logPath}
	att.Judge = j
	v.Report.Step("the judge (" + v.Driver.Name() + ") reviews the diff")
	id := v.ID
	req := v.Request(text, []string{
		"RALPH_AGENT=1", "RALPH_JUDGE=1", "RALPH_CHANGE=" + change, "RALPH_STORY=" + att.Story,
		"RALPH_ATTEMPT=" + strconv.Itoa(att.N), "RALPH_ATTEMPT_ID=" + id,
		"GIT_OPTIONAL_LOCKS=0", // it reads: its git status must not try to refresh the index
	})
	req.Log, req.Sink, req.Sandbox = logf, v.Sink, v.Policy
	jctx, stop := context.WithCancel(ctx)
	defer stop()
	var unsaved error
	rec := v.Record
	req.OnStart = func(pid int, start uint64) {
		rec.AgentPID, rec.AgentStart, rec.AgentID = pid, start, id
		if err := v.Save(rec); err != nil {
			unsaved = err
			stop()
		}
	}
	res, startErr := agent.Run(jctx, v.Driver, req)
	rec.AgentPID, rec.AgentStart, rec.AgentID = 0, 0, ""
	Record(j, res)
	rec.SumAttempts()
	switch {
	case startErr != nil:
		j.Verdict, j.Reason = run.VerdictNone, "could not be started: "+startErr.Error()
	case unsaved != nil:
		j.Verdict, j.Reason = run.VerdictNone, "the run record could not name its process: "+unsaved.Error()
	case res.Interrupted || ctx.Err() != nil:
		j.Verdict, j.Reason = run.VerdictNone, "interrupted"
		return true, nil
	default:
		j.Verdict, j.Reason = Verdict(res, v.Limits)
	}
	return false, nil
}

// prompt is the judge's prompt for att: the story as its agent got it, the tasks
// ticked, the gate's output and the diff from the last checkpoint to tree, whole in
// the prompt when short, else its beginning, the whole written beside the judge's log.
func (v *Review) prompt(ctx context.Context, att *run.Attempt, done tasklist.Story, tree string) (string, error) {
	rec := v.Record
	d := prompt.JudgeData{Change: rec.Change, Story: done.ID, Title: done.Title, Attempt: att.N, AgentPrompt: strings.TrimSpace(v.AgentPrompt),
		Verify: orText(att.Verify, "skipped"), VerifyOutput: v.VerifyOutput, Checkpoint: rec.Checkpoint, Tree: tree}
	d.Tasks = Tasks(done)
	diffPath := v.Store.JudgeDiffPath(rec.Change, att.Story, att.N)
	f, err := v.Store.Create(diffPath)
	if err != nil {
		return "", err
	}
	w := &Diff{File: f, FileMax: MaxDiffFile, HeadMax: prompt.MaxJudgeDiff}
	err = v.Repo.DiffStaged(ctx, rec.Checkpoint, w) // the index holds tree
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
		_ = v.Store.RemoveFile(diffPath) // whole in the prompt: no file to name
	}
	return prompt.RenderJudge(d)
}
