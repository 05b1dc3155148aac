package git

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// This file holds what the runner side of a GitHub Actions run needs: objects made
// without a work tree (the state commit), bundles, and the checked push of publish.

// HashObject writes data as a blob and returns its id.
func (r *Repo) HashObject(ctx context.Context, data []byte) (string, error) {
	out, err := r.run(ctx, call{args: []string{"hash-object", "-w", "--stdin"}, stdin: data})
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(out)), nil
}

// TreeEntry is one entry of a tree MakeTree writes.
type TreeEntry struct {
	Mode string // e.g. 100644
	Type string // blob or tree
	ID   string
	Name string // one path component
	Size int64  // of a blob, as ListTree reads it; -1 for a tree
}

// MakeTree writes a tree of entries and returns its id.
func (r *Repo) MakeTree(ctx context.Context, entries []TreeEntry) (string, error) {
	var in bytes.Buffer
	for _, e := range entries {
		if e.Name == "" || strings.ContainsAny(e.Name, "/\t\n\x00") {
			return "", fmt.Errorf("invalid tree entry name %q", e.Name)
		}
		fmt.Fprintf(&in, "%s %s %s\t%s\n", e.Mode, e.Type, e.ID, e.Name)
	}
	out, err := r.run(ctx, call{args: []string{"mktree"}, stdin: in.Bytes()})
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(out)), nil
}

// CommitTree makes a commit of tree with the given parents and message, without
// touching any ref, index or work tree, and returns its id. No hook runs.
func (r *Repo) CommitTree(ctx context.Context, tree string, parents []string, message string) (string, error) {
	if err := checkArg("tree", tree); err != nil {
		return "", err
	}
	args := []string{"commit-tree", tree}
	for _, p := range parents {
		if err := checkArg("commit", p); err != nil {
			return "", err
		}
		args = append(args, "-p", p)
	}
	args = append(args, "-F", "-")
	out, err := r.run(ctx, call{args: args, stdin: []byte(message)})
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(out)), nil
}

// CreateBundle writes a bundle file at path holding refs (full names) and what they
// reach, less what the commits in exclude reach: the other side must have those.
func (r *Repo) CreateBundle(ctx context.Context, path string, refs, exclude []string) error {
	if err := checkArg("bundle path", path); err != nil {
		return err
	}
	args := []string{"bundle", "create", "-q", path}
	for _, ref := range refs {
		if err := checkArg("ref", ref); err != nil {
			return err
		}
		args = append(args, ref)
	}
	for _, id := range exclude {
		if err := checkArg("commit", id); err != nil {
			return err
		}
		args = append(args, "^"+id)
	}
	_, err := r.run(ctx, call{args: args})
	return err
}

