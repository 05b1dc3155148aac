package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/cli/go-gh/v2/pkg/tableprinter"

	"github.com/git-ralph/git-ralph/internal/githubflow"
	"github.com/git-ralph/git-ralph/internal/loop"
	"github.com/git-ralph/git-ralph/internal/report"
	"github.com/git-ralph/git-ralph/internal/run"
	"github.com/git-ralph/git-ralph/internal/status"
	"github.com/git-ralph/git-ralph/internal/tell"
	"github.com/git-ralph/git-ralph/internal/term"
)

type statusCmd struct {
	Change string `arg:"" optional:"" help:"The change; left out, the only run, or a line per run when there are several."`
	JSON   bool   `name:"json" help:"Print the run record and the stories as JSON; after finish, how the run ended."`
	Watch  bool   `help:"Follow runs until each has ended, a line per change of state: the change's, or every local run at work and every dispatched one. Exits non-zero when one did not complete."`
}

func (c *statusCmd) Run(e *env) error {
	if c.Watch {
		return c.watch(e)
	}
	l, err := e.loop()
	if err != nil {
		return err
	}
	if c.Change != "" {
		c.Change = l.RunNameOf(c.Change) // a plan's or a prd's path names its run
		if _, err := l.LoadRunChange(e.ctx, c.Change); err != nil {
			return err
		}
	} else if !c.JSON {
		names, err := l.Store.Changes()
		if err != nil {
			return err
		}
		if len(names) > 1 {
			return overview(e, l, names)
		}
	}
	change := c.Change
	if change == "" { // the only run, if there is one
		names, err := l.Store.Changes()
		if err != nil {
			return err
		}
		if len(names) > 0 {
			if change, err = l.ResolveRun(""); err != nil {
				return err
			}
		}
	}
	r, err := reader(l).Status(e.ctx, change)
	if err != nil {
		return err
	}
	if r != nil && r.Record.IsRemote() {
		rem, err := e.remote()
		if err != nil {
			return err
		}
		v, err := rem.RemoteStatus(e.ctx, r.Record.Change, e.github)
		if err != nil {
			v = &status.RemoteView{RunID: r.Record.Remote.RunID, URL: r.Record.Remote.HTMLURL, Error: err.Error()}
		}
		r.Remote = v
		if src := rem.PublishedChange(e.ctx, r, v.Tip); src != nil {
			r.Change, r.Published = src, true
		}
	}
	if r == nil {
		if c.JSON {
			if f := l.Store.LoadFinished(c.Change); c.Change != "" && f != nil {
				return writeJSON(e, finishedJSON(f))
			}
			fmt.Fprintln(e.s.Out, "null")
			return nil
		}
		if f := l.Store.LoadFinished(c.Change); c.Change != "" && f != nil {
			fmt.Fprintln(e.s.Out, finishedLine(f))
		} else if c.Change != "" {
			fmt.Fprintf(e.s.Out, "no run for %s yet; start one with 'git ralph start %s'\n", c.Change, c.Change)
		} else {
			fmt.Fprintln(e.s.Out, "no run in this repository; start one with 'git ralph start <change>' ('git ralph list' shows the changes)")
		}
		return nil
	}
	if c.JSON {
		return writeJSON(e, statusJSON(r))
	}
	renderStatus(e.s, r)
	return nil
}

