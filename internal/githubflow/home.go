package githubflow

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/git-ralph/git-ralph/internal/git"
	"github.com/git-ralph/git-ralph/internal/loop"
	"github.com/git-ralph/git-ralph/internal/repofile"
	"github.com/git-ralph/git-ralph/internal/run"
	"github.com/git-ralph/git-ralph/internal/tell"
)

// A run on GitHub Actions comes home: finish and start, through loop.RemoteRuns, take
// its published result into the local record.

// importRemoteRun brings home the result of a run on GitHub Actions once it has published
// (docs/REMOTE.md, "Home"): the branch and the run's refs fetched, checked against the
// start commit and the record, the local branch fast-forwarded, the record and learnings
// taken from the state commit. The record is then an ordinary local one.
func (fl *Flow) importRemoteRun(ctx context.Context, rec *run.Record) error {
	r := rec.Remote
	if rec.Status == run.Dispatching || r == nil {
		return tell.UserErr("run 'git ralph dispatch "+rec.Change+"' again: it finds the run, or dispatches it once",
			"the dispatch of %q did not complete", rec.Change)
	}
	if r.RunID == 0 {
		return tell.UserErr("'git ralph status "+rec.Change+"' looks for it", "the Actions run of %q is not known yet", rec.Change)
	}
	prefix := runsPrefix(rec.Change, r.RunID)
	tracking := "refs/remotes/" + r.GitRemote + "/" + rec.Branch
	state, there, err := fl.fetchRemoteRun(ctx, rec, prefix, tracking)
	if err != nil {
		return err
	}
	remoteTip, err := fl.takeRemoteBranch(ctx, rec, tracking)
	if err != nil {
		return err
	}
	addRemoteRun(rec, there, prefix)
	rec.Stop(there.Status, there.StopReason, nil)
	rec.StopCause = there.StopCause // checked as text, as the reason is (validateRecord)
	rec.CurrentStory = there.CurrentStory
	if rec.Status == run.Running || rec.Status == run.Starting || rec.Status == "" {
		rec.Status = run.Interrupted
	}
	rec.Checkpoint = remoteTip
	r.LastSeenStatus = "completed"
	if err := fl.takeLearnings(ctx, rec, state); err != nil {
		return err
	}
	fl.Loop.Report.Step(fmt.Sprintf("brought run %d home: %s at %s (%s), %d attempt(s)", r.RunID, rec.Branch, loop.Short(remoteTip), rec.Status, len(there.Attempts)))
	return fl.Loop.Save(rec)
}

// fetchRemoteRun fetches the run's branch (to tracking) and its refs (under prefix),
// once it has published, and reads its state commit and the record there. The record
// is input: checked before anything of it, or of the run's branch, is taken here; a bad
// one leaves the repository as the fetch found it.
func (fl *Flow) fetchRemoteRun(ctx context.Context, rec *run.Record, prefix, tracking string) (state string, there *run.Record, err error) {
	r := rec.Remote
	// Asked first, so that a run still under way leaves even the remote-tracking refs alone.
	if _, published, err := fl.Repo.RemoteRef(ctx, r.GitRemote, prefix+"state"); err != nil {
		return "", nil, &tell.Error{Msg: fmt.Sprintf("cannot read the run of %q from %s", rec.Change, r.GitRemote), Hint: errText(err), Err: err}
	} else if !published {
		return "", nil, fl.unpublished(rec)
	}
	// What the fetch changes here, to put back when the record turns out bad.
	before, err := fl.Repo.Refs(ctx, prefix)
	if err != nil {
		return "", nil, err
	}
	trackingWas, trackingExisted, err := fl.Repo.ResolveRef(ctx, tracking)
	if err != nil {
		return "", nil, err
	}
	if err := fl.Repo.FetchRefs(ctx, r.GitRemote, []string{"+refs/heads/" + rec.Branch + ":" + tracking, "+" + prefix + "*:" + prefix + "*"}); err != nil {
		return "", nil, &tell.Error{Msg: fmt.Sprintf("cannot fetch the run of %q from %s", rec.Change, r.GitRemote), Hint: errText(err), Err: err}
	}
	state, ok, err := fl.Repo.ResolveRef(ctx, prefix+"state")
	if err != nil {
		return "", nil, err
	}
	if !ok {
		return "", nil, tell.UserErr("it is still running, or it ended before publishing; 'git ralph status "+rec.Change+"' shows it",
			"run %d of %q has published nothing yet", r.RunID, rec.Change)
	}
	there, err = fl.readRemoteRecord(ctx, state, rec.Change, r.RunID)
	if err == nil {
		err = fl.checkInitial(ctx, rec, there)
	}
	if err != nil {
		fl.unfetch(ctx, prefix, before, tracking, trackingWas, trackingExisted)
		return "", nil, err
	}
	return state, there, nil
}

