// Package trust is a run's use of the trust surface (internal/surface) around its
// attempts: recorded right before the agent starts (and saved, for a crash-resume),
// compared right after it ends and again right before the verify gate, restored when the
// agent changed it; the run's records compared with what git-ralph last wrote of them;
// and the crash-resume's check of a snapshot a killed run saved. It prints through the
// loop's reporter and returns the user's errors as *Error, which the loop turns into its
// own.
package trust

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/git-ralph/git-ralph/internal/git"
	"github.com/git-ralph/git-ralph/internal/run"
	"github.com/git-ralph/git-ralph/internal/source"
	"github.com/git-ralph/git-ralph/internal/surface"
)

// Reporter is what the checks say as they go: the loop's reporter.
type Reporter interface {
	Step(msg string) // something git-ralph did
	Warn(msg string) // something to look at
}

// Error is a failure the user can act on, shaped as the loop's: Msg, then Hint's lines;
// Code is the exit code (0 means 1).
type Error struct {
	Msg  string
	Hint string
	Code int
	Err  error
}

func (e *Error) Error() string { return e.Msg }

// Unwrap returns the underlying error, if any.
func (e *Error) Unwrap() error { return e.Err }

func userErr(hint, format string, args ...any) *Error {
	return &Error{Msg: fmt.Sprintf(format, args...), Hint: hint}
}

// codeInterrupted is the exit code of a check a second Ctrl-C stopped.
const codeInterrupted = 130

// Guard checks the trust surface and the records of the runs of one repository.
type Guard struct {
	Repo   *git.Repo
	Store  *run.Store
	Report Reporter
	// Save writes a run's record (the loop's Save).
	Save func(*run.Record) error
	// Relocated rewrites a snapshot a killed run saved while the git directory was
	// elsewhere to where it is now.
	Relocated func(*surface.Snapshot)
}

// Path is where the snapshot of the attempt under way is kept.
func (g *Guard) Path(change string) string {
	return filepath.Join(g.Store.ChangeDir(change), "surface.json")
}

// Check compares the surface with snap and, when the agent changed it, restores
// it, reporting one line per restored thing, and returns the attempt's reason
// ("tampered: …"); "" when nothing changed.
func (g *Guard) Check(ctx context.Context, snap *surface.Snapshot, rec *run.Record, att *run.Attempt) (string, error) {
	changes, err := g.Restore(ctx, snap, rec, fmt.Sprintf("%s-%d", att.Story, att.N), false)
	return tamperReason(g.Repo, changes), err
}

// tamperReason is an attempt's reason when the agent changed what changes lists
// ("tampered: …"); "" when nothing changed.
func tamperReason(repo *git.Repo, changes []surface.Change) string {
	if len(changes) == 0 {
		return ""
	}
	return surface.Reason(changes, repo.Root) + "; leave git refs, git config and hooks as they are"
}