// watch is status --watch: it polls GitHub for the runs on GitHub Actions (the named
// change's, or every dispatched one), printing a line each time one changes, until
// every one has completed; Ctrl-C stops it (exit 130), changing nothing.
func (c *statusCmd) watch(e *env) error {
	if c.JSON {
		return &usageError{msg: "--watch and --json cannot go together", hint: "poll 'git ralph status --json' yourself, or drop --json"}
	}
	rem, err := e.remote()
	if err != nil {
		return err
	}
	local, changes, err := watchedRuns(rem, c.Change)
	if err != nil {
		return err
	}
	interrupted := &tell.Error{Msg: "interrupted", Code: 130, Hint: "nothing was changed; the runs go on: 'git ralph status --watch' follows them again"}
	var mu sync.Mutex
	say := func(change, text string) {
		mu.Lock()
		defer mu.Unlock()
		fmt.Fprintln(e.s.Out, term.Inert(change+": "+text))
	}
	// The local runs are followed beside the ones on GitHub Actions.
	type localEnd struct {
		ended []status.Ended
		err   error
	}
	done := make(chan localEnd, 1)
	if len(local) > 0 || c.Change == "" {
		rd := status.Reader{Repo: rem.Repo, Store: rem.Store, Reopen: e.reopenStore}
		go func() {
			ended, err := rd.Watch(e.ctx, local, c.Change == "", status.WatchPoll, say)
			done <- localEnd{ended, err}
		}()
	} else {
		done <- localEnd{}
	}
	var views map[string]*status.RemoteView
	if len(changes) > 0 {
		views, err = rem.WatchRemote(e.ctx, githubflow.WatchOptions{Changes: changes, Client: e.github,
			Update: func(change string, v *status.RemoteView) {
				mu.Lock()
				defer mu.Unlock()
				fmt.Fprintln(e.s.Out, term.Inert(githubflow.WatchText(change, v)))
			}})
	}
	le := <-done
	if err == tell.ErrInterrupted || e.ctx.Err() != nil {
		return interrupted
	}
	if err != nil {
		return err
	}
	if le.err != nil {
		return le.err
	}
	if len(changes) > 0 {
		printWatchedNext(e, changes, views)
	}
	return watchedLocalEnd(e, le.ended)
}

// watchedLocalEnd is what status --watch says once the local runs it followed have
// ended: the next step of each that completed, and an error (exit 1, as gh run watch
// --exit-status) naming those that did not.
func watchedLocalEnd(e *env, ended []status.Ended) error {
	var failed []string
	for _, x := range ended {
		if x.Complete() {
			if x.Status == string(run.Complete) {
				fmt.Fprintf(e.s.Err, "next: git ralph finish %s --squash   or   git ralph finish %s --keep\n", x.Change, x.Change)
			}
			continue
		}
		failed = append(failed, x.Change)
	}
	if len(failed) == 0 {
		return nil
	}
	return &tell.Error{Msg: fmt.Sprintf("%d of %d runs did not complete: %s", len(failed), len(ended), strings.Join(failed, ", ")),
		Hint: "'git ralph status " + failed[0] + "' shows why; 'git ralph start " + failed[0] + "' resumes it"}
}

// overview is plain status with several runs: a line per run, local, worktree or on
// GitHub Actions, with its stories done/total. The runs on GitHub Actions are asked
// for with one runs listing per repository and workflow (githubflow.Remote.RemoteViews).
func overview(e *env, l *loop.Loop, names []string) error {
	var remote []string
	for _, name := range names {
		if rec, err := l.Store.Load(name); err == nil && rec.IsRemote() {
			remote = append(remote, name)
		}
	}
	rem, err := e.remote()
	if err != nil {
		return err
	}
	views := map[string]*status.RemoteView{}
	if len(remote) > 0 {
		if views, err = rem.RemoteViews(e.ctx, remote, e.github); err != nil {
			return err
		}
	}
	p := e.s.Palette()
	// Stop reasons and remote states are the agent's or a remote record's text.
	t := tableprinter.New(term.NewInertWriter(e.s.Out), e.s.StdoutTTY, 120)
	t.AddHeader([]string{"CHANGE", "WHERE", "STATUS", "STORIES", "BRANCH"})
	runs, err := reader(l).Summaries(e.ctx, names)
	if err != nil {
		return err
	}
	for _, r := range runs {
		name := r.Record.Change
		where, st := "here", r.Status
		if r.Running {
			st = p.Success("running") + fmt.Sprintf(" (pid %d)", r.Record.PID)
		}
		if r.Worktree != nil {
			where = "worktree " + r.Worktree.Path
			if r.Worktree.Missing {
				where += " (missing)"
			}
		}
		if v := views[name]; v != nil {
			r.Remote = v
			where = "GitHub Actions"
			st = githubflow.WatchText(name, v)
			st = strings.TrimPrefix(st, name+": ")
			if v.Error != "" {
				st = p.Warn("cannot ask GitHub: " + v.Error)
			}
			if src := rem.PublishedChange(e.ctx, r, v.Tip); src != nil {
				r.Change = src
			}
		}
		stories := "-"
		if r.Change != nil {
			stories = fmt.Sprintf("%d/%d", status.Done(status.Stories(r.Change)), len(r.Change.Stories))
		}
		t.AddField(name, tableprinter.WithTruncate(nil))
		t.AddField(where)
		t.AddField(st)
		t.AddField(stories)
		t.AddField(r.Record.Branch, tableprinter.WithTruncate(nil))
		t.EndRow()
	}
	if err := t.Render(); err != nil {
		return err
	}
	fmt.Fprintf(e.s.Out, "\nnext: git ralph status <change>   (one run in full, e.g. git ralph status %s)\n", names[0])
	return nil
}

