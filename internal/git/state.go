package git

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Operations that InProgress reports.
const (
	OpMerge      = "merge"
	OpRebase     = "rebase"
	OpAm         = "am"
	OpCherryPick = "cherry-pick"
	OpRevert     = "revert"
	OpBisect     = "bisect"
)

// InProgress names the multi-step git operation that is stopped half-way
// in this worktree: "merge", "rebase", "am", "cherry-pick", "revert",
// "bisect", or "" when there is none. When several are (a bisect and a
// rebase), the one git would have to finish first is named.
//
// It reads the state files git keeps in GitDir (per worktree) instead of
// running git: `git status` prints this only in human form.
func (r *Repo) InProgress() (string, error) {
	ops, err := r.operations()
	if err != nil || len(ops) == 0 {
		return "", err
	}
	return ops[0], nil
}

// operations lists every operation in progress, most urgent first.
func (r *Repo) operations() ([]string, error) {
	exists := func(name string) (bool, error) {
		_, err := os.Stat(filepath.Join(r.GitDir, name))
		if errors.Is(err, fs.ErrNotExist) {
			return false, nil
		}
		return err == nil, err
	}
	var ops []string
	add := func(op string, files ...string) error {
		for _, f := range files {
			ok, err := exists(f)
			if err != nil {
				return err
			}
			if ok {
				ops = append(ops, op)
				return nil
			}
		}
		return nil
	}

	// rebase-apply/ is shared by `git am` and the apply backend of
	// rebase; am marks it with an "applying" file.
	am, err := exists("rebase-apply/applying")
	if err != nil {
		return nil, err
	}
	if am {
		ops = append(ops, OpAm)
	} else if err := add(OpRebase, "rebase-apply"); err != nil {
		return nil, err
	}
	if err := add(OpRebase, "rebase-merge"); err != nil {
		return nil, err
	}
	if err := add(OpMerge, "MERGE_HEAD"); err != nil {
		return nil, err
	}
	if err := add(OpCherryPick, "CHERRY_PICK_HEAD"); err != nil {
		return nil, err
	}
	if err := add(OpRevert, "REVERT_HEAD"); err != nil {
		return nil, err
	}
	// A multi-commit cherry-pick or revert keeps sequencer/ after the
	// stopped commit is resolved and committed (CHERRY_PICK_HEAD gone)
	// until --continue; git status still calls that "in progress".
	seq, err := exists("sequencer")
	if err != nil {
		return nil, err
	}
	if seq {
		ops = append(ops, r.sequencerOp())
	}
	if err := add(OpBisect, "BISECT_LOG"); err != nil {
		return nil, err
	}
	// Name each operation once: rebase-apply/ and rebase-merge/ are both
	// "rebase", and a stopped pick has CHERRY_PICK_HEAD and sequencer/.
	var unique []string
	for _, op := range ops {
		if !slices.Contains(unique, op) {
			unique = append(unique, op)
		}
	}
	return unique, nil
}

// sequencerOp tells a pending revert from a pending cherry-pick by the
// first command in sequencer/todo, which git writes in full ("pick",
// "revert").
func (r *Repo) sequencerOp() string {
	todo, err := readSmall(filepath.Join(r.GitDir, "sequencer", "todo"))
	if err == nil {
		for line := range strings.SplitSeq(string(todo), "\n") {
			word, _, _ := strings.Cut(strings.TrimSpace(line), " ")
			switch word {
			case "", "#":
				continue
			case "revert":
				return OpRevert
			}
			break
		}
	}
	return OpCherryPick
}

// UnmergedPaths lists the paths with conflict entries in the index, each
// once, in index order.
func (r *Repo) UnmergedPaths(ctx context.Context) ([]string, error) {
	out, err := r.run(ctx, call{readOnly: true, args: []string{"ls-files", "-u", "-z"}})
	if err != nil {
		return nil, err
	}
	return parseUnmerged(out), nil
}

// Tracked reports whether the index holds the file at rel (slash-separated, relative
// to the top level of the work tree): a file git tracks, not an untracked or ignored
// one.
func (r *Repo) Tracked(ctx context.Context, rel string) (bool, error) {
	if rel == "" || strings.HasPrefix(rel, "/") {
		return false, nil
	}
	out, err := r.run(ctx, call{readOnly: true, args: []string{"ls-files", "-z", "--cached", "--full-name", "--", ":(top,literal)" + rel}})
	if err != nil {
		return false, err
	}
	return string(out) == rel+"\x00", nil
}