// takeRemoteBranch brings the run's branch, fetched to tracking, home: it must descend
// from the commit the run started from, and the local branch is made, left where it is
// already, or fast-forwarded from that commit (when no worktree has it checked out).
func (fl *Flow) takeRemoteBranch(ctx context.Context, rec *run.Record, tracking string) (string, error) {
	r := rec.Remote
	remoteTip, ok, err := fl.Repo.ResolveRef(ctx, tracking)
	if err != nil {
		return "", err
	}
	if !ok {
		return "", tell.UserErr("", "%s is gone from %s", rec.Branch, r.GitRemote)
	}
	if in, err := fl.Repo.IsAncestor(ctx, r.StartCommit, remoteTip); err != nil {
		return "", err
	} else if !in {
		return "", tell.UserErr(fmt.Sprintf("someone pushed over it; look with 'git log %s %s' and keep what you want", loop.Short(r.StartCommit), tracking),
			"%s on %s (%s) does not descend from the commit the run started from (%s)", rec.Branch, r.GitRemote, loop.Short(remoteTip), loop.Short(r.StartCommit))
	}
	localRef := "refs/heads/" + rec.Branch
	local, exists, err := fl.Repo.ResolveRef(ctx, localRef)
	if err != nil {
		return "", err
	}
	switch {
	case !exists:
		return remoteTip, fl.Repo.CreateRef(ctx, localRef, remoteTip)
	case local == remoteTip:
		return remoteTip, nil
	case local == r.StartCommit:
		wts, err := fl.Repo.WorktreeBranches(ctx)
		if err != nil {
			return "", err
		}
		if p, on := wts[rec.Branch]; on {
			return "", tell.UserErr("switch to another branch there, then run the command again", "%s is checked out in %s", rec.Branch, p)
		}
		return remoteTip, fl.Repo.UpdateRef(ctx, localRef, remoteTip)
	}
	return "", tell.UserErr(fmt.Sprintf("look with 'git log %s %s', move %s back to %s if you want the run's result, or finish it by hand", rec.Branch, tracking, rec.Branch, loop.Short(r.StartCommit)),
		"%s moved here since the dispatch (%s, dispatched at %s); the run's result is %s", rec.Branch, loop.Short(local), loop.Short(r.StartCommit), loop.Short(remoteTip))
}

// takeLearnings appends the learnings of the run's state commit to the change's, unless
// they are there already; learnings over the limit are left out, with a warning.
func (fl *Flow) takeLearnings(ctx context.Context, rec *run.Record, state string) error {
	learned, size, ok, err := fl.Repo.ReadFile(ctx, state, "learnings.md", maxLearnedBytes)
	switch {
	case err != nil || !ok || len(strings.TrimSpace(string(learned))) == 0:
		return nil
	case size > maxLearnedBytes:
		fl.Loop.Report.Warn(fmt.Sprintf("the learnings of run %d are %s, more than the %s git-ralph takes: left out (git show %s:learnings.md has them)",
			rec.Remote.RunID, repofile.Size(size), repofile.Size(maxLearnedBytes), loop.Short(state)))
		return nil
	}
	if err := fl.Store.EnsureLearnings(rec.Change); err != nil {
		return err
	}
	if path := fl.Store.LearningsPath(rec.Change); !endsWith(fl.Store, path, learned) {
		return fl.Store.Append(path, learned)
	}
	return nil
}

// addRemoteRun adds to rec what the run on GitHub did (there, from its state commit,
// validated): its attempts, their refs renamed under prefix and their logs left in the
// artifact. The cost and the tokens are those of the attempts, summed here: the
// record's totals are never taken.
func addRemoteRun(rec, there *run.Record, prefix string) {
	for _, a := range there.Attempts {
		if a.Ref != "" {
			a.Ref = prefix + "attempts/" + strings.TrimPrefix(a.Ref, "refs/ralph/"+rec.Change+"/attempts/")
		}
		a.Log = "" // in the run's artifact, not here
		rec.Attempts = append(rec.Attempts, a)
	}
	rec.SumAttempts()
}

// checkInitial settles the initial state commit of a run brought home, before anything
// of the run is taken: the one recorded here, else the one found from the start commit
// dispatch pushed (initialOf), never the record's; a record that names another is
// refused naming the field. A run with none (its branch began from another commit than
// the one recorded) keeps none: the record's is not taken either.
func (fl *Flow) checkInitial(ctx context.Context, rec, there *run.Record) error {
	if rec.Initial == "" {
		found, err := fl.initialOf(ctx, rec.Change, rec.Remote.StartCommit, rec.OriginalCommit)
		if err != nil {
			return err
		}
		rec.Initial = found
	}
	if there.Initial == "" || rec.Initial == "" || there.Initial == rec.Initial {
		return nil
	}
	err := &RecordError{RunID: rec.Remote.RunID, Field: "initialCommit",
		Why: fmt.Sprintf("is %s, not the run's initial state commit %s", loop.Short(there.Initial), loop.Short(rec.Initial))}
	return &tell.Error{Msg: err.Error(), Hint: "nothing of it was taken; look at the run on GitHub, or at its artifact ('git ralph logs " + rec.Change + "')", Err: err}
}

