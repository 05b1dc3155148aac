package git

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Commit is one commit as Log reads it.
type Commit struct {
	ID      string
	Parents []string // parent ids, first parent first
	Subject string   // the first paragraph, joined into one line
	Body    string   // the rest of the message, trailers included
	// Trailers maps each trailer key (as written, e.g. "Ralph-Story") to
	// its value, folded lines unfolded. For a key given twice the last
	// value wins.
	Trailers map[string]string
}

// logFormat prints five NUL-separated fields per commit; with -z each
// commit is then NUL-terminated. Messages cannot contain NUL, so the split
// is exact. Trailers are joined by \x1e, which no trailer contains.
const logFormat = "--format=%H%x00%P%x00%s%x00%b%x00%(trailers:only,unfold,separator=%x1e)"

// Log returns up to limit commits (limit <= 0: all) of revRange ("" = HEAD),
// newest first, as `git log` orders them.
func (r *Repo) Log(ctx context.Context, revRange string, limit int) ([]Commit, error) {
	return r.log(ctx, revRange, limit, false)
}

// FirstParentLog is Log of the first-parent line alone (`--first-parent`): from each
// commit, only its first parent is followed.
func (r *Repo) FirstParentLog(ctx context.Context, revRange string, limit int) ([]Commit, error) {
	return r.log(ctx, revRange, limit, true)
}

func (r *Repo) log(ctx context.Context, revRange string, limit int, firstParent bool) ([]Commit, error) {
	if revRange == "" {
		revRange = "HEAD"
	}
	if err := checkArg("revision range", revRange); err != nil {
		return nil, err
	}
	// --no-show-signature: log.showSignature=true would mix gpg's output
	// into ours.
	args := []string{"log", "--no-show-signature", "-z", logFormat}
	if limit > 0 {
		args = append(args, "--max-count="+strconv.Itoa(limit))
	}
	if firstParent {
		args = append(args, "--first-parent")
	}
	args = append(args, revRange, "--")
	w := &cappedWriter{max: MaxLogBytes}
	_, err := r.run(ctx, call{readOnly: true, args: args, stdout: w})
	if w.over {
		return nil, fmt.Errorf("%w: git log %s prints more than %d MiB", ErrTooLarge, revRange, MaxLogBytes>>20)
	}
	if err != nil {
		return nil, err
	}
	return parseLog(w.buf.Bytes())
}

// MaxLogBytes bounds what Log reads of git's output: commit messages are text others
// wrote (an agent's commits folded into a checkpoint, a runner's), and however long they
// are, git-ralph's memory stays bounded. A range that prints more is refused.
const MaxLogBytes = 32 << 20

// ErrTooLarge is returned when git's output passes the bound a read sets.
var ErrTooLarge = errors.New("too large")

// cappedWriter keeps at most max bytes of git's output, then stops the copy (git dies of
// the closed pipe, as under head).
type cappedWriter struct {
	max  int
	buf  bytes.Buffer
	over bool
}

func (w *cappedWriter) Write(p []byte) (int, error) {
	if w.buf.Len()+len(p) > w.max {
		w.over = true
		return 0, errEnough
	}
	return w.buf.Write(p)
}

// parseLog parses the output of logFormat with -z.
func parseLog(out []byte) ([]Commit, error) {
	const nfields = 5
	out = bytes.TrimSuffix(out, []byte{0})
	if len(out) == 0 {
		return nil, nil
	}
	fields := strings.Split(string(out), "\x00")
	if len(fields)%nfields != 0 {
		return nil, fmt.Errorf("git log: %d fields, not a multiple of %d", len(fields), nfields)
	}
	commits := make([]Commit, 0, len(fields)/nfields)
	for i := 0; i < len(fields); i += nfields {
		c := Commit{
			ID:       fields[i],
			Parents:  strings.Fields(fields[i+1]),
			Subject:  fields[i+2],
			Body:     strings.TrimRight(fields[i+3], "\n"),
			Trailers: map[string]string{},
		}
		for t := range strings.SplitSeq(fields[i+4], "\x1e") {
			// git prints every trailer as "<key>: <value>", whatever
			// separator the message used.
			if key, value, ok := strings.Cut(strings.TrimRight(t, "\n"), ":"); ok {
				c.Trailers[strings.TrimSpace(key)] = strings.TrimSpace(value)
			}
		}
		commits = append(commits, c)
	}
	return commits, nil
}
