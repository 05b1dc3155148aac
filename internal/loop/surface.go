package loop

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/git-ralph/git-ralph/internal/agent"
	"github.com/git-ralph/git-ralph/internal/git"
	"github.com/git-ralph/git-ralph/internal/run"
	"github.com/git-ralph/git-ralph/internal/sandbox"
	"github.com/git-ralph/git-ralph/internal/source"
	"github.com/git-ralph/git-ralph/internal/surface"
)

// The trust surface around an attempt (internal/surface): recorded right before the
// agent starts (and saved, for a crash-resume), compared right after it ends and again
// right before the verify gate, restored when the agent changed it.

// surfacePath is where the snapshot of the attempt under way is kept.
func (l *Loop) surfacePath(change string) string {
	return filepath.Join(l.Store.ChangeDir(change), "surface.json")
}

// takeSurface records the surface before an attempt and saves it. After another
// attempt's check it is that check's record carried on (surface.TakeAfter): the files as
// restored, never read anew (git-ralph's own git ran in between, and a program the agent
// planted beyond the reach of its -c overrides may have run in it), the refs as the check
// left them, read anew only after a wait (the user may have moved them meanwhile).
func (s *session) takeSurface(ctx context.Context) (*surface.Snapshot, error) {
	var snap *surface.Snapshot
	var err error
	if s.fixed != nil {
		if s.surfaceWaited {
			// The user may have moved refs meanwhile: they are read anew.
			if s.fixed, err = surface.TakeAfter(ctx, s.Repo, s.fixed, true); err != nil {
				return nil, fmt.Errorf("record the trust surface: %w", err)
			}
			s.surfaceWaited = false
		}
		return s.fixed, nil
	}
	s.layout, s.nextLayout = s.nextLayout, nil
	if s.surfaceWaited {
		s.layout = nil // the user may have changed the git directory meanwhile
	}
	first := s.lastSurface == nil
	if prev := s.lastSurface; prev != nil {
		snap, err = surface.TakeAfter(ctx, s.Repo, prev, s.surfaceWaited)
	} else {
		snap, err = surface.Take(ctx, s.Repo, surface.Options{Change: s.rec.Change, NoRefs: s.r.AllowRefChanges, Shared: s.worktree != "", Others: s.runStamps})
	}
	s.lastSurface, s.surfaceWaited = nil, false
	if err != nil {
		return nil, fmt.Errorf("record the trust surface: %w", err)
	}
	if !s.layoutNeeded() {
		s.layout = nil
	} else if s.layout == nil {
		if s.layout, err = surface.ReadLayout(s.Repo.CommonDir); err != nil {
			return nil, fmt.Errorf("record the git directory's layout: %w", err)
		}
	}
	if first && s.fixedSurface(snap) {
		s.fixed = snap
		return snap, nil
	}
	if err := s.recordHidden(ctx); err != nil {
		return nil, err
	}
	if err := snap.Save(s.Store.Root(), s.surfacePath(s.rec.Change)); err != nil {
		return nil, fmt.Errorf("save the trust surface: %w", err)
	}
	return snap, nil
}

// checkSurface compares the surface with snap and, when the agent changed it, restores
// it, reporting one line per restored thing, and returns the attempt's reason
// ("tampered: …"); "" when nothing changed.
func (l *Loop) checkSurface(ctx context.Context, snap *surface.Snapshot, rec *run.Record, att *run.Attempt) (string, error) {
	changes, err := l.restoreSurface(ctx, snap, rec, fmt.Sprintf("%s-%d", att.Story, att.N), false)
	return tamperReason(l.Repo, changes), err
}

// tamperReason is an attempt's reason when the agent changed what changes lists
// ("tampered: …"); "" when nothing changed.
func tamperReason(repo *git.Repo, changes []surface.Change) string {
	if len(changes) == 0 {
		return ""
	}
	return surface.Reason(changes, repo.Root) + "; leave git refs, git config and hooks as they are"
}

