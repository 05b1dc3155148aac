package hooks

import (
	"bytes"
	"fmt"
	"strings"
)

// PushUpdate is one line of what git writes to a pre-push hook's stdin:
// "<local ref> SP <local object name> SP <remote ref> SP <remote object name> LF".
type PushUpdate struct {
	LocalRef, LocalOID   string
	RemoteRef, RemoteOID string
}

// Deletes reports whether the update deletes the remote ref: git then sends
// "(delete)" and an all-zero object name for the local side.
func (u PushUpdate) Deletes() bool {
	return strings.Trim(u.LocalOID, "0") == ""
}

// String is the update in refspec form, with refs/heads/ left out:
// "ralph/x", or "main:ralph/x" when the two sides differ.
func (u PushUpdate) String() string {
	l, r := strings.TrimPrefix(u.LocalRef, "refs/heads/"), strings.TrimPrefix(u.RemoteRef, "refs/heads/")
	if l == r {
		return l
	}
	return l + ":" + r
}

// ParsePrePush reads the refs of a push from a pre-push hook's stdin, one
// update per line (there may be any number, none included). A line that does
// not have four fields is an error.
func ParsePrePush(data []byte) ([]PushUpdate, error) {
	var out []PushUpdate
	n := 0
	for line := range bytes.Lines(data) {
		n++
		line = bytes.TrimRight(line, "\r\n")
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		f := strings.Fields(string(line))
		if len(f) != 4 {
			return nil, fmt.Errorf("pre-push input line %d: want 4 fields, got %d: %q", n, len(f), line)
		}
		out = append(out, PushUpdate{LocalRef: f[0], LocalOID: f[1], RemoteRef: f[2], RemoteOID: f[3]})
	}
	return out, nil
}

// IsRalphRef reports whether ref belongs to git-ralph's local scaffolding: a
// checkpoint branch refs/heads/ralph/*, or the private refs/ralph/* namespace
// (failed attempts, backups).
func IsRalphRef(ref string) bool {
	return strings.HasPrefix(ref, "refs/heads/ralph/") || strings.HasPrefix(ref, "refs/ralph/")
}

// RalphUpdates returns the updates that would publish git-ralph's scaffolding:
// those whose local or remote side is a ralph ref (IsRalphRef). Deleting such
// a ref on the remote publishes nothing and is not returned.
func RalphUpdates(updates []PushUpdate) []PushUpdate {
	var out []PushUpdate
	for _, u := range updates {
		if u.Deletes() {
			continue
		}
		if IsRalphRef(u.LocalRef) || IsRalphRef(u.RemoteRef) {
			out = append(out, u)
		}
	}
	return out
}
