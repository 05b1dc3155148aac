package githubflow

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/git-ralph/git-ralph/internal/ci"
	"github.com/git-ralph/git-ralph/internal/git"
	"github.com/git-ralph/git-ralph/internal/github"
	"github.com/git-ralph/git-ralph/internal/loop"
	"github.com/git-ralph/git-ralph/internal/run"
	"github.com/git-ralph/git-ralph/internal/source"
	"github.com/git-ralph/git-ralph/internal/tell"
)

// `git ralph dispatch` (docs/REMOTE.md, "Dispatch"): the git side first (steps 1–4: PrepareDispatch
// and Dispatched, everything before and after the request), then Dispatch, which makes
// the request that asks GitHub to run the workflow.

// DispatchOptions are the git side of a dispatch.
type DispatchOptions struct {
	Change     string // required
	Arg        string // what the user named: a path for a plan or a prd.json; "" for Change
	GitRemote  string // required: the remote ralph/<change> is pushed to
	Nonce      string // required: goes into the run's title, to find the run again
	IncludeWIP bool   // put uncommitted work into the start commit
	Agent      string
	Model      string
	// Remote holds what the caller resolved about the GitHub side: host, owner, name,
	// workflow, ref. GitRemote, Nonce and the rest are filled in here.
	Remote run.Remote
}

// DispatchStart is what PrepareDispatch did.
type DispatchStart struct {
	Record *run.Record
	// Resumed: the record was already dispatching (a dispatch that crashed after
	// writing it). The caller must look for a run with Record.Remote.Nonce before it
	// dispatches again, so that a change is never dispatched twice.
	Resumed bool
	Pushed  bool // the branch was pushed now (false: the remote already had it)
}

// PrepareDispatch checks what can be checked in git and changes nothing if a check
// fails; then it writes the record (status dispatching) first, builds the start commit
// of ralph/<change> with a temporary index (the user's work tree, index and HEAD are
// untouched) or takes the branch's tip when it exists, and pushes the branch with a
// lease, git-ralph's own pre-push hook let through and the user's hooks run.
func (fl *Flow) PrepareDispatch(ctx context.Context, o DispatchOptions) (*DispatchStart, error) {
	src, err := fl.runnableChange(ctx, cmp.Or(o.Arg, o.Change))
	if err != nil {
		return nil, err
	}
	o.Change = src.Name
	if o.GitRemote == "" || o.Nonce == "" || strings.ContainsAny(o.Nonce, " []\n") {
		return nil, fmt.Errorf("dispatch %q: a remote and a nonce are required", o.Change)
	}
	lock, err := fl.Store.Lock(o.Change)
	if errors.Is(err, run.ErrLocked) {
		return nil, tell.UserErr("wait for it to end, or stop it with Ctrl-C in its terminal", "a loop is running for change %q here", o.Change)
	}
	if err != nil {
		return nil, fmt.Errorf("lock change %q: %w", o.Change, err)
	}
	defer lock.Unlock()
	gctx := context.WithoutCancel(ctx)
	rec, err := fl.Store.Load(o.Change)
	switch {
	case errors.Is(err, run.ErrNoRun):
	case err != nil:
		return nil, err
	case rec.Status == run.Dispatching:
		pushed, err := fl.pushStart(gctx, rec)
		if err != nil {
			return nil, err
		}
		return &DispatchStart{Record: rec, Resumed: true, Pushed: pushed}, nil
	default:
		return nil, dispatchRefusal(rec)
	}
	if rec, err = fl.recordDispatch(gctx, src, o); err != nil {
		return nil, err
	}
	pushed, err := fl.pushStart(gctx, rec)
	if err != nil {
		return nil, err
	}
	return &DispatchStart{Record: rec, Pushed: pushed}, nil
}

// runnableChange loads the change arg names, which must have stories to run.
func (fl *Flow) runnableChange(ctx context.Context, arg string) (*source.Source, error) {
	src, err := fl.Loop.LoadRunChange(ctx, arg)
	if err != nil {
		return nil, err
	}
	if err := src.Runnable(); err != nil {
		var e *source.Error
		if errors.As(err, &e) {
			return nil, tell.UserErr(e.Hint, "%s", e.Msg)
		}
		return nil, err
	}
	return src, nil
}

