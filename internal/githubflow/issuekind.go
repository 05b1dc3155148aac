package githubflow

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/git-ralph/git-ralph/internal/beneath"
	"github.com/git-ralph/git-ralph/internal/repofile"

	"github.com/git-ralph/git-ralph/internal/github"
	"github.com/git-ralph/git-ralph/internal/issue"
	"github.com/git-ralph/git-ralph/internal/run"
	"github.com/git-ralph/git-ralph/internal/source"
	"github.com/git-ralph/git-ralph/internal/tasklist"
)

// IssueKind is GitHub issues as a task source (source.Kind): '#10', OWNER/REPO#10 or an
// issue's URL names issue 10, run as issue-10, its sub-issues the stories. The CLI builds it,
// so that internal/source and internal/loop import nothing of GitHub. Its records under
// Dir/issue-<n>/ are read, written and checked after every attempt as run.json is; only a
// kind with Client and Fetch (start) reads GitHub (docs/TASKS.md, "The kinds").
type IssueKind struct {
	// Store is where the kind keeps what it read: the run store's directory (<git common
	// dir>/ralph), in the run's own directory; wherever the git directory is now (an
	// in-place run moves it out of the working tree while it works).
	Store *run.Store
	// Default is the repository '#10' names (Flow.IssueRepo), nil when none; asked only
	// for such an argument.
	Default func() *github.Repo
	// Client returns a client for a host; nil: no request is made (status, the report).
	Client func(host string) (*github.Client, error)
	// Fetch reads the issue from GitHub when it is opened (start); otherwise the run's
	// record of it is read.
	Fetch bool
	// Trust runs issues of any author (--trust-issue-author, ralph.trustIssueAuthors).
	Trust bool
	// Checkpoint reports whether commit is a checkpoint of story on ralph/<change> (on
	// that branch, with those trailers): a story is told done on GitHub only then, as
	// issue-pending.json, which the agent can write in place, says nothing by itself
	// after a crash. nil: every pending story is told (tests of the GitHub side).
	Checkpoint func(commit, change, story string) bool
	Ctx        context.Context

	mu      sync.Mutex
	fetched map[string]bool
	// written is what this process last wrote of each of the kind's records (issue.json,
	// issue-done.md, issue-pending.json; nil: removed), by path: what it reads of them
	// is this, and Forged compares the disk with it after every attempt.
	written map[string][]byte
}

// IssueKindID is the kind's ID: RALPH_SOURCE, the run record and the Ralph-Source
// trailer.
const IssueKindID = "issue"

func (k *IssueKind) About() source.About {
	return source.About{ID: IssueKindID, Noun: "issue", One: "a GitHub issue", Many: "GitHub issues",
		Make: "a GitHub issue: git ralph start '#N'"}
}

// Claim: '#N', OWNER/REPO#N, HOST/OWNER/REPO#N or an issue's URL, from the text alone.
func (k *IssueKind) Claim(r source.Repo, arg string, explicit bool) (source.Match, error) {
	var def *github.Repo
	if strings.HasPrefix(strings.TrimSpace(arg), "#") && k.Default != nil {
		def = k.Default()
	}
	ref, isRef, err := github.ParseIssueRef(arg, def)
	switch {
	case !isRef && !explicit:
		return source.Match{}, nil
	case !isRef:
		return source.Match{Err: &source.Error{Msg: fmt.Sprintf("%q names no GitHub issue", arg), Hint: "name it as '#N', OWNER/REPO#N or the issue's URL"}}, nil
	case errors.Is(err, github.ErrNoIssueRepo):
		return source.Match{Err: &source.Error{Msg: fmt.Sprintf("%s: this repository has no GitHub remote to take the issue from", arg),
			Hint: "name the repository: git ralph start OWNER/REPO" + arg + " (or git config ralph.repo OWNER/REPO)"}}, nil
	case err != nil:
		return source.Match{Err: &source.Error{Msg: err.Error(), Hint: "name an issue as '#N', OWNER/REPO#N or https://HOST/OWNER/REPO/issues/N"}}, nil
	}
	return source.Match{Ref: source.Ref{Kind: IssueKindID, Arg: ref.String()}, Rank: source.Exact}, nil
}

func (k *IssueKind) dir(n int) string { return filepath.Join(k.Store.Dir, issue.RunName(n)) }

