// Package git is the only code in git-ralph that runs git.
//
// Every git invocation goes through one runner (runner.go), and callers only
// ever see typed methods on [Repo]: they state an operation and never build
// argv themselves. The runner
//
//   - passes arguments as argv, never through a shell;
//   - runs git in the worktree root with a scrubbed environment (the variables
//     of scrubbedEnv removed, because git exports them to hooks and they would
//     pin a child to the wrong repository, worktree or index), plus
//     GIT_RALPH=1 so our own hooks can detect recursion, plus
//     GIT_OPTIONAL_LOCKS=0 on read-only queries so they never fight a
//     concurrent git for index.lock;
//   - gives every git -c core.fsmonitor=false and -c core.hooksPath=<the
//     hooks directory Open found>, so that config an agent plants in the
//     repository cannot make git-ralph's git run its program (safetyArgs
//     says which keys are left alone and why);
//   - names the repository on every git it runs after Open: --git-dir and
//     --work-tree as Open found them, and GIT_COMMON_DIR, so that no file the
//     agent can write (a worktree's .git file, a commondir, core.worktree)
//     decides where git-ralph's git runs; a commondir that git never wrote
//     (in a main worktree's git directory, or pointing elsewhere) stops the
//     call before git starts, since git's ref backend follows it whatever
//     the environment says (ErrForeignCommonDir), and Open refuses it;
//   - starts git in its own process group, so the Ctrl-C that the terminal
//     sends to the whole foreground group reaches git-ralph but not a git
//     commit half-way through its work: the caller decides when to stop;
//   - does NOT kill git when the context is cancelled. The context is checked
//     before each git command starts, so cancellation stops the next step, not
//     the running one. A mutating command that is killed part-way leaves lock
//     files and half-updated worktrees behind, which is worse than waiting the
//     few milliseconds it needs to finish. The one exception is [Repo.RecordedHook],
//     which runs user code of unbounded duration (a test suite) and is
//     interrupted on cancellation;
//   - retries briefly when another git process holds index.lock, and matches
//     no other error text: failures are [*Error] values carrying git's exit
//     code and stderr, and the expected "no" answers (a missing ref, an unset
//     config key) are turned into values or sentinel errors by exit code;
//   - parses machine-readable output only (-z, --porcelain, --format).
//
// Some answers come from the files git keeps rather than from a git process:
// which operation is in progress (state.go), HEAD when it is unambiguous
// (refs.go: a regular HEAD naming a branch with a loose ref, or a detached
// id; anything else is asked of git), the gitlinks and the tree id of an
// index (index.go: what write-tree would write, computed; a split index or
// unusual entries are asked of git) and the tree and parents of a commit
// that is still a loose object (object.go). The loop asks these around every
// story, and each git process costs milliseconds.
//
// A repository nested in the work tree is never entered: add -A would run
// git status inside it, with its own config (index.go says how that is
// avoided), and Status says --ignore-submodules=dirty.
//
// The user's own git setup applies: config from every scope, hooks, commit
// signing, identity. Nothing here passes --no-verify.
package git
