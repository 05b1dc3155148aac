package githubflow

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/git-ralph/git-ralph/internal/git"
	"github.com/git-ralph/git-ralph/internal/loop"
	"github.com/git-ralph/git-ralph/internal/run"
)

// The git side of `git ralph dispatch` (REMOTE.md §5.2 steps 1–4): everything before
// and after the request that asks GitHub to run the workflow, which the caller makes.

// DispatchOptions are the git side of a dispatch.
type DispatchOptions struct {
	Change     string // required
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
func (l *Flow) PrepareDispatch(ctx context.Context, o DispatchOptions) (*DispatchStart, error) {
	ch, err := loop.LoadChange(ctx, l.Repo, o.Change)
	if err != nil {
		return nil, err
	}
	if !ch.HasTasks {
		return nil, userErr("write the stories into "+ch.RelDir+"/tasks.md first", "change %q has no tasks.md", o.Change)
	}
	if o.GitRemote == "" || o.Nonce == "" || strings.ContainsAny(o.Nonce, " []\n") {
		return nil, fmt.Errorf("dispatch %q: a remote and a nonce are required", o.Change)
	}
	lock, err := l.Store.Lock(o.Change)
	if errors.Is(err, run.ErrLocked) {
		return nil, userErr("wait for it to end, or stop it with Ctrl-C in its terminal", "a loop is running for change %q here", o.Change)
	}
	if err != nil {
		return nil, fmt.Errorf("lock change %q: %w", o.Change, err)
	}
	defer lock.Unlock()
	gctx := context.WithoutCancel(ctx)
	rec, err := l.Store.Load(o.Change)
	switch {
	case errors.Is(err, run.ErrNoRun):
		rec = nil
	case err != nil:
		return nil, err
	case rec.Status == run.Dispatching:
		pushed, err := l.pushStart(gctx, rec)
		if err != nil {
			return nil, err
		}
		return &DispatchStart{Record: rec, Resumed: true, Pushed: pushed}, nil
	default:
		return nil, dispatchRefusal(rec)
	}

	branch := loop.BranchName(o.Change)
	tip, exists, err := l.Repo.ResolveRef(gctx, "refs/heads/"+branch)
	if err != nil {
		return nil, err
	}
	cur, err := l.Repo.Branch(gctx)
	if err != nil {
		return nil, err
	}
	head, err := l.Repo.Head(gctx)
	if errors.Is(err, git.ErrNoCommits) {
		return nil, userErr("make a first commit, then dispatch again", "the repository has no commits yet")
	} else if err != nil {
		return nil, err
	}
	if !exists {
		if cur == branch {
			return nil, userErr("switch to the branch the work should come back to", "you are on %s, which does not exist yet", branch)
		}
		if !o.IncludeWIP {
			st, err := l.Repo.Status(gctx)
			if err != nil {
				return nil, err
			}
			var dirty []string
			for _, e := range st {
				if strings.HasPrefix(e.Path, ch.RelDir+"/") {
					dirty = append(dirty, e.Path)
				}
			}
			if len(dirty) > 0 {
				return nil, userErr("commit them, or dispatch with --include-wip to send your uncommitted work along",
					"the change has uncommitted files: %s", strings.Join(dirty, ", "))
			}
		}
	}
	remote := o.Remote
	remote.GitRemote, remote.Nonce, remote.DispatchedAt = o.GitRemote, o.Nonce, l.Time()
	rec = &run.Record{
		Change: o.Change, Branch: branch, Original: cur, OriginalCommit: head,
		Status: run.Dispatching, Agent: o.Agent, Model: o.Model, Started: l.Time(), Remote: &remote,
	}
	if err := l.Save(rec); err != nil {
		return nil, err
	}
	if !exists {
		if tip, err = l.startCommit(gctx, rec, o.IncludeWIP); err != nil {
			_ = l.Store.Remove(o.Change)
			return nil, err
		}
		rec.Initial = tip
		l.Report.Step(fmt.Sprintf("made %s at %s: the initial state from %s", branch, short(tip), orDetached(rec)))
	}
	rec.Checkpoint, rec.Remote.StartCommit = tip, tip
	if err := l.Save(rec); err != nil {
		return nil, err
	}
	pushed, err := l.pushStart(gctx, rec)
	if err != nil {
		return nil, err
	}
	return &DispatchStart{Record: rec, Pushed: pushed}, nil
}

// startCommit makes ralph/<change>'s first commit: "initial state" on HEAD, with the
// uncommitted work when wip (built in a temporary index), and the trailers start
// --adopt reads on the runner.
func (l *Flow) startCommit(ctx context.Context, rec *run.Record, wip bool) (string, error) {
	var tree string
	var err error
	if wip {
		tree, err = l.Repo.WorktreeTree(ctx)
	} else {
		tree, err = l.Repo.TreeOf(ctx, rec.OriginalCommit)
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
	id, err := l.Repo.CommitTree(ctx, tree, []string{rec.OriginalCommit}, b.String())
	if err != nil {
		return "", err
	}
	if err := l.Repo.CreateRef(ctx, "refs/heads/"+rec.Branch, id); err != nil {
		return "", fmt.Errorf("create %s: %w", rec.Branch, err)
	}
	return id, nil
}

// pushStart pushes ralph/<change> at the start commit unless the remote has it there
// already. The lease: the remote branch absent, or at a commit the start contains (a
// branch an earlier run left, which this one continues).
func (l *Flow) pushStart(ctx context.Context, rec *run.Record) (bool, error) {
	r := rec.Remote
	ref := "refs/heads/" + rec.Branch
	now, ok, err := l.Repo.RemoteRef(ctx, r.GitRemote, ref)
	if err != nil {
		return false, &loop.Error{Msg: fmt.Sprintf("cannot read %s from %s", rec.Branch, r.GitRemote), Hint: firstLine(errText(err)), Err: err}
	}
	if ok && now == r.StartCommit {
		return false, nil
	}
	if ok {
		if _, have, _ := l.Repo.ResolveRef(ctx, now); !have {
			return false, userErr("fetch it (git fetch "+r.GitRemote+" "+rec.Branch+") and look: finish or delete it before dispatching again",
				"%s on %s is at %s, which you do not have", rec.Branch, r.GitRemote, short(now))
		}
		if in, err := l.Repo.IsAncestor(ctx, now, r.StartCommit); err != nil {
			return false, err
		} else if !in {
			return false, userErr("bring it home first (git fetch "+r.GitRemote+" "+rec.Branch+"), or delete it on the remote",
				"%s on %s has commits that %s does not", rec.Branch, r.GitRemote, short(r.StartCommit))
		}
	}
	err = l.Repo.PushAtomic(ctx, git.AtomicPush{
		Remote:   r.GitRemote,
		Lease:    map[string]string{ref: now},
		Refspecs: []string{r.StartCommit + ":" + ref},
		Hooks:    true, Config: []string{"ralph.allowPush=true"},
	})
	if err != nil {
		return false, &loop.Error{Msg: fmt.Sprintf("the push of %s to %s was refused", rec.Branch, r.GitRemote),
			Hint: errText(err) + "\nnothing was dispatched; run 'git ralph dispatch " + rec.Change + "' again once that is fixed", Err: err}
	}
	l.Report.Step(fmt.Sprintf("pushed %s (%s) to %s", rec.Branch, short(r.StartCommit), r.GitRemote))
	return true, nil
}

// errText is git's own words for a failed git command, else the error.
func errText(err error) string {
	var ge *git.Error
	if errors.As(err, &ge) && ge.Stderr != "" {
		return tail(ge.Stderr, 10)
	}
	return err.Error()
}

// Dispatched records that GitHub accepted the dispatch; runID is 0 when GitHub did not
// say (the run is then found by its nonce later).
func (l *Flow) Dispatched(rec *run.Record, runID int64, url string) error {
	rec.Status = run.Dispatched
	rec.Remote.RunID, rec.Remote.HTMLURL = runID, url
	return l.Save(rec)
}

// importRemoteRun brings home the result of a run on GitHub Actions once it has
// published (REMOTE.md §5.4 steps 2–5): it fetches ralph/<change> to
// refs/remotes/<remote>/ralph/<change> and the run's refs to the same names here,
// checks the fetched branch descends from the start commit, fast-forwards the local
// branch (refusing if it moved since the dispatch), and takes the run's record and
// learnings from its state commit. The record is then an ordinary local one: finish
// squashes or keeps it, and start continues a run that stopped.
func (l *Flow) importRemoteRun(ctx context.Context, rec *run.Record) error {
	r := rec.Remote
	if rec.Status == run.Dispatching || r == nil {
		return userErr("run 'git ralph dispatch "+rec.Change+"' again: it finds the run, or dispatches it once",
			"the dispatch of %q did not complete", rec.Change)
	}
	if r.RunID == 0 {
		return userErr("'git ralph status "+rec.Change+"' looks for it", "the Actions run of %q is not known yet", rec.Change)
	}
	prefix := runsPrefix(rec.Change, r.RunID)
	tracking := "refs/remotes/" + r.GitRemote + "/" + rec.Branch
	// Asked first, so that a run still under way leaves even the remote-tracking refs alone.
	if _, published, err := l.Repo.RemoteRef(ctx, r.GitRemote, prefix+"state"); err != nil {
		return &loop.Error{Msg: fmt.Sprintf("cannot read the run of %q from %s", rec.Change, r.GitRemote), Hint: errText(err), Err: err}
	} else if !published {
		return l.unpublished(rec)
	}
	if err := l.Repo.FetchRefs(ctx, r.GitRemote, []string{"+refs/heads/" + rec.Branch + ":" + tracking, "+" + prefix + "*:" + prefix + "*"}); err != nil {
		return &loop.Error{Msg: fmt.Sprintf("cannot fetch the run of %q from %s", rec.Change, r.GitRemote), Hint: errText(err), Err: err}
	}
	state, ok, err := l.Repo.ResolveRef(ctx, prefix+"state")
	if err != nil {
		return err
	}
	if !ok {
		return userErr("it is still running, or it ended before publishing; 'git ralph status "+rec.Change+"' shows it",
			"run %d of %q has published nothing yet", r.RunID, rec.Change)
	}
	remoteTip, ok, err := l.Repo.ResolveRef(ctx, tracking)
	if err != nil {
		return err
	}
	if !ok {
		return userErr("", "%s is gone from %s", rec.Branch, r.GitRemote)
	}
	if in, err := l.Repo.IsAncestor(ctx, r.StartCommit, remoteTip); err != nil {
		return err
	} else if !in {
		return userErr(fmt.Sprintf("someone pushed over it; look with 'git log %s %s' and keep what you want", short(r.StartCommit), tracking),
			"%s on %s (%s) does not descend from the commit the run started from (%s)", rec.Branch, r.GitRemote, short(remoteTip), short(r.StartCommit))
	}
	localRef := "refs/heads/" + rec.Branch
	local, exists, err := l.Repo.ResolveRef(ctx, localRef)
	if err != nil {
		return err
	}
	switch {
	case !exists:
		if err := l.Repo.CreateRef(ctx, localRef, remoteTip); err != nil {
			return err
		}
	case local == remoteTip:
	case local == r.StartCommit:
		wts, err := l.Repo.WorktreeBranches(ctx)
		if err != nil {
			return err
		}
		if p, on := wts[rec.Branch]; on {
			return userErr("switch to another branch there, then run the command again", "%s is checked out in %s", rec.Branch, p)
		}
		if err := l.Repo.UpdateRef(ctx, localRef, remoteTip); err != nil {
			return err
		}
	default:
		return userErr(fmt.Sprintf("look with 'git log %s %s', move %s back to %s if you want the run's result, or finish it by hand", rec.Branch, tracking, rec.Branch, short(r.StartCommit)),
			"%s moved here since the dispatch (%s, dispatched at %s); the run's result is %s", rec.Branch, short(local), short(r.StartCommit), short(remoteTip))
	}
	data, ok, err := l.Repo.ReadFile(ctx, state, "record.json")
	if err != nil {
		return err
	}
	if !ok {
		return userErr("", "the state of run %d has no record.json", r.RunID)
	}
	var there run.Record
	if err := json.Unmarshal(data, &there); err != nil {
		return fmt.Errorf("read the record of run %d: %w", r.RunID, err)
	}
	for _, a := range there.Attempts {
		if a.Ref != "" {
			a.Ref = prefix + "attempts/" + strings.TrimPrefix(a.Ref, "refs/ralph/"+rec.Change+"/attempts/")
		}
		a.Log = "" // in the run's artifact, not here
		rec.Attempts = append(rec.Attempts, a)
	}
	rec.CostUSD += there.CostUSD
	rec.CostKnown = rec.CostKnown || there.CostKnown
	rec.Status, rec.StopReason, rec.CurrentStory = there.Status, there.StopReason, there.CurrentStory
	if rec.Status == run.Running || rec.Status == run.Starting || rec.Status == "" {
		rec.Status = run.Interrupted
	}
	if rec.Initial == "" {
		rec.Initial = there.Initial
	}
	rec.Checkpoint = remoteTip
	r.LastSeenStatus = "completed"
	if learned, ok, err := l.Repo.ReadFile(ctx, state, "learnings.md"); err == nil && ok && len(strings.TrimSpace(string(learned))) > 0 {
		mine, err := l.Store.EnsureLearnings(rec.Change)
		if err != nil {
			return err
		}
		if mine != string(learned) {
			if err := appendFile(l.Store.LearningsPath(rec.Change), learned); err != nil {
				return err
			}
		}
	}
	l.Report.Step(fmt.Sprintf("brought run %d home: %s at %s (%s), %d attempt(s)", r.RunID, rec.Branch, short(remoteTip), rec.Status, len(there.Attempts)))
	return l.Save(rec)
}

func appendFile(path string, data []byte) error {
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// dispatchRefusal is why a change with this record cannot be dispatched (it is not in
// the middle of a dispatch): it is dispatched already, or it has a local run.
func dispatchRefusal(rec *run.Record) error {
	if rec.Status == run.Dispatched {
		return userErr("'git ralph status "+rec.Change+"' shows it; 'git ralph finish "+rec.Change+"' brings it home once it is over",
			"change %q is already dispatched", rec.Change)
	}
	return userErr("finish it first: 'git ralph finish "+rec.Change+" --keep' keeps the branch, and dispatch then continues from it",
		"change %q has a local run (%s)", rec.Change, rec.Status)
}
