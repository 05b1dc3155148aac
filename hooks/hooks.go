// Package hooks holds git-ralph's optional git hooks and the code behind them.
//
// The hook files themselves (pre-commit, pre-push, ralph-verify in this
// directory) are embedded in the binary, so an installed git-ralph can install
// them. Each is a POSIX-sh shim with the [Marker] line that runs
// `git ralph hook <name> "$@"`, where the logic lives and is tested. A shim
// exits 0 with a note when git-ralph is not on PATH (running <name>.local
// instead, when there is one): a hook must never lock anybody out of their
// own repository.
//
// This package also holds what the hidden `hook` command and `hooks install`
// need that is not git: installing and removing the shims in a directory
// ([Install], [Uninstall], [List]), running a chained <name>.local hook
// ([RunLocal]), reading git's pre-push protocol ([ParsePrePush]), and the
// ralph-verify gate: finding the project's test command ([Detect]), splitting
// ralph.verifyCommand into argv without a shell ([SplitWords]) and running it
// with a timeout that kills its whole process group ([RunCommand]). It never
// runs git; internal/git does.
package hooks

import (
	"bytes"
	"embed"
	"slices"
)

// Marker is the line that makes a hook file git-ralph's: install overwrites
// and uninstall removes only files that carry it.
const Marker = "# installed by git-ralph"

// LocalSuffix names the file a user's own hook is kept in when install --force
// puts git-ralph's shim in its place; the shim runs it first.
const LocalSuffix = ".local"

//go:embed pre-commit pre-push ralph-verify
var shims embed.FS

// names is the order hooks are listed and installed in.
var names = []string{"pre-commit", "pre-push", "ralph-verify"}

// Names returns the names of the hooks git-ralph ships.
func Names() []string { return slices.Clone(names) }

// Known reports whether name is one of the hooks git-ralph ships.
func Known(name string) bool { return slices.Contains(names, name) }

// Shim returns the embedded file of hook name; ok is false for an unknown name.
func Shim(name string) (content []byte, ok bool) {
	if !Known(name) {
		return nil, false
	}
	b, err := shims.ReadFile(name)
	if err != nil {
		panic("hooks: embedded shim missing: " + name) // the embed list and names disagree: a bug
	}
	return b, true
}

// Description says in a few words what hook name does.
func Description(name string) string {
	switch name {
	case "pre-commit":
		return "refuses commits by the agent of a loop (RALPH_AGENT set)"
	case "pre-push":
		return "refuses to push ralph/* branches unless ralph.allowPush is true"
	case "ralph-verify":
		return "the checkpoint gate: ralph.verifyCommand or the project's tests"
	}
	return ""
}

// hasMarker reports whether content has the marker on a line of its own.
func hasMarker(content []byte) bool {
	for line := range bytes.Lines(content) {
		if string(bytes.TrimSpace(line)) == Marker {
			return true
		}
	}
	return false
}
