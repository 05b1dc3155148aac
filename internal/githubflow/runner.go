package githubflow

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/git-ralph/git-ralph/internal/beneath"
	"github.com/git-ralph/git-ralph/internal/git"
	"github.com/git-ralph/git-ralph/internal/loop"
	"github.com/git-ralph/git-ralph/internal/repofile"
	"github.com/git-ralph/git-ralph/internal/run"
	"github.com/git-ralph/git-ralph/internal/source"
	"github.com/git-ralph/git-ralph/internal/tell"
)

// The runner side of a run on GitHub Actions (docs/REMOTE.md, "The runner's side"): start --adopt rebuilds
// the record in a fresh clone, export hands the run over as a bundle, and publish checks
// that bundle in a job the agent never ran in and pushes it.

// runsPrefix is where one Actions run's refs live, on the remote and, after finish, here.
func runsPrefix(change string, runID int64) string {
	return fmt.Sprintf("refs/ralph/%s/runs/%d/", change, runID)
}

// maxAdoptWalk bounds the walk from the branch tip back to its initial state commit.
const maxAdoptWalk = 10000

// adopt rebuilds a lost (or never written) run record from the branch: the tip is the
// checkpoint, the "initial state" commit on its first-parent line is the initial
// commit, and the original branch and commit come from that commit's Ralph-Original and
// Ralph-Base trailers (dispatch writes them), else from its parent. Attempts start from
// none; tasks.md at the tip says which stories are done.
func (fl *Flow) adopt(ctx context.Context, r *loop.Resolved) (*run.Record, error) {
	branch := loop.BranchName(r.Change)
	tip, ok, err := fl.Repo.ResolveRef(ctx, "refs/heads/"+branch)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, tell.UserErr("--adopt continues a run from its branch: fetch "+branch+" first, or run 'git ralph start "+r.Change+"' without --adopt",
			"there is no run of %q and no branch %s to adopt", r.Change, branch)
	}
	id, n := tip, 0
	var initial git.Commit
	for ; ; n++ {
		cs, err := fl.Repo.Log(ctx, id, 1)
		if err != nil {
			return nil, err
		}
		if len(cs) == 0 {
			return nil, fmt.Errorf("read commit %s", loop.Short(id))
		}
		c := cs[0]
		if c.Subject == "initial state" {
			if other := c.Trailers["Ralph-Change"]; other != "" && other != r.Change {
				return nil, tell.UserErr("run 'git ralph start "+other+" --adopt' for that change", "%s starts from the initial state of change %q", branch, other)
			}
			initial = c
			break
		}
		if len(c.Parents) == 0 || n >= maxAdoptWalk {
			return nil, tell.UserErr("start the run over with 'git ralph start "+r.Change+" --fresh'",
				"%s has no \"initial state\" commit to adopt the run from", branch)
		}
		id = c.Parents[0]
	}
	base := initial.Trailers["Ralph-Base"]
	if base == "" && len(initial.Parents) > 0 {
		base = initial.Parents[0]
	}
	if !git.IsObjectID(base) {
		return nil, tell.UserErr("start the run over with 'git ralph start "+r.Change+" --fresh'",
			"the initial state commit %s of %s does not say which commit it started from", loop.Short(initial.ID), branch)
	}
	original := initial.Trailers["Ralph-Original"]
	if original != "" && fl.Repo.CheckBranchName(ctx, original) != nil {
		original = ""
	}
	rec := &run.Record{
		Change: r.Change, Branch: branch, Original: original, OriginalCommit: base,
		Initial: initial.ID, Checkpoint: tip, Status: run.Interrupted, StopReason: "adopted",
		Agent: r.Agent, Model: r.Model, Started: fl.Loop.Time(),
	}
	source.Record(rec, r.Source)
	if err := fl.Loop.Save(rec); err != nil {
		return nil, err
	}
	fl.Loop.Report.Step(fmt.Sprintf("adopted %s at %s: %d commit(s) on its initial state %s, from %s", branch, loop.Short(tip), n, loop.Short(initial.ID), loop.OriginalName(rec)))
	return rec, nil
}

// ExportOptions are the inputs of export.
type ExportOptions struct {
	Change string // required
	RunID  int64  // required
	Out    string // required: the directory to write (the artifact)
}

// ExportResult says what export wrote.
type ExportResult struct {
	Bundle string    // <Out>/ralph.bundle
	Refs   []git.Ref // what the bundle carries, as the remote will name them
	Start  string    // the prerequisite commit of the bundle; "" for a full bundle
	Logs   []string  // the log files written under <Out>/logs
	// Partial, when not "", says what could not be saved and why: the bundle then
	// holds the last checkpoint and the attempts already saved, nothing more.
	Partial string
}

