package loop

import (
	"context"
	"fmt"

	"github.com/git-ralph/git-ralph/internal/run"
)

// RemoteRuns brings into this loop what a run made elsewhere (on GitHub Actions) did:
// internal/githubflow implements it and the CLI sets it (Loop.Remote), so that this
// package knows nothing of GitHub. A Loop without it refuses such runs.
type RemoteRuns interface {
	// Adopt rebuilds a lost (or never written) run record of r (what Start resolved)
	// from the change's branch, for start --adopt on a runner.
	Adopt(ctx context.Context, l *Loop, r *Resolved) (*run.Record, error)
	// Initial returns the trailers of the "initial state" commit of ralph/<name>, nil when
	// there is none: what says which source a run to adopt is (source.Repo.Initial).
	Initial(ctx context.Context, l *Loop) func(name string) map[string]string
	// Import brings home the result of a dispatched run once it has published: the
	// branch, the attempts, the record and the learnings go into rec, which is then an
	// ordinary local record. A run that ended without publishing anything is an error.
	Import(ctx context.Context, l *Loop, rec *run.Record) error
	// Resume is Import for start to go on from: a run that ended without publishing
	// becomes a local one at the commit dispatch made.
	Resume(ctx context.Context, l *Loop, rec *run.Record) error
}

func (l *Loop) adopt(ctx context.Context, r *Resolved) (*run.Record, error) {
	if l.Remote == nil {
		return nil, fmt.Errorf("start --adopt of %q: no way to adopt a run here", r.Change)
	}
	return l.Remote.Adopt(ctx, l, r)
}

func (l *Loop) importRemoteRun(ctx context.Context, rec *run.Record) error {
	if l.Remote == nil {
		return fmt.Errorf("the run of %q is on GitHub Actions: no way to bring it home here", rec.Change)
	}
	return l.Remote.Import(ctx, l, rec)
}

func (l *Loop) resumeRemoteRun(ctx context.Context, rec *run.Record) error {
	if l.Remote == nil {
		return fmt.Errorf("the run of %q is on GitHub Actions: no way to bring it home here", rec.Change)
	}
	return l.Remote.Resume(ctx, l, rec)
}