// recordDispatch checks the checkout (dispatchPoint), writes the record (status
// dispatching), then the start commit: a new one for a new branch (startCommit), else
// the branch's tip, whose initial state is found (initialOf). A failure there leaves
// no record.
func (fl *Flow) recordDispatch(ctx context.Context, src *source.Source, o DispatchOptions) (*run.Record, error) {
	branch := loop.BranchName(o.Change)
	tip, exists, cur, head, err := fl.dispatchPoint(ctx, src, branch, o.IncludeWIP)
	if err != nil {
		return nil, err
	}
	remote := o.Remote
	remote.GitRemote, remote.Nonce, remote.DispatchedAt = o.GitRemote, o.Nonce, fl.Loop.Time()
	rec := &run.Record{
		Change: o.Change, Branch: branch, Original: cur, OriginalCommit: head,
		Status: run.Dispatching, Agent: o.Agent, Model: o.Model, Started: fl.Loop.Time(), Remote: &remote,
	}
	ref := src.Ref
	ref.StoryLevel = 0 // the runner reads the plan at the default level: the workflow passes none
	source.Record(rec, ref)
	if err := fl.Loop.Save(rec); err != nil {
		return nil, err
	}
	if !exists {
		if tip, err = fl.startCommit(ctx, rec, o.IncludeWIP); err != nil {
			_ = fl.Store.Remove(o.Change)
			return nil, err
		}
		rec.Initial = tip
		fl.Loop.Report.Step(fmt.Sprintf("made %s at %s: the initial state from %s", branch, loop.Short(tip), loop.OriginalName(rec)))
	} else if rec.Initial, err = fl.initialOf(ctx, o.Change, tip, head); err != nil {
		// A run that continues the branch records its initial state here, as a first
		// dispatch does: what finish takes the pull request's words from is never left
		// for the runner's record to say.
		_ = fl.Store.Remove(o.Change)
		return nil, err
	}
	rec.Checkpoint, rec.Remote.StartCommit = tip, tip
	return rec, fl.Loop.Save(rec)
}

// dispatchPoint reads where a dispatch starts from: the branch's tip (exists says it
// is there), the current branch and HEAD. A new branch needs a branch to come back to
// and, without wip, the change's files committed.
func (fl *Flow) dispatchPoint(ctx context.Context, src *source.Source, branch string, wip bool) (tip string, exists bool, cur, head string, err error) {
	if tip, exists, err = fl.Repo.ResolveRef(ctx, "refs/heads/"+branch); err != nil {
		return "", false, "", "", err
	}
	if cur, err = fl.Repo.Branch(ctx); err != nil {
		return "", false, "", "", err
	}
	head, err = fl.Repo.Head(ctx)
	if errors.Is(err, git.ErrNoCommits) {
		return "", false, "", "", tell.UserErr("make a first commit, then dispatch again", "the repository has no commits yet")
	} else if err != nil {
		return "", false, "", "", err
	}
	if exists {
		return tip, exists, cur, head, nil
	}
	if cur == branch {
		return "", false, "", "", tell.UserErr("switch to the branch the work should come back to", "you are on %s, which does not exist yet", branch)
	}
	if !wip {
		st, err := fl.Repo.Status(ctx)
		if err != nil {
			return "", false, "", "", err
		}
		var dirty []string
		for _, e := range st {
			if strings.HasPrefix(e.Path, src.RelDir+"/") {
				dirty = append(dirty, e.Path)
			}
		}
		if len(dirty) > 0 {
			return "", false, "", "", tell.UserErr("commit them, or dispatch with --include-wip to send your uncommitted work along",
				"the change has uncommitted files: %s", strings.Join(dirty, ", "))
		}
	}
	return tip, exists, cur, head, nil
}