// Restore compares the surface with snap and puts back what differs, keeping what
// it finds under the name id, and returns the differences. When the files that say where
// the repository is had changed, the refs are compared once they are back
// (surface.Snapshot.Relocated). A snapshot a crash-resume loaded from disk (the agent could have
// written it) writes nothing outside the repository: such a difference is an error,
// unless trust (start --trust-current) takes it as it is.
func (g *Guard) Restore(ctx context.Context, snap *surface.Snapshot, rec *run.Record, id string, trust bool) ([]surface.Change, error) {
	var all []surface.Change
	for {
		changes, err := snap.Compare(ctx, g.Repo)
		if err != nil && ctx.Err() != nil {
			return nil, &Error{Msg: "interrupted while checking what the agent changed", Code: codeInterrupted,
				Hint: "'git ralph start " + rec.Change + "' checks it first (the record of what was there is kept in " + g.Path(rec.Change) + ")", Err: err}
		}
		if err != nil {
			return nil, fmt.Errorf("compare the trust surface: %w", err)
		}
		for _, name := range snap.MovedOn {
			g.Report.Warn(fmt.Sprintf("%s moved forward during the attempt; let be, as it may be work from another checkout (the agent could have done it too)", surface.Quote(name)))
		}
		if len(changes) == 0 {
			return all, nil
		}
		if snap.Loaded() {
			// A crash-resume's record may be the agent's: it writes nothing outside
			// the repository through git-ralph.
			var outside []string
			for _, c := range changes {
				if c.Outside(g.Repo) {
					outside = append(outside, c.Name(g.Repo.Root))
				}
			}
			if len(outside) > 0 && !trust {
				return nil, &Error{Msg: "cannot verify what the agent changed: " + strings.Join(outside, ", ") + " changed during the attempt a crash cut short, " +
					"and git-ralph does not write files outside the repository from a record the agent could have written",
					Hint: "look at them (the recorded versions are in " + g.Path(rec.Change) + "), then go on with 'git ralph start " + rec.Change + " --trust-current'"}
			}
			if len(outside) > 0 {
				g.Report.Warn(strings.Join(outside, ", ") + " changed during the attempt a crash cut short; taken as they are (--trust-current)")
				changes = slices.DeleteFunc(changes, func(c surface.Change) bool { return c.Outside(g.Repo) })
				if len(changes) == 0 {
					return all, nil
				}
			}
		}
		all = append(all, changes...)
		// Before Restore's git: after a crash the repository was opened with the agent's
		// config, whose core.hooksPath may be the agent's.
		g.Repo.PinHooksDir(snap.HooksDir)
		lines, err := surface.Restore(ctx, g.Repo, changes,
			"refs/ralph/"+rec.Change+"/tampered/"+id+"/", filepath.Join(g.Store.ChangeDir(rec.Change), "tampered", id))
		for _, line := range lines {
			g.Report.Step(line)
		}
		if err != nil && ctx.Err() != nil {
			return nil, &Error{Msg: "interrupted while putting back what the agent changed", Code: codeInterrupted,
				Hint: "'git ralph start " + rec.Change + "' puts back the rest first (the record of what was there is kept in " + g.Path(rec.Change) + ")", Err: err}
		}
		if tm := (*surface.TooManyRefsError)(nil); errors.As(err, &tm) {
			return nil, &Error{Msg: err.Error(),
				Hint: "look at them with 'git for-each-ref' (a symbolic link planted in .git/refs shows every ref again beneath it: remove it);\nthe refs as they were are recorded in " + g.Path(rec.Change) + "; then run 'git ralph start " + rec.Change + " --trust-current'", Err: err}
		}
		if err != nil {
			// Every path it could not put back is named (surface.RestoreError): the
			// user's git must not run there until they are.
			return nil, &Error{Msg: "could not restore what the agent changed: " + err.Error(),
				Hint: "run no git in this repository until those are put back (git would read them); the recorded surface is in " + g.Path(rec.Change) +
					"; look at what is listed above, then run 'git ralph start " + rec.Change + "' again",
				Err: err}
		}
		if !snap.Relocated {
			return all, nil
		}
	}
}

