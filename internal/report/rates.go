package report

import "github.com/git-ralph/git-ralph/internal/run"

// Try is what the first-attempt rate needs of one attempt.
type Try struct {
	Story        string
	N            int
	Outcome      string
	Agent, Model string
}

// Rate says how often stories were done on their first attempt: of Done stories
// completed, First were completed by the story's first attempt; Attempts is
// every attempt counted (for a group: the group's own attempts). Interrupted
// attempts (Ctrl-C, a deadline) and the one under way count nowhere: they say
// nothing of the agent.
type Rate struct {
	Agent, Model string // "" for all of them
	Done, First  int
	Attempts     int
	// DoneAttempts are the attempts made on stories that are done (those on the stories
	// not done yet left out); for a group, its own such attempts.
	DoneAttempts int
}

// Percent is First/Done in percent, rounded down; 0 without a done story.
func (r Rate) Percent() int {
	if r.Done == 0 {
		return 0
	}
	return r.First * 100 / r.Done
}

// PerStory is the attempts a done story took; 0 without a done story. The attempts of a
// story not done yet say nothing of it: "1 of 1 stories, 5.00 attempts a story" was the
// one story that took 1 and another's 4 failures.
func (r Rate) PerStory() float64 {
	if r.Done == 0 {
		return 0
	}
	return float64(r.DoneAttempts) / float64(r.Done)
}

// FirstAttempts computes the rate over every attempt and, when attempts were
// made by more than one agent and model, one Rate per agent and model (in the
// order they first appear), each story credited to the agent and model of the
// attempt that completed it.
func FirstAttempts(tries []Try) (all Rate, by []Rate) {
	index := map[[2]string]int{}
	group := func(t Try) *Rate {
		k := [2]string{t.Agent, t.Model}
		i, ok := index[k]
		if !ok {
			i = len(by)
			index[k] = i
			by = append(by, Rate{Agent: t.Agent, Model: t.Model})
		}
		return &by[i]
	}
	counted := map[string]int{}         // story → attempts counted before it was done
	byGroup := map[string]map[int]int{} // story → group → its attempts counted
	done := map[string]bool{}
	for _, t := range tries {
		if t.Outcome == run.OutcomeInterrupted || t.Outcome == run.OutcomeRunning || done[t.Story] {
			continue
		}
		g := group(t)
		all.Attempts++
		g.Attempts++
		counted[t.Story]++
		if byGroup[t.Story] == nil {
			byGroup[t.Story] = map[int]int{}
		}
		byGroup[t.Story][index[[2]string{t.Agent, t.Model}]]++
		if t.Outcome != run.OutcomeComplete {
			continue
		}
		done[t.Story] = true
		all.Done++
		g.Done++
		all.DoneAttempts += counted[t.Story]
		for i, n := range byGroup[t.Story] {
			by[i].DoneAttempts += n
		}
		if counted[t.Story] == 1 {
			all.First++
			g.First++
		}
	}
	if len(by) < 2 {
		by = nil
	}
	return all, by
}
