package githubflow

import (
	"archive/zip"
	"bytes"
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/git-ralph/git-ralph/internal/git"
	"github.com/git-ralph/git-ralph/internal/github"
	"github.com/git-ralph/git-ralph/internal/repofile"
	"github.com/git-ralph/git-ralph/internal/run"
	"github.com/git-ralph/git-ralph/internal/source"
	"github.com/git-ralph/git-ralph/internal/status"
	"github.com/git-ralph/git-ralph/internal/tell"
)

// A dispatched run seen from here: status, cancel and logs ask GitHub about the run a
// record names (watch.go watches several).

// RemoteRun is a dispatched run as GitHub shows it.
type RemoteRun struct {
	Change string
	Repo   github.Repo
	Run    *github.WorkflowRun // nil when GitHub does not list it (yet)
}

// remoteRun loads the record of a dispatched run and a client for its repository,
// finding (and recording) the run's id by its nonce when the dispatch could not.
func (rem *Remote) remoteRun(ctx context.Context, change string, clientFor func(string) (*github.Client, error)) (*run.Record, *github.Client, github.Repo, error) {
	change, rec, err := rem.LoadRun(change)
	if err != nil {
		return nil, nil, github.Repo{}, err
	}
	if rec.Remote == nil || (rec.Status != run.Dispatched && rec.Status != run.Dispatching) {
		return nil, nil, github.Repo{}, tell.UserErr("a loop here stops with Ctrl-C in its terminal; 'git ralph status "+change+"' shows it",
			"the run of %q is not on GitHub Actions", change)
	}
	repo, client, err := remoteClient(rec, clientFor)
	if err != nil {
		return nil, nil, repo, err
	}
	if rec.Remote.RunID == 0 && rec.Remote.Nonce != "" {
		r, err := rem.findRun(ctx, client, repo, rec, 0)
		if err != nil {
			return nil, nil, repo, apiErr(err, repo, "git ralph status "+change)
		}
		if r != nil {
			rec.Remote.RunID, rec.Remote.HTMLURL = r.ID, r.HTMLURL
			if err := rem.save(rec); err != nil {
				return nil, nil, repo, err
			}
		}
	}
	return rec, client, repo, nil
}

// remoteClient is the repository of a dispatched run's record and a client for its host.
func remoteClient(rec *run.Record, clientFor func(string) (*github.Client, error)) (github.Repo, *github.Client, error) {
	repo := github.Repo{Host: rec.Remote.RepoHost, Owner: rec.Remote.Owner, Name: rec.Remote.Name}
	client, err := githubClient(clientFor, repo.Host, "")
	return repo, client, err
}

// CancelResult says what cancel did.
type CancelResult struct {
	Change          string
	RunID           int64
	URL             string
	AlreadyComplete bool // GitHub answered 409: the run had ended
}

// CancelRemote asks GitHub to cancel a change's run (force-cancel with force, which
// skips the steps that save and publish the work).
func (rem *Remote) CancelRemote(ctx context.Context, change string, force bool, clientFor func(string) (*github.Client, error)) (*CancelResult, error) {
	rec, client, repo, err := rem.remoteRun(ctx, change, clientFor)
	if err != nil {
		return nil, err
	}
	res := &CancelResult{Change: rec.Change, RunID: rec.Remote.RunID, URL: rec.Remote.HTMLURL}
	if res.RunID == 0 {
		return nil, tell.UserErr("GitHub does not list it yet; try again in a moment", "the run of %q is not known yet", rec.Change)
	}
	err = client.CancelRun(ctx, repo, res.RunID, force)
	if github.StatusOf(err) == 409 {
		res.AlreadyComplete = true
		return res, nil
	}
	if err != nil {
		return nil, githubErr(err, repo, "git ralph cancel "+rec.Change, "")
	}
	return res, nil
}

// RemoteStatus asks GitHub and the git remote where a dispatched run stands, and
// records what it saw. It changes nothing else.
func (rem *Remote) RemoteStatus(ctx context.Context, change string, clientFor func(string) (*github.Client, error)) (*status.RemoteView, error) {
	rec, client, repo, err := rem.remoteRun(ctx, change, clientFor)
	if err != nil {
		return nil, err
	}
	v := &status.RemoteView{RunID: rec.Remote.RunID, URL: rec.Remote.HTMLURL}
	if tip, ok, err := rem.Repo.RemoteRef(ctx, rec.Remote.GitRemote, "refs/heads/"+rec.Branch); err == nil && ok {
		v.Tip = tip
	}
	if v.RunID == 0 {
		return v, nil
	}
	r, err := client.Run(ctx, repo, v.RunID)
	if err != nil {
		return nil, apiErr(err, repo, "git ralph status "+rec.Change)
	}
	v.Status, v.Conclusion = r.Status, r.Conclusion
	if r.HTMLURL != "" {
		v.URL = r.HTMLURL
	}
	if r.Status == "in_progress" {
		// Best effort: the step is a nicety, the run's status is the answer.
		if jobs, err := client.RunJobs(ctx, repo, r.ID); err == nil {
			v.Job, v.Step = github.CurrentStep(jobs)
		}
	}
	if rec.Remote.LastSeenStatus != r.Status || rec.Remote.LastSeenConclusion != r.Conclusion {
		rec.Remote.LastSeenStatus, rec.Remote.LastSeenConclusion = r.Status, r.Conclusion
		if err := rem.save(rec); err != nil {
			return nil, err
		}
	}
	return v, nil
}

