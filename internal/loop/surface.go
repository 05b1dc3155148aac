package loop

import (
	"context"
	"github.com/git-ralph/git-ralph/internal/tell"

	"github.com/git-ralph/git-ralph/internal/run"
	"github.com/git-ralph/git-ralph/internal/surface"
	"github.com/git-ralph/git-ralph/internal/trust"
)

// The trust surface around an attempt is internal/trust's: the loop hands it the
// repository, the store and its reporter, and turns its errors into the loop's.

// guard is the trust surface's checks of the runs of this loop's repository.
func (l *Loop) guard() *trust.Guard {
	return &trust.Guard{Repo: l.Repo, Store: l.Store, Report: l.Report, Save: l.Save, Relocated: l.movedSnapshot}
}

// newWatch is the trust surface around the attempts of the session's run, under the
// sandbox begin decided.
func (s *session) newWatch() *trust.Watch {
	return &trust.Watch{Guard: s.guard(), Rec: s.rec, Src: s.src, NoRefs: s.r.AllowRefChanges, Shared: s.worktree != "",
		Policy: s.policy, GatePolicy: s.gatePolicy, VerifyOff: s.r.Sandbox.VerifyOff, Driver: s.r.Driver,
		AgentFiles: agentFiles(s.src, s.Store.LearningsPath(s.r.Change))}
}

// fromTrust is err as the loop's *tell.Error when it is internal/trust's.
func fromTrust(err error) error {
	if te, ok := err.(*trust.Error); ok {
		return &tell.Error{Msg: te.Msg, Hint: te.Hint, Code: te.Code, Err: te.Err}
	}
	return err
}

// surfacePath is where the snapshot of the attempt under way is kept.
func (l *Loop) surfacePath(change string) string { return l.guard().Path(change) }

// checkSurface is trust.Guard.Check.
func (l *Loop) checkSurface(ctx context.Context, snap *surface.Snapshot, rec *run.Record, att *run.Attempt) (string, error) {
	reason, err := l.guard().Check(ctx, snap, rec, att)
	return reason, fromTrust(err)
}

// restoreSurface is trust.Guard.Restore.
func (l *Loop) restoreSurface(ctx context.Context, snap *surface.Snapshot, rec *run.Record, id string, trustCurrent bool) ([]surface.Change, error) {
	changes, err := l.guard().Restore(ctx, snap, rec, id, trustCurrent)
	return changes, fromTrust(err)
}

// errReadAgain is trust.ReadAgain.
func errReadAgain(change, again string) error { return fromTrust(trust.ReadAgain(change, again)) }

// CheckCrashedSurface is the check a finish makes of a run whose loop was killed during an
// attempt: the surface saved before it is compared and restored, and when the config
// had changed the finish stops, to be run again.
func (l *Loop) CheckCrashedSurface(ctx context.Context, rec *run.Record, again string) error {
	return fromTrust(l.guard().CheckCrashed(ctx, rec, again))
}

// runStamps is surface.Options.Others: the store's stamps of every change.
func (l *Loop) runStamps(except string) map[string]string { return l.guard().Stamps(except) }

// dropSurface forgets the snapshot of an attempt that has been checked.
func (l *Loop) dropSurface(change string) { l.guard().Drop(change) }

// resumeSurface is trust.Guard.Resume.
func (l *Loop) resumeSurface(ctx context.Context, rec *run.Record, trustCurrent bool) (reason string, config bool, err error) {
	reason, config, err = l.guard().Resume(ctx, rec, trustCurrent)
	return reason, config, fromTrust(err)
}

// afterGate is trust.Watch.AfterGate.
func (s *session) afterGate(ctx context.Context, snap *surface.Snapshot) (string, error) {
	why, err := s.watch.AfterGate(ctx, snap)
	return why, fromTrust(err)
}

// recordedHook is trust.RecordedHook.
func (l *Loop) recordedHook(snap *surface.Snapshot, name string) ([]byte, bool) {
	return trust.RecordedHook(snap, name)
}