// watchedRuns is what status --watch follows: the named change's run, here or on GitHub
// Actions, or every local run at work now and every dispatched run.
func watchedRuns(rem *githubflow.Remote, change string) (local, remote []string, err error) {
	if change != "" {
		name, rec, err := rem.LoadRun(change)
		if err != nil {
			return nil, nil, err
		}
		if !rec.IsRemote() {
			return []string{name}, nil, nil
		}
		return nil, []string{name}, nil
	}
	names, err := rem.Store.Changes()
	if err != nil {
		return nil, nil, err
	}
	for _, name := range names {
		if rec, err := rem.Store.Load(name); err == nil && rec.IsRemote() {
			remote = append(remote, name)
		}
	}
	if local, err = (status.Reader{Repo: rem.Repo, Store: rem.Store}).Running(); err != nil {
		return nil, nil, err
	}
	if len(local) == 0 && len(remote) == 0 {
		return nil, nil, &tell.Error{Msg: "no run to watch: none is at work here, and none was dispatched",
			Hint: "'git ralph status --watch <change>' says how a run ended; start one with 'git ralph start <change>' or 'git ralph dispatch <change>'"}
	}
	return local, remote, nil
}

// statusJSON is the run record's fields plus the stories as `list --json` gives them.
func statusJSON(r *status.Report) any {
	type out struct {
		*run.Record
		Status     string             `json:"status"`
		Running    bool               `json:"running"`
		VerifyHook bool               `json:"verifyHook"`
		Stories    []status.StoryView `json:"stories"`
		Learnings  string             `json:"learnings"`
		Logs       string             `json:"logs"`
		// WorktreeMissing: the run's worktree directory is gone (start re-creates it).
		WorktreeMissing bool `json:"worktreeMissing,omitempty"`
		// Remote: the record's remote, plus what GitHub and the git remote say now.
		Remote *remoteJSON `json:"remote,omitempty"`
		// FirstAttempt: the stories done on their first attempt.
		FirstAttempt firstAttemptJSON `json:"firstAttempt"`
	}
	o := out{Record: r.Record, Status: r.Status, Running: r.Running, VerifyHook: r.VerifyHook,
		Stories: []status.StoryView{}, Learnings: r.Learnings, Logs: r.Logs,
		WorktreeMissing: r.Worktree != nil && r.Worktree.Missing}
	all, by := firstAttempts(r.Record)
	o.FirstAttempt = firstAttemptJSON{rateJSON: rateOf(all), ByAgent: []rateJSON{}}
	for _, g := range by {
		o.FirstAttempt.ByAgent = append(o.FirstAttempt.ByAgent, rateOf(g))
	}
	if r.Change != nil {
		o.Stories = status.Stories(r.Change)
	}
	if r.Record.Remote != nil {
		o.Remote = &remoteJSON{Remote: r.Record.Remote, RemoteView: r.Remote}
	}
	return o
}

// firstAttemptJSON is status --json's "firstAttempt": the stories done, those done on
// their first attempt, the attempts counted (interrupted ones are not), and the same
// by agent and model when more than one ran ("byAgent", else empty).
type firstAttemptJSON struct {
	rateJSON
	ByAgent []rateJSON `json:"byAgent"`
}

type rateJSON struct {
	Agent            string  `json:"agent,omitempty"`
	Model            string  `json:"model,omitempty"`
	Done             int     `json:"storiesDone"`
	First            int     `json:"doneOnFirstAttempt"`
	Attempts         int     `json:"attempts"`
	Percent          int     `json:"firstAttemptPercent"`
	AttemptsPerStory float64 `json:"attemptsPerStory"`
}

func rateOf(r report.Rate) rateJSON {
	return rateJSON{Agent: r.Agent, Model: r.Model, Done: r.Done, First: r.First, Attempts: r.Attempts,
		Percent: r.Percent(), AttemptsPerStory: r.PerStory()}
}

// firstAttempts computes the record's first-attempt rate, overall and by agent and
// model.
func firstAttempts(rec *run.Record) (report.Rate, []report.Rate) {
	var tries []report.Try
	for _, a := range rec.Attempts {
		tries = append(tries, report.Try{Story: a.Story, N: a.N, Outcome: a.Outcome, Agent: a.Agent, Model: a.Model})
	}
	return report.FirstAttempts(tries)
}