// restoreSurface compares the surface with snap and puts back what differs, keeping what
// it finds under the name id, and returns the differences. When the files that say where
// the repository is had changed, the refs are compared once they are back
// (Snapshot.Relocated). A snapshot a crash-resume loaded from disk (the agent could have
// written it) writes nothing outside the repository: such a difference is an error,
// unless trust (start --trust-current) takes it as it is.
func (l *Loop) restoreSurface(ctx context.Context, snap *surface.Snapshot, rec *run.Record, id string, trust bool) ([]surface.Change, error) {
	var all []surface.Change
	for {
		changes, err := snap.Compare(ctx, l.Repo)
		if err != nil && ctx.Err() != nil {
			return nil, &Error{Msg: "interrupted while checking what the agent changed", Code: ErrInterrupted.Code,
				Hint: "'git ralph start " + rec.Change + "' checks it first (the record of what was there is kept in " + l.surfacePath(rec.Change) + ")", Err: err}
		}
		if err != nil {
			return nil, fmt.Errorf("compare the trust surface: %w", err)
		}
		for _, name := range snap.MovedOn {
			l.Report.Warn(fmt.Sprintf("%s moved forward during the attempt; let be, as it may be work from another checkout (the agent could have done it too)", surface.Quote(name)))
		}
		if len(changes) == 0 {
			return all, nil
		}
		if snap.Loaded() {
			// A crash-resume's record may be the agent's: it writes nothing outside
			// the repository through git-ralph.
			var outside []string
			for _, c := range changes {
				if c.Outside(l.Repo) {
					outside = append(outside, c.Name(l.Repo.Root))
				}
			}
			if len(outside) > 0 && !trust {
				return nil, &Error{Msg: "cannot verify what the agent changed: " + strings.Join(outside, ", ") + " changed during the attempt a crash cut short, " +
					"and git-ralph does not write files outside the repository from a record the agent could have written",
					Hint: "look at them (the recorded versions are in " + l.surfacePath(rec.Change) + "), then go on with 'git ralph start " + rec.Change + " --trust-current'"}
			}
			if len(outside) > 0 {
				l.Report.Warn(strings.Join(outside, ", ") + " changed during the attempt a crash cut short; taken as they are (--trust-current)")
				changes = slices.DeleteFunc(changes, func(c surface.Change) bool { return c.Outside(l.Repo) })
				if len(changes) == 0 {
					return all, nil
				}
			}
		}
		all = append(all, changes...)
		// Before Restore's git: after a crash the repository was opened with the agent's
		// config, whose core.hooksPath may be the agent's.
		l.Repo.PinHooksDir(snap.HooksDir)
		lines, err := surface.Restore(ctx, l.Repo, changes,
			"refs/ralph/"+rec.Change+"/tampered/"+id+"/", filepath.Join(l.Store.ChangeDir(rec.Change), "tampered", id))
		for _, line := range lines {
			l.Report.Step(line)
		}
		if err != nil && ctx.Err() != nil {
			return nil, &Error{Msg: "interrupted while putting back what the agent changed", Code: ErrInterrupted.Code,
				Hint: "'git ralph start " + rec.Change + "' puts back the rest first (the record of what was there is kept in " + l.surfacePath(rec.Change) + ")", Err: err}
		}
		if tm := (*surface.TooManyRefsError)(nil); errors.As(err, &tm) {
			return nil, &Error{Msg: err.Error(),
				Hint: "look at them with 'git for-each-ref' (a symbolic link planted in .git/refs shows every ref again beneath it: remove it);\nthe refs as they were are recorded in " + l.surfacePath(rec.Change) + "; then run 'git ralph start " + rec.Change + " --trust-current'", Err: err}
		}
		if err != nil {
			// Every path it could not put back is named (surface.RestoreError): the
			// user's git must not run there until they are.
			return nil, &Error{Msg: "could not restore what the agent changed: " + err.Error(),
				Hint: "run no git in this repository until those are put back (git would read them); the recorded surface is in " + l.surfacePath(rec.Change) +
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
func (l *Loop) checkRecords(rec *run.Record, snap *surface.Snapshot, id string) ([]string, error) {
	keep := filepath.Join(l.Store.ChangeDir(rec.Change), "tampered", id)
	var forged []string
	// The lock first: removed or replaced, it lets another git-ralph take this change.
	lockRel, _ := filepath.Rel(l.Repo.Root, filepath.Join(l.Store.ChangeDir(rec.Change), "lock"))
	lockRel = filepath.ToSlash(lockRel)
	if replaced, err := l.Store.Relock(rec.Change); replaced {
		if errors.Is(err, run.ErrLocked) {
			return nil, &Error{Msg: fmt.Sprintf("the run's lock %s was removed or replaced during the attempt, and another git-ralph process holds the new one: two loops are working on change %q", lockRel, rec.Change),
				Hint: "stop the other one (git ralph status " + rec.Change + " shows it), then run git ralph start " + rec.Change + " again", Err: err}
		}
		if err != nil {
			return nil, fmt.Errorf("take the run's lock again: %w", err)
		}
		// Undone, and said: the lock is coordination, not the agent's work.
		l.Report.Step(fmt.Sprintf("%s was removed or replaced during the attempt; git-ralph holds it again", surface.Quote(lockRel)))
	}
	check := func(path string, have []byte, err error) error {
		if err != nil || have == nil {
			return err
		}
		rel, _ := filepath.Rel(l.Repo.Root, path)
		forged = append(forged, filepath.ToSlash(rel))
		if len(have) == 0 {
			l.Report.Step(fmt.Sprintf("%s was removed or replaced (by a symlink, a FIFO, a file too large to be a record) during the attempt; git-ralph writes it again from what it holds", surface.Quote(filepath.ToSlash(rel))))
			return nil
		}
		kept := filepath.Join(keep, filepath.Base(path))
		if err := l.Store.WriteFile(kept, have, 0o600); err != nil {
			return err
		}
		l.Report.Step(fmt.Sprintf("%s was rewritten during the attempt; git-ralph writes it again from what it holds (the other version is kept as %s)",
			surface.Quote(filepath.ToSlash(rel)), surface.Quote(kept)))
		return nil
	}
	have, err := l.Store.Forged(rec.Change)
	if err := check(l.Store.RecordPath(rec.Change), have, err); err != nil {
		return nil, err
	}
	if snap != nil {
		have, err := snap.Forged(l.Store.Root(), l.surfacePath(rec.Change))
		if err := check(l.surfacePath(rec.Change), have, err); err != nil {
			return nil, err
		}
		if have != nil {
			// Written again before anything else: a crash from here to its removal
			// must not leave the forgery for the resume.
			if err := snap.Save(l.Store.Root(), l.surfacePath(rec.Change)); err != nil {
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
func (l *Loop) checkKindRecords(ch *source.Source, rec *run.Record, id string) ([]string, error) {
	k, ok := ch.Kind.(source.Recorder)
	if !ok {
		return nil, nil
	}
	forgeries, err := k.Forged(ch)
	var forged []string
	for _, f := range forgeries {
		rel, _ := filepath.Rel(l.Repo.Root, f.Path)
		name := surface.Quote(filepath.ToSlash(rel))
		forged = append(forged, filepath.ToSlash(rel))
		if len(f.Have) == 0 {
			l.Report.Step(name + " was removed or replaced during the attempt; git-ralph writes it again from what it holds")
			continue
		}
		kept := filepath.Join(l.Store.ChangeDir(rec.Change), "tampered", id, filepath.Base(f.Path))
		if kerr := l.Store.WriteFile(kept, f.Have, 0o600); kerr != nil && err == nil {
			err = kerr
		}
		l.Report.Step(fmt.Sprintf("%s was rewritten during the attempt; git-ralph writes it again from what it holds (the other version is kept as %s)", name, surface.Quote(kept)))
	}
	return forged, err
}

// errReadAgain is the error of a command that found, on a crash-resume, that the agent
// had changed the repository's config: its settings (ralph.* keys among them) were read
// from the agent's config before it was restored, so it stops and is run again.
func errReadAgain(change, again string) error {
	return UserErr("run '"+again+"' again: it reads its settings from the restored config",
		"the agent had changed the config of this repository during the attempt a crash cut short of %q; it is restored", change)
}

// CheckCrashedSurface is the check a finish makes of a run whose loop was killed during an
// attempt: the surface saved before it is compared and restored, and when the config
// had changed the finish stops, to be run again.
func (l *Loop) CheckCrashedSurface(ctx context.Context, rec *run.Record, again string) error {
	if rec.Status != run.Running {
		return nil
	}
	if _, config, err := l.resumeSurface(ctx, rec, false); err != nil {
		return err
	} else if config {
		return errReadAgain(rec.Change, again)
	}
	return nil
}

// runStamps is surface.Options.Others: the store's stamps of every change (run.Store.Stamps).
func (l *Loop) runStamps() map[string]string { return l.Store.Stamps(surface.Busy) }

// dropSurface forgets the snapshot of an attempt that has been checked.
func (l *Loop) dropSurface(change string) { _ = l.Store.RemoveFile(l.surfacePath(change)) }

// resumeSurface is the crash-resume's check: the snapshot saved before the attempt the
// crash cut short is compared and restored. It returns the reason when the agent had
// changed it, and whether a config file was among what changed (the command read its
// settings from the agent's config, then). trust (start --trust-current) goes on
// without a snapshot to trust, and takes what changed outside the repository as it is.
func (l *Loop) resumeSurface(ctx context.Context, rec *run.Record, trust bool) (reason string, config bool, err error) {
	if a := rec.Last(); attemptCutShort(rec) && a.SurfaceChecked {
		return a.Reason, false, nil // an earlier command checked it (and stopped after)
	}
	path := l.surfacePath(rec.Change)
	snap, err := surface.Load(l.Store.Root(), path)
	if err == nil && snap != nil {
		l.movedSnapshot(snap)
		err = snap.Valid(ctx, l.snapshotRepo(ctx, rec))
	}
	if err == nil && snap == nil && attemptCutShort(rec) {
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
		l.Report.Warn("the trust surface of the attempt the crash cut short could not be checked (" + err.Error() + "); refs, config and hooks are taken as they are (--trust-current)")
		l.dropSurface(rec.Change)
		return "", false, nil
	}
	if snap == nil {
		return "", false, nil
	}
	snap.Others = l.runStamps
	att := rec.Last()
	if att == nil {
		att = &run.Attempt{Story: "resume"}
	}
	changes, err := l.restoreSurface(ctx, snap, rec, fmt.Sprintf("%s-%d", att.Story, att.N), trust)
	if err != nil {
		return "", false, err
	}
	reason = tamperReason(l.Repo, changes)
	if attemptCutShort(rec) {
		// Recorded before the snapshot goes: a later command (a finish that stopped
		// to be run again, then a start) knows the check was made.
		att.SurfaceChecked, att.Reason = true, reason
		if err := l.Save(rec); err != nil {
			return "", false, err
		}
	}
	l.dropSurface(rec.Change)
	return reason, surface.ConfigChanged(changes, snap), nil
}

// attemptCutShort says the record shows an attempt under way: the loop was killed while
// the agent ran, so a snapshot of the surface was saved before it began.
func attemptCutShort(rec *run.Record) bool {
	att := rec.Last()
	return rec.Status == run.Running && att != nil && att.Outcome == run.OutcomeRunning
}

// snapshotRepo is the repository the run's snapshots are taken in: the run's linked
// worktree for a --worktree run (its own git directory and .git file are on the
// surface), which a finish in the user's checkout validates a saved one against.
func (l *Loop) snapshotRepo(ctx context.Context, rec *run.Record) *git.Repo {
	if rec.Worktree == nil || git.SamePath(rec.Worktree.Path, l.Repo.Root) {
		return l.Repo
	}
	if r, err := git.Open(ctx, rec.Worktree.Path); err == nil {
		return r
	}
	return l.Repo
}

// checkLayout puts back what the agent changed of the git directory that Landlock does
// not govern or that only detection keeps (surface.CheckLayout): modes, and where the
// git directory was writable to it, links it planted and objects it rewrote. It runs
// before any git after the attempt. It returns the reason's part ("" when nothing
// changed); rewritten history stops the run.
func (s *session) checkLayout(ctx context.Context, id string, snap *surface.Snapshot) (string, error) {
	if s.layout == nil {
		return "", nil
	}
	keep := filepath.Join(s.Store.ChangeDir(s.rec.Change), "tampered", id, "links")
	lc, err := surface.CheckLayout(ctx, s.Repo, s.layout, s.gitWritable(), keep, s.shownRel, snap)
	if err == nil && len(lc.Rewritten) == 0 {
		s.nextLayout = lc.After
	}
	for _, line := range lc.Lines {
		s.Report.Step(line)
	}
	if err != nil && ctx.Err() != nil {
		return "", &Error{Msg: "interrupted while checking what the agent changed in the git directory", Code: ErrInterrupted.Code,
			Hint: "'git ralph start " + s.rec.Change + "' checks it again first", Err: err}
	}
	if err != nil {
		return "", &Error{Msg: "could not put back what the agent changed in the git directory: " + err.Error(),
			Hint: "run no git in this repository until it is put back (the lines above say what was); then run 'git ralph start " + s.rec.Change + "' again", Err: err}
	}
	if len(lc.Rewritten) > 0 {
		return "", &Error{Msg: "the agent rewrote objects of the repository under their own ids: " + strings.Join(lc.Rewritten, ", "),
			Hint: "git-ralph cannot put them back: 'git fsck' names what is wrong; take the objects again from a clone or a backup\n" +
				"(a run whose git directory is read-only to the agent, the default where Landlock is, makes this impossible)"}
	}
	if len(lc.Changes) == 0 {
		return "", nil
	}
	return strings.Join(lc.Changes, ", "), nil
}

// layoutNeeded reports whether the git directory's layout must be walked around an
// attempt: where something of the agent's could change it. In the sandbox, with the
// git directory read-only, the kernel refuses writes there and git-ralph's supervisor
// every chmod outside the writable paths, the gate's hooks included: nothing to find.
func (s *session) layoutNeeded() bool {
	return s.policy == nil || s.gitWritable() || s.r.Sandbox.VerifyOff
}

// fixedSurface reports whether nothing the agent or its gate runs can change the trust
// surface snap records: both run in the sandbox, and no path either may write holds the
// git directory, lies inside it (the learnings file and a tracked file kept there
// aside: the prompt asks the agent to write them), or holds a file or directory of the
// surface (a hooks directory or a config include in the work tree, the global config
// under a writable home). The kernel refuses every write there then, so the snapshot,
// the records' check and the comparison around each attempt would protect nothing:
// the surface is recorded once, for the hooks the gate runs, and compared once, when
// the attempts end (lastCheck). Paths are compared as given and with their links
// resolved, as Landlock resolves them.
func (s *session) fixedSurface(snap *surface.Snapshot) bool {
	if s.policy == nil || s.gatePolicy == nil || s.r.Sandbox.VerifyOff {
		return false
	}
	pol := agent.PolicyFor(s.r.Driver, s.policy, append(os.Environ(), s.policy.Env...))
	var write []string
	for _, w := range append(slices.Clone(pol.Write), s.gatePolicy.Write...) {
		write = append(write, w, resolved(w))
	}
	allowed := map[string]bool{}
	for _, f := range agentFiles(s.src, s.Store.LearningsPath(s.r.Change)) {
		allowed[f], allowed[resolved(f)] = true, true
	}
	dirs := []string{s.Repo.CommonDir, s.Repo.GitDir, resolved(s.Repo.CommonDir), resolved(s.Repo.GitDir)}
	for _, w := range write {
		if !allowed[w] && slices.ContainsFunc(dirs, func(d string) bool { return sandbox.Covers([]string{d}, w) }) {
			return false
		}
	}
	paths := append([]string{s.Repo.CommonDir, s.Repo.GitDir, snap.HooksDir}, snap.Dirs...)
	for _, f := range append(slices.Clone(snap.Files), snap.DirStates...) {
		paths = append(paths, f.Path, f.Target)
	}
	for _, p := range paths {
		if p != "" && (sandbox.Covers(write, p) || sandbox.Covers(write, resolved(p))) {
			return false
		}
	}
	return true
}

// resolved is path with its symbolic links followed as far as it exists.
func resolved(path string) string {
	if r, err := filepath.EvalSymlinks(path); err == nil {
		return r
	}
	if dir := filepath.Dir(path); dir != path {
		return filepath.Join(resolved(dir), filepath.Base(path))
	}
	return path
}

// gitWritable reports whether the agent could write the git directory: no sandbox, or
// a policy whose writable paths hold it.
func (s *session) gitWritable() bool {
	return s.policy == nil || sandbox.Covers(s.policy.Write, s.Repo.CommonDir) || sandbox.Covers(s.policy.Write, s.Repo.GitDir)
}

// shownRel is path as the user knows it, relative to the working tree when inside it.
func (s *session) shownRel(path string) string {
	p := s.Repo.Shown(path)
	if rel, err := filepath.Rel(s.Repo.Root, p); err == nil && !strings.HasPrefix(rel, "..") {
		return filepath.ToSlash(rel)
	}
	return p
}

// checkCtx is the context of the checks after an attempt: they run after a first
// Ctrl-C too (the attempt is saved, what the agent changed put back), and a second one
// (Loop.Kill) that comes while they run stops them before their next git; the next
// start finishes what they left from the saved snapshot. A second Ctrl-C that came
// before them killed the agent; they run then, bounded (one ref transaction).
func (l *Loop) checkCtx(ctx context.Context) (context.Context, context.CancelFunc) {
	c, cancel := context.WithCancel(context.WithoutCancel(ctx))
	killed := false
	if l.Kill != nil {
		select {
		case <-l.Kill:
			killed = true
		default:
		}
	}
	if l.Kill != nil && !killed {
		go func() {
			select {
			case <-l.Kill:
				cancel()
			case <-c.Done():
			}
		}()
	}
	return c, cancel
}

// recordHidden records the index entries git add skips before the attempt, where the
// agent can write the index (its bits are the user's: a sparse checkout, a file kept
// out of commits on purpose).
func (s *session) recordHidden(ctx context.Context) error {
	s.hidden = nil
	if !s.gitWritable() {
		return nil
	}
	paths, err := s.Repo.HiddenEntries(ctx)
	if err != nil {
		return fmt.Errorf("read the index: %w", err)
	}
	s.hidden = map[string]bool{}
	for _, p := range paths {
		s.hidden[p] = true
	}
	return nil
}

// unhide clears the assume-unchanged and skip-worktree bits the agent set during the
// attempt, before the gate stages the work tree: with them git add would keep the
// index's version of those files, and the checkpoint would not be the tree the gate
// ran on.
func (s *session) unhide(ctx context.Context) error {
	if s.hidden == nil {
		return nil
	}
	now, err := s.Repo.HiddenEntries(ctx)
	if err != nil {
		return fmt.Errorf("read the index: %w", err)
	}
	var set []string
	for _, p := range now {
		if !s.hidden[p] {
			set = append(set, p)
		}
	}
	if len(set) == 0 {
		return nil
	}
	if err := s.Repo.Unhide(ctx, set); err != nil {
		return err
	}
	s.Report.Step("cleared the assume-unchanged or skip-worktree bit the agent set on " + quoteList(set) + ": the checkpoint takes the work tree the gate runs on")
	return nil
}
