package git

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
)

// Commits returns the commits named by revs (ids or ref names), in the order
// given, in one git call. The revisions go on stdin, so there may be any number.
func (r *Repo) Commits(ctx context.Context, revs []string) ([]Commit, error) {
	if len(revs) == 0 {
		return nil, nil
	}
	var in bytes.Buffer
	for _, rev := range revs {
		if err := checkArg("revision", rev); err != nil {
			return nil, err
		}
		if strings.ContainsAny(rev, "\n") {
			return nil, fmt.Errorf("invalid revision %q", rev)
		}
		in.WriteString(rev + "\n")
	}
	out, err := r.run(ctx, call{readOnly: true, stdin: in.Bytes(),
		args: []string{"log", "--no-show-signature", "--no-walk=unsorted", "-z", logFormat, "--stdin", "--"}})
	if err != nil {
		return nil, err
	}
	return parseLog(out)
}

// Diff is what one commit changed against its first parent.
type Diff struct {
	Stat  string // git diff --stat, as git prints it for people
	Patch string // the patch, cut at the limit Diffs was given
	Cut   int    // bytes of the patch left out; 0: all of it is there
}

// Diffs returns, for each of commits (as Log or Commits read them), its diff
// against its first parent, by commit id, in one git call (diff-tree --stdin).
// Each patch is cut at maxPatch bytes (0: no limit). A commit without a parent
// is left out.
func (r *Repo) Diffs(ctx context.Context, commits []Commit, maxPatch int) (map[string]Diff, error) {
	out := map[string]Diff{}
	var in bytes.Buffer
	for _, c := range commits {
		if len(c.Parents) > 0 {
			// "<commit> <parent>": against the first parent only, also for the
			// merge an attempt whose agent committed is saved as.
			in.WriteString(c.ID + " " + c.Parents[0] + "\n")
		}
	}
	if in.Len() == 0 {
		return out, nil
	}
	// Every record starts with NUL and the commit id; a patch never holds a
	// NUL (git calls such files binary), so the split is exact. The records
	// are split as they stream in, each kept only up to its limit, so a diff
	// of gigabytes costs no more memory than one at the limit.
	recs := &diffRecords{limit: maxPatch}
	if maxPatch > 0 {
		recs.limit += maxStat
	}
	_, err := r.run(ctx, call{readOnly: true, stdin: in.Bytes(), stdout: recs, args: []string{
		"diff-tree", "--stdin", "--always", "-r", "--no-color", "--no-ext-diff", "--no-textconv",
		"--format=%x00%H", "--stat", "-p"}})
	if err != nil {
		return nil, err
	}
	recs.flush()
	for _, rec := range recs.done {
		id, body, ok := strings.Cut(string(rec.data), "\n")
		if !ok || !isObjectID(id) {
			continue
		}
		body = strings.TrimPrefix(body, "---\n")
		stat, patch := body, ""
		if strings.HasPrefix(body, "diff --git ") {
			stat, patch = "", body
		} else if i := strings.Index(body, "\ndiff --git "); i >= 0 {
			stat, patch = body[:i], body[i+1:]
		}
		d := Diff{Stat: strings.Trim(stat, "\n"), Patch: patch, Cut: rec.dropped}
		if maxPatch > 0 && len(d.Patch) > maxPatch {
			cut := strings.LastIndexByte(d.Patch[:maxPatch], '\n') + 1
			d.Cut += len(d.Patch) - cut
			d.Patch = d.Patch[:cut]
		}
		out[id] = d
	}
	return out, nil
}

// maxStat is the room a record of Diffs keeps for the id and the stat, on top of
// the patch's limit.
const maxStat = 256 << 10

// diffRecords splits diff-tree's output at NULs as it streams in, keeping at most
// limit bytes of each record (0: all) and counting the rest.
type diffRecords struct {
	limit   int
	cur     []byte
	dropped int
	done    []diffRecord
}

type diffRecord struct {
	data    []byte
	dropped int // bytes of the record not kept
}

func (w *diffRecords) Write(p []byte) (int, error) {
	n := len(p)
	for {
		i := bytes.IndexByte(p, 0)
		if i < 0 {
			w.add(p)
			return n, nil
		}
		w.add(p[:i])
		w.flush()
		p = p[i+1:]
	}
}

func (w *diffRecords) add(b []byte) {
	if w.limit > 0 && len(w.cur)+len(b) > w.limit {
		keep := max(w.limit-len(w.cur), 0)
		w.cur = append(w.cur, b[:keep]...)
		w.dropped += len(b) - keep
		return
	}
	w.cur = append(w.cur, b...)
}

func (w *diffRecords) flush() {
	if len(w.cur) > 0 || w.dropped > 0 {
		w.done = append(w.done, diffRecord{data: w.cur, dropped: w.dropped})
	}
	w.cur, w.dropped = nil, 0
}

// ReadFile returns the content of path in the tree of commit rev; ok is false
// when there is no such file there.
func (r *Repo) ReadFile(ctx context.Context, rev, path string) (data []byte, ok bool, err error) {
	if err := checkArg("revision", rev); err != nil {
		return nil, false, err
	}
	out, err := r.run(ctx, call{readOnly: true, args: []string{"cat-file", "blob", rev + ":" + path}})
	var ge *Error
	if errors.As(err, &ge) && ge.ExitCode == 128 {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	return out, true, nil
}
