//go:build !linux

package surface

import (
	"context"
	"io/fs"

	"github.com/git-ralph/git-ralph/internal/git"
)

// Off Linux the git directory's layout is not walked: there is no Landlock to make
// the git directory read-only, and the trust surface's checks are all there is.

// Layout is empty off Linux.
type Layout struct {
	Root    string
	Entries map[string]Entry
}

// Entry is one entry of a Layout.
type Entry struct {
	Mode  fs.FileMode
	Ino   uint64
	Size  int64
	Ctime int64
}

// LayoutCheck is what CheckLayout found and did: nothing, off Linux.
type LayoutCheck struct {
	Lines, Changes, Rewritten []string
	After                     *Layout
}

// ReadLayout reads nothing off Linux.
func ReadLayout(root string) (*Layout, error) { return &Layout{Root: root}, nil }

// CheckLayout checks nothing off Linux.
func CheckLayout(ctx context.Context, repo *git.Repo, before *Layout, writable bool, keep string, show func(string) string, snap *Snapshot) (*LayoutCheck, error) {
	return &LayoutCheck{}, nil
}
