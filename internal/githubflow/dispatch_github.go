package githubflow

import (
	"archive/zip"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/git-ralph/git-ralph/internal/git"
	"github.com/git-ralph/git-ralph/internal/github"
	"github.com/git-ralph/git-ralph/internal/loop"
	"github.com/git-ralph/git-ralph/internal/run"
)

// DispatchRequest is `git ralph dispatch` for one change.
type DispatchRequest struct {
	Change     string // required
	Remote     string // the git remote to push to; "" picks one as finish --pr does
	Repo       string // [HOST/]OWNER/REPO from --repo or ralph.repo
	EnvRepo    string // GH_REPO
	Workflow   string // the workflow file; "" means ralph.yml
	Ref        string // the branch whose workflow runs; "" means the default branch
	IncludeWIP bool
	Agent      string
	Model      string
	// Client returns a GitHub client for a host (required).
	Client func(host string) (*github.Client, error)
}

// DispatchResult says what dispatch did.
type DispatchResult struct {
	Change, Branch, Remote, Repo string
	RunID                        int64  // 0 when GitHub has not listed the run yet
	URL                          string // the run's page, when known
	Pushed                       bool
	Found                        bool // an earlier, interrupted dispatch had started the run already
}

// Dispatch runs a change's loop on GitHub Actions (REMOTE.md §5.2): the checks that
// change nothing (repository, token, the workflow on GitHub), then the git side
// (PrepareDispatch: record, start commit, push), then the dispatch request, asking for
// the run's id and, where GitHub cannot say it, finding the run by the nonce in its
// title. A dispatch that stopped after its push looks for its run first, so a change is
// never dispatched twice.
func (l *Flow) Dispatch(ctx context.Context, o DispatchRequest) (*DispatchResult, error) {
	if o.Workflow == "" {
		o.Workflow = "ralph.yml"
	}
	again := "git ralph dispatch " + o.Change
	if _, err := loop.LoadChange(ctx, l.Repo, o.Change); err != nil {
		return nil, err
	}
	var ended *run.Record // a dispatched run that ended without publishing: replaced
	if rec, err := l.Store.Load(o.Change); err == nil && rec.Status != run.Dispatching {
		if !l.redispatchable(ctx, rec) {
			return nil, dispatchRefusal(rec) // known here: no need to ask GitHub
		}
		ended = rec
	}
	cur, err := l.Repo.Branch(ctx)
	if err != nil {
		return nil, err
	}
	remote, err := l.pushRemote(ctx, &run.Record{Original: cur}, o.Remote)
	if err != nil {
		return nil, err
	}
	repo, err := l.dispatchRepo(ctx, remote, o)
	if err != nil {
		return nil, err
	}
	client, err := githubClient(o.Client, repo.Host, again)
	if err != nil {
		return nil, err
	}
	wf, err := client.Workflow(ctx, repo, o.Workflow)
	if github.StatusOf(err) == 404 {
		return nil, userErr("run 'git ralph ci init', commit .github/workflows/"+o.Workflow+" to the default branch and push it; nothing was changed",
			"%s has no workflow %s on its default branch", repo, o.Workflow)
	}
	if err != nil {
		return nil, apiErr(err, repo, again)
	}
	if wf.State == "disabled_fork" {
		return nil, userErr(fmt.Sprintf("enable them at https://%s/%s/%s/actions (GitHub leaves a fork's workflows off until you do), or dispatch to another repository with --repo; nothing was changed", repo.Host, repo.Owner, repo.Name),
			"workflows are not enabled in %s, a fork", repo)
	}
	if wf.State != "active" {
		return nil, userErr("enable it on GitHub (Actions → "+wf.Name+" → Enable workflow) or with 'gh workflow enable "+o.Workflow+"'; nothing was changed",
			"the workflow %s of %s is %s", o.Workflow, repo, strings.ReplaceAll(wf.State, "_", " "))
	}
	ref := o.Ref
	if ref == "" {
		info, err := client.Repository(ctx, repo)
		if err != nil {
			return nil, apiErr(err, repo, again)
		}
		ref = info.DefaultBranch
	}
	if rec, err := l.Store.Load(o.Change); err != nil || rec.Status != run.Dispatching {
		// A run of this change already queued or running (dispatched from elsewhere):
		// the workflow's concurrency group would only queue a second one behind it.
		runs, err := client.DispatchedRuns(ctx, repo, o.Workflow)
		if err != nil {
			return nil, apiErr(err, repo, again)
		}
		for _, r := range runs {
			if r.Status != "completed" && strings.HasPrefix(r.DisplayTitle, "ralph "+o.Change+" [") {
				return nil, userErr("wait for it ("+r.HTMLURL+"), or cancel it on GitHub; nothing was changed",
					"a run of %q is already %s on GitHub Actions", o.Change, strings.ReplaceAll(r.Status, "_", " "))
			}
		}
		if _, ok, err := l.Repo.RemoteRef(ctx, remote, "refs/heads/"+ref); err != nil {
			return nil, &loop.Error{Msg: fmt.Sprintf("cannot read %s from %s", ref, remote), Hint: errText(err), Err: err}
		} else if !ok {
			return nil, userErr("push it first, or name another with --ref; nothing was changed",
				"branch %s, whose workflow would run, is not on %s", ref, remote)
		}
		if err := dispatchTrigger(ctx, client, repo, wf, o.Workflow, ref, again); err != nil {
			return nil, err
		}
	}
	nonce, err := newNonce()
	if err != nil {
		return nil, err
	}
	if ended != nil {
		l.Report.Step(fmt.Sprintf("run %d of %s ended (%s) without publishing: dispatching it again from %s", ended.Remote.RunID, o.Change, ended.Remote.LastSeenConclusion, ended.Branch))
		if err := l.Store.Remove(o.Change); err != nil {
			return nil, err
		}
	}
	ds, err := l.PrepareDispatch(ctx, DispatchOptions{Change: o.Change, GitRemote: remote, Nonce: nonce, IncludeWIP: o.IncludeWIP,
		Agent: o.Agent, Model: o.Model,
		Remote: run.Remote{RepoHost: repo.Host, Owner: repo.Owner, Name: repo.Name, Workflow: o.Workflow, Ref: ref}})
	if err != nil {
		return nil, err
	}
	rec := ds.Record
	res := &DispatchResult{Change: o.Change, Branch: rec.Branch, Remote: remote, Repo: repo.String(), Pushed: ds.Pushed}
	done := fmt.Sprintf("%s is pushed to %s; ", rec.Branch, remote)
	if ds.Resumed {
		r, err := l.findRun(ctx, client, repo, rec, 0)
		if err != nil {
			return nil, githubErr(err, repo, again, done)
		}
		if r != nil {
			res.RunID, res.URL, res.Found = r.ID, r.HTMLURL, true
			return res, l.Dispatched(rec, r.ID, r.HTMLURL)
		}
	}
	out, err := client.DispatchWorkflow(ctx, repo, rec.Remote.Workflow, github.Dispatch{Ref: rec.Remote.Ref, ReturnRunDetails: true,
		Inputs: map[string]string{"change": rec.Change, "branch": rec.Branch, "nonce": rec.Remote.Nonce}})
	if github.StatusOf(err) == 403 && !isRateLimit(err) {
		return nil, &loop.Error{Msg: fmt.Sprintf("the token for %s may not run workflows in %s (403)", repo.Host, repo),
			Hint: "a classic token needs the repo scope, a fine-grained one or an app Actions: read and write\n" +
				"add it with 'gh auth refresh --hostname " + repo.Host + " --scopes repo', or use another token\n" + done + "run '" + again + "' again", Err: err}
	}
	if github.StatusOf(err) == 422 {
		return nil, dispatch422(err, repo, rec.Remote.Workflow, rec.Remote.Ref, done+"run '"+again+"' again")
	}
	if err != nil {
		return nil, githubErr(err, repo, again, done)
	}
	res.RunID, res.URL = out.RunID, out.HTMLURL
	if res.RunID == 0 {
		// 204: GitHub did not say which run; it lists it by its title a little later.
		// Not found in FindRunFor: the run id stays pending, status keeps looking.
		if r, err := l.findRun(ctx, client, repo, rec, FindRunFor); err == nil && r != nil {
			res.RunID, res.URL = r.ID, r.HTMLURL
		}
	}
	return res, l.Dispatched(rec, res.RunID, res.URL)
}

