package git

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strconv"
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
		if !ok || !IsObjectID(id) {
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

// ReadFile returns the first max bytes of path in the tree of commit rev and the whole
// file's size (more than len(data) when it was cut); ok is false when there is no such
// file there. Nothing past max is held: git's output stops being read there.
func (r *Repo) ReadFile(ctx context.Context, rev, path string, max int) (data []byte, size int64, ok bool, err error) {
	if err := checkArg("revision", rev); err != nil {
		return nil, 0, false, err
	}
	if strings.ContainsAny(path, "\n\x00") {
		return nil, 0, false, nil // no such file: a tree entry holds neither
	}
	w := &blobWriter{max: max}
	_, err = r.run(ctx, call{readOnly: true, args: []string{"cat-file", "--batch"}, stdin: []byte(rev + ":" + path + "\n"), stdout: w})
	if err != nil && !w.stopped {
		return nil, 0, false, err
	}
	if !w.blob {
		return nil, 0, false, nil // missing, or not a file
	}
	return w.data, w.size, true, nil
}

// errEnough stops the copy of git's output once a blobWriter holds what it keeps; git
// then dies of the closed pipe, as `head` would make it.
var errEnough = errors.New("enough of the blob")

// blobWriter reads `git cat-file --batch`'s answer for one object: its header
// ("<id> <type> <size>", or "<name> missing"), then at most max bytes of its content.
type blobWriter struct {
	max     int
	header  []byte
	headed  bool
	blob    bool  // the header named a blob
	size    int64 // its size
	data    []byte
	stopped bool // the copy was stopped at max
}

func (w *blobWriter) Write(p []byte) (int, error) {
	n := len(p)
	if !w.headed {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			if len(w.header)+len(p) > 4096 {
				return 0, errors.New("git cat-file: no header")
			}
			w.header = append(w.header, p...)
			return n, nil
		}
		w.header, w.headed, p = append(w.header, p[:i]...), true, p[i+1:]
		if f := strings.Fields(string(w.header)); len(f) == 3 && f[1] == "blob" {
			size, err := strconv.ParseInt(f[2], 10, 64)
			w.blob, w.size = err == nil && size >= 0, size
		}
	}
	if !w.blob {
		return n, nil
	}
	// The content, then the newline --batch writes after it: keep the content, up to max.
	if room := int(min(int64(w.max), w.size)) - len(w.data); room > 0 {
		w.data = append(w.data, p[:min(len(p), room)]...)
	}
	if w.size > int64(w.max) && len(w.data) >= w.max {
		w.stopped = true
		return n, errEnough
	}
	return n, nil
}
