package status

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/git-ralph/git-ralph/internal/run"
)

// WatchPoll is how often Watch reads the records of the runs it follows.
const WatchPoll = 200 * time.Millisecond

// Ended is how a followed local run ended, as Watch saw it.
type Ended struct {
	Change string
	Status string // complete, failed, budget, interrupted, …
	Reason string // the record's stop reason, "" when none
}

// Complete reports whether the run ended with every story done.
func (e Ended) Complete() bool { return e.Status == string(run.Complete) || e.Status == "finished" }

// Running are the local runs a process is at work on now (not those on GitHub
// Actions), in the store's order.
func (rd Reader) Running() ([]string, error) {
	names, err := rd.Store.Changes()
	if err != nil {
		return nil, err
	}
	var out []string
	for _, n := range names {
		if !rd.Store.Held(n) {
			continue
		}
		if rec, err := rd.Store.Load(n); err == nil && !rec.IsRemote() {
			out = append(out, n)
		}
	}
	return out, nil
}

// watched is what Watch last saw of one run.
type watched struct {
	outcomes map[string]string // by "<story>-<n>": the attempt's outcome
	ended    bool
}

// Watch follows the local runs names (with more, also every local run that starts
// meanwhile), reading their records every poll, and calls line for each change of
// state: where each stands first, then each attempt started (with its live log), ended
// (its reason, or its checkpoint), and the run stopped. It returns how each ended once
// none is running, or ctx's error when ctx ends first (the runs go on).
func (rd Reader) Watch(ctx context.Context, names []string, more bool, poll time.Duration, line func(change, text string)) ([]Ended, error) {
	r := &rd
	seen := map[string]*watched{}
	var order []string
	var ended []Ended
	add := func(name string) {
		if _, ok := seen[name]; !ok {
			seen[name] = nil
			order = append(order, name)
		}
	}
	for _, n := range names {
		add(n)
	}
	t := time.NewTicker(poll)
	defer t.Stop()
	for {
		if more {
			if running, err := r.Running(); err == nil {
				for _, n := range running {
					add(n)
				}
			}
		}
		live := 0
		for _, name := range order {
			w := seen[name]
			if w != nil && w.ended {
				continue
			}
			rec, err := r.load(name, w != nil)
			if errors.Is(err, run.ErrNoRun) {
				if w == nil || !r.gone(name) {
					// not started yet (a -j loop waiting for its turn), or its git
					// directory is on its way back into the tree: looked at again
					live++
					continue
				}
				// finished meanwhile (finish removed its record)
				w.ended = true
				ended = append(ended, Ended{Change: name, Status: "finished"})
				line(name, "stopped: finished")
				continue
			}
			if err != nil {
				return ended, err
			}
			status, running := r.Effective(rec)
			if w == nil {
				w = &watched{outcomes: map[string]string{}}
				seen[name] = w
				line(name, standing(rd, rec, status, running))
				for _, a := range rec.Attempts {
					w.outcomes[attemptKey(a)] = a.Outcome
				}
			} else {
				for _, a := range rec.Attempts {
					k := attemptKey(a)
					prev, had := w.outcomes[k]
					if had && prev == a.Outcome {
						continue
					}
					w.outcomes[k] = a.Outcome
					if !had || prev != run.OutcomeRunning {
						line(name, startedText(a))
					}
					if a.Outcome != run.OutcomeRunning {
						line(name, AttemptText(a))
					}
				}
			}
			if running {
				live++
				continue
			}
			w.ended = true
			ended = append(ended, Ended{Change: name, Status: status, Reason: rec.StopReason})
			line(name, EndText(status, rec.StopReason))
		}
		if live == 0 {
			return ended, nil
		}
		select {
		case <-ctx.Done():
			return ended, ctx.Err()
		case <-t.C:
		}
	}
}

func attemptKey(a run.Attempt) string { return fmt.Sprintf("%s-%d", a.Story, a.N) }

// standing is the first line Watch prints of a run: where it stands.
func standing(rd Reader, rec *run.Record, status string, running bool) string {
	done := 0
	for _, a := range rec.Attempts {
		if a.Outcome == run.OutcomeComplete {
			done++
		}
	}
	if !running {
		return fmt.Sprintf("not running (%s), %d checkpoint(s)", status, done)
	}
	s := fmt.Sprintf("running (pid %d), %d checkpoint(s) so far", rec.PID, done)
	if a := rec.Last(); a != nil && a.Outcome == run.OutcomeRunning {
		s += "; " + startedText(*a)
	}
	return s
}

// startedText is the line of an attempt that started, with its live log.
func startedText(a run.Attempt) string {
	s := fmt.Sprintf("story %s attempt %d started", a.Story, a.N)
	if a.Log != "" {
		s += " (log: " + a.Log + ")"
	}
	return s
}

// AttemptText is the line of an attempt that ended: its checkpoint, or its outcome
// and the first line of its reason.
func AttemptText(a run.Attempt) string {
	if a.Outcome == run.OutcomeComplete {
		c := a.Commit
		if len(c) > 7 {
			c = c[:7]
		}
		return fmt.Sprintf("story %s: checkpoint %s", a.Story, c)
	}
	s := fmt.Sprintf("story %s attempt %d %s", a.Story, a.N, a.Outcome)
	if first, _, _ := strings.Cut(strings.TrimSpace(a.Reason), "\n"); first != "" && first != a.Outcome {
		s += ": " + first
	}
	return s
}

// EndText is the line of a run that stopped.
func EndText(status, reason string) string {
	if reason != "" && reason != status && status != string(run.Complete) {
		return "stopped: " + status + ": " + reason
	}
	return "stopped: " + status
}

// load is the record of name; when seen (the run was followed) and it is not where the
// store is, the store is found anew (Reopen) and asked again.
func (rd *Reader) load(name string, seen bool) (*run.Record, error) {
	rec, err := rd.Store.Load(name)
	if errors.Is(err, run.ErrNoRun) && seen && rd.Reopen != nil {
		if st, rerr := rd.Reopen(); rerr == nil {
			rd.Store = st
			return rd.Store.Load(name)
		}
	}
	return rec, err
}

// gone reports whether the run name, whose record load did not find, has ended for good:
// finish removed its record, or the store is there without it. A store that is not
// there is a git directory on its way back into the tree (looked at again).
func (rd *Reader) gone(name string) bool {
	if rd.Store.LoadFinished(name) != nil {
		return true
	}
	_, err := os.Stat(rd.Store.Dir)
	return err == nil
}
