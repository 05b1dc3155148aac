package git

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"

	"github.com/git-ralph/git-ralph/internal/gitdir"
)

// Worktree is one entry of `git worktree list --porcelain`.
type Worktree struct {
	Path     string
	Head     string // commit id; "" before the first commit
	Branch   string // short name; "" when detached
	Locked   bool
	Prunable bool // its directory is gone
}

// MainWorktree is the path of the repository's main worktree (its top level when git
// lists none).
func (r *Repo) MainWorktree(ctx context.Context) (string, error) {
	wts, err := r.Worktrees(ctx)
	if err != nil {
		return "", err
	}
	if len(wts) == 0 {
		return r.Root, nil
	}
	return wts[0].Path, nil
}

// Worktrees lists the repository's worktrees, the main one first.
func (r *Repo) Worktrees(ctx context.Context) ([]Worktree, error) {
	// -z (git 2.36) is the only form that survives a newline in a path;
	// older gits get the line form, which is exact for every other path.
	// Rather than ask git's version first, try -z: a git without it
	// refuses the option (129) and is asked again.
	if !r.knownOlder(2, 36) {
		out, err := r.run(ctx, call{readOnly: true, args: []string{"worktree", "list", "--porcelain", "-z"}})
		if err == nil {
			return r.mainMoved(parseWorktreeList(out, 0)), nil
		}
		if exitStatus(err) != 129 {
			return nil, err
		}
	}
	out, err := r.run(ctx, call{readOnly: true, args: []string{"worktree", "list", "--porcelain"}})
	if err != nil {
		return nil, err
	}
	return r.mainMoved(parseWorktreeList(out, '\n')), nil
}

// mainMoved names the main worktree by its working tree while an in-place run has its
// git directory moved out of it (internal/gitdir): git names it by the git directory's
// parent, the move's home.
func (r *Repo) mainMoved(wts []Worktree) []Worktree {
	if len(wts) > 0 && filepath.Base(r.CommonDir) == ".git" && (wts[0].Path == filepath.Dir(r.CommonDir) || r.movedFrom != "") {
		if tree := gitdir.TreeOf(wts[0].Path); tree != "" {
			wts[0].Path = tree
		}
	}
	return wts
}

// parseWorktreeList parses `worktree list --porcelain`: per worktree a
// "worktree <path>" line, then attribute lines such as
// "branch refs/heads/<name>", then an empty line.
func parseWorktreeList(out []byte, sep byte) []Worktree {
	var wts []Worktree
	var cur *Worktree
	for line := range bytes.SplitSeq(out, []byte{sep}) {
		key, value, _ := strings.Cut(string(line), " ")
		switch key {
		case "":
			cur = nil
		case "worktree":
			wts = append(wts, Worktree{Path: value})
			cur = &wts[len(wts)-1]
		case "HEAD":
			if cur != nil {
				cur.Head = value
			}
		case "branch":
			if name, ok := strings.CutPrefix(value, "refs/heads/"); ok && cur != nil {
				cur.Branch = name
			}
		case "locked":
			if cur != nil {
				cur.Locked = true
			}
		case "prunable":
			if cur != nil {
				cur.Prunable = true
			}
		}
	}
	return wts
}

// AddWorktree checks branch out in a new linked worktree at path (an
// absolute path that does not exist or is an empty directory). With hooks false no hook
// runs: a worktree made again from a branch the agent wrote (as Restore).
func (r *Repo) AddWorktree(ctx context.Context, path, branch string, hooks bool) error {
	if err := checkArg("path", path); err != nil {
		return err
	}
	if err := checkArg("branch name", branch); err != nil {
		return err
	}
	args := []string{"worktree", "add", "-q", path, branch}
	if !hooks {
		args = withoutHooks(args...)
	}
	_, err := r.run(ctx, call{args: args, combined: true})
	if err == nil && r.movedFrom != "" {
		r.unmoveDotGit(path)
	}
	return err
}