const (
	snapshotFile = "issue.json"
	tasksFile    = "issue-tasks.md"
	doneFile     = "issue-done.md" // the tasks file as the last checkpoint left it
)

// The most read of the kind's files: an issue as read (its body and its sub-issues'
// are at most 64 KiB each on GitHub, and an issue has at most 100 sub-issues), a tasks
// file (a task list's bound), the progress not yet told.
const (
	maxSnapshot = 16 << 20
	maxTasks    = repofile.MaxFile
	maxPending  = 1 << 20
)

// root is the directory the kind's files are reached beneath, following no symlink
// below it: the git common dir (Dir is its ralph/).
func (k *IssueKind) root() string { return k.Store.Root() }

// readFile reads dir/name (at most max bytes, a regular file reached with no symlink),
// or what this process last wrote there.
func (k *IssueKind) readFile(dir, name string, max int64) ([]byte, error) {
	path := filepath.Join(dir, name)
	k.mu.Lock()
	data, ok := k.written[path]
	k.mu.Unlock()
	if ok {
		if data == nil {
			return nil, &fs.PathError{Op: "open", Path: path, Err: fs.ErrNotExist}
		}
		return data, nil
	}
	return k.readDisk(path, max)
}

// readDisk reads path from the disk as readFile does.
func (k *IssueKind) readDisk(path string, max int64) ([]byte, error) {
	rel, err := beneath.Rel(k.root(), path)
	if err != nil {
		return nil, err
	}
	return beneath.ReadFile(k.root(), rel, max)
}

// writeFile writes dir/name whole, replacing what is there (a symlink is replaced,
// never written through); record: one of the kind's records, held in memory.
func (k *IssueKind) writeFile(dir, name string, data []byte, record bool) error {
	path := filepath.Join(dir, name)
	rel, err := beneath.Rel(k.root(), path)
	if err != nil {
		return err
	}
	if err := beneath.WriteFile(k.root(), rel, data, 0o644); err != nil {
		return err
	}
	if record {
		k.remember(path, data)
	}
	return nil
}

func (k *IssueKind) remember(path string, data []byte) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.written == nil {
		k.written = map[string][]byte{}
	}
	if data == nil {
		data = []byte{}
	}
	k.written[path] = slices.Clone(data)
}

// Open reads the issue (from GitHub once per process when the kind fetches, else as
// recorded) and keeps the agent's tasks file in step with it.
func (k *IssueKind) Open(r source.Repo, ref source.Ref) (*source.Source, error) {
	return k.open(ref, k.Fetch)
}

// open is Open, reading GitHub when fetch.
func (k *IssueKind) open(ref source.Ref, fetch bool) (*source.Source, error) {
	iref, _, err := github.ParseIssueRef(ref.Arg, nil)
	if err != nil {
		return nil, &source.Error{Msg: fmt.Sprintf("the run's issue %q: %v", ref.Arg, err)}
	}
	dir := k.dir(iref.Number)
	snap, fresh, err := k.snapshot(iref, dir, fetch)
	if err != nil {
		return nil, err
	}
	stories := snap.Stories()
	var notes []string
	if fresh {
		if notes, err = k.writeFiles(dir, snap, stories); err != nil {
			return nil, err
		}
	}
	s := source.New(k, ref, dir, tasksFile, func(data []byte) (tasklist.Tasks, error) {
		got, err := issue.ReadFile(stories, data)
		if err != nil {
			return tasklist.Tasks{}, err
		}
		t := tasklist.Tasks{Stories: got}
		for _, st := range got {
			d, n := st.Counts()
			t.Done, t.Total = t.Done+d, t.Total+n
		}
		return t, nil
	})
	s.Name, s.RelDir, s.DoneMark = issue.RunName(iref.Number), ".", "[x]"
	s.Title, s.Why, s.Notes = snap.Parent.Title, snap.Parent.Body, notes
	s.Where = "issue " + iref.String() + ", " + snap.Parent.URL
	s.NoWhy = "_" + iref.String() + " says nothing of why._"
	s.NoTask = "write a task list into the issue's body on GitHub, or give it sub-issues"
	s.Docs = []source.Doc{{Title: "Issue", Path: iref.String() + ", " + snap.Parent.URL, Content: "# " + snap.Parent.Title + "\n\n" + snap.Parent.Body}}
	if fresh {
		s.Warning = k.tell(ref.Arg, dir, s.Name) // what an earlier checkpoint could not tell GitHub
	}
	return s, s.Reload()
}

