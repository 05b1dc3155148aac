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

	"github.com/git-ralph/git-ralph/internal/git"
	"github.com/git-ralph/git-ralph/internal/run"
	"github.com/git-ralph/git-ralph/internal/source"
)

// StoryView is one story as `list --json` and `status --json` show it; the count fields
// are named and counted as `openspec list --json` names and counts them.
type StoryView struct {
	ID             string `json:"id"`
	Title          string `json:"title"`
	CompletedTasks int    `json:"completedTasks"`
	TotalTasks     int    `json:"totalTasks"`
	Complete       bool   `json:"complete"`
	// Skipped are the story's tasks ticked as ones the agent could not do here, each
	// said on one line (tasklist.Task.SkipLine); absent when there are none.
	Skipped []string `json:"skipped,omitempty"`
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
		v := StoryView{ID: s.ID, Title: s.Title, CompletedTasks: d, TotalTasks: t, Complete: s.Complete()}
		for _, task := range s.Tasks {
			if task.Skipped != "" {
				v.Skipped = append(v.Skipped, task.SkipLine())
			}
		}
		out = append(out, v)
	}
	return out
}

// Done is how many of views are complete stories.
func Done(views []StoryView) int {
	n := 0
	for _, v := range views {
		if v.Complete {
			n++
		}
	}
	return n
}

// Reader reads the runs of one repository: its store and its checkout.
type Reader struct {
	Repo  *git.Repo
	Store *run.Store
	Kinds source.Kinds // the kinds of task source; nil: source.Builtin()
	// Reopen, when set, finds the store anew: Watch and Follow ask it when a run they
	// follow has no record where they read it (its git directory was moved back while
	// they watched).
	Reopen func() (*run.Store, error)
}

// where is the repository as the task sources see it: its top level, its runs and its
// git config.
func (rd Reader) where(ctx context.Context) source.Repo {
	return source.Repo{Root: rd.Repo.Root, Runs: rd.Store, Config: func(key string) string {
		v, _, _ := rd.Repo.Config(ctx, key)
		return v
	}}
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

// List returns every source of the repository (each kind's List: OpenSpec changes,
// spec-kit features, …) and every run, with its progress. A source and the run named
// after it of the same kind are one line; a run whose source is listed nowhere (a plan,
// a change that exists only in the run's worktree, a tracked file that is gone) is a
// line of its own.
func (rd Reader) List(ctx context.Context) ([]ChangeView, error) {
	r := rd.where(ctx)
	listed, err := rd.Kinds.List(r)
	if err != nil {
		return nil, err
	}
	runs, err := rd.Store.Changes()
	if err != nil {
		return nil, err
	}
	records := map[string]*run.Record{}
	for _, n := range runs {
		rec, err := rd.Store.Load(n)
		if err != nil {
			if errors.Is(err, run.ErrNoRun) {
				continue
			}
			return nil, err
		}
		records[n] = rec
	}
	out := []ChangeView{}
	shown := map[string]bool{} // the runs a listed source has shown
	for _, s := range listed {
		rec := records[s.Name]
		if rec != nil && source.RefOf(rec).Kind != s.Ref.Kind {
			rec = nil // a run of another source that has the same name: listed on its own
		}
		if rec != nil {
			shown[rec.Change] = true
			if source.RefOf(rec) != s.Ref || rec.ChangeRoot(rd.Repo.Root) != rd.Repo.Root {
				// read as the run reads it: at its story level, in its worktree
				if s, err = rd.Kinds.OpenRun(r, rec); err != nil {
					return nil, err
				}
			} else {
				s.KeepIDs(source.RecordedIDs(rec))
			}
		}
		out = append(out, rd.view(s, rec))
	}
	for _, n := range runs {
		rec := records[n]
		if rec == nil || shown[n] {
			continue
		}
		s, err := rd.Kinds.OpenRun(r, rec)
		if err != nil { // the tracked file is gone: the run is still listed
			ref := source.RefOf(rec)
			v := ChangeView{Name: n, Source: ref.Kind, Stories: []StoryView{}, Run: rd.runView(rec)}
			if rec.SourceArg != "" {
				v.TasksFile = rec.SourceArg
			}
			out = append(out, v)
			continue
		}
		out = append(out, rd.view(s, rec))
	}
	return out, nil
}

// view is one line of List.
func (rd Reader) view(s *source.Source, rec *run.Record) ChangeView {
	d, t := s.Counts()
	v := ChangeView{Name: s.Name, Source: s.Kind.About().ID, CompletedTasks: d, TotalTasks: t, Stories: Stories(s)}
	if s.Ref.Arg != s.Name {
		v.TasksFile = s.TasksRel // named by its file: a plan, a prd.json
	}
	if rec != nil {
		v.Run = rd.runView(rec)
	}
	return v
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

	where string // Where, when Change is nil
}

// Where says what the run works through, after its name: "openspec/changes/x", "plan
// docs/plans/x.md", as its source says, or as its record does when the source is gone.
func (r *Report) Where() string {
	if r.Change != nil && r.Change.Where != "" {
		return r.Change.Where
	}
	return r.where
}

// whereOf is Report.Where when the run's source cannot be read: its kind and what names it.
func (rd Reader) whereOf(rec *run.Record) string {
	ref := source.RefOf(rec)
	if k, ok := rd.Kinds.Lookup(ref.Kind); ok {
		return k.About().Noun + " " + ref.Arg
	}
	return ref.Kind + " " + ref.Arg
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
	r.Worktree, r.where = rec.WorktreeState(), rd.whereOf(rec)
	if ch, err := rd.Kinds.OpenRun(rd.where(ctx), rec); err == nil {
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
func (rd Reader) Summaries(ctx context.Context, names []string) ([]*Report, error) {
	var out []*Report
	args := map[string][]string{} // by kind: the runs read where the repository is, at the default level
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
		r.Worktree, r.where = rec.WorktreeState(), rd.whereOf(rec)
		if ref := source.RefOf(rec); rec.ChangeRoot(rd.Repo.Root) == rd.Repo.Root {
			args[ref.Kind] = append(args[ref.Kind], ref.Arg)
		}
		out = append(out, r)
	}
	// Each kind lists its runs' sources at once (OpenSpec: openspec/changes read once,
	// tasks only); the others are opened one by one, where they work.
	listed := map[source.Ref]*source.Source{}
	for id, only := range args {
		k, ok := rd.Kinds.Lookup(id)
		if !ok {
			continue
		}
		srcs, err := k.List(rd.where(ctx), only)
		if err != nil {
			return nil, err
		}
		for _, s := range srcs {
			listed[s.Ref] = s
		}
	}
	for _, r := range out {
		if s, ok := listed[source.RefOf(r.Record)]; ok && r.Record.ChangeRoot(rd.Repo.Root) == rd.Repo.Root {
			s.Name = r.Record.Change // a prd.json whose branchName changed since is still this run's
			s.KeepIDs(source.RecordedIDs(r.Record))
			r.Change = s
			continue
		}
		r.Change, _ = rd.Kinds.OpenRun(rd.where(ctx), r.Record)
	}
	return out, nil
}
