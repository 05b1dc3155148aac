package githubflow

import (
	"context"
	"fmt"

	"github.com/git-ralph/git-ralph/internal/loop"
	"github.com/git-ralph/git-ralph/internal/run"
)

// A dispatched run can end without publishing anything (REMOTE.md §5.8 row 14): GitHub
// could not start the workflow (startup_failure), the run waits for someone's approval
// (action_required), or it was force-cancelled before its publish job. Nothing of it
// is on the remote but the start commit dispatch pushed. finish then says so and
// changes nothing; dispatch may send the change again, and start goes on here from the
// start commit.

// unpublished is the error of importRemoteRun for a run that has published nothing:
// still under way as far as anyone here knows, or, when GitHub was last seen saying it
// completed (status and status --watch record it; finish asks first), over for good.
func (l *Flow) unpublished(rec *run.Record) error {
	r := rec.Remote
	if r.LastSeenStatus != "completed" {
		return userErr("it is still running, or it ended before publishing; 'git ralph status "+rec.Change+"' shows it",
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
	return &loop.Error{Msg: fmt.Sprintf("run %d of %q ended (%s) without publishing anything", r.RunID, rec.Change, orText(r.LastSeenConclusion, "no conclusion")),
		Hint: why + "; nothing was changed, " + rec.Branch + " is still at the commit dispatched (" + short(r.StartCommit) + ")\n" +
			"dispatch it again: git ralph dispatch " + rec.Change + "\n" +
			"or run it here: git ralph start " + rec.Change,
		Err: loop.ErrNothingPublished}
}

// redispatchable reports whether a dispatched record belongs to a run that ended
// without publishing, which dispatch may replace.
func (l *Flow) redispatchable(ctx context.Context, rec *run.Record) bool {
	r := rec.Remote
	if rec.Status != run.Dispatched || r == nil || r.RunID == 0 || r.LastSeenStatus != "completed" {
		return false
	}
	_, published, err := l.Repo.RemoteRef(ctx, r.GitRemote, runsPrefix(rec.Change, r.RunID)+"state")
	return err == nil && !published
}