// dispatchTrigger checks that the copy of the workflow at ref, the one GitHub would
// run, has the workflow_dispatch trigger (REMOTE.md §5.8 row 7; GitHub would answer
// 422). It reads the file through the contents API rather than from the git remote's
// objects: that is the dispatch repository (which --repo may make another than the
// push remote's) at exactly the ref GitHub reads, and it needs no fetch here. A token
// that may not read contents (403) skips the check: the dispatch then says it.
func dispatchTrigger(ctx context.Context, client *github.Client, repo github.Repo, wf *github.Workflow, file, ref, again string) error {
	path := wf.Path
	if path == "" {
		path = ".github/workflows/" + file
	}
	src, err := client.FileAt(ctx, repo, path, ref)
	switch github.StatusOf(err) {
	case 0:
	case 403:
		return nil
	case 404:
		return userErr(fmt.Sprintf("commit %s to %s (git ralph ci init writes it), or name another branch with --ref; nothing was changed", path, ref),
			"branch %s of %s has no %s", ref, repo, path)
	default:
		return apiErr(err, repo, again)
	}
	if err != nil {
		return apiErr(err, repo, again)
	}
	ok, err := github.Dispatchable(src)
	if err != nil {
		return userErr(fmt.Sprintf("fix it on %s ('git ralph ci init' rewrites its own file); nothing was changed", ref),
			"%s on branch %s of %s is not valid YAML: %s", path, ref, repo, errText(err))
	}
	if !ok {
		return userErr(fmt.Sprintf("add 'workflow_dispatch' under on: there ('git ralph ci init' writes a workflow that has it), push it to %s, then run '%s' again; nothing was changed", ref, again),
			"%s on branch %s of %s has no workflow_dispatch trigger", path, ref, repo)
	}
	return nil
}

