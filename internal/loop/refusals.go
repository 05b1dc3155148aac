package loop

import (
	"github.com/git-ralph/git-ralph/internal/agent"
	"github.com/git-ralph/git-ralph/internal/run"
	"github.com/git-ralph/git-ralph/internal/sandbox"
)

// sandboxRefusals are the paths the sandbox refused att's agent (agent.Refusals): nil
// when the run is not sandboxed, or when none is confirmed.
func (s *session) sandboxRefusals(att *run.Attempt) []sandbox.Refusal {
	if s.policy == nil || att.Log == "" {
		return nil
	}
	f, err := s.Store.Open(att.Log)
	if err != nil {
		return nil
	}
	defer f.Close()
	return agent.Refusals(s.r.Driver, s.policy, f)
}
