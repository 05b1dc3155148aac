package trust

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/git-ralph/git-ralph/internal/agent"
	"github.com/git-ralph/git-ralph/internal/run"
	"github.com/git-ralph/git-ralph/internal/sandbox"
	"github.com/git-ralph/git-ralph/internal/source"
	"github.com/git-ralph/git-ralph/internal/surface"
)

// Watch is the trust surface around the attempts of one run: what one attempt hands the
// next (the surface as the last check left it, the git directory's layout, the index
// entries git add skips).
type Watch struct {
	*Guard
	Rec *run.Record
	Src *source.Source
	// NoRefs turns the ref part off (--allow-ref-changes); Shared is a --worktree run.
	NoRefs, Shared bool
	// Policy is the agent's sandbox, GatePolicy the verify gate's and the commit hooks';
	// nil when they run unrestricted. VerifyOff: ralph.verifySandbox=off.
	Policy, GatePolicy *sandbox.Policy
	VerifyOff          bool
	Driver             agent.Driver
	// AgentFiles are the files outside the working tree the agent is asked to write.
	AgentFiles []string

	// last is the snapshot of the attempt checked last, which the next attempt's
	// carries on (surface.TakeAfter); waited: a wait came in between, so its refs are
	// read anew (the user may have changed them).
	last   *surface.Snapshot
	waited bool
	// fixed is the snapshot of a run whose agent and gate can write nothing of the
	// trust surface (fixedSurface): taken before the first attempt, saved only where a
	// resume compares it (saveFixed), and compared once, when the attempts end
	// (LastCheck).
	fixed *surface.Snapshot
	// fixedSaved: fixed is saved where a crash-resume finds it (saveFixed).
	fixedSaved bool
	// layout is the git directory as the walk before the attempt under way saw it
	// (surface.CheckLayout).
	layout *surface.Layout
	// nextLayout is the layout the last check left, the next attempt's unless a wait
	// came in between.
	nextLayout *surface.Layout
	// hidden are the index entries git add skipped before the attempt (assume-unchanged,
	// skip-worktree), where the agent could write the index.
	hidden map[string]bool
}

// Waited says a wait came before the next attempt: the user may have changed refs.
func (w *Watch) Waited() { w.waited = true }

// Fixed reports whether the run's surface is compared only when its attempts end.
func (w *Watch) Fixed() bool { return w.fixed != nil }

// Take records the surface before an attempt and saves it. After another
// attempt's check it is that check's record carried on (surface.TakeAfter): the files as
// restored, never read anew (git-ralph's own git ran in between, and a program the agent
// planted beyond the reach of its -c overrides may have run in it), the refs as the check
// left them, read anew only after a wait (the user may have moved them meanwhile).
func (w *Watch) Take(ctx context.Context) (*surface.Snapshot, error) {
	var snap *surface.Snapshot
	var err error
	if w.fixed != nil {
		if w.waited {
			// The user may have moved refs meanwhile: they are read anew.
			if w.fixed, err = surface.TakeAfter(ctx, w.Repo, w.fixed, true); err != nil {
				return nil, fmt.Errorf("record the trust surface: %w", err)
			}
			w.waited, w.fixedSaved = false, false
		}
		return w.fixed, w.saveFixed()
	}
	w.layout, w.nextLayout = w.nextLayout, nil
	if w.waited {
		w.layout = nil // the user may have changed the git directory meanwhile
	}
	first := w.last == nil
	if prev := w.last; prev != nil {
		snap, err = surface.TakeAfter(ctx, w.Repo, prev, w.waited)
	} else {
		snap, err = surface.Take(ctx, w.Repo, surface.Options{Change: w.Rec.Change, NoRefs: w.NoRefs, Shared: w.Shared, Others: w.Stamps})
	}
	w.last, w.waited = nil, false
	if err != nil {
		return nil, fmt.Errorf("record the trust surface: %w", err)
	}
	if !w.layoutNeeded() {
		w.layout = nil
	} else if w.layout == nil {
		if w.layout, err = surface.ReadLayout(w.Repo.CommonDir); err != nil {
			return nil, fmt.Errorf("record the git directory's layout: %w", err)
		}
	}
	if first && w.fixedSurface(snap) {
		w.fixed = snap
		return snap, w.saveFixed()
	}
	if err := w.recordHidden(ctx); err != nil {
		return nil, err
	}
	if err := snap.Save(w.Store.Root(), w.Path(w.Rec.Change)); err != nil {
		return nil, fmt.Errorf("save the trust surface: %w", err)
	}
	return snap, nil
}