// CreateBundleOf is CreateBundle for refs named and set as given, which need not be
// refs of this repository: it writes no ref here. The bundle is made in a scratch
// repository that borrows this one's objects (objects/info/alternates), holding only
// those refs; it is removed after.
func (r *Repo) CreateBundleOf(ctx context.Context, path string, refs []Ref, exclude []string) error {
	if err := checkArg("bundle path", path); err != nil {
		return err
	}
	if !filepath.IsAbs(path) {
		path = filepath.Join(r.Root, path) // as for CreateBundle, which runs in Root
	}
	scratch, err := os.MkdirTemp("", "git-ralph-bundle-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(scratch)
	if _, err := r.run(ctx, call{dir: scratch, args: []string{"init", "-q", "--bare", scratch}}); err != nil {
		return err
	}
	objects := filepath.Join(r.CommonDir, "objects")
	if err := os.WriteFile(filepath.Join(scratch, "objects", "info", "alternates"), []byte(objects+"\n"), 0o644); err != nil {
		return err
	}
	var in bytes.Buffer
	names := []string{"bundle", "create", "-q", path}
	for _, ref := range refs {
		if err := checkArg("ref", ref.Name); err != nil || strings.ContainsAny(ref.Name, " \n") {
			return fmt.Errorf("invalid ref %q", ref.Name)
		}
		if err := checkArg("commit", ref.ID); err != nil || strings.ContainsAny(ref.ID, " \n") {
			return fmt.Errorf("invalid commit %q", ref.ID)
		}
		fmt.Fprintf(&in, "create %s %s\n", ref.Name, ref.ID)
		names = append(names, ref.Name)
	}
	for _, id := range exclude {
		if err := checkArg("commit", id); err != nil {
			return err
		}
		names = append(names, "^"+id)
	}
	gitDir := "--git-dir=" + scratch
	if _, err := r.run(ctx, call{dir: scratch, args: []string{gitDir, "update-ref", "--stdin"}, stdin: in.Bytes()}); err != nil {
		return err
	}
	_, err = r.run(ctx, call{dir: scratch, args: append([]string{gitDir}, names...)})
	return err
}

// BundleHeads lists the refs a bundle file carries, as its header says.
func (r *Repo) BundleHeads(ctx context.Context, path string) ([]Ref, error) {
	if err := checkArg("bundle path", path); err != nil {
		return nil, err
	}
	out, err := r.run(ctx, call{readOnly: true, args: []string{"bundle", "list-heads", path}})
	if err != nil {
		return nil, err
	}
	var refs []Ref
	for line := range strings.SplitSeq(strings.TrimSpace(string(out)), "\n") {
		if id, name, ok := strings.Cut(line, " "); ok {
			refs = append(refs, Ref{Name: name, ID: id})
		}
	}
	return refs, nil
}

// VerifyBundle checks that path is a valid bundle whose prerequisite commits this
// repository has.
func (r *Repo) VerifyBundle(ctx context.Context, path string) error {
	if err := checkArg("bundle path", path); err != nil {
		return err
	}
	_, err := r.run(ctx, call{readOnly: true, args: []string{"bundle", "verify", "-q", path}})
	return err
}

// FetchBundle fetches refspecs from a bundle file into this repository, with hooks
// off: the bundle's content is not trusted yet.
func (r *Repo) FetchBundle(ctx context.Context, path string, refspecs []string) error {
	if err := checkArg("bundle path", path); err != nil {
		return err
	}
	args := []string{"-c", "core.hooksPath=/dev/null", "fetch", "--quiet", "--no-tags", "--no-write-fetch-head", "--recurse-submodules=no", path}
	for _, s := range refspecs {
		if err := checkArg("refspec", s); err != nil {
			return err
		}
		args = append(args, s)
	}
	_, err := r.run(ctx, call{args: args})
	return err
}

// RevList lists the commits reachable from include and not from exclude.
func (r *Repo) RevList(ctx context.Context, include, exclude []string) ([]string, error) {
	args := []string{"rev-list"}
	for _, id := range include {
		if err := checkArg("commit", id); err != nil {
			return nil, err
		}
		args = append(args, id)
	}
	for _, id := range exclude {
		if err := checkArg("commit", id); err != nil {
			return nil, err
		}
		args = append(args, "^"+id)
	}
	args = append(args, "--")
	out, err := r.run(ctx, call{readOnly: true, args: args})
	if err != nil {
		return nil, err
	}
	return strings.Fields(string(out)), nil
}

// PathIDs returns, for each commit, the id of the object at path in it ("" when there
// is none), in one git call.
func (r *Repo) PathIDs(ctx context.Context, commits []string, path string) ([]string, error) {
	if len(commits) == 0 {
		return nil, nil
	}
	var in bytes.Buffer
	for _, c := range commits {
		if err := checkArg("commit", c); err != nil {
			return nil, err
		}
		fmt.Fprintf(&in, "%s:%s\n", c, path)
	}
	out, err := r.run(ctx, call{readOnly: true, args: []string{"cat-file", "--batch-check=%(objectname)"}, stdin: in.Bytes()})
	if err != nil {
		return nil, err
	}
	lines := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	if len(lines) != len(commits) {
		return nil, fmt.Errorf("cat-file answered %d lines for %d commits", len(lines), len(commits))
	}
	ids := make([]string, len(lines))
	for i, l := range lines {
		if IsObjectID(l) {
			ids[i] = l
		}
	}
	return ids, nil
}

// Diff returns the patch between two commits, limited to paths.
func (r *Repo) Diff(ctx context.Context, a, b string, paths ...string) (string, error) {
	if err := checkArg("commit", a); err != nil {
		return "", err
	}
	if err := checkArg("commit", b); err != nil {
		return "", err
	}
	args := append([]string{"diff", "--no-color", "--no-ext-diff", "--no-textconv", "--binary", a, b, "--"}, paths...)
	out, err := r.run(ctx, call{readOnly: true, args: args})
	return string(out), err
}

// DiffStaged writes to w the stat and the patch from commit to what the index holds
// (the checkpoint and what an attempt staged, which the judge reads), renames found, no
// driver or text conversion of the repository's run. w bounds what it keeps.
func (r *Repo) DiffStaged(ctx context.Context, commit string, w io.Writer) error {
	if err := checkArg("commit", commit); err != nil {
		return err
	}
	_, err := r.run(ctx, call{readOnly: true, stdout: w, args: []string{
		"diff", "--cached", "--no-color", "--no-ext-diff", "--no-textconv", "-M", "--stat", "-p", commit, "--"}})
	return err
}

// AtomicPush is an atomic push whose every ref update is checked by the remote
// against what is expected there.
type AtomicPush struct {
	Remote string // required: a remote name or URL
	// Lease maps a remote ref to the id it must be at for the push to go through
	// ("" : it must not exist); those refs may be moved to any commit.
	Lease map[string]string
	// Refspecs are src:dst pairs (full ref names), pushed all or none.
	Refspecs []string
	// Hooks runs the repository's pre-push hook; otherwise none runs.
	Hooks bool
	// Config is passed as -c key=value to this push only (ralph.allowPush=true lets
	// git-ralph's own pre-push hook through, and the user's hooks still run).
	Config []string
}

// PushAtomic pushes all of req's refspecs or none (--atomic), with a lease on each ref
// of req.Lease. Unless req.Hooks, no hook runs: publish checks what it pushes itself,
// in a checkout whose hooks it has no reason to trust.
func (r *Repo) PushAtomic(ctx context.Context, req AtomicPush) error {
	if err := checkArg("remote", req.Remote); err != nil {
		return err
	}
	var args []string
	h := r.hookRunner()
	if !req.Hooks {
		args = append(args, "-c", "core.hooksPath=/dev/null")
	} else if h != nil {
		if err := r.prePushAtomic(ctx, h, req); err != nil {
			return err
		}
	}
	for _, kv := range req.Config {
		args = append(args, "-c", kv)
	}
	args = append(args, "push", "--quiet", "--atomic")
	if h != nil {
		args = append(args, "--no-verify") // its pre-push hook ran through h, or none runs
	}
	for _, ref := range slices.Sorted(maps.Keys(req.Lease)) {
		id := req.Lease[ref]
		if err := checkArg("ref", ref); err != nil {
			return err
		}
		args = append(args, "--force-with-lease="+ref+":"+id)
	}
	args = append(args, req.Remote)
	for _, s := range req.Refspecs {
		if err := checkArg("refspec", s); err != nil {
			return err
		}
		args = append(args, s)
	}
	_, err := r.run(ctx, call{args: args, remote: true, env: []string{"GIT_TERMINAL_PROMPT=0"}})
	return err
}

// ListTree lists the entries at the top of rev's tree, with their sizes.
func (r *Repo) ListTree(ctx context.Context, rev string) ([]TreeEntry, error) {
	if err := checkArg("revision", rev); err != nil {
		return nil, err
	}
	out, err := r.run(ctx, call{readOnly: true, args: []string{"ls-tree", "-z", "-l", rev}})
	if err != nil {
		return nil, err
	}
	var entries []TreeEntry
	for rec := range strings.SplitSeq(strings.TrimSuffix(string(out), "\x00"), "\x00") {
		meta, name, ok := strings.Cut(rec, "\t")
		f := strings.Fields(meta)
		if !ok || len(f) != 4 {
			continue
		}
		size, err := strconv.ParseInt(f[3], 10, 64)
		if err != nil {
			size = -1
		}
		entries = append(entries, TreeEntry{Mode: f[0], Type: f[1], ID: f[2], Name: name, Size: size})
	}
	return entries, nil
}

// RemoteRef returns the id ref (a full name) has on remote, asking it (ls-remote);
// ok is false when the remote has no such ref.
func (r *Repo) RemoteRef(ctx context.Context, remote, ref string) (id string, ok bool, err error) {
	if err := checkArg("remote", remote); err != nil {
		return "", false, err
	}
	if err := checkArg("ref", ref); err != nil {
		return "", false, err
	}
	out, err := r.run(ctx, call{readOnly: true, remote: true, env: []string{"GIT_TERMINAL_PROMPT=0"}, args: []string{"ls-remote", "--refs", remote, ref}})
	if err != nil {
		return "", false, err
	}
	for line := range strings.SplitSeq(string(out), "\n") {
		if id, name, found := strings.Cut(line, "\t"); found && name == ref {
			return id, true, nil
		}
	}
	return "", false, nil
}

// CreateRef points ref (a full name) at id, only if ref does not exist yet.
func (r *Repo) CreateRef(ctx context.Context, ref, id string) error {
	if err := checkArg("ref", ref); err != nil {
		return err
	}
	if err := checkArg("commit", id); err != nil {
		return err
	}
	_, err := r.run(ctx, call{args: []string{"update-ref", ref, id, ""}})
	return err
}

// FetchRefs fetches refspecs from remote (no tags, FETCH_HEAD left alone, never a
// credentials prompt).
func (r *Repo) FetchRefs(ctx context.Context, remote string, refspecs []string) error {
	if err := checkArg("remote", remote); err != nil {
		return err
	}
	args := []string{"fetch", "--quiet", "--no-tags", "--no-write-fetch-head", "--recurse-submodules=no", remote}
	for _, s := range refspecs {
		if err := checkArg("refspec", s); err != nil {
			return err
		}
		args = append(args, s)
	}
	_, err := r.run(ctx, call{args: args, remote: true, env: []string{"GIT_TERMINAL_PROMPT=0"}})
	return err
}

// ObjectTypes returns the type of each object (commit, tree, blob, tag; "" for a
// missing one), in one git call.
func (r *Repo) ObjectTypes(ctx context.Context, ids []string) ([]string, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	var in bytes.Buffer
	for _, id := range ids {
		if !IsObjectID(id) {
			return nil, fmt.Errorf("invalid object id %q", id)
		}
		in.WriteString(id + "\n")
	}
	out, err := r.run(ctx, call{readOnly: true, args: []string{"cat-file", "--batch-check=%(objecttype)"}, stdin: in.Bytes()})
	if err != nil {
		return nil, err
	}
	lines := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	if len(lines) != len(ids) {
		return nil, fmt.Errorf("cat-file answered %d lines for %d objects", len(lines), len(ids))
	}
	types := make([]string, len(lines))
	for i, l := range lines {
		if !strings.HasSuffix(l, " missing") {
			types[i] = l
		}
	}
	return types, nil
}
