package githubflow

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/git-ralph/git-ralph/internal/github"
	"github.com/git-ralph/git-ralph/internal/run"
	"github.com/git-ralph/git-ralph/internal/status"
	"github.com/git-ralph/git-ralph/internal/tell"
)

// Watching runs on GitHub Actions politely (docs/REMOTE.md, "Watching"): one conditional
// listing per repository and workflow per round, whatever the number of runs (an
// unchanged listing is a 304, which does not count against the rate limit), at least
// WatchInterval apart and never sooner than GitHub's x-poll-interval; a rate limit is
// waited out as GitHub says (retry-after, else a minute, doubling).

// WatchInterval is the least time between two rounds of a watch.
const WatchInterval = 10 * time.Second

// WatchOptions are the inputs of WatchRemote.
type WatchOptions struct {
	// Changes are the dispatched runs to watch (required).
	Changes []string
	// Client returns a GitHub client for a host (required).
	Client func(host string) (*github.Client, error)
	// Interval is the least time between rounds; 0 means WatchInterval.
	Interval time.Duration
	// Update, if set, is called with a run's view each time it changes, and once for
	// every run in the first round.
	Update func(change string, v *status.RemoteView)
}

// watched is one run of a watch.
type watched struct {
	rec  *run.Record
	repo github.Repo
	key  string // host/owner/name/workflow: the listing it is in
	last *status.RemoteView
}

// WatchRemote polls GitHub until every run of o.Changes is completed, and returns their
// last views, by change. Ctrl-C (ctx done) returns ErrInterrupted; the records then
// hold what was seen last. It changes nothing but those records (the run id found by
// its nonce, the last status and conclusion seen).
func (rem *Remote) WatchRemote(ctx context.Context, o WatchOptions) (map[string]*status.RemoteView, error) {
	if o.Interval <= 0 {
		o.Interval = WatchInterval
	}
	var runs []*watched
	clients := map[string]*github.Client{}
	etags := map[string]string{}
	for _, change := range o.Changes {
		rec, client, repo, err := rem.remoteRun(ctx, change, o.Client)
		if err != nil {
			return nil, interrupted(ctx, err)
		}
		clients[repo.Host] = client
		runs = append(runs, &watched{rec: rec, repo: repo,
			key: strings.ToLower(repo.String() + "/" + rec.Remote.Workflow)})
	}
	limited := 0 // rate-limit answers in a row
	for {
		wait := o.Interval
		listings := map[string][]github.WorkflowRun{}
		var rateWait time.Duration
		for _, w := range runs {
			if _, done := listings[w.key]; done || rateWait > 0 {
				continue
			}
			client := clients[w.repo.Host]
			list, p, err := client.DispatchedRunsIfChanged(ctx, w.repo, w.rec.Remote.Workflow, etags[w.key])
			if d, ok := retryWait(err, limited); ok {
				rateWait = d
				continue
			}
			if err != nil {
				return nil, interrupted(ctx, apiErr(err, w.repo, "git ralph status --watch"))
			}
			etags[w.key] = p.ETag
			wait = max(wait, p.Interval)
			if p.NotModified {
				list = nil // the views of the last round stand
			}
			listings[w.key] = list
		}
		if rateWait > 0 {
			limited++
			if err := rem.wait(ctx, rateWait); err != nil {
				return nil, tell.ErrInterrupted
			}
			continue
		}
		limited = 0
		allDone := true
		for _, w := range runs {
			list, listed := listings[w.key]
			v, err := rem.watchView(ctx, w, list, listed && list != nil, clients[w.repo.Host])
			if err != nil {
				return nil, interrupted(ctx, err)
			}
			if w.last == nil || *v != *w.last {
				w.last = v
				if o.Update != nil {
					o.Update(w.rec.Change, v)
				}
			}
			allDone = allDone && w.last.Status == "completed"
		}
		if allDone {
			out := map[string]*status.RemoteView{}
			for _, w := range runs {
				out[w.rec.Change] = w.last
			}
			return out, nil
		}
		if err := rem.wait(ctx, wait); err != nil {
			return nil, tell.ErrInterrupted
		}
	}
}

