package git

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/git-ralph/git-ralph/internal/beneath"
)

// CheckoutNewBranch creates branch name at HEAD, or resets it to HEAD if
// it exists, and switches to it (checkout -B). Uncommitted work, staged or
// not, comes along: this is how a run starts from the user's dirty tree.
func (r *Repo) CheckoutNewBranch(ctx context.Context, name string) error {
	if err := checkArg("branch name", name); err != nil {
		return err
	}
	_, err := r.run(ctx, call{args: []string{"checkout", "-q", "-B", name}})
	return err
}

// Checkout switches to name: a branch, or a commit id (detaching HEAD, as
// when a run started from a detached HEAD). Uncommitted changes come along
// as git allows; git refuses when they would be overwritten.
func (r *Repo) Checkout(ctx context.Context, name string) error {
	return r.checkout(ctx, name, true)
}

// CheckoutNoHooks is Checkout with no hook run, by git or by the runner: git-ralph's own
// checkout of what an agent wrote (a resume's switch to the run's branch), over which a
// post-checkout hook would run the agent's files (the pre-commit framework's
// configuration, husky's hooks) outside the sandbox.
func (r *Repo) CheckoutNoHooks(ctx context.Context, name string) error {
	return r.checkout(ctx, name, false)
}

// withoutHooks is args run with no hook: core.hooksPath=/dev/null, after the pinned one
// of safetyArgs, wins (no hook is found below a file).
func withoutHooks(args ...string) []string {
	return append([]string{"-c", "core.hooksPath=" + os.DevNull}, args...)
}

func (r *Repo) checkout(ctx context.Context, name string, hooks bool) error {
	if err := checkArg("branch name", name); err != nil {
		return err
	}
	// The trailing "--" makes name a revision only: without it, a file
	// called like the branch would be restored from the index (discarding
	// its changes) when no such branch exists. --no-guess stops checkout
	// from silently creating a branch from a remote of the same name.
	runner := hooks && r.hookRunner() != nil
	var prev string
	if runner {
		prev, _, _ = r.ResolveRef(ctx, "HEAD")
	}
	args := []string{"checkout", "-q", "--no-guess", name, "--"}
	if !hooks {
		args = withoutHooks(args...)
	}
	_, err := r.run(ctx, call{args: args})
	if err == nil && runner {
		now, _, _ := r.ResolveRef(ctx, "HEAD")
		r.postHook(ctx, "post-checkout", prev, now, "1")
	}
	return err
}

// AddAll stages every change in the worktree: modifications, deletions and
// untracked files that are not ignored (add -A, run from the root). A repository
// nested in the work tree is staged as a gitlink at its HEAD, and git runs nothing
// inside it (dropNestedGitlinks says why and how).
func (r *Repo) AddAll(ctx context.Context) error {
	if err := r.dropNestedGitlinks(ctx, ""); err != nil {
		return err
	}
	_, err := r.run(ctx, call{args: []string{"add", "-A"}})
	return err
}

// CommitOptions are the optional inputs of Commit.
type CommitOptions struct {
	// AllowEmpty records the commit even when it changes nothing (the
	// "initial state" commit of a clean tree, a story whose work was
	// already there).
	AllowEmpty bool
	// NoHooks makes the commit with no hook at all (core.hooksPath pointed at
	// nothing, --no-verify): the loop's checkpoint, whose commit hooks it runs
	// itself, in the sandbox, before (SandboxedHook).
	NoHooks bool
}

// Commit commits the index with message (fed on stdin, so any text is
// safe) and returns the new HEAD. The user's hooks and signing settings
// apply. When a hook refuses, the *Error's Stderr holds everything the
// hooks printed, stdout and stderr interleaved: it becomes the reason of a
// failed attempt. Without AllowEmpty, "nothing to commit" is an *Error
// with exit code 1 as well.
func (r *Repo) Commit(ctx context.Context, message string, opts CommitOptions) (string, error) {
	args := []string{"commit", "-q", "-F", "-"}
	if opts.AllowEmpty {
		args = append(args, "--allow-empty")
	}
	if opts.NoHooks {
		// --no-verify besides, should a later git read the hooks otherwise.
		args = append(withoutHooks(args...), "--no-verify")
	}
	if _, err := r.run(ctx, call{args: args, stdin: []byte(message), combined: true}); err != nil {
		return "", r.commitHookError(ctx, err)
	}
	return r.Head(ctx)
}

