package git

import (
	"errors"
	"fmt"
	"strings"
)

// Sentinel errors for the states that callers must tell apart. Test them
// with errors.Is; they are usually wrapped with more detail.
var (
	// ErrNotRepo is returned by Open outside a git work tree: not in a
	// repository at all, or inside the .git directory itself.
	ErrNotRepo = errors.New("not in a git work tree")
	// ErrBare is returned by Open in a bare repository, which has no work
	// tree for an agent to work in.
	ErrBare = errors.New("repository is bare")
	// ErrNoCommits is returned when HEAD is unborn: a fresh repository, or
	// HEAD naming a branch that does not exist.
	ErrNoCommits = errors.New("repository has no commits yet")
	// ErrDetachedHead is returned by CurrentBranch when HEAD is not a branch.
	ErrDetachedHead = errors.New("HEAD is detached")
	// ErrGitNotFound is returned by Open when no git binary is on PATH.
	ErrGitNotFound = errors.New("git not found on PATH")
	// ErrGitTooOld is returned by Open when git is older than [MinVersion].
	ErrGitTooOld = errors.New("git is too old")
	// ErrInvalidBranchName is returned by CheckBranchName.
	ErrInvalidBranchName = errors.New("invalid branch name")
)

// Error is returned when a git command fails: it exited non-zero, or it
// could not be started at all (ExitCode -1).
//
// Branch on ExitCode (and on sentinel errors returned by the methods), never
// on Stderr: git's messages are localized and change between versions.
type Error struct {
	// Args is the argv of the command after "git".
	Args []string
	// ExitCode is git's exit status, or -1 when git never ran, was killed
	// by a signal, or the context was done before it started.
	ExitCode int
	// Stderr is what git printed, with surrounding whitespace trimmed and
	// bounded to the last 64 KiB. For commands that run user hooks (commit)
	// it holds stdout and stderr interleaved, because hooks print to both.
	Stderr string
	// Err is the underlying error: *exec.ExitError, a start error, or the
	// context's error.
	Err error
}

// Error formats as "git <subcommand>: <first line of stderr>", which is what
// a user needs to recognise the failure; the full text stays in Stderr.
func (e *Error) Error() string {
	name := "git " + subcommand(e.Args)
	if line := firstLine(e.Stderr); line != "" {
		return name + ": " + line
	}
	if e.Err != nil {
		return name + ": " + e.Err.Error()
	}
	return fmt.Sprintf("%s: exit status %d", name, e.ExitCode)
}

// Unwrap returns the underlying error, so errors.Is(err, context.Canceled)
// works on a command that never started.
func (e *Error) Unwrap() error { return e.Err }

// exitStatus returns the exit code of err when it is an *Error that ran git,
// and -1 otherwise; handy for the "exit 1 means no" cases.
func exitStatus(err error) int {
	var gerr *Error
	if errors.As(err, &gerr) {
		return gerr.ExitCode
	}
	return -1
}

// subcommand returns the git subcommand in args, skipping global options
// such as "-c key=value" so the message names what actually failed.
func subcommand(args []string) string {
	for i := 0; i < len(args); i++ {
		switch a := args[i]; {
		case a == "-c" || a == "-C":
			i++ // skip the option's value
		case strings.HasPrefix(a, "-"):
		default:
			return a
		}
	}
	if len(args) > 0 {
		return args[0]
	}
	return ""
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return strings.TrimSpace(s)
}

// ConflictError is a merge git stopped with conflicts: it exited 1 and left unmerged
// paths in the index (MergeSquash). Any other failure of a merge is a plain *Error.
type ConflictError struct {
	Paths []string // the unmerged paths, as ls-files -u names them
	Err   *Error   // git's own error
}

// Error is git's error: what the paths are is in Paths.
func (e *ConflictError) Error() string { return e.Err.Error() }

// Unwrap returns git's error.
func (e *ConflictError) Unwrap() error { return e.Err }

// CommitHookError is a commit git refused with exit status 1 while a hook it runs for
// every commit was there to run (pre-commit, prepare-commit-msg, commit-msg). git says
// nothing of its own when such a hook fails and exits 1, which is the evidence there is;
// a commit that failed otherwise (a fatal error exits 128) is a plain *Error.
type CommitHookError struct {
	Hooks []string // the commit hooks that were there, in the order git runs them
	Err   *Error   // git's own error; its Stderr holds what the hooks printed
}

// Error is git's error, the first line of what the hooks printed: which hooks were
// there is in Hooks.
func (e *CommitHookError) Error() string { return e.Err.Error() }

// Unwrap returns git's error.
func (e *CommitHookError) Unwrap() error { return e.Err }
