package run

import (
	"encoding/json"

	"github.com/git-ralph/git-ralph/internal/beneath"
)

// Agent names the agent of the attempt under way, for a resume after a crash to stop
// it: its process group, that process's start time (a reused pid is never signalled)
// and the attempt's id in its environment (a forged file names no process of the
// agent's choosing). It is kept in agent.json beside the record, written without an
// fsync: a crash of git-ralph leaves it in the page cache for the resume, and a power
// loss leaves no agent to stop.
type Agent struct {
	PID   int    `json:"pid"`
	Start uint64 `json:"start"`
	ID    string `json:"id"`
}

const agentFile = "agent.json"

// SaveAgent writes the agent of change's attempt under way.
func (s *Store) SaveAgent(change string, a Agent) error {
	b, err := json.Marshal(a)
	if err != nil {
		return err
	}
	return beneath.WriteFileUnsynced(s.Root(), s.rel(change, agentFile), append(b, '\n'), 0o644)
}

// LoadAgent reads the agent SaveAgent wrote; ok is false when there is none (or it
// cannot be read as one).
func (s *Store) LoadAgent(change string) (a Agent, ok bool) {
	b, err := s.ReadFile(change, agentFile, 4<<10)
	if err != nil || json.Unmarshal(b, &a) != nil || a.PID <= 0 {
		return Agent{}, false
	}
	return a, true
}

// RemoveAgent forgets the agent of change: its attempt is over.
func (s *Store) RemoveAgent(change string) {
	_ = s.RemoveFile(s.ChangeDir(change) + "/" + agentFile)
}