// commitHooks are the hooks git runs for every commit that can stop it, in the order it
// runs them (post-commit runs after the commit is made).
var commitHooks = []string{"pre-commit", "prepare-commit-msg", "commit-msg"}

// commitHookError is err, a failed commit, as a *CommitHookError when git exited 1 and
// a commit hook was there to run; else err itself.
func (r *Repo) commitHookError(ctx context.Context, err error) error {
	var ge *Error
	if !errors.As(err, &ge) || ge.ExitCode != 1 {
		return err
	}
	var there []string
	for _, name := range commitHooks {
		if _, ok, herr := r.hookFile(ctx, name); herr == nil && ok {
			there = append(there, name)
		}
	}
	if len(there) == 0 {
		return err
	}
	return &CommitHookError{Hooks: there, Err: ge}
}

// SoftReset moves the current branch to id, keeping index and worktree
// (reset --soft): it folds commits an agent made into the next checkpoint.
func (r *Repo) SoftReset(ctx context.Context, id string) error {
	if err := checkArg("commit", id); err != nil {
		return err
	}
	_, err := r.run(ctx, call{args: []string{"reset", "-q", "--soft", id, "--"}})
	return err
}

// MixedReset unstages everything, keeping the worktree (reset with no
// arguments): after finish --squash, all work is left uncommitted and
// unstaged.
func (r *Repo) MixedReset(ctx context.Context) error {
	_, err := r.run(ctx, call{args: []string{"reset", "-q"}})
	return err
}

// HardReset moves the current branch, index and worktree to id (reset
// --hard). Untracked files stay; see Restore for a full reset.
func (r *Repo) HardReset(ctx context.Context, id string) error {
	if err := checkArg("commit", id); err != nil {
		return err
	}
	_, err := r.run(ctx, call{args: []string{"reset", "-q", "--hard", id, "--"}})
	return err
}

// SaveAttempt records the whole working tree (tracked and untracked, not ignored) as a
// commit on parent, points ref at it and returns its id, touching neither the user's index
// nor HEAD; when the agent committed, its HEAD becomes a second parent. commit-tree: no
// hooks run, commit.gpgSign is honoured (docs/GIT.md, "Saving an attempt, restoring a
// checkpoint").
func (r *Repo) SaveAttempt(ctx context.Context, parent, ref, message string) (string, error) {
	if err := checkArg("commit", parent); err != nil {
		return "", err
	}
	if err := checkArg("ref", ref); err != nil {
		return "", err
	}
	tree, err := r.worktreeTree(ctx, parent)
	if err != nil {
		return "", err
	}

	args := []string{"commit-tree", tree, "-p", parent}
	head, ok, err := r.ResolveRef(ctx, "HEAD")
	if err != nil {
		return "", err
	}
	if ok && head != parent {
		// A HEAD that parent already contains (the agent rewound the
		// branch) adds nothing reachable; leave it out of the graph.
		contained, err := r.IsAncestor(ctx, head, parent)
		if err != nil {
			return "", err
		}
		if !contained {
			args = append(args, "-p", head)
		}
	}
	args = append(args, "-F", "-")
	out, err := r.run(ctx, call{args: args, stdin: []byte(message)})
	if err != nil {
		return "", err
	}
	id := strings.TrimSpace(string(out))
	if err := r.UpdateRef(ctx, ref, id); err != nil {
		return "", err
	}
	return id, nil
}

// WorktreeTree writes the whole working tree (tracked and untracked files,
// not ignored ones) as a tree object and returns its id. Nothing else
// changes: neither the index, nor HEAD, nor the worktree. Comparing it
// with a commit's tree tells whether the worktree holds exactly that
// commit's content, untracked files included.
func (r *Repo) WorktreeTree(ctx context.Context) (string, error) {
	return r.worktreeTree(ctx, "")
}

// IndexTree writes what is staged in the user's index as a tree (git write-tree)
// and returns its id. The index's content is unchanged.
func (r *Repo) IndexTree(ctx context.Context) (string, error) {
	out, err := r.run(ctx, call{args: []string{"write-tree"}})
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(out)), nil
}

