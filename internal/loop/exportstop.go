package loop

import (
	"context"
	"time"

	"github.com/git-ralph/git-ralph/internal/git"
	"github.com/git-ralph/git-ralph/internal/run"
)

// How long export gives a loop of the same change that is still running (an orphan
// whose step was killed, or one still saving after the cancel's SIGINT): it waits
// DefaultStopWait for the loop to end on its own, then stops it as Ctrl-C would and
// waits DefaultKillWait more before it kills it. Together they fit GitHub's budget of
// 5 minutes from a cancel to the end of everything (DESIGN.md, issue 19).
const (
	DefaultStopWait = 30 * time.Second
	DefaultKillWait = 15 * time.Second
)

// clearKilledLoopLocks is ClearCrashLocks after a loop was killed: a git it ran may
// live on (it has a process group of its own, which a runner's kill of the loop does
// not reach) and is waited for as long as a loop would be (StopWait), not a few seconds.
func (l *Loop) clearKilledLoopLocks(ctx context.Context, rec *run.Record, again string) error {
	wait := l.LockWait
	l.LockWait = max(orDuration(wait, git.DefaultLockWait), orDuration(l.StopWait, DefaultStopWait))
	defer func() { l.LockWait = wait }()
	return l.ClearCrashLocks(ctx, rec, again)
}

func orDuration(d, def time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return def
}