// checkRecords compares the run's records on disk (run.json, and surface.json while an
// attempt is under way) with what this process last wrote of them: while the loop holds
// the run lock, no other git-ralph process writes them, so a difference is the agent's,
// forging what a crash-resume would trust. run.json is written again from memory at the
// next save and surface.json goes once checked; the agent's versions are kept under id.
// It returns the names of those that differed.
func (g *Guard) checkRecords(rec *run.Record, snap *surface.Snapshot, id string) ([]string, error) {
	keep := filepath.Join(g.Store.ChangeDir(rec.Change), "tampered", id)
	var forged []string
	// The lock first: removed or replaced, it lets another git-ralph take this change.
	lockRel, _ := filepath.Rel(g.Repo.Root, filepath.Join(g.Store.ChangeDir(rec.Change), "lock"))
	lockRel = filepath.ToSlash(lockRel)
	if replaced, err := g.Store.Relock(rec.Change); replaced {
		if errors.Is(err, run.ErrLocked) {
			return nil, &Error{Msg: fmt.Sprintf("the run's lock %s was removed or replaced during the attempt, and another git-ralph process holds the new one: two loops are working on change %q", lockRel, rec.Change),
				Hint: "stop the other one (git ralph status " + rec.Change + " shows it), then run git ralph start " + rec.Change + " again", Err: err}
		}
		if err != nil {
			return nil, fmt.Errorf("take the run's lock again: %w", err)
		}
		// Undone, and said: the lock is coordination, not the agent's work.
		g.Report.Step(fmt.Sprintf("%s was removed or replaced during the attempt; git-ralph holds it again", surface.Quote(lockRel)))
	}
	check := func(path string, have []byte, err error) error {
		if err != nil || have == nil {
			return err
		}
		rel, _ := filepath.Rel(g.Repo.Root, path)
		forged = append(forged, filepath.ToSlash(rel))
		if len(have) == 0 {
			g.Report.Step(fmt.Sprintf("%s was removed or replaced (by a symlink, a FIFO, a file too large to be a record) during the attempt; git-ralph writes it again from what it holds", surface.Quote(filepath.ToSlash(rel))))
			return nil
		}
		kept := filepath.Join(keep, filepath.Base(path))
		if err := g.Store.WriteFile(kept, have, 0o600); err != nil {
			return err
		}
		g.Report.Step(fmt.Sprintf("%s was rewritten during the attempt; git-ralph writes it again from what it holds (the other version is kept as %s)",
			surface.Quote(filepath.ToSlash(rel)), surface.Quote(kept)))
		return nil
	}
	have, err := g.Store.Forged(rec.Change)
	if err := check(g.Store.RecordPath(rec.Change), have, err); err != nil {
		return nil, err
	}
	if snap != nil {
		have, err := snap.Forged(g.Store.Root(), g.Path(rec.Change))
		if err := check(g.Path(rec.Change), have, err); err != nil {
			return nil, err
		}
		if have != nil {
			// Written again before anything else: a crash from here to its removal
			// must not leave the forgery for the resume.
			if err := snap.Save(g.Store.Root(), g.Path(rec.Change)); err != nil {
				return nil, fmt.Errorf("save the trust surface: %w", err)
			}
		}
	}
	return forged, nil
}

// checkKindRecords is checkRecords for the records a task source's kind keeps of its
// own in .git/ralph (source.Recorder: a GitHub issue as read, from which finish --pr
// writes the pull request's title and closing lines): each one the agent rewrote is
// written again from what the kind holds, the agent's version kept under id. It
// returns their names.
func (g *Guard) checkKindRecords(ch *source.Source, rec *run.Record, id string) ([]string, error) {
	k, ok := ch.Kind.(source.Recorder)
	if !ok {
		return nil, nil
	}
	forgeries, err := k.Forged(ch)
	var forged []string
	for _, f := range forgeries {
		rel, _ := filepath.Rel(g.Repo.Root, f.Path)
		name := surface.Quote(filepath.ToSlash(rel))
		forged = append(forged, filepath.ToSlash(rel))
		if len(f.Have) == 0 {
			g.Report.Step(name + " was removed or replaced during the attempt; git-ralph writes it again from what it holds")
			continue
		}
		kept := filepath.Join(g.Store.ChangeDir(rec.Change), "tampered", id, filepath.Base(f.Path))
		if kerr := g.Store.WriteFile(kept, f.Have, 0o600); kerr != nil && err == nil {
			err = kerr
		}
		g.Report.Step(fmt.Sprintf("%s was rewritten during the attempt; git-ralph writes it again from what it holds (the other version is kept as %s)", name, surface.Quote(kept)))
	}
	return forged, err
}

// ReadAgain is the error of a command that found, on a crash-resume, that the agent
// had changed the repository's config: its settings (ralph.* keys among them) were read
// from the agent's config before it was restored, so it stops and is run again.
func ReadAgain(change, again string) error {
	return userErr("run '"+again+"' again: it reads its settings from the restored config",
		"the agent had changed the config of this repository during the attempt a crash cut short of %q; it is restored", change)
}