// watchView is a run's view this round: from the fresh listing when there is one (the
// run found by its id, or by the nonce in its title, which is then recorded), else
// what the last round saw. A run the listing no longer holds (more than 100 newer
// ones) is asked for by its id.
func (rem *Remote) watchView(ctx context.Context, w *watched, list []github.WorkflowRun, fresh bool, client *github.Client) (*status.RemoteView, error) {
	rec := w.rec
	if !fresh && w.last != nil {
		return w.last, nil
	}
	var found *github.WorkflowRun
	for i := range list {
		r := &list[i]
		if (rec.Remote.RunID != 0 && r.ID == rec.Remote.RunID) ||
			(rec.Remote.RunID == 0 && rec.Remote.Nonce != "" && strings.Contains(r.DisplayTitle, "["+rec.Remote.Nonce+"]")) {
			found = r
			break
		}
	}
	if found == nil && rec.Remote.RunID != 0 {
		r, err := client.Run(ctx, w.repo, rec.Remote.RunID)
		if err != nil {
			return nil, apiErr(err, w.repo, "git ralph status "+rec.Change)
		}
		found = r
	}
	v := &status.RemoteView{RunID: rec.Remote.RunID, URL: rec.Remote.HTMLURL}
	if found != nil {
		v.RunID, v.Status, v.Conclusion = found.ID, found.Status, found.Conclusion
		if found.HTMLURL != "" {
			v.URL = found.HTMLURL
		}
	}
	if w.last != nil {
		v.Tip = w.last.Tip
	}
	if w.last == nil || v.Status != w.last.Status {
		// The branch on the remote moves when the run publishes, at its end.
		if tip, ok, err := rem.Repo.RemoteRef(ctx, rec.Remote.GitRemote, "refs/heads/"+rec.Branch); err == nil && ok {
			v.Tip = tip
		}
	}
	changed := false
	if v.RunID != 0 && rec.Remote.RunID == 0 {
		rec.Remote.RunID, rec.Remote.HTMLURL, changed = v.RunID, v.URL, true
	}
	if found != nil && (rec.Remote.LastSeenStatus != v.Status || rec.Remote.LastSeenConclusion != v.Conclusion) {
		rec.Remote.LastSeenStatus, rec.Remote.LastSeenConclusion, changed = v.Status, v.Conclusion, true
	}
	if changed {
		if err := rem.save(rec); err != nil {
			return nil, err
		}
	}
	return v, nil
}

// retryWait says how long to wait before asking again after err, when err is a rate
// limit or GitHub being unavailable for a moment: retry-after, else a minute, doubling
// with each such answer in a row (at most 16 minutes).
func retryWait(err error, inRow int) (time.Duration, bool) {
	var ge *github.Error
	if !errors.As(err, &ge) || !(ge.RateLimited() || ge.StatusCode == 502 || ge.StatusCode == 503) {
		return 0, false
	}
	if ge.RetryAfter > 0 {
		return ge.RetryAfter, true
	}
	return time.Minute << min(inRow, 4), true
}

// interrupted turns the error of a watch cut short by Ctrl-C into ErrInterrupted.
func interrupted(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return tell.ErrInterrupted
	}
	return err
}

// WatchText is one line about a run's view, for status --watch and finish --wait.
func WatchText(change string, v *status.RemoteView) string {
	switch {
	case v.RunID == 0:
		return change + ": dispatched, run id pending (GitHub does not list the run yet)"
	case v.Status == "completed":
		return fmt.Sprintf("%s: run %d completed: %s", change, v.RunID, v.Conclusion)
	case v.Status == "":
		return fmt.Sprintf("%s: run %d", change, v.RunID)
	}
	return fmt.Sprintf("%s: run %d %s", change, v.RunID, v.Status)
}

// RemoteViews asks GitHub once where the dispatched runs of changes stand, for `status`
// of several runs: one listing per repository and workflow, joined to the records by run id
// or nonce, a run no longer listed asked for by id, one ls-remote per run for its tip. A
// repository that cannot be asked gives its runs an Error. It changes only the records.
func (rem *Remote) RemoteViews(ctx context.Context, changes []string, clientFor func(string) (*github.Client, error)) (map[string]*status.RemoteView, error) {
	out := map[string]*status.RemoteView{}
	listings := map[string][]github.WorkflowRun{}
	failed := map[string]error{}
	for _, change := range changes {
		rec, err := rem.Store.Load(change)
		if err != nil {
			return nil, err
		}
		if rec.Remote == nil {
			continue
		}
		fail := func(err error) {
			out[change] = &status.RemoteView{RunID: rec.Remote.RunID, URL: rec.Remote.HTMLURL, Error: err.Error()}
		}
		repo, client, err := remoteClient(rec, clientFor)
		if err != nil {
			fail(err)
			continue
		}
		w := &watched{rec: rec, repo: repo, key: strings.ToLower(repo.String() + "/" + rec.Remote.Workflow)}
		if err := failed[w.key]; err != nil {
			fail(err)
			continue
		}
		list, listed := listings[w.key]
		if !listed {
			if list, err = client.DispatchedRuns(ctx, repo, rec.Remote.Workflow); err != nil {
				failed[w.key] = apiErr(err, repo, "git ralph status "+change)
				fail(failed[w.key])
				continue
			}
			listings[w.key] = list
		}
		v, err := rem.watchView(ctx, w, list, true, client)
		if err != nil {
			fail(err)
			continue
		}
		out[change] = v
	}
	return out, nil
}