// readRemoteRecord reads and checks the record.json of a run's state commit.
func (fl *Flow) readRemoteRecord(ctx context.Context, state, change string, runID int64) (*run.Record, error) {
	data, size, ok, err := fl.Repo.ReadFile(ctx, state, "record.json", maxRecordBytes)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, tell.UserErr("", "the state of run %d has no record.json", runID)
	}
	if size > maxRecordBytes { // not read past the limit
		err := &RecordError{RunID: runID, Field: "record.json", Why: fmt.Sprintf("is %d bytes, more than %d", size, maxRecordBytes)}
		return nil, &tell.Error{Msg: err.Error(), Hint: "nothing of it was taken; look at the run on GitHub, or at its artifact ('git ralph logs " + change + "')", Err: err}
	}
	var there run.Record
	if err := json.Unmarshal(data, &there); err != nil {
		return nil, tell.UserErr("the run's refs were left as they were; look at its artifact ('git ralph logs "+change+"')",
			"the record of run %d is not valid: %v", runID, err).WithCause(err)
	}
	if err := validateRecord(&there, len(data), change, runID); err != nil {
		return nil, &tell.Error{Msg: err.Error(), Hint: "nothing of it was taken; look at the run on GitHub, or at its artifact ('git ralph logs " + change + "')", Err: err}
	}
	return &there, nil
}

// unfetch puts back the refs a fetch of a run changed: those under prefix that were not
// there before, and the remote-tracking ref. It runs on the way out of an error, whose
// return it does not change: a ref it cannot put back is said in a warning.
func (fl *Flow) unfetch(ctx context.Context, prefix string, before []git.Ref, tracking, was string, existed bool) {
	warn := func(ref string, err error) {
		fl.Loop.Report.Warn(fmt.Sprintf("could not put back %s after the refused record (%v): it is left as the fetch made it", ref, err))
	}
	now, err := fl.Repo.Refs(ctx, prefix)
	if err != nil {
		warn(prefix+"*", err)
	}
	old := map[string]string{}
	for _, r := range before {
		old[r.Name] = r.ID
	}
	for _, r := range now {
		if id, ok := old[r.Name]; !ok {
			if err := fl.Repo.DeleteRef(ctx, r.Name); err != nil {
				warn(r.Name, err)
			}
		} else if id != r.ID {
			if err := fl.Repo.UpdateRef(ctx, r.Name, id); err != nil {
				warn(r.Name, err)
			}
		}
	}
	if existed {
		err = fl.Repo.UpdateRef(ctx, tracking, was)
	} else {
		err = fl.Repo.DeleteRef(ctx, tracking)
	}
	if err != nil {
		warn(tracking, err)
	}
}

// endsWith reports whether the file at path ends with data (a run's learnings brought
// home already), reading no more of it than data's length.
func endsWith(store *run.Store, path string, data []byte) bool {
	f, err := store.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil || st.Size() < int64(len(data)) {
		return false
	}
	end := make([]byte, len(data))
	_, err = f.ReadAt(end, st.Size()-int64(len(data)))
	return err == nil && bytes.Equal(end, data)
}

// A dispatched run can end without publishing anything (docs/REMOTE.md, "Failure modes"): GitHub
// could not start the workflow (startup_failure), the run waits for someone's approval
// (action_required), or it was force-cancelled before its publish job. Nothing of it
// is on the remote but the start commit dispatch pushed. finish then says so and
// changes nothing; dispatch may send the change again, and start goes on here from the
// start commit.

// unpublished is the error of importRemoteRun for a run that has published nothing:
// still under way as far as anyone here knows, or, when GitHub was last seen saying it
// completed (status and status --watch record it; finish asks first), over for good.
func (fl *Flow) unpublished(rec *run.Record) error {
	r := rec.Remote
	if r.LastSeenStatus != "completed" {
		return tell.UserErr("it is still running, or it ended before publishing; 'git ralph status "+rec.Change+"' shows it",
			"run %d of %q has published nothing yet", r.RunID, rec.Change)
	}
	why := "GitHub shows why"
	switch r.LastSeenConclusion {
	case "startup_failure":
		why = "the workflow could not start; GitHub shows why"
	case "action_required":
		why = "the run waited for an approval on GitHub"
	}
	if r.HTMLURL != "" {
		why += " (" + r.HTMLURL + ")"
	}
	return &tell.Error{Msg: fmt.Sprintf("run %d of %q ended (%s) without publishing anything", r.RunID, rec.Change, orText(r.LastSeenConclusion, "no conclusion")),
		Hint: why + "; nothing was changed, " + rec.Branch + " is still at the commit dispatched (" + loop.Short(r.StartCommit) + ")\n" +
			"dispatch it again: git ralph dispatch " + rec.Change + "\n" +
			"or run it here: git ralph start " + rec.Change,
		Err: errNothingPublished}
}

// redispatchable reports whether a dispatched record belongs to a run that ended
// without publishing, which dispatch may replace.
func (fl *Flow) redispatchable(ctx context.Context, rec *run.Record) bool {
	r := rec.Remote
	if rec.Status != run.Dispatched || r == nil || r.RunID == 0 || r.LastSeenStatus != "completed" {
		return false
	}
	_, published, err := fl.Repo.RemoteRef(ctx, r.GitRemote, runsPrefix(rec.Change, r.RunID)+"state")
	return err == nil && !published
}