// worktreeTree builds the tree in a temporary index (in GitDir, removed after) seeded with
// a copy of the user's index, so that add -A re-hashes only what changed; without an index
// file it is seeded from seed's tree, or empty. Leftover temporary indexes go first.
func (r *Repo) worktreeTree(ctx context.Context, seed string) (string, error) {
	sweepTempIndexes(r.GitDir)
	index, err := tempIndexPath(r.GitDir)
	if err != nil {
		return "", err
	}
	defer func() {
		_ = os.Remove(index) // best effort; the next call sweeps what a kill leaves
		_ = os.Remove(index + ".lock")
	}()
	env := []string{"GIT_INDEX_FILE=" + index}

	seeded, err := copyIndex(filepath.Join(r.GitDir, "index"), index)
	if err != nil {
		return "", err
	}
	if !seeded && seed != "" {
		if _, err := r.run(ctx, call{env: env, args: []string{"read-tree", seed}}); err != nil {
			return "", err
		}
	}
	if err := r.dropNestedGitlinks(ctx, index); err != nil {
		return "", err
	}
	if _, err := r.run(ctx, call{env: env, args: []string{"add", "-A"}}); err != nil {
		return "", err
	}
	out, err := r.run(ctx, call{env: env, args: []string{"write-tree"}})
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(out)), nil
}

// tempIndexPrefix starts the name of every temporary index; the pid of the
// git-ralph that made it follows, so that a later run can tell the files
// of a killed process from those of a live one.
const tempIndexPrefix = "ralph-index-"

// tempIndexPath returns an unused path in gitDir for a temporary index,
// named ralph-index-<pid>-<random>. The file itself must not exist: git
// reads an existing index file before replacing it, and an empty file is
// not a valid index.
func tempIndexPath(gitDir string) (string, error) {
	f, err := os.CreateTemp(gitDir, tempIndexPrefix+strconv.Itoa(os.Getpid())+"-")
	if err != nil {
		return "", fmt.Errorf("create temporary index: %w", err)
	}
	path := f.Name()
	_ = f.Close()
	if err := os.Remove(path); err != nil {
		return "", fmt.Errorf("create temporary index: %w", err)
	}
	return path, nil
}

// copyIndex copies the index file src to dst (which must not exist), mtime included, and
// reports whether there was one. Only a regular file is read, never through a symlink: such
// an index is no index, as a missing one.
func copyIndex(src, dst string) (bool, error) {
	in, err := beneath.Open(filepath.Dir(src), filepath.Base(src))
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("copy the index: %w", err)
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return false, fmt.Errorf("copy the index: %w", err)
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return false, fmt.Errorf("copy the index: %w", err)
	}
	if err := out.Close(); err != nil {
		return false, fmt.Errorf("copy the index: %w", err)
	}
	// git trusts an entry's stat data only when the entry is older than the index
	// file itself ("racily clean" entries are re-read). A copy with a new mtime
	// would make a same-size edit from the second of the last add look unchanged,
	// and the saved attempt would silently miss it: keep the original's mtime.
	info, err := in.Stat()
	if err != nil {
		return false, fmt.Errorf("copy the index: %w", err)
	}
	if err := os.Chtimes(dst, info.ModTime(), info.ModTime()); err != nil {
		return false, fmt.Errorf("copy the index: %w", err)
	}
	return true, nil
}

// sweepTempIndexes removes the temporary indexes (and their lock files)
// of git-ralph processes that no longer exist: one killed during
// SaveAttempt leaves its temporary index behind, as large as the index.
// Those of live processes, this one included, are left alone. Best
// effort: what cannot be removed now is tried again next time.
func sweepTempIndexes(gitDir string) {
	entries, err := os.ReadDir(gitDir)
	if err != nil {
		return
	}
	for _, e := range entries {
		rest, ok := strings.CutPrefix(e.Name(), tempIndexPrefix)
		if !ok {
			continue
		}
		pidText, _, ok := strings.Cut(rest, "-")
		pid, err := strconv.Atoi(pidText)
		if !ok || err != nil || pid <= 0 || pid == os.Getpid() || !processGone(pid) {
			continue
		}
		_ = os.Remove(filepath.Join(gitDir, e.Name()))
	}
}

