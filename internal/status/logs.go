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

// Logs are the attempts of the local run rec that have a log, in the record's order.
func Logs(rec *run.Record) []AttemptLog {
	var out []AttemptLog
	for _, a := range rec.Attempts {
		if a.Log != "" {
			out = append(out, AttemptLog{Attempt: a, Name: attemptKey(a)})
		}
	}
	return out
}

// FindLog is the attempt of rec named <story>-<n>.
func FindLog(rec *run.Record, name string) (AttemptLog, bool) {
	for _, l := range Logs(rec) {
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

// Follow streams the output of the local run change's attempts to w as it comes (a
// log is read again every poll while its attempt runs): the attempt named only (a
// name "<story>-<n>"), or, with name "", the attempt at work and each one after it
// until the run stops (the one that ended last when none is at work). header is called
// with each attempt before its log. It returns when there is nothing more to follow,
// or ctx's error when ctx ends first.
func (rd Reader) Follow(ctx context.Context, change, name string, poll time.Duration, w io.Writer, header func(AttemptLog)) error {
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
		rec, err := rd.Store.Load(change)
		if err != nil {
			return err
		}
		running := rd.Store.Held(change)
		logs := Logs(rec)
		var cur AttemptLog
		found := false
		switch {
		case name != "":
			if cur, found = FindLog(rec, name); !found {
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
		header(cur)
		if err := rd.stream(ctx, change, cur, w, wait); err != nil {
			return err
		}
		if name != "" {
			return nil
		}
	}
}

// stream copies a's log to w, reading on while a runs (its record says so and its run
// holds the lock), and to the end once it stopped.
func (rd Reader) stream(ctx context.Context, change string, a AttemptLog, w io.Writer, wait func() error) error {
	var f io.ReadCloser
	for f == nil { // the log is created as the attempt starts
		var err error
		if f, err = rd.Store.Open(a.Log); err != nil {
			if !rd.attemptRunning(change, a.Name) {
				return nil
			}
			if err := wait(); err != nil {
				return err
			}
		}
	}
	defer f.Close()
	buf := make([]byte, 32<<10)
	for {
		n, err := f.Read(buf)
		if n > 0 {
			if _, werr := w.Write(buf[:n]); werr != nil {
				return werr
			}
			continue
		}
		if err != nil && !errors.Is(err, io.EOF) {
			return err
		}
		if !rd.attemptRunning(change, a.Name) {
			_, err := io.Copy(w, f) // what came since the last read
			return err
		}
		if err := wait(); err != nil {
			return err
		}
	}
}

// attemptRunning reports whether the attempt name of change is at work: its record
// says so and a process holds the run's lock.
func (rd Reader) attemptRunning(change, name string) bool {
	if !rd.Store.Held(change) {
		return false
	}
	rec, err := rd.Store.Load(change)
	if err != nil {
		return false
	}
	a, ok := FindLog(rec, name)
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