// CheckCrashed is the check a finish makes of a run whose loop was killed during an
// attempt: the surface saved before it is compared and restored, and when the config
// had changed the finish stops, to be run again.
func (g *Guard) CheckCrashed(ctx context.Context, rec *run.Record, again string) error {
	if rec.Status != run.Running {
		return nil
	}
	if _, config, err := g.Resume(ctx, rec, false); err != nil {
		return err
	} else if config {
		return ReadAgain(rec.Change, again)
	}
	return nil
}

// Stamps is surface.Options.Others: the store's stamps of every change but except
// (run.Store.Stamps).
func (g *Guard) Stamps(except string) map[string]string {
	return g.Store.Stamps(surface.Busy, except)
}

// Drop forgets the snapshot of an attempt that has been checked.
func (g *Guard) Drop(change string) { _ = g.Store.RemoveFile(g.Path(change)) }

// Resume is the crash-resume's check: the snapshot saved before the attempt the
// crash cut short is compared and restored. It returns the reason when the agent had
// changed it, and whether a config file was among what changed (the command read its
// settings from the agent's config, then). trust (start --trust-current) goes on
// without a snapshot to trust, and takes what changed outside the repository as it is.
func (g *Guard) Resume(ctx context.Context, rec *run.Record, trust bool) (reason string, config bool, err error) {
	if a := rec.Last(); cutShort(rec) && a.SurfaceChecked {
		return a.Reason, false, nil // an earlier command checked it (and stopped after)
	}
	path := g.Path(rec.Change)
	snap, err := surface.Load(g.Store.Root(), path)
	if err == nil && snap != nil {
		g.Relocated(snap)
		err = snap.Valid(ctx, g.snapshotRepo(ctx, rec))
	}
	if err == nil && snap == nil && cutShort(rec) {
		err = fmt.Errorf("%s, saved before the attempt the crash cut short, is missing", path)
	}
	if err != nil {
		// The agent runs as the user and can write .git/ralph: a record it removed or
		// forged is no record to trust, and so nothing is (fail closed).
		if !trust {
			return "", false, &Error{Msg: "cannot verify what the agent changed: " + err.Error(),
				Hint: "look at your refs, .git/config and hooks (the agent may have changed them), then accept them as they are with 'git ralph start " + rec.Change + " --trust-current'",
				Err:  err}
		}
		g.Report.Warn("the trust surface of the attempt the crash cut short could not be checked (" + err.Error() + "); refs, config and hooks are taken as they are (--trust-current)")
		g.Drop(rec.Change)
		return "", false, nil
	}
	if snap == nil {
		return "", false, nil
	}
	snap.Others = g.Stamps
	att := rec.Last()
	if att == nil {
		att = &run.Attempt{Story: "resume"}
	}
	changes, err := g.Restore(ctx, snap, rec, fmt.Sprintf("%s-%d", att.Story, att.N), trust)
	if err != nil {
		return "", false, err
	}
	reason = tamperReason(g.Repo, changes)
	if cutShort(rec) {
		// Recorded before the snapshot goes: a later command (a finish that stopped
		// to be run again, then a start) knows the check was made.
		att.SurfaceChecked, att.Reason = true, reason
		if err := g.Save(rec); err != nil {
			return "", false, err
		}
	}
	g.Drop(rec.Change)
	return reason, surface.ConfigChanged(changes, snap), nil
}

// cutShort says the record shows an attempt under way: the loop was killed while
// the agent ran, so a snapshot of the surface was saved before it began.
func cutShort(rec *run.Record) bool {
	att := rec.Last()
	return rec.Status == run.Running && att != nil && att.Outcome == run.OutcomeRunning
}

// snapshotRepo is the repository the run's snapshots are taken in: the run's linked
// worktree for a --worktree run (its own git directory and .git file are on the
// surface), which a finish in the user's checkout validates a saved one against.
func (g *Guard) snapshotRepo(ctx context.Context, rec *run.Record) *git.Repo {
	if rec.Worktree == nil || git.SamePath(rec.Worktree.Path, g.Repo.Root) {
		return g.Repo
	}
	if r, err := git.Open(ctx, rec.Worktree.Path); err == nil {
		return r
	}
	return g.Repo
}