// LogsResult is what logs found in a run's artifact.
type LogsResult struct {
	Change string
	RunID  int64
	Files  []string // the artifact's files, e.g. logs/1-2.log, summary.json
	Name   string   // the file asked for
	Data   []byte   // its content
	// JobLog is set when the run left no artifact to read (its loop job ended before
	// the export step) or the artifact expired: Data is then the loop step's log from
	// the run's own logs instead (joblog.go).
	JobLog *JobLog
}

// Logs reads a dispatched run's artifact (ralph-<run-id>): the list of its files, or,
// with attempt ("<story>-<n>"), that attempt's log. An expired artifact is an error
// that says finish does not need it.
func (rem *Remote) Logs(ctx context.Context, change, attempt string, clientFor func(string) (*github.Client, error)) (*LogsResult, error) {
	if attempt != "" && (strings.ContainsAny(attempt, "/\\\x00") || strings.HasPrefix(attempt, ".") || !strings.Contains(attempt, "-")) {
		return nil, tell.UserErr("name an attempt as <story>-<n>, e.g. 1-2 ('git ralph logs "+change+"' lists them)", "invalid attempt %q", attempt)
	}
	rec, client, repo, err := rem.remoteRun(ctx, change, clientFor)
	if err != nil {
		return nil, err
	}
	res := &LogsResult{Change: rec.Change, RunID: rec.Remote.RunID}
	if res.RunID == 0 {
		return nil, tell.UserErr("GitHub does not list it yet; try again in a moment", "the run of %q is not known yet", rec.Change)
	}
	again := "git ralph logs " + rec.Change
	expired := tell.UserErr("finish does not need them: 'git ralph finish "+rec.Change+"' brings the attempts home from git",
		"the logs of run %d have expired", res.RunID)
	arts, err := client.RunArtifacts(ctx, repo, res.RunID, fmt.Sprintf("ralph-%d", res.RunID))
	if err != nil {
		return nil, apiErr(err, repo, again)
	}
	if len(arts) == 0 || arts[0].Expired {
		return rem.jobLog(ctx, client, repo, res, attempt, len(arts) > 0, expired)
	}
	data, err := client.DownloadArtifact(ctx, repo, arts[0].ID)
	if github.StatusOf(err) == 410 {
		return nil, expired
	}
	if err != nil {
		return nil, apiErr(err, repo, again)
	}
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		return nil, fmt.Errorf("read the artifact of run %d: %w", res.RunID, err)
	}
	want := "logs/" + attempt + ".log"
	for _, f := range zr.File {
		res.Files = append(res.Files, f.Name)
		if attempt != "" && f.Name == want {
			rc, err := f.Open()
			if err != nil {
				return nil, err
			}
			res.Data, err = io.ReadAll(io.LimitReader(rc, 64<<20))
			rc.Close()
			if err != nil {
				return nil, err
			}
			res.Name = f.Name
		}
	}
	if attempt != "" && res.Name == "" {
		return nil, tell.UserErr("'git ralph logs "+rec.Change+"' lists the logs there are", "run %d has no log of attempt %s", res.RunID, attempt)
	}
	return res, nil
}

// PublishedChange is the change as the run on GitHub Actions published it: its tasks
// file read at tip (ralph/<change> on the git remote), the objects fetched by id without a
// ref or a change to the work tree. nil when the tip has no tasks file or cannot be
// fetched; status then shows the stories as they are here.
func (rem *Remote) PublishedChange(ctx context.Context, r *status.Report, tip string) *source.Source {
	rec := r.Record
	if rec.Remote == nil || r.Change == nil || tip == "" || !git.IsObjectID(tip) {
		return nil
	}
	path := r.Change.TasksRel
	data, size, ok, err := rem.Repo.ReadFile(ctx, tip, path, repofile.MaxFile)
	if err == nil && !ok {
		if rem.Repo.FetchRefs(ctx, rec.Remote.GitRemote, []string{tip}) != nil {
			return nil
		}
		data, size, ok, err = rem.Repo.ReadFile(ctx, tip, path, repofile.MaxFile)
	}
	if err != nil || !ok || size > repofile.MaxFile { // cut, it would hide stories
		return nil
	}
	ch, err := r.Change.WithTasks(data)
	if err != nil {
		return nil
	}
	return ch
}