// writeFiles writes the tasks file of a freshly read issue, keeping what the last
// checkpoint had done (a task of the same story with the same text); notes say which
// sub-issues were added or closed since the run's last reading.
func (k *IssueKind) writeFiles(dir string, snap *issue.Snapshot, stories []tasklist.Story) ([]string, error) {
	var notes []string
	old, err := k.readFile(dir, doneFile, maxTasks)
	if err == nil {
		prev := issue.FileTasks(old)
		for i, st := range stories {
			p, ok := prev.Story(st.ID)
			if !ok {
				notes = append(notes, fmt.Sprintf("story %s (%s) is new on GitHub since the last start", st.ID, st.Title))
				continue
			}
			for j, t := range st.Tasks {
				for _, pt := range p.Tasks {
					if pt.Done && pt.Text == strings.Join(strings.Fields(t.Text), " ") {
						stories[i].Tasks[j].Done = true
					}
				}
			}
		}
		for _, p := range prev.Stories {
			if _, ok := (tasklist.Tasks{Stories: stories}).Story(p.ID); !ok {
				notes = append(notes, fmt.Sprintf("story %s (%s) is no longer a sub-issue on GitHub: skipped", p.ID, p.Title))
			}
		}
		for _, sub := range snap.Subs {
			if !sub.Open() {
				if p, ok := prev.Story(issue.StoryID(sub.Number)); ok && !p.Complete() {
					notes = append(notes, fmt.Sprintf("story %s (%s) was closed on GitHub: done", p.ID, p.Title))
				}
			}
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	data := issue.File(snap.Parent.Title, stories)
	if err := k.writeFile(dir, tasksFile, data, false); err != nil {
		return nil, err
	}
	if err := k.writeFile(dir, doneFile, data, true); err != nil {
		return nil, err
	}
	return notes, nil
}

// snapshot is the issue as fetched now (once per process, when the kind fetches; fresh)
// or as recorded.
func (k *IssueKind) snapshot(ref github.IssueRef, dir string, fetch bool) (snap *issue.Snapshot, fresh bool, err error) {
	path := filepath.Join(dir, snapshotFile)
	k.mu.Lock()
	fetch = fetch && k.Client != nil && !k.fetched[ref.String()]
	k.mu.Unlock()
	if fetch {
		client, err := githubClient(k.Client, ref.Repo.Host, "git ralph start "+ref.String())
		if err != nil {
			return nil, false, err
		}
		snap, err := ReadIssue(k.ctx(), client, ref, false, "git ralph start "+ref.String())
		if err != nil {
			return nil, false, err
		}
		if data, err := k.readFile(dir, snapshotFile, maxSnapshot); err == nil { // a run's earlier reading: its comments are found again
			var old issue.Snapshot
			if json.Unmarshal(data, &old) == nil {
				for _, is := range append([]issue.Issue{old.Parent}, old.Subs...) {
					if cur := snap.Find(is.Number); cur != nil {
						cur.CommentID = is.CommentID
					}
				}
			}
		}
		if err := snap.CheckTrust(k.Trust); err != nil {
			var ue *issue.UntrustedError
			errors.As(err, &ue)
			return nil, false, &source.Error{Msg: ue.Error(), Hint: ue.Hint()}
		}
		if err := k.save(dir, snap); err != nil {
			return nil, false, err
		}
		k.mu.Lock()
		if k.fetched == nil {
			k.fetched = map[string]bool{}
		}
		k.fetched[ref.String()] = true
		k.mu.Unlock()
		return snap, true, nil
	}
	data, err := k.readFile(dir, snapshotFile, maxSnapshot)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, &source.Error{Msg: fmt.Sprintf("issue %s has not been read here", ref),
			Hint: "git ralph start " + ref.String() + " reads it from GitHub"}
	}
	if err != nil {
		return nil, false, err
	}
	snap = &issue.Snapshot{}
	if err := json.Unmarshal(data, snap); err != nil {
		return nil, false, fmt.Errorf("%s: %w", path, err)
	}
	return snap, false, nil
}

func (k *IssueKind) save(dir string, snap *issue.Snapshot) error {
	data, err := json.MarshalIndent(snap, "", "  ")
	if err != nil {
		return err
	}
	return k.writeFile(dir, snapshotFile, data, true) // whole or not at all
}

func (k *IssueKind) ctx() context.Context {
	if k.Ctx != nil {
		return k.Ctx
	}
	return context.Background()
}

func (k *IssueKind) List(source.Repo, []string) ([]*source.Source, error) { return nil, nil }

// AtCommit: the issue as the run recorded it (the commit holds none of it).
func (k *IssueKind) AtCommit(r source.Repo, ref source.Ref, _ func(string, bool) ([]byte, error)) (*source.Source, error) {
	s, err := k.open(ref, false)
	if err != nil {
		return &source.Source{Kind: k, Ref: ref}, nil
	}
	return s, nil
}

// Undo puts the tasks file back as the last checkpoint left it (as this process wrote
// it, or read with no symlink followed), replacing whatever the agent left at its name.
func (k *IssueKind) Undo(s *source.Source) error {
	dir := filepath.Dir(s.TasksPath)
	data, err := k.readFile(dir, doneFile, maxTasks)
	if err != nil {
		return err
	}
	return k.writeFile(dir, filepath.Base(s.TasksPath), data, false)
}

// Checkpointed keeps the tasks file as the checkpoint leaves it, and tells the story's
// issue on GitHub: the boxes of its body ticked, its progress comment. What GitHub could
// not be told waits in issue-pending.json and is told at the next checkpoint or start.
func (k *IssueKind) Checkpointed(s *source.Source, story tasklist.Story, p source.Progress) string {
	dir := filepath.Dir(s.TasksPath)
	data, err := k.readDisk(s.TasksPath, maxTasks) // the agent's file: a regular one, no link
	if err == nil {
		err = k.writeFile(dir, doneFile, data, true)
	}
	if err != nil {
		return "the issue's tasks file: " + err.Error()
	}
	pending := k.pending(dir)
	pending = append(pending, Progress{Run: p.Run, Branch: p.Branch, Story: story.ID, Checkpoint: p.Commit, Attempts: p.Attempts, LastFailure: p.LastFailure})
	if err := k.savePending(dir, pending); err != nil {
		return err.Error()
	}
	return k.tell(s.Ref.Arg, dir, s.Name)
}

const pendingFile = "issue-pending.json"

func (k *IssueKind) pending(dir string) []Progress {
	var out []Progress
	if data, err := k.readFile(dir, pendingFile, maxPending); err == nil {
		_ = json.Unmarshal(data, &out)
	}
	return out
}

func (k *IssueKind) savePending(dir string, p []Progress) error {
	path := filepath.Join(dir, pendingFile)
	if len(p) == 0 {
		rel, err := beneath.Rel(k.root(), path)
		if err != nil {
			return err
		}
		if err := beneath.Remove(k.root(), rel); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		k.mu.Lock()
		if k.written == nil {
			k.written = map[string][]byte{}
		}
		k.written[path] = nil
		k.mu.Unlock()
		return nil
	}
	data, err := json.Marshal(p)
	if err != nil {
		return err
	}
	return k.writeFile(dir, pendingFile, data, true)
}

// tell tells GitHub what it has not been told yet (issue-pending.json), story by story,
// in order; it stops at the first failure, which it returns as a warning ("" when all
// went through).
func (k *IssueKind) tell(arg, dir, name string) string {
	pending := k.pending(dir)
	if k.Client == nil || len(pending) == 0 {
		return ""
	}
	iref, _, err := github.ParseIssueRef(arg, nil)
	if err != nil {
		return err.Error()
	}
	snap, _, err := k.snapshot(iref, dir, false)
	if err != nil {
		return err.Error()
	}
	data, err := k.readFile(dir, doneFile, maxTasks)
	if err != nil {
		return err.Error()
	}
	again := "git ralph start " + name
	for len(pending) > 0 {
		p := pending[0]
		n, err := strconv.Atoi(strings.TrimPrefix(p.Story, "issue-"))
		is := snap.Find(n)
		if err != nil || is == nil || k.Checkpoint != nil && !k.Checkpoint(p.Checkpoint, name, p.Story) {
			pending = pending[1:] // no such story, or no checkpoint of it: nothing to tell
			continue
		}
		// the boxes to tick: the story's tasks done in the file and open in the body as read
		var lines []int
		stories := snap.Stories()
		if got, err := issue.ReadFile(stories, data); err == nil {
			for i := range got {
				if got[i].ID == p.Story {
					lines = issue.NewlyDone(stories[i], got[i])
				}
			}
		}
		client, err := githubClient(k.Client, iref.Repo.Host, again)
		if err == nil {
			var res *SyncResult
			if res, err = SyncProgress(k.ctx(), client, iref.Repo, *is, lines, is.CommentID, p, again); err == nil {
				is.CommentID = res.CommentID
				if !res.BodyChanged && !res.Closed {
					// the body as ticked; an edit made on GitHub is not taken in: the run's
					// stories stay those it started with (start again reads the issue anew)
					is.Body = res.Body
				}
			}
		}
		if serr := k.save(dir, snap); serr != nil && err == nil {
			err = serr
		}
		if err != nil {
			_ = k.savePending(dir, pending)
			return "GitHub was not told of story " + p.Story + " (its checkpoint stands; it is told at the next checkpoint, or run '" + again + "'): " + err.Error()
		}
		pending = pending[1:]
	}
	if err := k.savePending(dir, pending); err != nil {
		return err.Error()
	}
	return ""
}

// Forged compares the kind's records of s on disk (issue.json, issue-done.md,
// issue-pending.json) with what this process last wrote: while a loop holds the run lock
// nobody else writes them, so a difference is the agent's. Each one is written again from
// memory (or removed) and returned with the agent's version (empty past the read's bound).
func (k *IssueKind) Forged(s *source.Source) ([]source.Forgery, error) {
	dir := filepath.Dir(s.TasksPath)
	var out []source.Forgery
	for _, name := range []string{snapshotFile, doneFile, pendingFile} {
		path := filepath.Join(dir, name)
		k.mu.Lock()
		want, ok := k.written[path]
		k.mu.Unlock()
		if !ok {
			continue
		}
		have, err := k.readDisk(path, maxSnapshot)
		switch {
		case want == nil && errors.Is(err, fs.ErrNotExist):
			continue
		case want != nil && err == nil && bytes.Equal(have, want):
			continue
		case err != nil && !errors.Is(err, fs.ErrNotExist):
			var big *beneath.TooLargeError
			if !errors.As(err, &big) {
				return out, err
			}
			have = nil
		}
		out = append(out, source.Forgery{Path: path, Have: have})
		if want == nil {
			if err := k.savePending(dir, nil); err != nil {
				return out, err
			}
			continue
		}
		if err := k.writeFile(dir, name, want, true); err != nil {
			return out, err
		}
	}
	return out, nil
}

var (
	_ source.Kind     = (*IssueKind)(nil)
	_ source.Outside  = (*IssueKind)(nil)
	_ source.Recorder = (*IssueKind)(nil)
)

// ClosingLines are the lines the pull request of an issue run ends with: the sub-issues
// whose stories git holds a checkpoint of, and the issue once the run is complete; never one
// closed when last read, never from the agent's text. issue.json chooses no issue: one
// naming another issue or repository closes nothing (docs/TASKS.md, "The kinds").
func (k *IssueKind) ClosingLines(s *source.Source, rec *run.Record, prRepo string) []string {
	iref, _, err := github.ParseIssueRef(s.Ref.Arg, nil)
	if err != nil {
		return nil
	}
	snap, _, err := k.snapshot(iref, k.dir(iref.Number), false)
	if err != nil || snap.Parent.Number != iref.Number || snap.Repo != iref.Repo.String() {
		return nil
	}
	done := map[string]bool{}
	for _, a := range rec.Attempts {
		if a.Outcome == run.OutcomeComplete && (k.Checkpoint == nil || k.Checkpoint(a.Commit, rec.Change, a.Story)) {
			done[a.Story] = true
		}
	}
	var refs []issue.Ref
	if rec.Status == run.Complete {
		refs = append(refs, issue.Ref{Repo: snap.Repo, Number: snap.Parent.Number, Open: snap.Parent.Open()})
	}
	for _, sub := range snap.Subs {
		if done[issue.StoryID(sub.Number)] {
			refs = append(refs, issue.Ref{Repo: snap.Repo, Number: sub.Number, Open: sub.Open()})
		}
	}
	return issue.ClosingLines(prRepo, refs)
}