// rateText is a Rate in words: "2 of 3 stories (66%), 1.33 attempts a story".
func rateText(r report.Rate) string {
	if r.Done == 0 {
		if r.Attempts == 1 {
			return "no story done, 1 attempt"
		}
		return fmt.Sprintf("no story done, %d attempts", r.Attempts)
	}
	return fmt.Sprintf("%d of %d stories (%d%%), %.2f attempts a story", r.First, r.Done, r.Percent(), r.PerStory())
}

// remoteJSON is status --json's "remote": the record's fields, and runId, status,
// conclusion, url and tip as GitHub and the git remote say them now.
type remoteJSON struct {
	*run.Remote
	*status.RemoteView
}

// MarshalJSON merges the two, the live view winning (both have runId).
func (r remoteJSON) MarshalJSON() ([]byte, error) {
	m := map[string]any{}
	var parts []any
	if r.Remote != nil {
		parts = append(parts, r.Remote)
	}
	if r.RemoteView != nil {
		parts = append(parts, r.RemoteView)
	}
	for _, v := range parts {
		b, err := json.Marshal(v)
		if err != nil {
			return nil, err
		}
		if err := json.Unmarshal(b, &m); err != nil {
			return nil, err
		}
	}
	return json.Marshal(m)
}

func renderStatus(s *term.Streams, r *status.Report) {
	p := s.Palette()
	rec := r.Record
	// Reasons, titles and remote states are the agent's or a remote record's
	// text: whatever path they take here, they reach the terminal inert.
	w := term.NewInertWriter(s.Out)
	kv := func(k, v string) { fmt.Fprintf(w, "%-10s %s\n", k, v) }
	kv("change", p.Bold(rec.Change)+"  ("+r.Where()+")")
	branch := p.Branch(rec.Branch) + " (from " + loop.BranchOrDetached(rec.Original, rec.OriginalCommit) + ")"
	if !r.Branch {
		branch += " " + p.Fail("— the branch is gone")
	}
	kv("branch", branch)
	if wt := r.Worktree; wt != nil {
		text := wt.Path
		if wt.Missing {
			text += " " + p.Warn("— worktree missing") + " ('git ralph start " + rec.Change + "' re-creates it from the branch)"
		}
		kv("worktree", text)
	}
	kv("status", statusText(p, r))
	if a := rec.Last(); r.Running && a != nil && a.Outcome == run.OutcomeRunning && a.Log != "" {
		kv("live log", fmt.Sprintf("%s  (story %s attempt %d; 'git ralph logs -f %s' follows it)", a.Log, a.Story, a.N, rec.Change))
	}
	if rv := r.Remote; rv != nil && rv.Tip != "" {
		kv("published", shortID(rv.Tip)+" on "+rec.Remote.GitRemote)
		if r.Published {
			kv("stories", fmt.Sprintf("%d/%d done on %s/%s", status.Done(status.Stories(r.Change)), len(r.Change.Stories), rec.Remote.GitRemote, rec.Branch))
		}
	}
	renderAgent(kv, r)
	if r.Change != nil {
		fmt.Fprintln(w)
		renderStories(w, s, p, r)
	}
	renderFailed(w, rec)
	fmt.Fprintln(w)
	kv("learnings", r.Learnings)
	kv("logs", r.Logs)
	if page := filepath.Join(filepath.Dir(r.Logs), "report.html"); fileExists(page) {
		kv("report", page+"  ('git ralph report "+rec.Change+"' writes it anew)")
	} else {
		kv("report", "none yet; 'git ralph report "+rec.Change+"' writes "+page)
	}
	fmt.Fprintln(w)
	nextSteps(w, r)
}

// statusText is status's "status" line: the run's state here, or on GitHub Actions.
func statusText(p term.Palette, r *status.Report) string {
	rec := r.Record
	if rv := r.Remote; rv != nil {
		return remoteStatusText(p, rv)
	}
	switch {
	case r.Running:
		return p.Success("running") + fmt.Sprintf(" (pid %d)", rec.PID)
	case r.Status == string(run.Interrupted) && rec.Status == run.Running:
		return p.Warn("interrupted") + " (the process that ran it is gone)"
	case r.Status == string(run.Failed):
		return p.Fail("failed") + ": " + term.Inert(rec.StopReason)
	case r.Status == string(run.Budget):
		return p.Warn("budget") + ": " + term.Inert(rec.StopReason) + " (" + budgetNext(rec) + ")"
	case r.Status == string(run.Interrupted):
		return p.Warn("interrupted")
	case r.Status == string(run.Complete):
		return p.Success("complete")
	}
	return r.Status
}