// ExitPartial is the exit code of an export that wrote a partial artifact.
const ExitPartial = 3

// LogCap is how much of the end of each attempt's log export keeps for the artifact.
const LogCap = 1 << 20

// Export writes the run's work to o.Out for the artifact: ralph.bundle (the branch, and
// under refs/ralph/<change>/runs/<run-id>/ every attempt ref and a state commit), each
// log's last LogCap bytes, summary.json. A killed loop's leftovers are saved first; a
// running loop is stopped (LockAfterLoop). Where that fails, the export is partial rather
// than nothing (ExportResult.Partial): the record's checkpoint as the branch, the refs as
// they are, a warning, and nothing written here (docs/REMOTE.md, "The runner's side").
func (fl *Flow) Export(ctx context.Context, o ExportOptions) (*ExportResult, error) {
	if _, err := fl.Loop.LoadRunChange(ctx, o.Change); err != nil {
		return nil, err
	}
	if o.RunID <= 0 {
		return nil, tell.UserErr("pass the Actions run id: --run-id \"$GITHUB_RUN_ID\"", "export needs a run id")
	}
	partial := ""
	lock, err := fl.LockAfterLoop(ctx, o.Change, o.RunID)
	if err != nil {
		if ctx.Err() != nil {
			return nil, err
		}
		partial = fmt.Sprintf("the loop of %q could not be stopped (%v)", o.Change, err)
	} else {
		defer lock.Unlock()
	}
	rec, err := fl.Store.Load(o.Change)
	if errors.Is(err, run.ErrNoRun) {
		return nil, tell.UserErr("run the loop first: git ralph start "+o.Change+" --adopt", "change %q has no run to export", o.Change)
	}
	if err != nil {
		return nil, err
	}
	gctx := context.WithoutCancel(ctx) // a started git step always finishes
	if partial == "" {
		if err := fl.Loop.SaveKilled(gctx, rec, fmt.Sprintf("git ralph export %s --run-id %d --out %s", o.Change, o.RunID, o.Out), cmp.Or(fl.StopWait, DefaultStopWait)); err != nil {
			partial = fmt.Sprintf("the attempt the killed loop left could not be saved (%v)", err)
			if rec, err = fl.Store.Load(o.Change); err != nil {
				return nil, err
			}
		}
	}
	if partial != "" {
		return fl.exportPartial(gctx, o, rec, partial)
	}
	loop.MarkRun(rec, o.RunID)
	if err := fl.Loop.Save(rec); err != nil {
		return nil, err
	}
	branchRef := "refs/heads/" + rec.Branch
	tip, ok, err := fl.Repo.ResolveRef(gctx, branchRef)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, tell.UserErr("", "the run of %q has lost its branch %s", o.Change, rec.Branch)
	}
	prefix := runsPrefix(o.Change, o.RunID)
	res := &ExportResult{Refs: []git.Ref{{Name: branchRef, ID: tip}}}
	attempts, err := fl.Repo.Refs(gctx, "refs/ralph/"+o.Change+"/attempts/")
	if err != nil {
		return nil, err
	}
	for _, a := range attempts {
		name := prefix + "attempts/" + strings.TrimPrefix(a.Name, "refs/ralph/"+o.Change+"/attempts/")
		if err := fl.Repo.UpdateRef(gctx, name, a.ID); err != nil {
			return nil, err
		}
		res.Refs = append(res.Refs, git.Ref{Name: name, ID: a.ID})
	}
	state, err := fl.stateCommit(gctx, rec)
	if err != nil {
		return nil, fmt.Errorf("make the state commit: %w", err)
	}
	if err := fl.Repo.UpdateRef(gctx, prefix+"state", state); err != nil {
		return nil, err
	}
	res.Refs = append(res.Refs, git.Ref{Name: prefix + "state", ID: state})
	return res, fl.writeArtifact(gctx, o, rec, res, fl.Repo.CreateBundle)
}