// startCommit makes ralph/<change>'s first commit: "initial state" on HEAD, with the
// uncommitted work when wip (built in a temporary index), and the trailers start
// --adopt reads on the runner.
func (fl *Flow) startCommit(ctx context.Context, rec *run.Record, wip bool) (string, error) {
	var tree string
	var err error
	if wip {
		tree, err = fl.Repo.WorktreeTree(ctx)
	} else {
		tree, err = fl.Repo.TreeOf(ctx, rec.OriginalCommit)
	}
	if err != nil {
		return "", err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "initial state\n\nRalph-Change: %s\n", rec.Change)
	if rec.Original != "" {
		fmt.Fprintf(&b, "Ralph-Original: %s\n", rec.Original)
	}
	fmt.Fprintf(&b, "Ralph-Base: %s\nRalph-Dispatch: %s\n", rec.OriginalCommit, rec.Remote.Nonce)
	b.WriteString(source.Trailers(rec))
	id, err := fl.Repo.CommitTree(ctx, tree, []string{rec.OriginalCommit}, b.String())
	if err != nil {
		return "", err
	}
	if err := fl.Repo.CreateRef(ctx, "refs/heads/"+rec.Branch, id); err != nil {
		return "", fmt.Errorf("create %s: %w", rec.Branch, err)
	}
	return id, nil
}

// pushStart pushes ralph/<change> at the start commit unless the remote has it there
// already. The lease: the remote branch absent, or at a commit the start contains (a
// branch an earlier run left, which this one continues).
func (fl *Flow) pushStart(ctx context.Context, rec *run.Record) (bool, error) {
	r := rec.Remote
	ref := "refs/heads/" + rec.Branch
	now, ok, err := fl.Repo.RemoteRef(ctx, r.GitRemote, ref)
	if err != nil {
		return false, &tell.Error{Msg: fmt.Sprintf("cannot read %s from %s", rec.Branch, r.GitRemote), Hint: firstLine(errText(err)), Err: err}
	}
	if ok && now == r.StartCommit {
		return false, nil
	}
	if ok {
		if _, have, _ := fl.Repo.ResolveRef(ctx, now); !have {
			return false, tell.UserErr("fetch it (git fetch "+r.GitRemote+" "+rec.Branch+") and look: finish or delete it before dispatching again",
				"%s on %s is at %s, which you do not have", rec.Branch, r.GitRemote, loop.Short(now))
		}
		if in, err := fl.Repo.IsAncestor(ctx, now, r.StartCommit); err != nil {
			return false, err
		} else if !in {
			return false, tell.UserErr("bring it home first (git fetch "+r.GitRemote+" "+rec.Branch+"), or delete it on the remote",
				"%s on %s has commits that %s does not", rec.Branch, r.GitRemote, loop.Short(r.StartCommit))
		}
	}
	err = fl.Repo.PushAtomic(ctx, git.AtomicPush{
		Remote:   r.GitRemote,
		Lease:    map[string]string{ref: now},
		Refspecs: []string{r.StartCommit + ":" + ref},
		Hooks:    true, Config: []string{"ralph.allowPush=true"},
	})
	if err != nil {
		return false, &tell.Error{Msg: fmt.Sprintf("the push of %s to %s was refused", rec.Branch, r.GitRemote),
			Hint: errText(err) + "\nnothing was dispatched; run 'git ralph dispatch " + rec.Change + "' again once that is fixed", Err: err}
	}
	fl.Loop.Report.Step(fmt.Sprintf("pushed %s (%s) to %s", rec.Branch, loop.Short(r.StartCommit), r.GitRemote))
	return true, nil
}

// errText is git's own words for a failed git command, else the error.
func errText(err error) string {
	var ge *git.Error
	if errors.As(err, &ge) && ge.Stderr != "" {
		return loop.Tail(ge.Stderr, 10)
	}
	return err.Error()
}

// Dispatched records that GitHub accepted the dispatch; runID is 0 when GitHub did not
// say (the run is then found by its nonce later).
func (fl *Flow) Dispatched(rec *run.Record, runID int64, url string) error {
	rec.Status = run.Dispatched
	rec.Remote.RunID, rec.Remote.HTMLURL = runID, url
	return fl.Loop.Save(rec)
}

// dispatchRefusal is why a change with this record cannot be dispatched (it is not in
// the middle of a dispatch): it is dispatched already, or it has a local run.
func dispatchRefusal(rec *run.Record) error {
	if rec.Status == run.Dispatched {
		return tell.UserErr("'git ralph status "+rec.Change+"' shows it; 'git ralph finish "+rec.Change+"' brings it home once it is over",
			"change %q is already dispatched", rec.Change)
	}
	return tell.UserErr("finish it first: 'git ralph finish "+rec.Change+" --keep' keeps the branch, and dispatch then continues from it",
		"change %q has a local run (%s)", rec.Change, rec.Status)
}

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

