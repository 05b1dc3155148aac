package git

import (
	"context"
	"errors"
	"fmt"
	"github.com/git-ralph/git-ralph/internal/gitdir"
	"io"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
)

// MinVersion is the oldest git that git-ralph supports: 2.31 added
// rev-parse --path-format=absolute, which Open relies on.
const MinVersion = "2.31"

var minVersion = version{2, 31}

// Repo is a git repository with a work tree, located once by Open. Its
// methods run git in Root. A Repo must not be copied (Calls is atomic).
type Repo struct {
	Root      string // absolute worktree root
	GitDir    string // absolute per-worktree git dir (.git, or .git/worktrees/<name>)
	CommonDir string // absolute common dir, shared by all worktrees: refs, config, run state

	// Trace, when non-nil, receives "$ git …" for every command (--verbose).
	Trace io.Writer

	// NoAutoGC runs every git with -c gc.auto=0: a loop's commits must not
	// start an automatic gc, whose ref maintenance races the loops running in
	// other worktrees of the repository ("cannot lock ref").
	NoAutoGC bool

	// Calls counts the git processes started (retries included), so tests
	// and benchmarks can pin how many invocations an operation costs.
	Calls atomic.Int64

	// version is git's version when something asked it (Open, when rev-parse
	// fails, to say why); zero when not known, in which case every feature is
	// assumed present (a git without one refuses the option, and is asked again).
	versionMu sync.Mutex
	version   version

	// hooksDir is HooksDir's answer: read by Open, and pinned on every
	// later git as core.hooksPath (see safetyArgs).
	hooksMu  sync.Mutex
	hooksDir string
	// movedFrom is where CommonDir is for now, when Open found it moved out of its tree
	// by another process's in-place run (movedShown); "" otherwise.
	movedFrom string
	// hooks, when set (RunHooksWith), runs the hooks git would run: git runs none.
	hooks HookRunner

	cfg configCache

	// shownDir is where the git directory is shown while it is moved (Relocate): the
	// working tree's .git.
	shownDir string
}

// Open locates the repository that contains dir ("" = the current directory): a non-bare
// work tree, possibly linked, possibly a subdirectory of it; it checks once that git is at
// least MinVersion. Errors: ErrGitNotFound, ErrGitTooOld, ErrBare, ErrNotRepo (also for
// another exit 128, such as safe.directory's refusal, with git's message joined). It runs
// one git, asking the version only when that fails.
func Open(ctx context.Context, dir string) (*Repo, error) {
	r := &Repo{Root: dir}
	out, err := r.run(ctx, call{
		dir:      dir,
		readOnly: true,
		args: []string{"rev-parse", "--path-format=absolute",
			"--show-toplevel", "--git-dir", "--git-common-dir", "--git-path", "hooks"},
	})
	if err != nil {
		if errors.Is(err, exec.ErrNotFound) {
			return nil, ErrGitNotFound
		}
		// A git older than MinVersion fails here too: only this failure path
		// pays for asking its version, so that the error says what to do.
		if verr := r.checkVersion(ctx, dir); verr != nil {
			return nil, verr
		}
		if exitStatus(err) != 128 {
			return nil, err
		}
		// --show-toplevel fails in a bare repository and inside .git
		// just as outside any repository. Only this failure path pays for
		// a second query telling them apart.
		return nil, r.whyNoWorkTree(ctx, dir, err)
	}
	lines := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	if len(lines) != 4 {
		// A git without --path-format prints the option back as a line.
		if verr := r.checkVersion(ctx, dir); verr != nil {
			return nil, verr
		}
		return nil, fmt.Errorf("git rev-parse: unexpected output %q", out)
	}
	r.Root, r.GitDir, r.CommonDir = lines[0], lines[1], lines[2]
	hooks := lines[3]
	if shown := movedShown(r.CommonDir); shown != "" {
		// Another process's in-place run moved the git directory out of its tree
		// (internal/gitdir): it is named by the tree's .git, where it will be again
		// when that run puts it back, not by where it is for now.
		r.GitDir, hooks = rebase(r.GitDir, r.CommonDir, shown), rebase(hooks, r.CommonDir, shown)
		r.movedFrom, r.CommonDir = r.CommonDir, shown
	}
	if err := checkLayout(r.GitDir, r.CommonDir); err != nil {
		return nil, err
	}
	r.setHooksDir(hooks)
	return r, nil
}

// movedShown is the .git of the working tree whose git directory commonDir is while an
// in-place run has it moved (gitdir.TreeOf), or "".
func movedShown(commonDir string) string {
	if filepath.Base(commonDir) != ".git" {
		return ""
	}
	if tree := gitdir.TreeOf(filepath.Dir(commonDir)); tree != "" {
		return filepath.Join(tree, ".git")
	}
	return ""
}

// rebase is path with its prefix from replaced by to, when path is from or beneath it.
func rebase(path, from, to string) string {
	if rel, err := filepath.Rel(from, path); err == nil && rel != ".." && !strings.HasPrefix(rel, "../") {
		return filepath.Join(to, rel)
	}
	return path
}

// ErrForeignCommonDir is Open's refusal of a git directory whose commondir file names a
// repository it does not belong to.
var ErrForeignCommonDir = errors.New("the git directory's commondir names a repository it does not belong to")