// exportPartial writes the artifact of a run export could not settle (see Export):
// the record's checkpoint as the branch and the attempts already saved, under the
// run's names, with a state commit saying interrupted and why; no ref or record here
// changes.
func (fl *Flow) exportPartial(ctx context.Context, o ExportOptions, rec *run.Record, why string) (*ExportResult, error) {
	fl.Loop.Report.Warn("export is partial: " + why + "; exporting the last checkpoint " + loop.Short(rec.Checkpoint) +
		" and the attempts already saved, not what the loop was doing after it")
	if rec.Checkpoint == "" {
		return nil, tell.UserErr("", "the run of %q has no checkpoint to export", o.Change)
	}
	cp := *rec // the record on disk is the loop's: left alone
	remote := run.Remote{}
	if rec.Remote != nil {
		remote = *rec.Remote
	}
	if remote.RunID != o.RunID {
		// Not a record this run's loop marked: its start commit is not known to be
		// in the publish job's checkout, so the bundle is a full one.
		remote.RunID, remote.StartCommit = o.RunID, ""
	}
	cp.Remote = &remote
	// home takes a reason of valid UTF-8 only; git's messages may name paths that are not
	cp.Stop(run.Interrupted, strings.ToValidUTF8("export was partial: "+why, "?"), nil)
	prefix := runsPrefix(o.Change, o.RunID)
	res := &ExportResult{Partial: why, Refs: []git.Ref{{Name: "refs/heads/" + rec.Branch, ID: rec.Checkpoint}}}
	attempts, err := fl.Repo.Refs(ctx, "refs/ralph/"+o.Change+"/attempts/")
	if err != nil {
		return nil, err
	}
	for _, a := range attempts {
		res.Refs = append(res.Refs, git.Ref{Name: prefix + "attempts/" + strings.TrimPrefix(a.Name, "refs/ralph/"+o.Change+"/attempts/"), ID: a.ID})
	}
	state, err := fl.stateCommit(ctx, &cp)
	if err != nil {
		return nil, fmt.Errorf("make the state commit: %w", err)
	}
	res.Refs = append(res.Refs, git.Ref{Name: prefix + "state", ID: state})
	bundle := func(ctx context.Context, path string, names, exclude []string) error {
		var refs []git.Ref
		for _, r := range res.Refs {
			if slices.Contains(names, r.Name) {
				refs = append(refs, r)
			}
		}
		return fl.Repo.CreateBundleOf(ctx, path, refs, exclude)
	}
	return res, fl.writeArtifact(ctx, o, &cp, res, bundle)
}

// writeArtifact writes the bundle of res.Refs (res.Refs[0] the branch), the logs and
// summary.json into o.Out.
func (fl *Flow) writeArtifact(ctx context.Context, o ExportOptions, rec *run.Record, res *ExportResult,
	createBundle func(ctx context.Context, path string, refs, exclude []string) error) error {
	tip := res.Refs[0].ID
	if err := os.MkdirAll(o.Out, 0o755); err != nil {
		return err
	}
	res.Bundle = filepath.Join(o.Out, "ralph.bundle")
	var exclude []string
	if s := rec.Remote.StartCommit; s != "" {
		if in, err := fl.Repo.IsAncestor(ctx, s, tip); err != nil {
			return err
		} else if in {
			exclude, res.Start = []string{s}, s // the publish job's checkout has it
		}
	}
	if res.Start == tip {
		// Nothing new on the branch: a bundle cannot carry a ref to a commit it
		// leaves out, and the remote has the branch there already.
		res.Refs = res.Refs[1:]
	}
	var names []string
	for _, r := range res.Refs {
		names = append(names, r.Name)
	}
	if err := createBundle(ctx, res.Bundle, names, exclude); err != nil {
		return fmt.Errorf("create bundle: %w", err)
	}
	var err error
	if res.Logs, err = fl.exportLogs(rec.Change, filepath.Join(o.Out, "logs")); err != nil {
		return err
	}
	return writeSummary(filepath.Join(o.Out, "summary.json"), rec, res)
}