// Dispatch runs a change's loop on GitHub Actions (docs/REMOTE.md, "Dispatch"): the checks that
// change nothing (repository, token, the workflow on GitHub), then the git side
// (PrepareDispatch: record, start commit, push), then the dispatch request, asking for
// the run's id and, where GitHub cannot say it, finding the run by the nonce in its
// title. A dispatch that stopped after its push looks for its run first, so a change is
// never dispatched twice.
func (fl *Flow) Dispatch(ctx context.Context, o DispatchRequest) (*DispatchResult, error) {
	if o.Workflow == "" {
		o.Workflow = "ralph.yml"
	}
	again := "git ralph dispatch " + o.Change
	arg := o.Change
	src, err := fl.Loop.LoadRunChange(ctx, arg)
	if err != nil {
		return nil, err
	}
	o.Change = src.Name   // a plan's or a prd.json's run name, from here on
	var ended *run.Record // a dispatched run that ended without publishing: replaced
	if rec, err := fl.Store.Load(o.Change); err == nil && rec.Status != run.Dispatching {
		if !fl.redispatchable(ctx, rec) {
			return nil, dispatchRefusal(rec) // known here: no need to ask GitHub
		}
		ended = rec
	}
	cur, err := fl.Repo.Branch(ctx)
	if err != nil {
		return nil, err
	}
	remote, err := fl.pushRemote(ctx, &run.Record{Original: cur}, o.Remote)
	if err != nil {
		return nil, err
	}
	repo, err := fl.dispatchRepo(ctx, remote, o)
	if err != nil {
		return nil, err
	}
	client, err := githubClient(o.Client, repo.Host, again)
	if err != nil {
		return nil, err
	}
	wf, err := activeWorkflow(ctx, client, repo, o.Workflow, again)
	if err != nil {
		return nil, err
	}
	ref := o.Ref
	if ref == "" {
		info, err := client.Repository(ctx, repo)
		if err != nil {
			return nil, apiErr(err, repo, again)
		}
		ref = info.DefaultBranch
	}
	if rec, err := fl.Store.Load(o.Change); err != nil || rec.Status != run.Dispatching {
		if err := fl.checkNewDispatch(ctx, client, repo, wf, o, remote, ref, again); err != nil {
			return nil, err
		}
	}
	nonce, err := newNonce()
	if err != nil {
		return nil, err
	}
	if ended != nil {
		fl.Loop.Report.Step(fmt.Sprintf("run %d of %s ended (%s) without publishing: dispatching it again from %s", ended.Remote.RunID, o.Change, ended.Remote.LastSeenConclusion, ended.Branch))
		if err := fl.Store.Remove(o.Change); err != nil {
			return nil, err
		}
	}
	ds, err := fl.PrepareDispatch(ctx, DispatchOptions{Change: o.Change, Arg: arg, GitRemote: remote, Nonce: nonce, IncludeWIP: o.IncludeWIP,
		Agent: o.Agent, Model: o.Model,
		Remote: run.Remote{RepoHost: repo.Host, Owner: repo.Owner, Name: repo.Name, Workflow: o.Workflow, Ref: ref}})
	if err != nil {
		return nil, err
	}
	res := &DispatchResult{Change: o.Change, Branch: ds.Record.Branch, Remote: remote, Repo: repo.String(), Pushed: ds.Pushed}
	return fl.sendDispatch(ctx, client, repo, ds, res, again)
}

