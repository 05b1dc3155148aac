//go:build !linux

package gitdir

// Elsewhere there is no Landlock, so nothing to move the git directory out of reach of.

func where(tree, gitDir string) (string, error) {
	return "", &NotMovedError{"only Linux's sandbox needs the git directory moved"}
}

// Move refuses: see where.
func Move(tree string) (*Moved, error) {
	return nil, &NotMovedError{"only Linux's sandbox needs the git directory moved"}
}

// Link has nothing to check.
func (m *Moved) Link(keep, shown string) (string, error) { return "", nil }

// Restore has nothing to put back.
func (m *Moved) Restore() (string, error) { return "", nil }

// Recover has nothing to put back.
func Recover(dir string) ([]string, error) { return nil, nil }

// TreeOf knows of no move.
func TreeOf(home string) string { return "" }