// checkLayout refuses a git directory whose commondir file points where git itself never
// puts one: git writes commondir only in a linked worktree's directory,
// <common dir>/worktrees/<name>. One anywhere else (a main worktree's .git/commondir, a
// worktree's pointed at another repository) was written by someone else, the agent of
// a run perhaps, and makes every git in that checkout read another repository's config,
// hooks and refs: git-ralph will not open it.
func checkLayout(gitDir, commonDir string) error {
	if SamePath(gitDir, commonDir) {
		return nil
	}
	admin := filepath.Dir(gitDir)
	if filepath.Base(admin) == "worktrees" && SamePath(filepath.Dir(admin), commonDir) {
		return nil
	}
	return fmt.Errorf("%w: %s points this checkout at %s", ErrForeignCommonDir, filepath.Join(gitDir, "commondir"), commonDir)
}

// whyNoWorkTree maps a failed Open to ErrBare or ErrNotRepo.
func (r *Repo) whyNoWorkTree(ctx context.Context, dir string, openErr error) error {
	out, err := r.run(ctx, call{
		dir:      dir,
		readOnly: true,
		args:     []string{"rev-parse", "--is-bare-repository", "--is-inside-git-dir"},
	})
	if err != nil {
		// Not a repository, or one git refuses to use; keep git's words.
		return fmt.Errorf("%w: %w", ErrNotRepo, openErr)
	}
	fields := strings.Fields(string(out))
	if len(fields) == 2 && fields[0] == "true" {
		return ErrBare
	}
	if len(fields) == 2 && fields[1] == "true" {
		return fmt.Errorf("%w: %q is inside the git directory", ErrNotRepo, dir)
	}
	return fmt.Errorf("%w: %w", ErrNotRepo, openErr)
}

// checkVersion runs `git version` and refuses gits older than MinVersion.
func (r *Repo) checkVersion(ctx context.Context, dir string) error {
	out, err := r.run(ctx, call{dir: dir, readOnly: true, args: []string{"version"}})
	if err != nil {
		if errors.Is(err, exec.ErrNotFound) {
			return ErrGitNotFound
		}
		return err
	}
	v, ok := parseVersion(string(out))
	if !ok {
		// A build we cannot read (a vendor string): let it through rather
		// than refuse a git that probably works.
		return nil
	}
	if v.less(minVersion) {
		return fmt.Errorf("%w: found %d.%d, git-ralph needs %s or newer", ErrGitTooOld, v.major, v.minor, MinVersion)
	}
	r.version = v
	return nil
}

// version is a git major.minor version.
type version struct{ major, minor int }

func (v version) less(o version) bool {
	return v.major < o.major || v.major == o.major && v.minor < o.minor
}

// knownOlder reports whether git's version is known (without asking) and older
// than major.minor.
func (r *Repo) knownOlder(major, minor int) bool {
	r.versionMu.Lock()
	defer r.versionMu.Unlock()
	return r.version != (version{}) && r.version.less(version{major, minor})
}

// parseVersion reads "git version 2.39.5" and vendor variants such as
// "git version 2.39.5.windows.1" or "git version 2.37.1 (Apple Git-137.1)".
func parseVersion(s string) (version, bool) {
	fields := strings.Fields(s)
	if len(fields) < 3 || fields[0] != "git" || fields[1] != "version" {
		return version{}, false
	}
	parts := strings.SplitN(fields[2], ".", 3)
	if len(parts) < 2 {
		return version{}, false
	}
	major, err1 := strconv.Atoi(leadingDigits(parts[0]))
	minor, err2 := strconv.Atoi(leadingDigits(parts[1]))
	if err1 != nil || err2 != nil {
		return version{}, false
	}
	return version{major, minor}, true
}

func leadingDigits(s string) string {
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	return s[:i]
}

// checkArg refuses an empty argument or one that git would parse as an
// option. Callers validate names long before this; it is the last line of
// defence for values that end up as positional argv entries.
func checkArg(what, s string) error {
	if s == "" || strings.HasPrefix(s, "-") {
		return fmt.Errorf("invalid %s %q", what, s)
	}
	return nil
}

// Init creates a repository in dir, on branch main, and opens it. The demo uses it for its
// throwaway repository.
func Init(ctx context.Context, dir string) (*Repo, error) {
	r := &Repo{Root: dir}
	if _, err := r.run(ctx, call{dir: dir, args: []string{"init", "-q", "--initial-branch=main"}}); err != nil {
		return nil, err
	}
	return Open(ctx, dir)
}

// Relocate points r at its git directory moved to gitDir (a main worktree's, so the
// common dir too; internal/gitdir moves it out of the working tree for a run, and back):
// every later git names it, and a hooks directory that lay in the old one is pinned
// where it is now. Nothing is asked of git: the move changed where, not what.
func (r *Repo) Relocate(gitDir string) {
	old := r.CommonDir
	r.hooksMu.Lock()
	if rel, err := filepath.Rel(old, r.hooksDir); err == nil && r.hooksDir != "" && rel != ".." && !strings.HasPrefix(rel, "../") {
		r.hooksDir = filepath.Join(gitDir, rel)
	}
	r.hooksMu.Unlock()
	r.GitDir, r.CommonDir = gitDir, gitDir
	r.shownDir = ""
	if home := filepath.Join(r.Root, ".git"); gitDir != home {
		r.shownDir = home
	}
}

// Shown is path as the user knows it: a path in the git directory while it is moved
// (Relocate) is shown where it will be again, under the working tree's .git.
func (r *Repo) Shown(path string) string {
	if r.shownDir == "" {
		return path
	}
	if rel, err := filepath.Rel(r.CommonDir, path); err == nil && rel != ".." && !strings.HasPrefix(rel, "../") {
		return filepath.Join(r.shownDir, rel)
	}
	return path
}