// parseUnmerged parses `ls-files -u -z`: "<mode> <id> <stage>\t<path>\0",
// one entry per conflict stage.
func parseUnmerged(out []byte) []string {
	var paths []string
	for rec := range bytes.SplitSeq(out, []byte{0}) {
		_, path, ok := bytes.Cut(rec, []byte{'\t'})
		if !ok {
			continue
		}
		// Stages of one path are adjacent in the index.
		if p := string(path); len(paths) == 0 || paths[len(paths)-1] != p {
			paths = append(paths, p)
		}
	}
	return paths
}

// StatusEntry is one line of `git status --porcelain=v1`.
type StatusEntry struct {
	// XY is the two-letter status: index then worktree ("M ", " D", "??",
	// "R ", "UU", …).
	XY string
	// Path is the path relative to the worktree root (for a rename or
	// copy, the new path). It is never quoted.
	Path string
	// Orig is the source path of a rename or copy, else "".
	Orig string
}

// Status lists the changes in the worktree and index, untracked files one by one, ignored
// ones left out; empty means clean. A nested repository counts as changed only when its
// HEAD differs from the index (--ignore-submodules=dirty on the command line: docs/GIT.md,
// "Repositories nested in the work tree").
func (r *Repo) Status(ctx context.Context) ([]StatusEntry, error) {
	out, err := r.run(ctx, call{readOnly: true, args: []string{"status", "--porcelain=v1", "-z", "--untracked-files=all", "--ignore-submodules=dirty"}})
	if err != nil {
		return nil, err
	}
	return parseStatus(out)
}

// parseStatus parses `status --porcelain=v1 -z`: "XY PATH\0", and for a
// rename or copy "XY NEW\0ORIG\0".
func parseStatus(out []byte) ([]StatusEntry, error) {
	out = bytes.TrimSuffix(out, []byte{0}) // the last entry's terminator
	if len(out) == 0 {
		return nil, nil
	}
	fields := bytes.Split(out, []byte{0})
	var entries []StatusEntry
	for i := 0; i < len(fields); i++ {
		f := fields[i]
		if len(f) < 4 || f[2] != ' ' {
			return nil, fmt.Errorf("git status: unexpected entry %q", f)
		}
		e := StatusEntry{XY: string(f[:2]), Path: string(f[3:])}
		if isRenameOrCopy(e.XY) {
			if i+1 >= len(fields) {
				return nil, fmt.Errorf("git status: rename %q without its source", e.Path)
			}
			i++
			e.Orig = string(fields[i])
		}
		entries = append(entries, e)
	}
	return entries, nil
}

func isRenameOrCopy(xy string) bool {
	return strings.ContainsAny(xy, "RC")
}

// WorktreeBranches maps the short name of every branch checked out in any
// worktree of this repository (this one included) to that worktree's path.
// git (before 2.44) lets `checkout -B` reset a branch that another
// worktree has checked out, so callers check here first.
func (r *Repo) WorktreeBranches(ctx context.Context) (map[string]string, error) {
	wts, err := r.Worktrees(ctx)
	if err != nil {
		return nil, err
	}
	return worktreeBranches(wts), nil
}

// parseWorktrees parses `worktree list --porcelain` into WorktreeBranches' map.
func parseWorktrees(out []byte, sep byte) map[string]string {
	return worktreeBranches(parseWorktreeList(out, sep))
}

func worktreeBranches(wts []Worktree) map[string]string {
	branches := map[string]string{}
	for _, w := range wts {
		if w.Branch != "" {
			branches[w.Branch] = w.Path
		}
	}
	return branches
}

// Ignored reports whether path (relative to the top level) is ignored and untracked:
// `git check-ignore -q`, which leaves tracked files out, so `git add -A` would never
// commit it and `git reset --hard` never restore it.
func (r *Repo) Ignored(ctx context.Context, path string) (bool, error) {
	if err := checkArg("path", path); err != nil {
		return false, err
	}
	_, err := r.run(ctx, call{readOnly: true, args: []string{"check-ignore", "-q", "--", path}})
	if err == nil {
		return true, nil
	}
	if exitStatus(err) == 1 {
		return false, nil
	}
	return false, err
}
