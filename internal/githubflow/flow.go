// Package githubflow holds git-ralph's GitHub workflows, built on the local loop
// (internal/loop) and the GitHub client (internal/github), one file each:
//
//   - pr.go, prbody.go: finish --pr pushes the run's branch and opens or updates its
//     pull request, with a body written from the run;
//   - dispatch.go: dispatch makes and pushes the start commit, asks GitHub to run the
//     workflow and finds the run again by its nonce;
//   - remote.go, watch.go, joblog.go: a dispatched run seen from here: status,
//     status --watch and dispatch --wait, cancel, logs (the artifact's, else the job's);
//   - home.go: finish and start of a dispatched run bring its published result home;
//   - prune.go: finish --prune-remote deletes the run's refs on the remote;
//   - issues.go: GitHub issues as a task source: an issue and its sub-issues read
//     for a run, a label queue's choice and claims, progress told back after a
//     checkpoint (ticked boxes, one comment per story);
//   - runner.go, exportstop.go: the runner's side: start --adopt, export (which waits
//     for, then stops, a loop of the change still running) and publish.
//
// Each workflow's type says what it depends on. Remote holds those that only look at
// or act on a dispatched run through GitHub and the run records (remote status, status
// --watch and dispatch --wait, RemoteViews, PublishedChange, logs, cancel, finish
// --prune-remote): a repository, its store, a clock and a wait, and the GitHub client
// the caller passes; no *loop.Loop is reachable from it. Flow holds those that run,
// resume or finish the local loop (finish --pr, dispatch, start --adopt, export, and the
// import of a published run): the loop as its field Loop, used through its exported
// methods, and the Remote over that loop's repository and records. The loop reaches
// back only through loop.RemoteRuns (Runs), so this package depends on internal/loop
// and never the reverse.
//
// It never prints (Flow's progress goes to the loop's Reporter, failures come back as
// *tell.Error), runs git only through internal/git and talks to GitHub only through
// internal/github. Only internal/cli imports it.
package githubflow

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/git-ralph/git-ralph/internal/git"
	"github.com/git-ralph/git-ralph/internal/loop"
	"github.com/git-ralph/git-ralph/internal/run"
	"github.com/git-ralph/git-ralph/internal/source"
)

// Remote holds the workflows that look at or act on a run on GitHub Actions through
// GitHub and the run records, and never run the loop: remote status, status --watch and
// dispatch --wait (WatchRemote), RemoteViews, PublishedChange, logs, cancel, and finish
// --prune-remote (RemotePruneTarget, PruneRemote). They take the GitHub client from the
// caller (clientFor, a host's client); no *loop.Loop is reachable from here.
type Remote struct {
	Repo  *git.Repo  // required: the repository the runs were dispatched from
	Store *run.Store // required: its run records
	// Now is the clock of the records written (the run id found, the state last seen);
	// nil is time.Now.
	Now func() time.Time
	// Sleep waits d or until ctx is done (then it returns ctx.Err()): the waits between
	// polls and after a rate limit. nil is a real timer; tests make them pass at once.
	Sleep func(ctx context.Context, d time.Duration) error
}

// ResolveRun picks the run a command means, as the loop does (loop.ResolveRunIn).
func (rem *Remote) ResolveRun(name string) (string, error) {
	return source.ResolveRunIn(rem.Repo.Root, rem.Store, name)
}

// LoadRun is the run a command means (ResolveRun): its name and its record.
func (rem *Remote) LoadRun(name string) (string, *run.Record, error) {
	change, err := rem.ResolveRun(name)
	if err != nil {
		return "", nil, err
	}
	rec, err := rem.Store.Load(change)
	return change, rec, err
}

// save writes rec, stamped with the clock.
func (rem *Remote) save(rec *run.Record) error {
	now := time.Now
	if rem.Now != nil {
		now = rem.Now
	}
	if err := rem.Store.Save(rec, now()); err != nil {
		return fmt.Errorf("save run record: %w", err)
	}
	return nil
}

// wait waits d or until ctx is done (then it returns ctx.Err()), with Sleep when set.
func (rem *Remote) wait(ctx context.Context, d time.Duration) error {
	if rem.Sleep != nil {
		return rem.Sleep(ctx, d)
	}
	return loop.Sleep(ctx, d)
}

// Flow holds the workflows that run, resume or finish the local loop: finish --pr
// (FinishPR), dispatch (PrepareDispatch, Dispatch), the runner's start --adopt and
// export, and the import of a published run that finish and start make through
// loop.RemoteRuns (Runs). They act on the loop through Loop's exported methods. A Flow
// is also the Remote over the loop's own repository, records, clock and waits (On
// keeps them the same), for what it asks GitHub.
type Flow struct {
	Remote
	Loop *loop.Loop // required
	// StopWait and KillWait tune how export deals with a loop of the same change that
	// is still running: how long it waits for it to end, and then, once it has sent
	// it SIGINT, for it to save and exit before it is killed; zero means
	// DefaultStopWait and DefaultKillWait.
	StopWait, KillWait time.Duration
}

// On returns the GitHub workflows over l.
func On(l *loop.Loop) *Flow {
	return &Flow{Remote: Remote{Repo: l.Repo, Store: l.Store, Now: l.Now, Sleep: l.Waits.Sleep}, Loop: l}
}

// Runs is how the local loop brings home a run made on GitHub Actions (loop.RemoteRuns):
// the CLI sets it on every Loop it makes.
var Runs loop.RemoteRuns = runs{}

type runs struct{}

func (runs) Adopt(ctx context.Context, l *loop.Loop, r *loop.Resolved) (*run.Record, error) {
	return On(l).adopt(ctx, r)
}

func (runs) Initial(ctx context.Context, l *loop.Loop) func(string) map[string]string {
	return initialTrailers(ctx, l.Repo)
}

func (runs) Import(ctx context.Context, l *loop.Loop, rec *run.Record) error {
	return On(l).importRemoteRun(ctx, rec)
}

func (runs) Resume(ctx context.Context, l *loop.Loop, rec *run.Record) error {
	return On(l).resumeRemoteRun(ctx, rec)
}

// The small helpers below are the workflows' own; the loop's are exported (loop.Short,
// tell.UserErr, …).

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return s
}

func orText(s, alt string) string {
	if s == "" {
		return alt
	}
	return s
}
