package loop

import "github.com/git-ralph/git-ralph/internal/run"

// The loop's small text helpers, for the workflows beside it (internal/githubflow),
// which used to keep copies of them.

// Short is a commit id cut to 7 characters.
func Short(id string) string { return short(id) }

// Tail returns the last n lines of s, trimmed.
func Tail(s string, n int) string { return tail(s, n) }

// OrDetached names the branch the run started from, or its commit when detached.
func OrDetached(rec *run.Record) string { return orDetached(rec) }

// OrDetachedName names branch cur, or "detached HEAD <head>" when cur is "".
func OrDetachedName(cur, head string) string { return orDetachedName(cur, head) }