// activeWorkflow is the dispatch's workflow on GitHub, which must be there and enabled.
func activeWorkflow(ctx context.Context, client *github.Client, repo github.Repo, file, again string) (*github.Workflow, error) {
	wf, err := client.Workflow(ctx, repo, file)
	if github.StatusOf(err) == 404 {
		return nil, tell.UserErr("run 'git ralph ci init', commit .github/workflows/"+file+" to the default branch and push it; nothing was changed",
			"%s has no workflow %s on its default branch", repo, file)
	}
	if err != nil {
		return nil, apiErr(err, repo, again)
	}
	if wf.State == "disabled_fork" {
		return nil, tell.UserErr(fmt.Sprintf("enable them at https://%s/%s/%s/actions (GitHub leaves a fork's workflows off until you do), or dispatch to another repository with --repo; nothing was changed", repo.Host, repo.Owner, repo.Name),
			"workflows are not enabled in %s, a fork", repo)
	}
	if wf.State != "active" {
		return nil, tell.UserErr("enable it on GitHub (Actions → "+wf.Name+" → Enable workflow) or with 'gh workflow enable "+file+"'; nothing was changed",
			"the workflow %s of %s is %s", file, repo, strings.ReplaceAll(wf.State, "_", " "))
	}
	return wf, nil
}

// checkNewDispatch checks what a new dispatch (not the resume of one) needs: no run of
// the change already queued or running (dispatched from elsewhere: the workflow's
// concurrency group would only queue a second one behind it), ref on the remote, and
// the workflow there with its trigger (an older git-ralph's is warned of).
func (fl *Flow) checkNewDispatch(ctx context.Context, client *github.Client, repo github.Repo, wf *github.Workflow, o DispatchRequest, remote, ref, again string) error {
	runs, err := client.DispatchedRuns(ctx, repo, o.Workflow)
	if err != nil {
		return apiErr(err, repo, again)
	}
	for _, r := range runs {
		if r.Status != "completed" && strings.HasPrefix(r.DisplayTitle, "ralph "+o.Change+" [") {
			return tell.UserErr("wait for it ("+r.HTMLURL+"), or cancel it on GitHub; nothing was changed",
				"a run of %q is already %s on GitHub Actions", o.Change, strings.ReplaceAll(r.Status, "_", " "))
		}
	}
	if _, ok, err := fl.Repo.RemoteRef(ctx, remote, "refs/heads/"+ref); err != nil {
		return &tell.Error{Msg: fmt.Sprintf("cannot read %s from %s", ref, remote), Hint: errText(err), Err: err}
	} else if !ok {
		return tell.UserErr("push it first, or name another with --ref; nothing was changed",
			"branch %s, whose workflow would run, is not on %s", ref, remote)
	}
	outdated, err := dispatchTrigger(ctx, client, repo, wf, o.Workflow, ref, again)
	if err != nil {
		return err
	}
	if outdated {
		fl.Loop.Report.Warn(fmt.Sprintf("the workflow on %s is an older git-ralph's: its loop step runs the loop through git, so a cancelled run can lose the story under way; run 'git ralph ci init', then commit and push it", ref))
	}
	return nil
}