// checkLayout puts back what the agent changed of the git directory that Landlock does
// not govern or that only detection keeps (surface.CheckLayout): modes, and where the
// git directory was writable to it, links it planted and objects it rewrote. It runs
// before any git after the attempt. It returns the reason's part ("" when nothing
// changed); rewritten history stops the run.
func (w *Watch) checkLayout(ctx context.Context, id string, snap *surface.Snapshot) (string, error) {
	if w.layout == nil {
		return "", nil
	}
	keep := filepath.Join(w.Store.ChangeDir(w.Rec.Change), "tampered", id, "links")
	lc, err := surface.CheckLayout(ctx, w.Repo, w.layout, w.gitWritable(), keep, w.shownRel, snap)
	if err == nil && len(lc.Rewritten) == 0 {
		w.nextLayout = lc.After
	}
	for _, line := range lc.Lines {
		w.Report.Step(line)
	}
	if err != nil && ctx.Err() != nil {
		return "", &Error{Msg: "interrupted while checking what the agent changed in the git directory", Code: codeInterrupted,
			Hint: "'git ralph start " + w.Rec.Change + "' checks it again first", Err: err}
	}
	if err != nil {
		return "", &Error{Msg: "could not put back what the agent changed in the git directory: " + err.Error(),
			Hint: "run no git in this repository until it is put back (the lines above say what was); then run 'git ralph start " + w.Rec.Change + "' again", Err: err}
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
func (w *Watch) layoutNeeded() bool {
	return w.Policy == nil || w.gitWritable() || w.VerifyOff
}

// fixedSurface reports whether nothing the agent or its gate runs can change the trust
// surface snap records: both run in the sandbox, and no path either may write holds the
// git directory, lies inside it (the learnings file and a tracked file kept there
// aside: the prompt asks the agent to write them), or holds a file or directory of the
// surface (a hooks directory or a config include in the work tree, the global config
// under a writable home; a linked worktree's .git file aside, which After compares
// alone). The kernel refuses every write there then, so the snapshot,
// the records' check and the comparison around each attempt would protect nothing:
// the surface is recorded once, for the hooks the gate runs, and compared once, when
// the attempts end (LastCheck). Paths are compared as given and with their links
// resolved, as Landlock resolves them.
func (w *Watch) fixedSurface(snap *surface.Snapshot) bool {
	if w.Policy == nil || w.GatePolicy == nil || w.VerifyOff {
		return false
	}
	pol := agent.PolicyFor(w.Driver, w.Policy, append(os.Environ(), w.Policy.Env...))
	var write []string
	for _, p := range append(slices.Clone(pol.Write), w.GatePolicy.Write...) {
		write = append(write, p, resolved(p))
	}
	allowed := map[string]bool{}
	for _, f := range w.AgentFiles {
		allowed[f], allowed[resolved(f)] = true, true
	}
	dirs := []string{w.Repo.CommonDir, w.Repo.GitDir, resolved(w.Repo.CommonDir), resolved(w.Repo.GitDir)}
	for _, p := range write {
		if !allowed[p] && slices.ContainsFunc(dirs, func(d string) bool { return sandbox.Covers([]string{d}, p) }) {
			return false
		}
	}
	paths := append([]string{w.Repo.CommonDir, w.Repo.GitDir, snap.HooksDir}, snap.Dirs...)
	for _, f := range append(slices.Clone(snap.Files), snap.DirStates...) {
		if f.Path != w.gitFile() { // compared after each attempt all the same (After)
			paths = append(paths, f.Path)
		}
		paths = append(paths, f.Target)
	}
	for _, p := range paths {
		if p != "" && (sandbox.Covers(write, p) || sandbox.Covers(write, resolved(p))) {
			return false
		}
	}
	return true
}

// gitFile is a linked worktree's .git file, which lies in the work tree the agent
// writes; "" in a main worktree.
func (w *Watch) gitFile() string {
	if w.Repo.GitDir == w.Repo.CommonDir {
		return ""
	}
	return filepath.Join(w.Repo.Root, ".git")
}

// afterFixed is After where the rest of the surface is out of the agent's reach
// (fixedSurface): only what lies in the work tree is compared, .git, the link to a
// moved git directory (link: what its check found), or a linked worktree's .git file.
func (w *Watch) afterFixed(cctx context.Context, att *run.Attempt, snap *surface.Snapshot, link string) (string, error) {
	reason := ""
	if link != "" {
		reason = "tampered: " + link + "; leave .git, the link to the git directory, as it is"
	}
	if f := w.gitFile(); f != "" {
		found, err := w.Check(cctx, snap.Only(f), w.Rec, att)
		if err != nil {
			return "", err
		}
		if found != "" && reason != "" {
			found += "; " + strings.TrimPrefix(reason, "tampered: ")
		}
		if found != "" {
			reason = found
		}
		// Checked: the record says so before the saved snapshot goes (as After does).
		att.SurfaceChecked = true
		if reason != "" {
			att.Reason = reason
		}
		if err := w.Save(w.Rec); err != nil {
			return "", err
		}
		w.Drop(w.Rec.Change)
		return reason, nil
	}
	if reason == "" {
		return "", nil
	}
	att.Reason = reason
	return reason, w.Save(w.Rec)
}

// saveFixed saves the fixed snapshot before an attempt, for a crash-resume to compare:
// in place once, kept until the run's last check (an agent that outlives a killed
// git-ralph is in a domain whose working tree holds the git directory once a command
// puts it back, and writes it until the resume stops it); a linked worktree's before
// each attempt, whose check drops it (afterFixed).
func (w *Watch) saveFixed() error {
	if w.fixedSaved && w.gitFile() == "" {
		return nil
	}
	if err := w.fixed.Save(w.Store.Root(), w.Path(w.Rec.Change)); err != nil {
		return fmt.Errorf("save the trust surface: %w", err)
	}
	w.fixedSaved = true
	return nil
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
func (w *Watch) gitWritable() bool {
	return w.Policy == nil || sandbox.Covers(w.Policy.Write, w.Repo.CommonDir) || sandbox.Covers(w.Policy.Write, w.Repo.GitDir)
}

// shownRel is path as the user knows it, relative to the working tree when inside it.
func (w *Watch) shownRel(path string) string {
	p := w.Repo.Shown(path)
	if rel, err := filepath.Rel(w.Repo.Root, p); err == nil && !strings.HasPrefix(rel, "..") {
		return filepath.ToSlash(rel)
	}
	return p
}

// recordHidden records the index entries git add skips before the attempt, where the
// agent can write the index (its bits are the user's: a sparse checkout, a file kept
// out of commits on purpose).
func (w *Watch) recordHidden(ctx context.Context) error {
	w.hidden = nil
	if !w.gitWritable() {
		return nil
	}
	paths, err := w.Repo.HiddenEntries(ctx)
	if err != nil {
		return fmt.Errorf("read the index: %w", err)
	}
	w.hidden = map[string]bool{}
	for _, p := range paths {
		w.hidden[p] = true
	}
	return nil
}

// Unhide clears the assume-unchanged and skip-worktree bits the agent set during the
// attempt, before the gate stages the work tree: with them git add would keep the
// index's version of those files, and the checkpoint would not be the tree the gate
// ran on.
func (w *Watch) Unhide(ctx context.Context) error {
	if w.hidden == nil {
		return nil
	}
	now, err := w.Repo.HiddenEntries(ctx)
	if err != nil {
		return fmt.Errorf("read the index: %w", err)
	}
	var set []string
	for _, p := range now {
		if !w.hidden[p] {
			set = append(set, p)
		}
	}
	if len(set) == 0 {
		return nil
	}
	if err := w.Repo.Unhide(ctx, set); err != nil {
		return err
	}
	w.Report.Step("cleared the assume-unchanged or skip-worktree bit the agent set on " + quoteList(set) + ": the checkpoint takes the work tree the gate runs on")
	return nil
}

// After checks what the agent of att may have changed and puts it back, once .git was
// checked (link: what was found there, "" when nothing): the run's records first (they are git-ralph's, and a crash-resume trusts them), then the
// trust surface, before any other git runs. It returns the attempt's reason when the
// agent had changed any ("tampered: …"), recorded with the check.
func (w *Watch) After(cctx context.Context, att *run.Attempt, snap *surface.Snapshot, link string) (string, error) {
	id := fmt.Sprintf("%s-%d", att.Story, att.N)
	if w.fixed != nil {
		return w.afterFixed(cctx, att, snap, link)
	}
	layout, err := w.checkLayout(cctx, id, snap)
	if err != nil {
		return "", err
	}
	forged, err := w.checkRecords(w.Rec, snap, id)
	if err != nil {
		return "", err
	}
	kindForged, err := w.checkKindRecords(w.Src, w.Rec, id)
	if err != nil {
		return "", err
	}
	forged = append(forged, kindForged...)
	// Before any other git runs: what the agent changed of the surface goes back.
	tampered, err := w.Check(cctx, snap, w.Rec, att)
	if err != nil {
		return "", err
	}
	if len(forged) > 0 {
		what := "tampered: " + strings.Join(forged, " changed, ") + " changed; leave git-ralph's records in .git/ralph as they are"
		if tampered != "" {
			what = tampered + "; " + strings.TrimPrefix(what, "tampered: ")
		}
		tampered = what
	}
	if layout != "" {
		what := layout + "; leave the git directory as it is"
		if tampered == "" {
			tampered = "tampered: " + what
		} else {
			tampered += "; " + what
		}
	}
	if link != "" {
		what := link + "; leave .git, the link to the git directory, as it is"
		if tampered == "" {
			tampered = "tampered: " + what
		} else {
			tampered += "; " + what
		}
	}
	w.last = snap // the next attempt's refs are those this check left
	// Checked: a crash from here on is no crash during the agent's attempt, and a
	// snapshot left on disk would be stale by the next one. The record says so before
	// the snapshot goes, or a crash-resume would find a running attempt with no
	// snapshot and take it for one the agent removed.
	att.SurfaceChecked = true
	if tampered != "" {
		att.Reason = tampered
	}
	if err := w.Save(w.Rec); err != nil {
		return "", err
	}
	w.Drop(w.Rec.Change)
	return tampered, nil
}

// AfterGate checks, once the gate's hooks have run, what they could have changed of the
// trust surface (the hooks, the config): files only, and only where they could write
// the git directory (no sandbox, or one that leaves it writable, as in place).
func (w *Watch) AfterGate(ctx context.Context, snap *surface.Snapshot) (string, error) {
	if w.fixed != nil || w.GatePolicy != nil && !sandbox.Covers(w.GatePolicy.Write, w.Repo.CommonDir) {
		return "", nil
	}
	files := *snap
	files.NoRefs = true
	att := w.Rec.Last()
	return w.Check(context.WithoutCancel(ctx), &files, w.Rec, att)
}

// RecordedHook is the hook name as the snapshot recorded it before the attempt (its
// content, or what it linked to), when git would have run it then.
func RecordedHook(snap *surface.Snapshot, name string) ([]byte, bool) {
	f, ok := snap.Recorded(filepath.Join(snap.HooksDir, name))
	if !ok {
		return nil, false
	}
	return f.Runnable()
}

// LastCheck compares the trust surface with what the last attempt's check left, and puts
// back what differs: after that check git-ralph's own git went on (the checkpoint's add
// and commit, or the failed attempt's save and restore), and a process the agent left
// behind may still have been at work. Each attempt's snapshot catches that for the
// attempt before; after the last one nothing would.
func (w *Watch) LastCheck(ctx context.Context) error {
	prev, snap := w.last, w.fixed
	if prev == nil && snap == nil {
		return nil
	}
	if snap == nil {
		var err error
		if snap, err = surface.TakeAfter(ctx, w.Repo, prev, false); err != nil {
			return fmt.Errorf("record the trust surface: %w", err)
		}
	}
	id := "after"
	if a := w.Rec.Last(); a != nil {
		id = fmt.Sprintf("%s-%d-after", a.Story, a.N)
	}
	changes, err := w.Restore(ctx, snap, w.Rec, id, false)
	if w.fixed != nil && err == nil {
		w.Drop(w.Rec.Change) // compared: a resume has nothing left to check against it
		w.fixedSaved = false
	}
	if err != nil || len(changes) == 0 {
		return err
	}
	what := strings.TrimPrefix(surface.Reason(changes, w.Repo.Root), "tampered: ")
	if w.fixed != nil {
		w.Report.Warn(what + " during the run, where the agent's sandbox and its gate's could not write it (by a program of the agent's that git's own work ran, " +
			"or by another program of yours): put back as listed above")
		return nil
	}
	w.last = snap
	w.Report.Warn(what + " after the last attempt was checked (by a process the agent left running, " +
		"or a program of its that git's own work ran): put back as listed above")
	return nil
}

func quoteList(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = surface.Quote(n)
	}
	return strings.Join(q, ", ")
}