// dispatch422 explains GitHub's 422 to a dispatch that the preflight did not foresee (the
// ref or the file changed in between): the ref is gone (REMOTE.md §5.8 row 6), or its
// copy of the workflow lacks the trigger (row 7). The record stays dispatching.
func dispatch422(err error, repo github.Repo, file, ref, retry string) error {
	var ge *github.Error
	text := "Unprocessable Entity"
	if errors.As(err, &ge) && ge.Text() != "" {
		text = ge.Text()
	}
	hint := "see GitHub's message"
	switch low := strings.ToLower(text); {
	case strings.Contains(low, "no ref found"):
		hint = fmt.Sprintf("push branch %s to %s again, or name another with --ref", ref, repo)
	case strings.Contains(low, "workflow_dispatch"):
		hint = fmt.Sprintf("add 'workflow_dispatch' under on: in .github/workflows/%s on %s and push it", file, ref)
	}
	return &loop.Error{Msg: fmt.Sprintf("GitHub refused to run %s at %s in %s: %s", file, ref, repo, text), Hint: hint + "\n" + retry, Err: err}
}

// FindRunFor is how long dispatch looks for a run GitHub did not name (a 204): the
// listing is asked again after 1s, 2s, 4s, … at most 30s apart (REMOTE.md §5.2).
const FindRunFor = 2 * time.Minute

// findRun looks for the run whose title carries rec's nonce: once, then again with
// backoff for as long as patience, with conditional listings (an unchanged one is a
// 304, which does not count against the rate limit).
func (l *Flow) findRun(ctx context.Context, client *github.Client, repo github.Repo, rec *run.Record, patience time.Duration) (*github.WorkflowRun, error) {
	mark := "[" + rec.Remote.Nonce + "]"
	wait, waited, etag := time.Second, time.Duration(0), ""
	for {
		runs, p, err := client.DispatchedRunsIfChanged(ctx, repo, rec.Remote.Workflow, etag)
		if err != nil {
			return nil, err
		}
		etag = p.ETag
		for j := range runs {
			if strings.Contains(runs[j].DisplayTitle, mark) {
				return &runs[j], nil
			}
		}
		if waited+wait > patience {
			return nil, nil
		}
		if err := l.Wait(ctx, wait); err != nil {
			return nil, err
		}
		waited += wait
		wait = min(2*wait, 30*time.Second)
	}
}

// dispatchRepo is the GitHub repository dispatch runs the workflow in: --repo or
// ralph.repo, then GH_REPO, then the push remote's URL.
func (l *Flow) dispatchRepo(ctx context.Context, remote string, o DispatchRequest) (github.Repo, error) {
	urls, err := l.Repo.RemoteURLs(ctx, remote)
	if errors.Is(err, git.ErrNoRemote) {
		return github.Repo{}, userErr("pass --remote NAME, or add it: git remote add "+remote+" <url>", "no git remote %q to push ralph/%s to", remote, o.Change)
	}
	if err != nil {
		return github.Repo{}, err
	}
	explicit := o.Repo
	if explicit == "" {
		explicit = o.EnvRepo
	}
	repo, _, found, err := githubRepoOf(urls, explicit)
	if err != nil {
		return github.Repo{}, userErr("give it as OWNER/REPO or HOST/OWNER/REPO", "%s", err.Error())
	}
	if found {
		return repo, nil
	}
	return github.Repo{}, userErr("name it: git ralph dispatch "+o.Change+" --repo OWNER/REPO (or git config ralph.repo OWNER/REPO); nothing was changed",
		"cannot tell which GitHub repository remote %q is: %s is not a GitHub URL", remote, urls[0])
}