// Restore puts the worktree back onto branch at commit id, whatever the agent did
// (switched, committed, rewound or deleted the branch, left conflicts or an operation
// half-way): it quits the operation in progress, then runs `checkout -q -f -B <branch>
// <id>` and `clean -fdq`. Ignored files stay (docs/GIT.md, "Saving an attempt, restoring a
// checkpoint"). No hook runs: a post-checkout hook would run over the agent's files,
// outside the sandbox (CheckoutNoHooks).
func (r *Repo) Restore(ctx context.Context, branch, id string) error {
	if err := checkArg("branch name", branch); err != nil {
		return err
	}
	if err := checkArg("commit", id); err != nil {
		return err
	}
	if err := r.abandonOperations(ctx); err != nil {
		return err
	}
	if _, err := r.run(ctx, call{args: withoutHooks("checkout", "-q", "-f", "-B", branch, id, "--")}); err != nil {
		return err
	}
	_, err := r.run(ctx, call{args: []string{"clean", "-f", "-d", "-q"}})
	return err
}

// abandonOperations drops the state of every stopped operation that
// checkout would leave behind, without moving HEAD or the worktree (those
// are Restore's job). It costs no git call when nothing is in progress.
func (r *Repo) abandonOperations(ctx context.Context) error {
	ops, err := r.operations()
	if err != nil {
		return err
	}
	for _, op := range ops {
		var args []string
		switch op {
		case OpRebase:
			args = []string{"rebase", "--quit"}
		case OpAm:
			args = []string{"am", "--quit"}
		case OpCherryPick, OpRevert:
			args = []string{op, "--quit"} // removes sequencer/; a no-op for a single pick
		case OpBisect:
			// bisect reset with a commit stays where HEAD is instead of
			// going back to where the bisect started.
			args = []string{"bisect", "reset", "HEAD"}
		default:
			continue // merge: checkout -f clears it
		}
		// bisect reset checks out HEAD again, which would run post-checkout over the tree
		// the agent left: no hook runs (as Restore's own checkout).
		if _, err := r.run(ctx, call{args: withoutHooks(args...)}); err != nil {
			return err
		}
	}
	return nil
}

// MergeSquash stages the combined changes of branch into the worktree and
// index without committing (merge --squash). A conflict is a *ConflictError
// (git exited 1 and left unmerged paths, asked of git only then) and leaves
// conflict markers; any other failure is git's *Error. The caller undoes
// either with HardReset(ctx, "HEAD"), since a squash merge has no
// MERGE_HEAD for merge --abort to use.
func (r *Repo) MergeSquash(ctx context.Context, branch string) error {
	if err := checkArg("branch name", branch); err != nil {
		return err
	}
	// --ff overrides merge.ff=false (or only) from the user's config,
	// which git refuses to combine with --squash.
	_, err := r.run(ctx, call{args: []string{"merge", "--squash", "--ff", "-q", branch}, combined: true})
	if err == nil {
		r.postHook(ctx, "post-merge", "1")
	}
	var ge *Error
	if err == nil || !errors.As(err, &ge) || ge.ExitCode != 1 {
		return err
	}
	if paths, uerr := r.UnmergedPaths(ctx); uerr == nil && len(paths) > 0 {
		return &ConflictError{Paths: paths, Err: ge}
	}
	return err
}

// RenamedSince stages every change in the worktree (add -A) and returns where git's
// rename detection (diff --cached -M against base) sees path go since commit base, ""
// when it sees no rename of it. A story's tracked file that the agent moved (a plan
// moving itself to completed/) is followed this way.
func (r *Repo) RenamedSince(ctx context.Context, base, path string) (string, error) {
	if err := checkArg("commit", base); err != nil {
		return "", err
	}
	if err := r.AddAll(ctx); err != nil {
		return "", err
	}
	out, err := r.run(ctx, call{readOnly: true, args: []string{"diff", "--cached", "-M", "--name-status", "-z", "--diff-filter=R", base, "--"}})
	if err != nil {
		return "", err
	}
	return renamedTo(out, path), nil
}

// renamedTo reads `diff --name-status -z` renames ("R<score>\0OLD\0NEW\0") and returns
// the new path of path, "" when it is not among them.
func renamedTo(out []byte, path string) string {
	f := strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00")
	for i := 0; i+2 < len(f); i += 3 {
		if strings.HasPrefix(f[i], "R") && f[i+1] == path {
			return f[i+2]
		}
	}
	return ""
}
