// Package status is what a run looks like from outside, read only: the views of
// changes and runs that `list` and `status` show (Report, ChangeView, RunView,
// StoryView), read from the run store, the repository and the task sources.
//
// It never changes anything: not the repository, not the store, not a run. It runs git
// only through internal/git, to ask (the branch, the verify hook). It knows nothing of
// the loop or of GitHub and imports neither internal/loop nor internal/github*:
// RemoteView is a plain struct that internal/githubflow fills in.
package status

import (
	"context"
	"errors"
	"slices"

	"github.com/git-ralph/git-ralph/internal/git"
	"github.com/git-ralph/git-ralph/internal/openspec"
	"github.com/git-ralph/git-ralph/internal/run"
	"github.com/git-ralph/git-ralph/internal/source"
	"github.com/git-ralph/git-ralph/internal/speckit"
)

// StoryView is one story as `list --json` and `status --json` show it; the count fields
// are named and counted as `openspec list --json` names and counts them.
type StoryView struct {
	ID             string `json:"id"`
	Title          string `json:"title"`
	CompletedTasks int    `json:"completedTasks"`
	TotalTasks     int    `json:"totalTasks"`
	Complete       bool   `json:"complete"`
}

// RunView is the short form of a run, as `list` shows it.
type RunView struct {
	Status       string `json:"status"`
	Branch       string `json:"branch"`
	CurrentStory string `json:"currentStory"`

	Worktree *run.WorktreeState `json:"worktree,omitempty"` // for a worktree run
}

// ChangeView is one change as `list --json` shows it.
type ChangeView struct {
	Name           string      `json:"name"`
	Source         string      `json:"source"`              // openspec, speckit, plan or prd
	TasksFile      string      `json:"tasksFile,omitempty"` // the tracked file, for a plan or a prd
	CompletedTasks int         `json:"completedTasks"`
	TotalTasks     int         `json:"totalTasks"`
	Stories        []StoryView `json:"stories"`
	Run            *RunView    `json:"run"`
}

// Stories lists a change's stories for display.
func Stories(ch *source.Source) []StoryView {
	out := []StoryView{}
	for _, s := range ch.Stories {
		d, t := s.Counts()
		out = append(out, StoryView{ID: s.ID, Title: s.Title, CompletedTasks: d, TotalTasks: t, Complete: s.Complete()})
	}
	return out
}

// Reader reads the runs of one repository: its store and its checkout.
type Reader struct {
	Repo  *git.Repo
	Store *run.Store
}

// Effective is the record's status corrected by the lock: a record that says
// running while nobody holds the lock belongs to a process that died.
func (rd Reader) Effective(rec *run.Record) (status string, running bool) {
	running = rd.Store.Held(rec.Change)
	status = string(rec.Status)
	if !running && (rec.Status == run.Running || rec.Status == run.Starting) {
		status = string(run.Interrupted)
	}
	return status, running
}

// List returns every OpenSpec change and spec-kit feature of the repository, and every
// plan or prd.json that has a run, with its progress and run.
func (rd Reader) List(ctx context.Context) ([]ChangeView, error) {
	type entry struct {
		kind source.Kind
		name string
	}
	var entries []entry
	here, err := openspec.List(rd.Repo.Root) // the schemas read once for every change
	if err != nil {
		return nil, err
	}
	for _, n := range here.Names {
		entries = append(entries, entry{source.OpenSpec, n})
	}
	features, err := speckit.ListFeatures(rd.Repo.Root)
	if err != nil {
		return nil, err
	}
	for _, n := range features {
		entries = append(entries, entry{source.SpecKit, n})
	}
	runs, err := rd.Store.Changes()
	if err != nil {
		return nil, err
	}
	for _, n := range runs {
		if rec, err := rd.Store.Load(n); err == nil && (rec.Source == string(source.Plan) || rec.Source == string(source.PRD)) {
			entries = append(entries, entry{source.Kind(rec.Source), n})
		}
	}
	out := []ChangeView{}
	for _, e := range entries {
		var rec *run.Record
		if slices.Contains(runs, e.name) {
			if rec, err = rd.Store.Load(e.name); err != nil && !errors.Is(err, run.ErrNoRun) {
				return nil, err
			}
			if rec != nil && source.KindOf(rec) != e.kind {
				rec = nil // a run of another source that has the same name: listed on its own
			}
		}
		var ch *source.Source
		switch {
		case rec != nil && (rec.ChangeRoot(rd.Repo.Root) != rd.Repo.Root || e.kind != source.OpenSpec):
			ch, err = source.OpenRun(rec.ChangeRoot(rd.Repo.Root), rec) // a worktree run: from its own checkout
		case e.kind == source.OpenSpec:
			var c *openspec.Change
			if c, err = here.LoadTasks(e.name); err == nil {
				ch = source.FromChange(c)
				if rec != nil {
					ch.KeepIDs(source.RecordedIDs(rec))
				}
			}
		default:
			ch, err = source.Open(rd.Repo.Root, e.kind, e.name, source.Options{})
		}
		if err != nil {
			if rec != nil && (e.kind == source.Plan || e.kind == source.PRD) {
				// the tracked file is gone: the run is still listed
				out = append(out, ChangeView{Name: e.name, Source: string(e.kind), TasksFile: rec.SourceArg, Stories: []StoryView{}, Run: rd.runView(rec)})
				continue
			}
			return nil, err
		}
		d, t := ch.Counts()
		v := ChangeView{Name: e.name, Source: string(ch.Kind), CompletedTasks: d, TotalTasks: t, Stories: Stories(ch)}
		if ch.Kind == source.Plan || ch.Kind == source.PRD {
			v.TasksFile = ch.TasksRel
		}
		if rec != nil {
			v.Run = rd.runView(rec)
		}
		out = append(out, v)
	}
	return out, nil
}