// remoteStatusText is the "status" line of a run on GitHub Actions as GitHub says it is.
func remoteStatusText(p term.Palette, rv *status.RemoteView) string {
	st := "on GitHub Actions"
	switch {
	case rv.Error != "":
		st += ": " + p.Warn("cannot ask GitHub: "+rv.Error)
	case rv.RunID == 0:
		st += ": " + p.Warn("dispatched, run id pending (GitHub does not list the run yet)")
	case rv.Status == "completed" && rv.Conclusion == "success":
		st += fmt.Sprintf(": run %d %s", rv.RunID, p.Success("completed: success"))
	case rv.Status == "completed":
		st += fmt.Sprintf(": run %d %s", rv.RunID, p.Fail("completed: "+rv.Conclusion))
	default:
		st += fmt.Sprintf(": run %d %s", rv.RunID, rv.Status)
		if rv.Job != "" {
			st += ", job " + rv.Job
			if rv.Step != "" {
				st += ", step " + rv.Step
			}
		}
	}
	if rv.URL != "" {
		st += " · " + rv.URL
	}
	return st
}

// renderAgent is status's lines about the agent and what it cost: the checkpoint, the
// agent and its sandbox, the cost, the tokens and the budget, how often a story was done
// on its first attempt, and the verify gate.
func renderAgent(kv func(k, v string), r *status.Report) {
	rec := r.Record
	if rec.Checkpoint != "" {
		kv("checkpoint", shortID(rec.Checkpoint))
	}
	agentText := rec.Agent
	if rec.Model != "" {
		agentText += " (" + rec.Model + ")"
	}
	kv("agent", agentText)
	if j := lastJudge(rec); j != nil { // start --judge: the last judge that ran, and its verdicts
		text := term.Inert(strings.TrimSpace(j.Agent + " " + j.Model))
		n := map[string]int{}
		for _, a := range rec.Attempts {
			if a.Judge != nil {
				n[a.Judge.Verdict]++
			}
		}
		kv("judge", fmt.Sprintf("%s: %d pass, %d fail, %d without a verdict", text, n[run.VerdictPass], n[run.VerdictFail], n[run.VerdictNone]))
	}
	if rec.Sandbox != "" {
		kv("sandbox", rec.Sandbox)
	}
	cost := "n/a"
	if rec.CostKnown {
		cost = fmt.Sprintf("$%.4f", rec.CostUSD)
	}
	kv("cost", cost+" so far")
	tokens := "n/a"
	if rec.TokensKnown {
		tokens = loop.Thousands(rec.Tokens)
	}
	kv("tokens", tokens+" so far")
	// Before any attempt has ended nothing could have been reported: 0 so far.
	ended := slices.ContainsFunc(rec.Attempts, func(a run.Attempt) bool { return a.Outcome != run.OutcomeRunning })
	if b := report.Budget(rec.Tokens, rec.MaxTokens, rec.TokensKnown || !ended, rec.CostUSD, rec.MaxCost, rec.CostKnown || !ended); b != "" {
		kv("budget", b)
	}
	if all, by := firstAttempts(rec); all.Done > 0 {
		kv("first try", rateText(all))
		for _, g := range by {
			name := g.Agent
			if g.Model != "" && g.Model != g.Agent {
				name += " (" + g.Model + ")"
			}
			kv("", "  "+name+": "+rateText(g))
		}
	}
	verify := "none (git ralph hooks install adds one)"
	if r.VerifyHook {
		verify = "ralph-verify hook active"
	}
	kv("verify", verify)
}

