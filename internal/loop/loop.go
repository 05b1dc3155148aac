// Package loop is one run of the Ralph loop in a working tree: the initial state
// commit, attempts, checkpoints, the trust surface around them, saving and restoring
// failed attempts, resuming, the finish pipeline, and the run locks;
// for a run in a linked worktree of its own (start --worktree), what the loop reads of
// it (worktree.go; its state is the record's, run.Record.WorktreeState), while making
// and finishing one is internal/wtrun's (Loop.Worktrees).
//
// What is not the loop's lives beside it: how a run looks from outside (status, list) in
// internal/status, a run's record of its task source in internal/source, the questions
// about one record or the store in internal/run, the prompt and its learnings in
// internal/prompt, the checks before anything changes in internal/preflight, the
// judge's run in internal/judge.
//
// Who owns what: a Loop holds what one repository's commands need (the repository, the
// run store, the reporter, the clocks, the workflows built on it); start.Options are
// start's flags as the user gave them, which the CLI's start command embeds; Start
// resolves them once into a Resolved (start.go); a session (session.go) owns one run at work, its
// record, its task source and what one attempt hands the next (attempt.go); the limits
// of a run are checked in limits.go.
//
// It never prints. Progress goes through a tell.Reporter (internal/term implements it),
// and failures come back as errors, most of them *tell.Error with a hint for the user.
//
// It knows nothing of GitHub and must not import internal/github or internal/githubflow,
// where the GitHub workflows (finish --pr, dispatch, remote runs, the runner's side) are
// built on this package. Where a run made on GitHub Actions meets the loop (start
// --adopt on a runner; start and finish of a dispatched run at home) the loop calls
// through Loop.Remote, a RemoteRuns the CLI sets.
package loop

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/git-ralph/git-ralph/internal/agent"
	"github.com/git-ralph/git-ralph/internal/git"
	"github.com/git-ralph/git-ralph/internal/gitdir"
	"github.com/git-ralph/git-ralph/internal/run"
	"github.com/git-ralph/git-ralph/internal/source"
	"github.com/git-ralph/git-ralph/internal/tell"
)

// Loop runs and finishes Ralph loops in one repository.
type Loop struct {
	Repo   *git.Repo     // required
	Store  *run.Store    // required
	Report tell.Reporter // required
	Now    func() time.Time
	// Remote brings home runs made on GitHub Actions and adopts them on a runner; nil
	// refuses them.
	Remote RemoteRuns
	// Worktrees makes, runs and finishes runs in a worktree of their own (start
	// --worktree); nil refuses them.
	Worktrees WorktreeRuns
	// Sources are the kinds of task source an argument may name (the CLI's list: the
	// built-in ones and those that need something from outside); nil: source.Builtin().
	Sources source.Kinds
	// OntoMoved lets finish --squash and --pr go on when the original branch no longer
	// points where the run recorded it (finish --onto-moved).
	OntoMoved bool
	// Driver, when set, runs the stories instead of the driver Options.Agent names (the
	// demo's agent, a custom agent's command from git config). It is never chosen from
	// a file in the repository.
	Driver agent.Driver
	// JudgeDriver, when set, judges instead of the driver Options.Judge names (a custom
	// judge's command from git config); never chosen from a file in the repository.
	JudgeDriver agent.Driver
	// Kill is closed on a second Ctrl-C: the agent is killed at once.
	Kill  <-chan struct{}
	Waits Waits // what tests change; zero in the product

	// worktree is the linked worktree this Loop works in, for a worktree run (In).
	worktree string
	// moved is the git directory of an in-place run while it is out of the working
	// tree (gitdir.go).
	moved *gitdir.Moved
}

// Sleep waits d or until ctx is done (then it returns ctx.Err()).
func Sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// Waits are what tests change in a Loop: its waits and the clock of the user's limits.
// The zero value is the product's.
type Waits struct {
	// Sleep, if not nil, waits d or until ctx is done (then it returns ctx.Err()), so
	// that the minutes of a backoff pass at once. nil is Sleep, a real timer.
	Sleep func(ctx context.Context, d time.Duration) error
	// LockMinAge and LockWait tune how a crash-resume tells a stale git lock file
	// from one in use (git.LockCheck); zero means the defaults, a few seconds each.
	LockMinAge, LockWait time.Duration
	// Clock measures the user's limits: --timeout, --idle-timeout and --deadline.
	// nil is the wall clock; the test binary's moves only when a test says so.
	Clock agent.Clock
}

// Wait is Sleep, or l.Waits.Sleep when set.
func (l *Loop) Wait(ctx context.Context, d time.Duration) error {
	if l.Waits.Sleep != nil {
		return l.Waits.Sleep(ctx, d)
	}
	return Sleep(ctx, d)
}

// backoff is the wait before each retry of a transient API error (not a story retry).
func (l *Loop) backoff() []time.Duration {
	return []time.Duration{30 * time.Second, 2 * time.Minute, 10 * time.Minute}
}

// New returns a Loop over repo whose state lives in repo's common dir.
func New(repo *git.Repo, rep tell.Reporter) *Loop {
	return &Loop{Repo: repo, Store: run.NewStore(repo.CommonDir), Report: rep, Now: time.Now}
}

// BranchName is the branch a change's loop works on.
func BranchName(change string) string { return "ralph/" + change }

// AttemptRef is the ref that keeps attempt n at story of change.
func AttemptRef(change, story string, n int) string {
	return fmt.Sprintf("refs/ralph/%s/attempts/%s-%d", change, story, n)
}

// BackupRef is the ref under which a change's work is kept at t.
func BackupRef(change string, t time.Time) string {
	return fmt.Sprintf("refs/ralph/%s/backup/%d", change, t.Unix())
}

func stagedRef(change string, t time.Time) string {
	return fmt.Sprintf("refs/ralph/%s/staged/%d", change, t.Unix())
}

// freeRef is base when no ref has that name, else the first of base-1, base-2, … that
// is free: a second backup in the same second keeps the first.
func (l *Loop) freeRef(ctx context.Context, base string) (string, error) {
	ref := base
	for i := 1; ; i++ {
		if _, ok, err := l.Repo.ResolveRef(ctx, ref); err != nil || !ok {
			return ref, err
		}
		ref = fmt.Sprintf("%s-%d", base, i)
	}
}

// Short is a commit id cut to 7 characters.
func Short(id string) string {
	if len(id) > 7 {
		return id[:7]
	}
	return id
}

// Time is the loop's clock: l.Now, else the wall clock.
func (l *Loop) Time() time.Time {
	if l.Now == nil {
		return time.Now()
	}
	return l.Now()
}

// Save writes rec, stamped with the loop's clock.
func (l *Loop) Save(rec *run.Record) error {
	if err := l.Store.Save(rec, l.Time()); err != nil {
		return fmt.Errorf("save run record: %w", err)
	}
	return nil
}

// SaveFinished records how the run of f.Change ended (finished.json, which status
// shows once the record is gone). The finish is done by then: a failed write is said,
// not returned.
func (l *Loop) SaveFinished(f run.Finished) {
	if err := l.Store.SaveFinished(f); err != nil {
		l.Report.Warn(fmt.Sprintf("could not record how the run of %s ended (%v): 'git ralph status %s' will not show it", f.Change, err, f.Change))
	}
}

// Tail returns the last n lines of s, trimmed.
func Tail(s string, n int) string {
	s = strings.TrimRight(s, "\n \t\r")
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
