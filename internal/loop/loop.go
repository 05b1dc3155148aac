// Package loop is the orchestrator of the Ralph loop: it is the only package that knows
// the whole story of a run — preflight, the initial state commit, attempts, checkpoints,
// saving and restoring failed attempts, resuming, and finishing.
//
// It never prints. Progress goes through a Reporter (internal/term implements it), and
// failures come back as errors, most of them *Error with a hint for the user.
package loop

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/git-ralph/git-ralph/internal/git"
	"github.com/git-ralph/git-ralph/internal/run"
)

// Reporter receives a loop's progress as it happens.
type Reporter interface {
	Step(msg string)                                           // something git-ralph did
	Warn(msg string)                                           // something to look at
	Attempt(index, total int, story, title string, n, max int) // an attempt begins
	AgentText(text string)                                     // the agent's words, live
	AgentTool(name, summary string)                            // a tool call of the agent
	Outcome(ok bool, msg string)                               // how an attempt ended
}

// Error is a failure the user can act on. The CLI prints it as git does:
// "error: <Msg>" then one "hint: <line>" per line of Hint.
type Error struct {
	Msg  string
	Hint string
	Code int // exit code; 0 means 1
	Err  error
}

func (e *Error) Error() string { return e.Msg }

// Unwrap returns the underlying error, if any.
func (e *Error) Unwrap() error { return e.Err }

// Hints returns the hint lines.
func (e *Error) Hints() []string {
	if e.Hint == "" {
		return nil
	}
	return strings.Split(e.Hint, "\n")
}

// ExitCode is the process exit code this error asks for.
func (e *Error) ExitCode() int {
	if e.Code == 0 {
		return 1
	}
	return e.Code
}

func userErr(hint, format string, args ...any) *Error {
	return &Error{Msg: fmt.Sprintf(format, args...), Hint: hint}
}

// Loop runs and finishes Ralph loops in one repository.
type Loop struct {
	Repo   *git.Repo  // required
	Store  *run.Store // required
	Report Reporter   // required
	Now    func() time.Time

	// worktree is the linked worktree this Loop works in, for a worktree run.
	worktree string
	// taken holds the attempt refs that existed when the loop began working.
	taken map[string]bool
	// Sleep waits d or until ctx is done (then it returns ctx.Err()). Tests replace it
	// so that the minutes of a backoff pass at once.
	Sleep func(ctx context.Context, d time.Duration) error
	// Backoff is the wait before each retry of a transient API error; such retries do
	// not use a story retry. Nil means 30s, 2m, 10m.
	Backoff []time.Duration

	// LockMinAge and LockWait tune how a crash-resume tells a stale git lock file
	// from one in use (git.LockCheck); zero means the defaults, a few seconds each.
	LockMinAge, LockWait time.Duration

	// StopWait and KillWait tune how export deals with a loop of the same change that
	// is still running: how long it waits for it to end, and then, once it has sent
	// it SIGINT, for it to save and exit before it is killed; zero means
	// DefaultStopWait and DefaultKillWait.
	StopWait, KillWait time.Duration
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

func (l *Loop) sleep(ctx context.Context, d time.Duration) error {
	if l.Sleep != nil {
		return l.Sleep(ctx, d)
	}
	return sleepCtx(ctx, d)
}

func (l *Loop) backoff() []time.Duration {
	if l.Backoff != nil {
		return l.Backoff
	}
	return []time.Duration{30 * time.Second, 2 * time.Minute, 10 * time.Minute}
}

// New returns a Loop over repo whose state lives in repo's common dir.
func New(repo *git.Repo, rep Reporter) *Loop {
	return &Loop{Repo: repo, Store: run.NewStore(repo.CommonDir), Report: rep, Now: time.Now}
}

// BranchName is the branch a change's loop works on.
func BranchName(change string) string { return "ralph/" + change }

func attemptRef(change, story string, n int) string {
	return fmt.Sprintf("refs/ralph/%s/attempts/%s-%d", change, story, n)
}

func backupRef(change string, t time.Time) string {
	return fmt.Sprintf("refs/ralph/%s/backup/%d", change, t.Unix())
}

func stagedRef(change string, t time.Time) string {
	return fmt.Sprintf("refs/ralph/%s/staged/%d", change, t.Unix())
}

func short(id string) string {
	if len(id) > 7 {
		return id[:7]
	}
	return id
}

func (l *Loop) now() time.Time {
	if l.Now == nil {
		return time.Now()
	}
	return l.Now()
}

func (l *Loop) save(rec *run.Record) error {
	if err := l.Store.Save(rec, l.now()); err != nil {
		return fmt.Errorf("save run record: %w", err)
	}
	return nil
}

// tail returns the last n lines of s, trimmed.
func tail(s string, n int) string {
	s = strings.TrimRight(s, "\n \t\r")
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
