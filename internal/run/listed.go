package run

import "slices"

// LoadListed is the record of the run named name, nil when there is none; one that
// cannot be read is an error. The name is only looked up among the runs listed, never
// joined into a path.
func (s *Store) LoadListed(name string) (*Record, error) {
	names, err := s.Changes()
	if err != nil || !slices.Contains(names, name) {
		return nil, nil
	}
	return s.Load(name)
}

// Crashed reports whether change has a run that a killed git-ralph left: its record
// says it was at work and nobody holds its lock. The name is only looked up among the
// runs listed, never joined into a path.
func (s *Store) Crashed(change string) bool {
	names, err := s.Changes()
	if err != nil || !slices.Contains(names, change) || s.Held(change) {
		return false
	}
	rec, err := s.Load(change)
	return err == nil && (rec.Status == Running || rec.Status == Starting || rec.Busy != "")
}
