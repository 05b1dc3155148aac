package status

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/git-ralph/git-ralph/internal/run"
)

// AttemptLog is one attempt of a local run and its log.
type AttemptLog struct {
	run.Attempt
	Name string // <story>-<n>
}

// Logs are the attempts of the local run rec that have a log, in the record's order,
// each log where the store is now (a recorded path may name where an in-place run's git
// directory was while the attempt ran).
func (rd Reader) Logs(rec *run.Record) []AttemptLog {
	var out []AttemptLog
	for _, a := range rec.Attempts {
		if a.Log != "" {
			a.Log = rd.Store.LogPath(rec.Change, a.Story, a.N)
			out = append(out, AttemptLog{Attempt: a, Name: attemptKey(a)})
		}
	}
	return out
}

// FindLog is the attempt of rec named <story>-<n>.
func (rd Reader) FindLog(rec *run.Record, name string) (AttemptLog, bool) {
	for _, l := range rd.Logs(rec) {
		if l.Name == name {
			return l, true
		}
	}
	return AttemptLog{}, false
}

// Print copies the log of an attempt to w, as it is now.
func (rd Reader) Print(a AttemptLog, w io.Writer) error {
	f, err := rd.Store.Open(a.Log)
	if err != nil {
		return fmt.Errorf("read the log of attempt %s: %w", a.Name, err)
	}
	defer f.Close()
	_, err = io.Copy(w, f)
	return err
}

// Follow hands show the output of the run change's attempts as it comes, one attempt
// at a time, as a reader that ends once the attempt has (followReader): the attempt
// named ("<story>-<n>"), or with name "" the one at work (else the last) and each one
// after it until the run stops. It returns ctx's error when ctx ends first.
func (rd Reader) Follow(ctx context.Context, change, name string, poll time.Duration, show func(AttemptLog, io.Reader) error) error {
	r := &rd
	t := time.NewTicker(poll)
	defer t.Stop()
	wait := func() error {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
			return nil
		}
	}
	next := -1 // with name "": the index in Logs of the next attempt to follow
	for {
		rec, err := r.load(change, next > 0)
		if errors.Is(err, run.ErrNoRun) && next > 0 {
			if r.gone(change) {
				return nil // finished meanwhile
			}
			if err := wait(); err != nil { // its git directory on its way back
				return err
			}
			continue
		}
		if err != nil {
			return err
		}
		running := r.Store.Held(change)
		logs := r.Logs(rec)
		var cur AttemptLog
		found := false
		switch {
		case name != "":
			if cur, found = r.FindLog(rec, name); !found {
				return fmt.Errorf("the run of %q has no attempt %s", change, name)
			}
		case next < 0 && len(logs) > 0: // the attempt at work, else the last one
			next = len(logs) - 1
			fallthrough
		case next >= 0 && next < len(logs):
			cur, found = logs[next], true
			next++
		}
		if !found {
			if !running || name != "" {
				return nil
			}
			if err := wait(); err != nil { // between attempts: the next one has not started
				return err
			}
			continue
		}
		fr := &followReader{rd: r, change: change, a: cur, wait: wait}
		err = show(cur, fr)
		fr.close()
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if err != nil {
			return err
		}
		if name != "" {
			return nil
		}
	}
}

// followReader reads an attempt's log as it grows: at the end of what is written it
// waits while the attempt runs (its record says so and its run holds the lock), and
// once the attempt has stopped it gives the rest and then io.EOF.
type followReader struct {
	rd      *Reader
	change  string
	a       AttemptLog
	wait    func() error
	f       io.ReadCloser
	stopped bool
}

func (fr *followReader) Read(p []byte) (int, error) {
	for {
		if fr.f == nil { // the log is created as the attempt starts
			f, err := fr.rd.Store.Open(fr.rd.Store.LogPath(fr.change, fr.a.Story, fr.a.N))
			if err != nil {
				if !fr.rd.attemptRunning(fr.change, fr.a.Name) {
					return 0, io.EOF
				}
				if err := fr.wait(); err != nil {
					return 0, err
				}
				continue
			}
			fr.f = f
		}
		n, err := fr.f.Read(p)
		if n > 0 {
			return n, nil
		}
		if err != nil && !errors.Is(err, io.EOF) {
			return 0, err
		}
		if fr.stopped {
			return 0, io.EOF
		}
		if !fr.rd.attemptRunning(fr.change, fr.a.Name) {
			fr.stopped = true // one more read: what came since the last one
			continue
		}
		if err := fr.wait(); err != nil {
			return 0, err
		}
	}
}

func (fr *followReader) close() {
	if fr.f != nil {
		fr.f.Close()
	}
}

// attemptRunning reports whether the attempt name of change is at work: its record
// says so and a process holds the run's lock.
func (rd *Reader) attemptRunning(change, name string) bool {
	rec, err := rd.load(change, true)
	if errors.Is(err, run.ErrNoRun) {
		return !rd.gone(change) // its git directory on its way back: looked at again
	}
	if err != nil || !rd.Store.Held(change) {
		return false
	}
	a, ok := rd.FindLog(rec, name)
	return ok && a.Outcome == run.OutcomeRunning
}

// LogLine is a line of `logs`'s list: the attempt, its outcome and its log's path.
func LogLine(a AttemptLog) string {
	text := AttemptText(a.Attempt)
	if a.Outcome == run.OutcomeRunning {
		text = "running"
	} else if _, rest, ok := strings.Cut(text, ": "); ok && a.Outcome != run.OutcomeComplete {
		text = a.Outcome + ": " + rest
	} else if a.Outcome != run.OutcomeComplete {
		text = a.Outcome
	}
	return fmt.Sprintf("%s\t%s\t%s", a.Name, text, a.Log)
}