func newNonce() (string, error) {
	b := make([]byte, 6)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return hex.EncodeToString(b), nil
}

// RemoteRun is a dispatched run as GitHub shows it.
type RemoteRun struct {
	Change string
	Repo   github.Repo
	Run    *github.WorkflowRun // nil when GitHub does not list it (yet)
}

// remoteRun loads the record of a dispatched run and a client for its repository,
// finding (and recording) the run's id by its nonce when the dispatch could not.
func (l *Flow) remoteRun(ctx context.Context, change string, clientFor func(string) (*github.Client, error)) (*run.Record, *github.Client, github.Repo, error) {
	change, err := l.ResolveRun(change)
	if err != nil {
		return nil, nil, github.Repo{}, err
	}
	rec, err := l.Store.Load(change)
	if err != nil {
		return nil, nil, github.Repo{}, err
	}
	if rec.Remote == nil || (rec.Status != run.Dispatched && rec.Status != run.Dispatching) {
		return nil, nil, github.Repo{}, userErr("a loop here stops with Ctrl-C in its terminal; 'git ralph status "+change+"' shows it",
			"the run of %q is not on GitHub Actions", change)
	}
	repo, client, err := remoteClient(rec, clientFor)
	if err != nil {
		return nil, nil, repo, err
	}
	if rec.Remote.RunID == 0 && rec.Remote.Nonce != "" {
		r, err := l.findRun(ctx, client, repo, rec, 0)
		if err != nil {
			return nil, nil, repo, apiErr(err, repo, "git ralph status "+change)
		}
		if r != nil {
			rec.Remote.RunID, rec.Remote.HTMLURL = r.ID, r.HTMLURL
			if err := l.Save(rec); err != nil {
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
func (l *Flow) CancelRemote(ctx context.Context, change string, force bool, clientFor func(string) (*github.Client, error)) (*CancelResult, error) {
	rec, client, repo, err := l.remoteRun(ctx, change, clientFor)
	if err != nil {
		return nil, err
	}
	res := &CancelResult{Change: rec.Change, RunID: rec.Remote.RunID, URL: rec.Remote.HTMLURL}
	if res.RunID == 0 {
		return nil, userErr("GitHub does not list it yet; try again in a moment", "the run of %q is not known yet", rec.Change)
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
func (l *Flow) RemoteStatus(ctx context.Context, change string, clientFor func(string) (*github.Client, error)) (*loop.RemoteView, error) {
	rec, client, repo, err := l.remoteRun(ctx, change, clientFor)
	if err != nil {
		return nil, err
	}
	v := &loop.RemoteView{RunID: rec.Remote.RunID, URL: rec.Remote.HTMLURL}
	if tip, ok, err := l.Repo.RemoteRef(ctx, rec.Remote.GitRemote, "refs/heads/"+rec.Branch); err == nil && ok {
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
		if err := l.Save(rec); err != nil {
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
func (l *Flow) Logs(ctx context.Context, change, attempt string, clientFor func(string) (*github.Client, error)) (*LogsResult, error) {
	if attempt != "" && (strings.ContainsAny(attempt, "/\\\x00") || strings.HasPrefix(attempt, ".") || !strings.Contains(attempt, "-")) {
		return nil, userErr("name an attempt as <story>-<n>, e.g. 1-2 ('git ralph logs "+change+"' lists them)", "invalid attempt %q", attempt)
	}
	rec, client, repo, err := l.remoteRun(ctx, change, clientFor)
	if err != nil {
		return nil, err
	}
	res := &LogsResult{Change: rec.Change, RunID: rec.Remote.RunID}
	if res.RunID == 0 {
		return nil, userErr("GitHub does not list it yet; try again in a moment", "the run of %q is not known yet", rec.Change)
	}
	again := "git ralph logs " + rec.Change
	expired := userErr("finish does not need them: 'git ralph finish "+rec.Change+"' brings the attempts home from git",
		"the logs of run %d have expired", res.RunID)
	arts, err := client.RunArtifacts(ctx, repo, res.RunID, fmt.Sprintf("ralph-%d", res.RunID))
	if err != nil {
		return nil, apiErr(err, repo, again)
	}
	if len(arts) == 0 || arts[0].Expired {
		return l.jobLog(ctx, client, repo, res, attempt, len(arts) > 0, expired)
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
		return nil, userErr("'git ralph logs "+rec.Change+"' lists the logs there are", "run %d has no log of attempt %s", res.RunID, attempt)
	}
	return res, nil
}

func isRateLimit(err error) bool {
	var ge *github.Error
	return errors.As(err, &ge) && ge.RateLimited()
}
