//go:build !linux

package sandbox

// HomeMarks: elsewhere than Linux nothing is marked (nothing runs sandboxed).
type HomeMarks struct{}

// MarkHome marks nothing here.
func MarkHome(home string) *HomeMarks { return nil }

// PutBack puts nothing back.
func (h *HomeMarks) PutBack() []string { return nil }