// renderStories is status's table of the stories (done, next, their tasks and attempts),
// then the tasks ticked as skipped.
func renderStories(w io.Writer, s *term.Streams, p term.Palette, r *status.Report) {
	rec := r.Record
	t := tableprinter.New(w, s.StdoutTTY, 120)
	t.AddHeader([]string{"", "STORY", "TITLE", "TASKS", "ATTEMPTS", "LAST"})
	next, hasNext := r.Change.NextStory()
	views := status.Stories(r.Change)
	for _, sv := range views {
		mark := " "
		switch {
		case sv.Complete:
			mark = p.Success("✓")
		case hasNext && sv.ID == next.ID:
			mark = "→"
		}
		atts := rec.AttemptsOf(sv.ID)
		last := ""
		if n := len(atts); n > 0 {
			last = attemptText(atts[n-1])
		}
		t.AddField(mark)
		t.AddField(sv.ID, tableprinter.WithTruncate(nil)) // never cut: refs and logs are named after it
		t.AddField(sv.Title)
		t.AddField(fmt.Sprintf("%d/%d", sv.CompletedTasks, sv.TotalTasks))
		t.AddField(fmt.Sprint(len(atts)))
		t.AddField(last)
		t.EndRow()
	}
	_ = t.Render()
	var skipped []string
	for _, sv := range views {
		for _, line := range sv.Skipped {
			skipped = append(skipped, sv.ID+": "+line)
		}
	}
	if len(skipped) > 0 {
		fmt.Fprintf(w, "\nskipped tasks (ticked as not doable here; look at them):\n")
		for _, line := range skipped {
			fmt.Fprintf(w, "  %s\n", line)
		}
	}
}

// renderFailed lists the failed attempts kept under refs/ralph/<change>/attempts/.
func renderFailed(w io.Writer, rec *run.Record) {
	var failed []run.Attempt
	for _, a := range rec.Attempts {
		if a.Ref != "" {
			failed = append(failed, a)
		}
	}
	if len(failed) > 0 {
		fmt.Fprintf(w, "\nfailed attempts (kept under refs/ralph/%s/attempts/):\n", rec.Change)
		for i, a := range failed {
			fmt.Fprintf(w, "  %s-%d  %s\n", a.Story, a.N, attemptText(a))
			if i == len(failed)-1 { // the last one's output (a verify hook's last lines)
				for _, l := range run.ReasonTail(a.Reason, run.ReasonTailLines) {
					fmt.Fprintf(w, "        %s\n", term.Inert(l))
				}
			}
		}
	}
}

func attemptText(a run.Attempt) string {
	s := a.Outcome
	if a.Reason != "" && a.Reason != a.Outcome && a.Outcome != run.OutcomeComplete {
		reason, _, _ := strings.Cut(a.Reason, "\n")
		s += ": " + term.Inert(reason)
	}
	if a.Agent != "" {
		s += " [" + a.Agent
		if a.Model != "" && a.Model != a.Agent { // the demo agent's model is "demo" too
			s += " " + a.Model
		}
		s += "]"
	}
	if a.Verify != "" && a.Verify != "skipped" {
		s += " verify " + a.Verify
	}
	if j := a.Judge; j != nil && j.Verdict != "" {
		s += " judge " + term.Inert(j.Verdict) + " [" + term.Inert(strings.TrimSpace(j.Agent+" "+j.Model)) + "]"
	}
	if cost, _ := a.Uses(); cost != nil { // the judge's cost with the agent's
		s += fmt.Sprintf(" $%.4f", *cost)
	}
	return s
}

func nextSteps(w io.Writer, r *status.Report) {
	c := r.Record.Change
	switch {
	case r.Remote != nil && (r.Remote.Conclusion == "startup_failure" || r.Remote.Conclusion == "action_required"):
		fmt.Fprintf(w, "next: the run published nothing; see %s, then dispatch it again (git ralph dispatch %s) or run it here (git ralph start %s)\n", r.Remote.URL, c, c)
	case r.Remote != nil && r.Remote.Status == "completed":
		fmt.Fprintf(w, "next: git ralph finish %s --squash   or   git ralph finish %s --keep   (or git ralph start %s to go on here)\n", c, c, c)
	case r.Remote != nil:
		fmt.Fprintf(w, "next: wait for the run (git ralph status %s), or stop it: git ralph cancel %s\n", c, c)
	case r.Running:
		fmt.Fprintf(w, "next: wait, or stop it with Ctrl-C in its terminal\n")
	case r.Record.Finishing != nil:
		fmt.Fprintf(w, "next: git ralph finish %s --squash   (completes the finish --squash that was interrupted)\n", c)
	case r.Status == string(run.Complete):
		fmt.Fprintf(w, "next: git ralph finish %s --squash   or   git ralph finish %s --keep\n", c, c)
	default:
		fmt.Fprintf(w, "next: git ralph start %s   (resumes from the last checkpoint)\n", c)
	}
}