func (rd Reader) runView(rec *run.Record) *RunView {
	st, _ := rd.Effective(rec)
	return &RunView{Status: st, Branch: rec.Branch, CurrentStory: rec.CurrentStory, Worktree: rec.WorktreeState()}
}

// RemoteView is what `status` shows of a dispatched run, asked of GitHub and of the git
// remote: the run's status and conclusion, its page, and the branch tip published.
// internal/githubflow fills it in; it is declared here because Report carries it.
type RemoteView struct {
	RunID      int64  `json:"runId"`
	Status     string `json:"status"`               // queued, in_progress, completed, …; "" while the run is not listed
	Conclusion string `json:"conclusion,omitempty"` // success, failure, cancelled, timed_out, startup_failure, …
	URL        string `json:"url,omitempty"`
	Tip        string `json:"tip,omitempty"` // ralph/<change> on the git remote
	Error      string `json:"error,omitempty"`
	Job        string `json:"job,omitempty"`  // the job in progress, while the run is
	Step       string `json:"step,omitempty"` // and its step in progress
}

// Report is everything `git ralph status` shows.
type Report struct {
	Record     *run.Record
	Status     string             // effective status
	Running    bool               // a process holds the lock now
	Change     *source.Source     // nil when the change directory (or tracked file) is gone
	VerifyHook bool               // a ralph-verify hook is installed
	Branch     bool               // the branch exists
	Current    string             // the branch HEAD is on
	Learnings  string             // path of the learnings file
	Logs       string             // directory of the attempt logs
	Worktree   *run.WorktreeState // for a worktree run
	Remote     *RemoteView        // for a run on GitHub Actions, when asked for (githubflow.Remote.RemoteStatus)
	Published  bool               // Change is as the remote run published it (PublishedChange)
}

// Status reports on the run of change, a run name (loop.ResolveRun). It returns nil,
// nil when there is no run (change "" is none).
func (rd Reader) Status(ctx context.Context, change string) (*Report, error) {
	if change == "" {
		return nil, nil
	}
	rec, err := rd.Store.Load(change)
	if errors.Is(err, run.ErrNoRun) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	r := &Report{Record: rec, Learnings: rd.Store.LearningsPath(change), Logs: rd.Store.ChangeDir(change) + "/logs"}
	r.Status, r.Running = rd.Effective(rec)
	r.Worktree = rec.WorktreeState()
	if ch, err := source.OpenRun(rec.ChangeRoot(rd.Repo.Root), rec); err == nil {
		r.Change = ch
	}
	if r.VerifyHook, err = rd.Repo.HookExists(ctx, "ralph-verify"); err != nil {
		return nil, err
	}
	if r.Branch, err = rd.Repo.BranchExists(ctx, rec.Branch); err != nil {
		return nil, err
	}
	if r.Current, err = rd.Repo.Branch(ctx); err != nil {
		return nil, err
	}
	return r, nil
}

// Summaries is Status for each run of names without its git questions (the verify hook,
// whether the branch exists, the current branch), each change read with its tasks only
// and openspec/changes listed once: what plain status's line per run shows, at the same
// cost per run with ten runs or a thousand. A name without a run is left out.
func (rd Reader) Summaries(names []string) ([]*Report, error) {
	here, err := openspec.List(rd.Repo.Root)
	if err != nil {
		return nil, err
	}
	var out []*Report
	for _, name := range names {
		rec, err := rd.Store.Load(name)
		if errors.Is(err, run.ErrNoRun) {
			continue
		}
		if err != nil {
			return nil, err
		}
		r := &Report{Record: rec, Learnings: rd.Store.LearningsPath(name), Logs: rd.Store.ChangeDir(name) + "/logs"}
		r.Status, r.Running = rd.Effective(rec)
		r.Worktree = rec.WorktreeState()
		if rec.ChangeRoot(rd.Repo.Root) != rd.Repo.Root || source.KindOf(rec) != source.OpenSpec {
			r.Change, _ = source.OpenRun(rec.ChangeRoot(rd.Repo.Root), rec)
		} else if c, err := here.LoadTasks(name); err == nil {
			r.Change = source.FromChange(c)
			r.Change.KeepIDs(source.RecordedIDs(rec))
		}
		out = append(out, r)
	}
	return out, nil
}