// unmoveDotGit points the .git file of the worktree at path, which git wrote with where
// the git directory is for now (Repo.movedFrom), at where it will be again: the tree's
// .git. Only a regular file that names the moved path is rewritten, by a rename.
func (r *Repo) unmoveDotGit(path string) {
	file := filepath.Join(path, ".git")
	fi, err := os.Lstat(file)
	if err != nil || !fi.Mode().IsRegular() || fi.Size() > 4096 {
		return
	}
	b, err := os.ReadFile(file)
	if err != nil {
		return
	}
	dir, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "gitdir: ")
	if !ok {
		return
	}
	if shown := rebase(dir, r.movedFrom, r.CommonDir); shown != dir {
		tmp := file + ".ralph-tmp"
		if os.WriteFile(tmp, []byte("gitdir: "+shown+"\n"), 0o644) == nil && os.Rename(tmp, file) != nil {
			_ = os.Remove(tmp)
		}
	}
}

// LockWorktree marks the worktree at path as locked, so that neither
// `git worktree remove` nor `prune` touches it while a loop runs there.
// An already locked worktree is unlocked first, so the reason is current.
func (r *Repo) LockWorktree(ctx context.Context, path, reason string) error {
	if err := checkArg("path", path); err != nil {
		return err
	}
	if err := r.UnlockWorktree(ctx, path); err != nil {
		return err
	}
	_, err := r.run(ctx, call{args: []string{"worktree", "lock", "--reason", reason, path}})
	return err
}

// UnlockWorktree unlocks the worktree at path; one that is not locked (or
// not listed) is left as it is.
func (r *Repo) UnlockWorktree(ctx context.Context, path string) error {
	if err := checkArg("path", path); err != nil {
		return err
	}
	wts, err := r.Worktrees(ctx)
	if err != nil {
		return err
	}
	for _, w := range wts {
		if w.Locked && SamePath(w.Path, path) {
			_, err := r.run(ctx, call{args: []string{"worktree", "unlock", w.Path}})
			return err
		}
	}
	return nil
}

// RemoveWorktree removes a clean, unlocked linked worktree. It never
// forces: git refuses a worktree with modified or untracked files.
func (r *Repo) RemoveWorktree(ctx context.Context, path string) error {
	if err := checkArg("path", path); err != nil {
		return err
	}
	_, err := r.run(ctx, call{args: []string{"worktree", "remove", path}})
	return err
}

// PruneWorktrees drops the metadata of worktrees whose directory is gone
// (and that are not locked). Their branches stay.
func (r *Repo) PruneWorktrees(ctx context.Context) error {
	_, err := r.run(ctx, call{args: []string{"worktree", "prune"}})
	return err
}

// CommitWorktree commits the whole working tree (tracked and untracked
// files, not ignored ones, staged or not) as a child of HEAD and returns its
// id, without touching HEAD, the index or the files: the tree is built in
// a temporary index. No ref moves and no commit hook runs (commit-tree);
// commit.gpgSign is honoured.
func (r *Repo) CommitWorktree(ctx context.Context, message string) (string, error) {
	head, err := r.Head(ctx)
	if err != nil {
		return "", err
	}
	tree, err := r.worktreeTree(ctx, head)
	if err != nil {
		return "", err
	}
	out, err := r.run(ctx, call{args: []string{"commit-tree", tree, "-p", head, "-F", "-"}, stdin: []byte(message)})
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(out)), nil
}

// ChangedPaths lists the paths that differ between a and b (diff
// --name-only -z, renames as a deletion and an addition). With three dots
// ("a...b"), git compares b with the merge base.
func (r *Repo) ChangedPaths(ctx context.Context, revRange string) ([]string, error) {
	if err := checkArg("revision range", revRange); err != nil {
		return nil, err
	}
	out, err := r.run(ctx, call{readOnly: true, args: []string{"diff", "--no-renames", "--no-ext-diff", "--no-textconv", "--name-only", "-z", revRange, "--"}})
	if err != nil {
		return nil, err
	}
	var paths []string
	for p := range strings.SplitSeq(string(out), "\x00") {
		if p != "" {
			paths = append(paths, p)
		}
	}
	return paths, nil
}