// stateCommit makes a root commit holding the record and the learnings: the run's
// state, small enough for git, brought home by finish.
func (fl *Flow) stateCommit(ctx context.Context, rec *run.Record) (string, error) {
	recJSON, err := json.MarshalIndent(rec, "", "  ")
	if err != nil {
		return "", err
	}
	// The agent writes the learnings: their end, at most what an import takes.
	var learnings []byte
	if f, err := fl.Store.Open(fl.Store.LearningsPath(rec.Change)); err == nil {
		learnings, _, err = repofile.Tail(f, maxLearnedBytes)
		f.Close()
		if err != nil {
			return "", err
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return "", err
	}
	var entries []git.TreeEntry
	for _, f := range []struct {
		name string
		data []byte
	}{{"learnings.md", learnings}, {"record.json", append(recJSON, '\n')}} {
		id, err := fl.Repo.HashObject(ctx, f.data)
		if err != nil {
			return "", err
		}
		entries = append(entries, git.TreeEntry{Mode: "100644", Type: "blob", ID: id, Name: f.name})
	}
	tree, err := fl.Repo.MakeTree(ctx, entries)
	if err != nil {
		return "", err
	}
	msg := fmt.Sprintf("ralph run %d of %s: %s\n\nRalph-Change: %s\nRalph-Run: %d\n", rec.Remote.RunID, rec.Change, rec.Status, rec.Change, rec.Remote.RunID)
	return fl.Repo.CommitTree(ctx, tree, nil, msg)
}

// exportLogs copies each attempt log into dir, keeping the last LogCap bytes.
func (fl *Flow) exportLogs(change, dir string) ([]string, error) {
	src := filepath.Join(fl.Store.ChangeDir(change), "logs")
	root, rel, err := fl.Store.Rel(src)
	if err != nil {
		return nil, err
	}
	entries, err := beneath.ReadDir(root, rel) // no symlink below the git directory followed
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	var out []string
	for _, e := range entries {
		if !e.Type().IsRegular() || !strings.HasSuffix(e.Name(), ".log") {
			continue
		}
		dst := filepath.Join(dir, e.Name())
		in, err := fl.Store.Open(filepath.Join(src, e.Name()))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		err = copyTail(in, dst, LogCap)
		in.Close()
		if err != nil {
			return nil, err
		}
		out = append(out, dst)
	}
	return out, nil
}

// copyTail copies the last max bytes of in to dst, saying how much was cut.
func copyTail(in *os.File, dst string, max int64) error {
	fi, err := in.Stat()
	if err != nil {
		return err
	}
	out, err := os.Create(dst)
	if err != nil {
		return err
	}
	if cut := fi.Size() - max; cut > 0 {
		if _, err := in.Seek(cut, io.SeekStart); err != nil {
			out.Close()
			return err
		}
		fmt.Fprintf(out, "[git-ralph: the first %d bytes of this log were cut]\n", cut)
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// summary is summary.json in the artifact: what a person or a tool needs without git.
type summary struct {
	Change     string        `json:"change"`
	RunID      int64         `json:"runId"`
	Status     string        `json:"status"`
	StopReason string        `json:"stopReason,omitempty"`
	Start      string        `json:"startCommit,omitempty"`
	Refs       []git.Ref     `json:"refs"`
	Attempts   []run.Attempt `json:"attempts"`
	Partial    string        `json:"partial,omitempty"` // what export could not save, and why
}

func writeSummary(path string, rec *run.Record, res *ExportResult) error {
	atts := rec.Attempts
	if atts == nil {
		atts = []run.Attempt{}
	}
	b, err := json.MarshalIndent(summary{Change: rec.Change, RunID: rec.Remote.RunID, Status: string(rec.Status),
		StopReason: rec.StopReason, Start: rec.Remote.StartCommit, Refs: res.Refs, Attempts: atts, Partial: res.Partial}, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}

// PublishOptions are the inputs of publish.
type PublishOptions struct {
	Change string // required
	RunID  int64  // required
	Bundle string // required: the bundle export wrote
	Start  string // required: the commit the run started from, from a source the agent could not touch
	Remote string // the remote to push to; "" means origin
}

// PublishResult says what publish pushed, or why not.
type PublishResult struct {
	Pushed []git.Ref // the remote's ref names and the ids they were set to
	// WorkflowPatch is the change to .github/workflows that made publish refuse.
	WorkflowPatch string
}

// maxStateFile bounds each file of the state commit.
const maxStateFile = 8 << 20

// Publish checks a bundle from the loop's job and pushes it, in the publish job, which
// has no run record and trusts only its checkout and the bundle: the refs, the commits and
// the workflows it allows are those of docs/REMOTE.md, "The runner's side"; then one atomic
// push with a lease on the branch at o.Start, hooks off. Anything wrong: nothing is pushed.
func Publish(ctx context.Context, repo *git.Repo, o PublishOptions) (*PublishResult, error) {
	res := &PublishResult{}
	if err := checkPublish(ctx, repo, &o); err != nil {
		return nil, err
	}
	branchRef := "refs/heads/" + loop.BranchName(o.Change)
	prefix := runsPrefix(o.Change, o.RunID)
	heads, err := bundleHeads(ctx, repo, o.Bundle, branchRef, prefix)
	if err != nil {
		return nil, err
	}
	// Fetch into a namespace of its own: nothing the bundle holds is trusted yet.
	quarantine := fmt.Sprintf("refs/ralph-publish/%d/", o.RunID)
	var specs []string
	for _, h := range heads {
		specs = append(specs, "+"+h.Name+":"+quarantine+strings.TrimPrefix(h.Name, "refs/"))
	}
	defer func() {
		refs, _ := repo.Refs(context.WithoutCancel(ctx), quarantine)
		for _, r := range refs {
			_ = repo.DeleteRef(context.WithoutCancel(ctx), r.Name)
		}
	}()
	if err := repo.FetchBundle(ctx, o.Bundle, specs); err != nil {
		return nil, refuse("read the bundle: %v", err)
	}
	commits, err := checkBundleCommits(ctx, repo, heads, o.Start, prefix)
	if err != nil {
		return nil, err
	}
	if bad, err := changedWorkflows(ctx, repo, o.Start, commits); err != nil {
		return nil, err
	} else if bad != "" {
		if res.WorkflowPatch, err = repo.Diff(ctx, o.Start, bad, ".github/workflows"); err != nil {
			return nil, err
		}
		return res, &tell.Error{Msg: "the run changed files under .github/workflows; nothing was pushed",
			Hint: "the patch is above; the run's work is in the artifact's bundle\nworkflow files are changed by people: a run's token cannot push them, and must not"}
	}
	if err := pushPublished(ctx, repo, o, heads, branchRef, res); err != nil {
		return nil, err
	}
	return res, nil
}

// checkPublish checks publish's inputs (the remote defaults to origin): a change name,
// a run id, and the full id of a commit here to start from.
func checkPublish(ctx context.Context, repo *git.Repo, o *PublishOptions) error {
	if strings.HasPrefix(o.Change, "-") || strings.Contains(o.Change, "/") || repo.CheckBranchName(ctx, loop.BranchName(o.Change)) != nil {
		return tell.UserErr("", "invalid change name %q", o.Change)
	}
	if o.RunID <= 0 {
		return tell.UserErr("pass the Actions run id: --run-id \"$GITHUB_RUN_ID\"", "publish needs a run id")
	}
	if o.Remote == "" {
		o.Remote = "origin"
	}
	start, ok, err := repo.ResolveRef(ctx, o.Start)
	if err != nil || !ok || !git.IsObjectID(o.Start) || start != o.Start {
		return tell.UserErr("pass the full id of the commit the run started from: --start <commit>", "start commit %q is not a commit of this repository", o.Start)
	}
	return nil
}

// bundleHeads reads the refs of the bundle, which must be the run's branch (branchRef)
// and the run's refs (state, attempts/*, under prefix), each once, and apply here.
func bundleHeads(ctx context.Context, repo *git.Repo, bundle, branchRef, prefix string) ([]git.Ref, error) {
	heads, err := repo.BundleHeads(ctx, bundle)
	if err != nil {
		return nil, refuse("%s is not a readable bundle: %v", bundle, err)
	}
	seen := map[string]bool{}
	var bad []string
	for _, h := range heads {
		rest, inRun := strings.CutPrefix(h.Name, prefix)
		allowed := h.Name == branchRef || (inRun && (rest == "state" ||
			(strings.HasPrefix(rest, "attempts/") && len(rest) > len("attempts/") && !strings.Contains(rest[len("attempts/"):], "/"))))
		if !allowed || seen[h.Name] || !git.IsObjectID(h.ID) {
			bad = append(bad, h.Name)
		}
		seen[h.Name] = true
	}
	if len(bad) > 0 {
		return nil, refuse("the bundle carries refs publish does not push: %s (allowed: %s and %s{attempts/*,state})", strings.Join(bad, ", "), branchRef, prefix)
	}
	if len(heads) == 0 {
		return nil, refuse("the bundle carries no refs")
	}
	if err := repo.VerifyBundle(ctx, bundle); err != nil {
		return nil, refuse("the bundle does not apply to this repository: %v", err)
	}
	return heads, nil
}

// checkBundleCommits checks that every head fetched is a commit: the state commit as
// checkState says, each other one descending from start (those are returned).
func checkBundleCommits(ctx context.Context, repo *git.Repo, heads []git.Ref, start, prefix string) ([]string, error) {
	var ids []string
	for _, h := range heads {
		ids = append(ids, h.ID)
	}
	types, err := repo.ObjectTypes(ctx, ids)
	if err != nil {
		return nil, err
	}
	for i, t := range types {
		if t != "commit" {
			return nil, refuse("%s is a %s, not a commit", heads[i].Name, orText(t, "missing object"))
		}
	}
	var commits []string
	for _, h := range heads {
		if h.Name == prefix+"state" {
			if err := checkState(ctx, repo, h.ID); err != nil {
				return nil, err
			}
			continue
		}
		in, err := repo.IsAncestor(ctx, start, h.ID)
		if err != nil {
			return nil, refuse("%s is not a commit: %v", h.Name, err)
		}
		if !in {
			return nil, refuse("%s (%s) does not descend from the commit the run started from, %s", h.Name, loop.Short(h.ID), loop.Short(start))
		}
		commits = append(commits, h.ID)
	}
	return commits, nil
}

// pushPublished pushes heads in one atomic push with a lease on the branch at o.Start
// (pushed where it is when the bundle has nothing new on it), recording them in res.
func pushPublished(ctx context.Context, repo *git.Repo, o PublishOptions, heads []git.Ref, branchRef string, res *PublishResult) error {
	req := git.AtomicPush{Remote: o.Remote, Lease: map[string]string{branchRef: o.Start}}
	if !slices.ContainsFunc(heads, func(h git.Ref) bool { return h.Name == branchRef }) {
		// Nothing new on the branch; pushing it where it is still checks that nobody
		// moved it during the run.
		req.Refspecs = append(req.Refspecs, o.Start+":"+branchRef)
	}
	for _, h := range heads {
		req.Refspecs = append(req.Refspecs, h.ID+":"+h.Name)
		res.Pushed = append(res.Pushed, h)
	}
	err := repo.PushAtomic(ctx, req)
	if err == nil {
		return nil
	}
	var ge *git.Error
	detail := err.Error()
	if errors.As(err, &ge) {
		detail = loop.Tail(ge.Stderr, 10)
	}
	if now, ok, lerr := repo.RemoteRef(ctx, o.Remote, branchRef); lerr == nil && (!ok || now != o.Start) {
		return &tell.Error{Msg: fmt.Sprintf("%s moved on %s during the run (it is at %s, the run started from %s); nothing was pushed", loop.BranchName(o.Change), o.Remote, orNone(now), loop.Short(o.Start)),
			Hint: "the run's work is in the artifact's bundle; someone else pushed the branch while the run was under way", Err: err}
	}
	return &tell.Error{Msg: "the push was refused; nothing was pushed", Hint: detail, Err: err}
}

func orNone(id string) string {
	if id == "" {
		return "nothing"
	}
	return loop.Short(id)
}

// refuse is publish's error for a bundle it will not push.
func refuse(format string, args ...any) *tell.Error {
	return &tell.Error{Msg: "refusing to publish: " + fmt.Sprintf(format, args...), Hint: "nothing was pushed"}
}

// checkState accepts a state commit: a root commit whose tree is record.json and
// learnings.md, both small files.
func checkState(ctx context.Context, repo *git.Repo, id string) error {
	cs, err := repo.Log(ctx, id, 1)
	if err != nil || len(cs) != 1 {
		return refuse("the state ref is not a commit")
	}
	if len(cs[0].Parents) != 0 {
		return refuse("the state commit %s has parents", loop.Short(id))
	}
	entries, err := repo.ListTree(ctx, id)
	if err != nil {
		return err
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name)
		if e.Type != "blob" || e.Mode != "100644" {
			return refuse("the state commit holds %s, which is not a plain file", e.Name)
		}
		if e.Size < 0 || e.Size > maxStateFile {
			return refuse("the state commit's %s is %d bytes, more than %d", e.Name, e.Size, maxStateFile)
		}
	}
	if !slices.Equal(names, []string{"learnings.md", "record.json"}) {
		return refuse("the state commit holds %s, not record.json and learnings.md", strings.Join(names, ", "))
	}
	return nil
}

// changedWorkflows returns a commit among tips (or their history since start) whose
// .github/workflows differs from start's, or "".
func changedWorkflows(ctx context.Context, repo *git.Repo, start string, tips []string) (string, error) {
	if len(tips) == 0 {
		return "", nil
	}
	commits, err := repo.RevList(ctx, tips, []string{start})
	if err != nil {
		return "", err
	}
	ids, err := repo.PathIDs(ctx, append([]string{start}, commits...), ".github/workflows")
	if err != nil {
		return "", err
	}
	for i, c := range commits {
		if ids[i+1] != ids[0] {
			return c, nil
		}
	}
	return "", nil
}