// sendDispatch asks GitHub to run the workflow for the prepared dispatch ds (a resumed
// one first looks for the run it started) and records the run's id in res and the
// record, once known.
func (fl *Flow) sendDispatch(ctx context.Context, client *github.Client, repo github.Repo, ds *DispatchStart, res *DispatchResult, again string) (*DispatchResult, error) {
	rec := ds.Record
	done := fmt.Sprintf("%s is pushed to %s; ", rec.Branch, res.Remote)
	if ds.Resumed {
		r, err := fl.findRun(ctx, client, repo, rec, 0)
		if err != nil {
			return nil, githubErr(err, repo, again, done)
		}
		if r != nil {
			res.RunID, res.URL, res.Found = r.ID, r.HTMLURL, true
			return res, fl.Dispatched(rec, r.ID, r.HTMLURL)
		}
	}
	out, err := client.DispatchWorkflow(ctx, repo, rec.Remote.Workflow, github.Dispatch{Ref: rec.Remote.Ref, ReturnRunDetails: true,
		Inputs: map[string]string{"change": rec.Change, "branch": rec.Branch, "nonce": rec.Remote.Nonce}})
	if github.StatusOf(err) == 403 && !isRateLimit(err) {
		return nil, &tell.Error{Msg: fmt.Sprintf("the token for %s may not run workflows in %s (403)", repo.Host, repo),
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
		if r, err := fl.findRun(ctx, client, repo, rec, FindRunFor); err == nil && r != nil {
			res.RunID, res.URL = r.ID, r.HTMLURL
		}
	}
	return res, fl.Dispatched(rec, res.RunID, res.URL)
}

// dispatchTrigger checks that the workflow at ref, the copy GitHub would run, has the
// workflow_dispatch trigger (docs/REMOTE.md, "Dispatch"), read through the contents API of
// the dispatch repository (--repo's, maybe not the push remote's). A token that may not
// read contents skips the check. outdated says an older ci init wrote the file: a warning.
func dispatchTrigger(ctx context.Context, client *github.Client, repo github.Repo, wf *github.Workflow, file, ref, again string) (outdated bool, err error) {
	path := wf.Path
	if path == "" {
		path = ".github/workflows/" + file
	}
	src, err := client.FileAt(ctx, repo, path, ref)
	switch github.StatusOf(err) {
	case 0:
	case 403:
		return false, nil
	case 404:
		return false, tell.UserErr(fmt.Sprintf("commit %s to %s (git ralph ci init writes it), or name another branch with --ref; nothing was changed", path, ref),
			"branch %s of %s has no %s", ref, repo, path)
	default:
		return false, apiErr(err, repo, again)
	}
	if err != nil {
		return false, apiErr(err, repo, again)
	}
	ok, err := github.Dispatchable(src)
	if err != nil {
		return false, tell.UserErr(fmt.Sprintf("fix it on %s ('git ralph ci init' rewrites its own file); nothing was changed", ref),
			"%s on branch %s of %s is not valid YAML: %s", path, ref, repo, errText(err)).WithCause(err)
	}
	if !ok {
		return false, tell.UserErr(fmt.Sprintf("add 'workflow_dispatch' under on: there ('git ralph ci init' writes a workflow that has it), push it to %s, then run '%s' again; nothing was changed", ref, again),
			"%s on branch %s of %s has no workflow_dispatch trigger", path, ref, repo)
	}
	return ci.Outdated(src), nil
}

// dispatch422 explains GitHub's 422 to a dispatch that the preflight did not foresee (the
// ref or the file changed in between): the ref is gone (docs/REMOTE.md, "Failure modes"), or its
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
	return &tell.Error{Msg: fmt.Sprintf("GitHub refused to run %s at %s in %s: %s", file, ref, repo, text), Hint: hint + "\n" + retry, Err: err}
}

// FindRunFor is how long dispatch looks for a run GitHub did not name (a 204): the
// listing is asked again after 1s, 2s, 4s, … at most 30s apart (docs/REMOTE.md, "Dispatch").
const FindRunFor = 2 * time.Minute

// findRun looks for the run whose title carries rec's nonce: once, then again with
// backoff for as long as patience, with conditional listings (an unchanged one is a
// 304, which does not count against the rate limit).
func (rem *Remote) findRun(ctx context.Context, client *github.Client, repo github.Repo, rec *run.Record, patience time.Duration) (*github.WorkflowRun, error) {
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
		if err := rem.wait(ctx, wait); err != nil {
			return nil, err
		}
		waited += wait
		wait = min(2*wait, 30*time.Second)
	}
}

// dispatchRepo is the GitHub repository dispatch runs the workflow in: --repo or
// ralph.repo, then GH_REPO, then the push remote's URL.
func (fl *Flow) dispatchRepo(ctx context.Context, remote string, o DispatchRequest) (github.Repo, error) {
	urls, err := fl.Repo.RemoteURLs(ctx, remote)
	if errors.Is(err, git.ErrNoRemote) {
		return github.Repo{}, tell.UserErr("pass --remote NAME, or add it: git remote add "+remote+" <url>", "no git remote %q to push ralph/%s to", remote, o.Change)
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
		return github.Repo{}, tell.UserErr("give it as OWNER/REPO or HOST/OWNER/REPO", "%s", err.Error()).WithCause(err)
	}
	if found {
		return repo, nil
	}
	return github.Repo{}, tell.UserErr("name it: git ralph dispatch "+o.Change+" --repo OWNER/REPO (or git config ralph.repo OWNER/REPO); nothing was changed",
		"cannot tell which GitHub repository remote %q is: %s is not a GitHub URL", remote, urls[0])
}

func newNonce() (string, error) {
	b := make([]byte, 6)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return hex.EncodeToString(b), nil
}

func isRateLimit(err error) bool {
	var ge *github.Error
	return errors.As(err, &ge) && ge.RateLimited()
}