func shortID(id string) string {
	if len(id) > 7 {
		return id[:7]
	}
	return id
}

// finishedJSON is status --json of a change whose last run is finished: the change,
// "status": "finished", the branch, and how it ended (see the manual, internal/manual, "status --json").
func finishedJSON(f *run.Finished) any {
	type how struct {
		How    string `json:"how"`              // squash, keep or pr
		At     string `json:"at"`               // RFC 3339
		Target string `json:"target,omitempty"` // squash: the branch (or commit) the work landed on
		Backup string `json:"backup,omitempty"` // squash: the ref keeping the branch's commits
		URL    string `json:"url,omitempty"`    // pr: the pull request
		Remote string `json:"remote,omitempty"` // pr: the git remote pushed to
		Pushed string `json:"pushed,omitempty"` // pr: the commit pushed
	}
	type out struct {
		Change   string `json:"change"`
		Status   string `json:"status"`
		Running  bool   `json:"running"`
		Branch   string `json:"branch"`
		Finished how    `json:"finished"`
	}
	return out{Change: f.Change, Status: "finished", Branch: f.Branch, Finished: how{
		How: f.How, At: f.At.UTC().Format(time.RFC3339), Target: f.Target, Backup: f.Backup,
		URL: f.URL, Remote: f.Remote, Pushed: f.Pushed,
	}}
}

// finishedLine says how the last run of a change ended, for status after finish.
func finishedLine(f *run.Finished) string {
	switch f.How {
	case "pr":
		return fmt.Sprintf("the run of %s is finished: pull request %s (head %s); start a new one with 'git ralph start %s'", f.Change, f.URL, f.Branch, f.Change)
	case "keep":
		return fmt.Sprintf("the run of %s is finished: its work is on %s; start a new one with 'git ralph start %s'", f.Change, f.Branch, f.Change)
	}
	if f.Target != "" && f.Backup != "" {
		target := f.Target
		if len(target) == 40 && strings.Trim(target, "0123456789abcdef") == "" {
			target = "detached HEAD " + shortID(target)
		}
		return fmt.Sprintf("the run of %s is finished: its work was squashed onto %s (its commits are kept as %s); start a new one with 'git ralph start %s'", f.Change, target, f.Backup, f.Change)
	}
	return fmt.Sprintf("the run of %s is finished: its work was squashed onto the original branch; start a new one with 'git ralph start %s'", f.Change, f.Change)
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// printWatchedNext says, after a watch (status --watch, dispatch --wait), what to do
// with each completed run: finish it, or, when it published nothing, dispatch or start.
func printWatchedNext(e *env, changes []string, views map[string]*status.RemoteView) {
	for _, ch := range changes {
		if v := views[ch]; v.Conclusion == "startup_failure" || v.Conclusion == "action_required" {
			fmt.Fprintf(e.s.Err, "next: run %d of %s published nothing (%s); see %s, then dispatch it again (git ralph dispatch %s) or run it here (git ralph start %s)\n", v.RunID, ch, v.Conclusion, v.URL, ch, ch)
			continue
		}
		fmt.Fprintf(e.s.Err, "next: git ralph finish %s --squash   or   git ralph finish %s --keep   (or git ralph start %s to go on here)\n", ch, ch, ch)
	}
}

// budgetNext says how a run stopped by its budget goes on: with a higher one, or, when
// it stopped because the agent reported no cost (no tokens), with a cap it can be held
// to or none.
func budgetNext(rec *run.Record) string {
	again := "run 'git ralph start " + rec.Change + "'"
	usedUp := rec.MaxCost > 0 && rec.CostKnown && rec.CostUSD > rec.MaxCost ||
		rec.MaxTokens > 0 && rec.TokensKnown && rec.Tokens >= rec.MaxTokens
	if usedUp {
		return "raise it and " + again
	}
	return "the agent does not report what it caps: cap it another way or drop it, and " + again
}

// reader reads l's runs for status, list and the demo.
func reader(l *loop.Loop) status.Reader {
	return status.Reader{Repo: l.Repo, Store: l.Store, Kinds: l.Sources}
}

// lastJudge is the judge of the record's last judged attempt, nil when none was judged.
func lastJudge(rec *run.Record) *run.Judge {
	for i := len(rec.Attempts) - 1; i >= 0; i-- {
		if j := rec.Attempts[i].Judge; j != nil {
			return j
		}
	}
	return nil
}
