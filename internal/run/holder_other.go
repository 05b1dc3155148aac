//go:build !linux

package run

// Holder returns the pid of the process that holds the change's lock; without
// /proc/locks it cannot tell, and returns 0.
func (s *Store) Holder(change string) int { return 0 }

// Busy reports whether some process holds the change's lock (Held: there is no
// /proc/locks to read here).
func (s *Store) Busy(change string) bool { return s.Held(change) }

// busyOf is Busy of each of changes.
func (s *Store) busyOf(changes []string) map[string]bool {
	out := map[string]bool{}
	for _, x := range changes {
		out[x] = s.Busy(x)
	}
	return out
}