// ResetPaths unstages paths (reset -q -- <paths>), leaving the files and
// every other staged change as they are.
func (r *Repo) ResetPaths(ctx context.Context, paths []string) error {
	if len(paths) == 0 {
		return nil
	}
	_, err := r.run(ctx, call{
		env:   []string{"GIT_LITERAL_PATHSPECS=1"},
		args:  []string{"reset", "-q", "--pathspec-from-file=-", "--pathspec-file-nul"},
		stdin: []byte(strings.Join(paths, "\x00")),
	})
	return err
}

// SamePath reports whether a and b name the same file: equal once cleaned, or (both
// existing) the same file by another path, a symlink's say.
func SamePath(a, b string) bool {
	if filepath.Clean(a) == filepath.Clean(b) {
		return true
	}
	sa, err1 := os.Stat(a)
	sb, err2 := os.Stat(b)
	return err1 == nil && err2 == nil && os.SameFile(sa, sb)
}

// HashFiles returns the blob id each existing file of paths (relative to the root)
// would get if added now, filters applied; missing files are left out.
func (r *Repo) HashFiles(ctx context.Context, paths []string) (map[string]string, error) {
	var have []string
	for _, p := range paths {
		if fi, err := os.Lstat(filepath.Join(r.Root, p)); err == nil && !fi.IsDir() {
			have = append(have, p)
		}
	}
	ids := map[string]string{}
	if len(have) == 0 {
		return ids, nil
	}
	out, err := r.run(ctx, call{readOnly: true, args: []string{"hash-object", "--stdin-paths"}, stdin: []byte(strings.Join(have, "\n") + "\n")})
	if err != nil {
		return nil, err
	}
	lines := strings.Fields(string(out))
	for i, p := range have {
		if i < len(lines) {
			ids[p] = lines[i]
		}
	}
	return ids, nil
}

// BlobIDs returns the blob id of each of paths in rev's tree; paths not in it are
// left out.
func (r *Repo) BlobIDs(ctx context.Context, rev string, paths []string) (map[string]string, error) {
	if err := checkArg("revision", rev); err != nil {
		return nil, err
	}
	ids := map[string]string{}
	if len(paths) == 0 {
		return ids, nil
	}
	out, err := r.run(ctx, call{readOnly: true, env: []string{"GIT_LITERAL_PATHSPECS=1"},
		args: append([]string{"ls-tree", "-z", "--full-tree", rev, "--"}, paths...)})
	if err != nil {
		return nil, err
	}
	for rec := range strings.SplitSeq(string(out), "\x00") {
		meta, path, ok := strings.Cut(rec, "\t")
		if f := strings.Fields(meta); ok && len(f) == 3 {
			ids[path] = f[2]
		}
	}
	return ids, nil
}

// DropPaths puts paths back to what HEAD has, in the index and the files: a path that
// HEAD lacks is unstaged and its file removed. Only for changes known to be kept
// elsewhere.
func (r *Repo) DropPaths(ctx context.Context, paths []string) error {
	if len(paths) == 0 {
		return nil
	}
	inHead, err := r.BlobIDs(ctx, "HEAD", paths)
	if err != nil {
		return err
	}
	var restore, remove []string
	for _, p := range paths {
		if _, ok := inHead[p]; ok {
			restore = append(restore, p)
		} else {
			remove = append(remove, p)
		}
	}
	env := []string{"GIT_LITERAL_PATHSPECS=1"}
	if len(restore) > 0 {
		if _, err := r.run(ctx, call{env: env, args: append([]string{"checkout", "-q", "HEAD", "--"}, restore...)}); err != nil {
			return err
		}
	}
	if len(remove) > 0 {
		if _, err := r.run(ctx, call{env: env, args: append([]string{"rm", "-q", "--cached", "--ignore-unmatch", "--"}, remove...)}); err != nil {
			return err
		}
		for _, p := range remove {
			if err := os.Remove(filepath.Join(r.Root, p)); err != nil && !os.IsNotExist(err) {
				return err
			}
		}
	}
	return nil
}
