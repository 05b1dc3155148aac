// Package run keeps the state of a Ralph loop under <git-common-dir>/ralph/<change>/:
// the run record (run.json), the learnings file, the per-attempt logs and the lock; and
// answers the small questions about one record (its attempts, its worktree's state,
// where its change is read, how it ends: FinishMode, FinishResult) or the store
// (Stamps, PickRun) that need nothing else.
//
// Nothing here is ever committed, and nothing here runs git: the directory lives inside
// the git common dir, where the agent's `git clean` cannot reach it and every worktree
// of the repository sees the same state. In place that directory is inside the working
// tree the agent writes, so every file here is created, replaced, removed and read
// through internal/beneath, beneath the git common dir: a symlink the agent planted
// anywhere below it (ralph/<change>/logs -> ~) is never followed.
package run

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/git-ralph/git-ralph/internal/beneath"
)

// Status is where a run stands.
type Status string

// The statuses a run record can carry.
const (
	Starting    Status = "starting"    // the record exists, the initial state commit may not yet
	Running     Status = "running"     // a loop is (or was, if nothing holds the lock) working on it
	Interrupted Status = "interrupted" // stopped by Ctrl-C or SIGTERM; start resumes it
	Failed      Status = "failed"      // a story ran out of retries, or the agent cannot run
	Budget      Status = "budget"      // the run used up its --max-cost or --max-tokens; start with a higher one resumes it
	Complete    Status = "complete"    // every story is done; finish is next

	// A run on GitHub Actions (docs/REMOTE.md, "The pieces"). Dispatching is written before anything
	// is pushed; a crash in it is resolved by the next dispatch or status, which look
	// for a run with Remote.Nonce and never dispatch twice.
	Dispatching Status = "dispatching" // the branch may be pushed, the run may not exist yet
	Dispatched  Status = "dispatched"  // the run exists on GitHub; Remote.RunID may still be unknown
)

// Attempt outcomes.
const (
	OutcomeRunning     = "running"
	OutcomeComplete    = "complete"
	OutcomeFailed      = "failed"      // the agent said FAILED, or a check after COMPLETE failed
	OutcomeNoSignal    = "no-signal"   // the agent ended without a promise
	OutcomeError       = "agent-error" // the agent reported an error, crashed or exited non-zero
	OutcomeTimeout     = "timeout"
	OutcomeInterrupted = "interrupted"
)

// Record is the run record: the truth about a run. The checkpoint id lives here, never
// re-read from HEAD, because the agent may have moved HEAD.
type Record struct {
	Version int    `json:"version"`
	Change  string `json:"change"`
	// Source is the kind of task list the run works through (RALPH_SOURCE: speckit, plan,
	// prd); "" is an OpenSpec change, as every run recorded before 2026-11-26 was.
	Source string `json:"source,omitempty"`
	// SourceArg reopens it (source.Open): the tracked file's path relative to the top
	// level for a plan or a prd.json; "" when it is the run name.
	SourceArg      string `json:"sourceArg,omitempty"`
	StoryLevel     int    `json:"storyLevel,omitempty"` // a plan's --story-level; 0: the default
	Branch         string `json:"branch"`
	Original       string `json:"originalBranch"` // "" when HEAD was detached
	OriginalCommit string `json:"originalCommit"`
	Initial        string `json:"initialCommit,omitempty"`
	Checkpoint     string `json:"checkpoint,omitempty"`
	Status         Status `json:"status"`
	StopReason     string `json:"stopReason,omitempty"`
	// StopCause is what caused the error the run stopped with, when that error had a
	// cause its message does not give (what git or the file system said); "" else.
	StopCause    string `json:"stopCause,omitempty"`
	CurrentStory string `json:"currentStory,omitempty"`
	Agent        string `json:"agent"`
	Model        string `json:"model,omitempty"`
	// Sandbox is the agent's sandbox as the last start ran it ("landlock ABI 7, git
	// directory read-only", "off; …"); "" for a run made before git-ralph had one.
	Sandbox    string    `json:"sandbox,omitempty"`
	CostUSD    float64   `json:"costUSD"`
	CostKnown  bool      `json:"costKnown"`
	PID        int       `json:"pid,omitempty"`
	AgentPID   int       `json:"agentPID,omitempty"`
	AgentStart uint64    `json:"agentStart,omitempty"`
	AgentID    string    `json:"agentID,omitempty"` // RALPH_ATTEMPT_ID in the agent's environment
	Backups    []string  `json:"backups,omitempty"`
	Started    time.Time `json:"started"`
	Updated    time.Time `json:"updated"`
	Attempts   []Attempt `json:"attempts"`

	// Tokens is what the agent reported of this run, resumes included: input
	// (cache reads counted as the agent counts them) plus output, summed over
	// the attempts; TokensKnown says some attempt reported any. Like CostUSD and
	// CostKnown, it is written for the reader of run.json and computed anew from the
	// attempts whenever a record is read (SumAttempts).
	Tokens      int64 `json:"tokens"`
	TokensKnown bool  `json:"tokensKnown"`
	// MaxCost and MaxTokens are the budget the last start ran with (--max-cost,
	// --max-tokens or their git config); 0 when none.
	MaxCost   float64 `json:"maxCost,omitempty"`
	MaxTokens int64   `json:"maxTokens,omitempty"`

	// Finishing is set while finish --squash moves the work onto the original branch,
	// so that a finish killed half-way is completed by the next one.
	Finishing *Finishing `json:"finishing,omitempty"`

	// Busy names the git step under way while the status alone does not say that one
	// is (a resume after a clean stop switching back to the branch, finish --keep): a
	// git killed there may leave its lock files, which the next command then removes.
	Busy string `json:"busy,omitempty"`

	// PullRequest is set by finish --pr once it knows where the branch goes, so that a
	// finish --pr stopped half-way picks up where it stopped.
	PullRequest *PullRequest `json:"pullRequest,omitempty"`

	// Worktree is set for a run in a linked worktree (start --worktree).
	Worktree *Worktree `json:"worktree,omitempty"`

	// Remote is set for a run on GitHub Actions: by dispatch on the user's machine, and
	// by start --adopt --run-id on the runner.
	Remote *Remote `json:"remote,omitempty"`
}

// Stop records where the run stands (st), why it stopped (reason; "" while it runs) and
// the cause of the error it stopped with (nil when none), replacing what an earlier stop
// said; a run that no longer runs has no process (PID 0).
func (r *Record) Stop(st Status, reason string, cause error) {
	r.Status, r.StopReason, r.StopCause = st, reason, ""
	if st != Running && st != Starting {
		r.PID = 0 // no process runs it any more
	}
	if cause != nil {
		r.StopCause = cause.Error()
	}
}

// Worktree is where a worktree run works, and where its work goes back to.
type Worktree struct {
	Path    string `json:"path"`           // the linked worktree, on the run's branch
	Created bool   `json:"createdByRalph"` // git-ralph added it (and may remove it when clean)
	Origin  string `json:"origin"`         // the checkout start ran in: finish --squash lands there
}

// WorktreeState is where a run's worktree stands, for status and list.
type WorktreeState struct {
	Path    string `json:"path"`
	Missing bool   `json:"missing"` // the directory is gone; start re-creates it
}

// WorktreeState is where r's worktree stands; nil for a run in the user's checkout.
func (r *Record) WorktreeState() *WorktreeState {
	if r.Worktree == nil {
		return nil
	}
	_, err := os.Stat(r.Worktree.Path)
	return &WorktreeState{Path: r.Worktree.Path, Missing: errors.Is(err, fs.ErrNotExist)}
}

// ChangeRoot is where r's change is read: its worktree when it has one that exists,
// else root.
func (r *Record) ChangeRoot(root string) string {
	if w := r.WorktreeState(); w != nil && !w.Missing {
		return w.Path
	}
	return root
}

// PullRequest is what finish --pr has done so far.
type PullRequest struct {
	Remote string `json:"remote"`           // the git remote pushed to
	Repo   string `json:"repo"`             // [HOST/]OWNER/REPO the pull request is opened in
	Pushed string `json:"pushed,omitempty"` // the tip last pushed: the lease of the next push
	URL    string `json:"url,omitempty"`
}

// Finished is what is left of a run after finish: enough for status to say how it ended.
type Finished struct {
	Change string    `json:"change"`
	Branch string    `json:"branch"`
	How    string    `json:"how"`           // squash, keep or pr
	URL    string    `json:"url,omitempty"` // the pull request, for pr
	Remote string    `json:"remote,omitempty"`
	Pushed string    `json:"pushed,omitempty"` // the tip pushed to Remote, for pr: a later run's lease
	At     time.Time `json:"at"`
	// For squash: the branch (or commit) the work landed on, and the ref keeping the
	// branch's commits.
	Target string `json:"target,omitempty"`
	Backup string `json:"backup,omitempty"`
}

// SaveFinished records how the run of f.Change ended.
func (s *Store) SaveFinished(f Finished) error {
	data, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return err
	}
	return beneath.WriteFile(s.Root(), s.rel(f.Change, "finished.json"), append(data, '\n'), 0o644)
}

// LoadFinished returns how the last run of change ended, or nil when none did.
func (s *Store) LoadFinished(change string) *Finished {
	data, err := s.ReadFile(change, "finished.json", maxFinished)
	if err != nil {
		return nil
	}
	var f Finished
	if json.Unmarshal(data, &f) != nil {
		return nil
	}
	return &f
}

// Remote is where a run on GitHub Actions is and what was last seen of it. The refs
// of a remote run: the branch refs/heads/ralph/<change> on GitRemote, and under
// refs/ralph/<change>/runs/<RunID>/ the run's attempts (attempts/<story>-<n>) and its
// state commit (state: a root commit holding record.json and learnings.md). finish
// fetches those to the same names locally, beside the local attempts/ and backup/.
type Remote struct {
	RepoHost  string `json:"repoHost,omitempty"`  // github.com, or a GHES host
	Owner     string `json:"owner,omitempty"`     // the repository's owner
	Name      string `json:"name,omitempty"`      // the repository's name
	GitRemote string `json:"gitRemote,omitempty"` // the git remote the branch was pushed to
	Workflow  string `json:"workflow,omitempty"`  // the workflow file, e.g. ralph.yml
	Ref       string `json:"ref,omitempty"`       // the ref the workflow was dispatched on (the default branch)
	Nonce     string `json:"nonce,omitempty"`     // in the run's display title; finds a run whose id is unknown
	RunID     int64  `json:"runId,omitempty"`     // GitHub's workflow run id; 0 while unknown
	HTMLURL   string `json:"htmlUrl,omitempty"`   // the run's page

	// StartCommit is the branch tip the run started from: pushed by dispatch, and
	// checked out by the runner. Publish pushes only descendants of it, with a lease
	// on it; finish refuses a fetched branch that does not descend from it.
	StartCommit  string    `json:"startCommit,omitempty"`
	DispatchedAt time.Time `json:"dispatchedAt,omitzero"`

	LastSeenStatus     string `json:"lastSeenStatus,omitempty"`     // queued, in_progress, completed, …
	LastSeenConclusion string `json:"lastSeenConclusion,omitempty"` // success, failure, cancelled, timed_out, …
	ETag               string `json:"etag,omitempty"`               // of the last run listing, for a conditional poll
}

// Finishing is what a finish --squash under way needs to be completed.
type Finishing struct {
	Tip    string `json:"tip"`    // the branch tip being squashed
	Target string `json:"target"` // the commit the original branch was at
	Backup string `json:"backup"` // the ref keeping Tip

	// For a worktree run, whose squash lands in the checkout it started from: the
	// uncommitted files of that checkout the squash brings back (set aside first), and
	// whether it had uncommitted changes of its own (then only the squash is unstaged).
	Carried     []string `json:"carried,omitempty"`
	OriginDirty bool     `json:"originDirty,omitempty"`
}

// Attempt is one run of the agent on one story.
type Attempt struct {
	Story        string   `json:"story"`
	N            int      `json:"n"`
	Outcome      string   `json:"outcome"`
	Reason       string   `json:"reason,omitempty"`
	PassOn       bool     `json:"passOn,omitempty"` // the reason goes into the next prompt
	Ref          string   `json:"ref,omitempty"`
	Commit       string   `json:"commit,omitempty"`
	Log          string   `json:"log,omitempty"`
	Agent        string   `json:"agent,omitempty"`
	Model        string   `json:"model,omitempty"`
	Turns        int      `json:"turns,omitempty"`
	InputTokens  int64    `json:"inputTokens,omitempty"`
	OutputTokens int64    `json:"outputTokens,omitempty"`
	CostUSD      *float64 `json:"costUSD,omitempty"`
	Verify       string   `json:"verify,omitempty"` // passed | failed | skipped
	// SurfaceChecked: the trust surface saved before this attempt was compared (and
	// restored), by the attempt itself once its agent ended or by a crash-resume; a
	// tampering it found is in Reason.
	SurfaceChecked bool      `json:"surfaceChecked,omitempty"`
	Started        time.Time `json:"started"`
	Ended          time.Time `json:"ended,omitzero"`

	// PremiumRequests is what Copilot CLI counted against the account's
	// premium-request allowance (not dollars).
	PremiumRequests float64 `json:"premiumRequests,omitempty"`

	// Judge is what the judge (start --judge) made of the attempt, when it ran.
	Judge *Judge `json:"judge,omitempty"`
}

// The verdicts a Judge records.
const (
	VerdictPass = "pass" // the checkpoint went through
	VerdictFail = "fail" // the judge sent the attempt back (Reason)
	VerdictNone = "none" // the judge gave no verdict: it crashed, timed out or did not say (Reason)
)

// Judge is one run of the judge on an attempt (git ralph start --judge): its agent, its
// verdict, and what it reported of its use, which the run's budget counts (Spent).
type Judge struct {
	Agent        string   `json:"agent"`
	Model        string   `json:"model,omitempty"`
	Verdict      string   `json:"verdict"` // pass | fail | none
	Reason       string   `json:"reason,omitempty"`
	Log          string   `json:"log,omitempty"`
	Turns        int      `json:"turns,omitempty"`
	InputTokens  int64    `json:"inputTokens,omitempty"`
	OutputTokens int64    `json:"outputTokens,omitempty"`
	CostUSD      *float64 `json:"costUSD,omitempty"`
}

// Uses is what the attempt's agent and its judge reported together: their cost (nil
// when neither reported one) and their tokens.
func (a *Attempt) Uses() (cost *float64, tokens int64) {
	if a.CostUSD != nil {
		c := *a.CostUSD
		cost = &c
	}
	tokens = max(a.InputTokens, 0) + max(a.OutputTokens, 0)
	if j := a.Judge; j != nil {
		if j.CostUSD != nil {
			c := *j.CostUSD
			if cost != nil {
				c += *cost
			}
			cost = &c
		}
		tokens += max(j.InputTokens, 0) + max(j.OutputTokens, 0)
	}
	return cost, tokens
}

// ErrNoRun is returned by Load when the change has no run record.
var ErrNoRun = errors.New("no run")

// ErrLocked is returned by Lock when another process holds the change's lock.
var ErrLocked = errors.New("locked")

// Store is the ralph directory of one repository.
type Store struct {
	Dir string // <git-common-dir>/ralph

	// written is what Save last wrote of each change's record, for Forged; locks are
	// the changes' locks this process holds, for Relock.
	mu      sync.Mutex
	written map[string][]byte
	locks   map[string]*Lock
}

// NewStore returns the store under the given git common dir.
func NewStore(commonDir string) *Store {
	return &Store{Dir: filepath.Join(commonDir, "ralph")}
}

// ChangeDir is <git-common-dir>/ralph/<change>.
func (s *Store) ChangeDir(change string) string { return filepath.Join(s.Dir, change) }

// Root is the directory the store's files are reached beneath (the git common dir):
// nothing below it is followed.
func (s *Store) Root() string { return filepath.Dir(s.Dir) }

// rel is the store's file of change named by parts, relative to root.
func (s *Store) rel(change string, parts ...string) string {
	return filepath.Join(append([]string{filepath.Base(s.Dir), change}, parts...)...)
}

// Rel returns path, a file under the store, relative to the git common dir, for the
// functions of internal/beneath.
func (s *Store) Rel(path string) (root, rel string, err error) {
	rel, err = beneath.Rel(s.Root(), path)
	return s.Root(), rel, err
}

// ReadFile reads the store's file of change named by parts, at most max bytes, as
// internal/beneath reads (a regular file, no symlink below the git common dir).
func (s *Store) ReadFile(change, name string, max int64) ([]byte, error) {
	data, err := beneath.ReadFile(s.Root(), s.rel(change, name), max)
	var big *beneath.TooLargeError
	if errors.As(err, &big) {
		err = fmt.Errorf("%s is more than %d MiB: git-ralph reads no larger record", big.Path, max>>20)
	}
	return data, err
}

// Open opens the store's file at path (under the store: the learnings file, a log) for
// reading, as internal/beneath does.
func (s *Store) Open(path string) (*os.File, error) {
	root, rel, err := s.Rel(path)
	if err != nil {
		return nil, err
	}
	return beneath.Open(root, rel)
}

// Create makes the store's file at path anew (an attempt's log) and returns it open
// for writing, as internal/beneath does: a symlink or anything else at that name is
// replaced or moved aside, never written through.
func (s *Store) Create(path string) (*os.File, error) {
	root, rel, err := s.Rel(path)
	if err != nil {
		return nil, err
	}
	return beneath.Create(root, rel, 0o644)
}

// WriteFile writes the store's file at path whole (a kept copy of the agent's record),
// as internal/beneath does.
func (s *Store) WriteFile(path string, data []byte, perm os.FileMode) error {
	root, rel, err := s.Rel(path)
	if err != nil {
		return err
	}
	return beneath.WriteFile(root, rel, data, perm)
}

// WriteWith writes the store's file at path whole with what fill writes (a report),
// as internal/beneath does.
func (s *Store) WriteWith(path string, perm os.FileMode, fill func(w io.Writer) error) error {
	root, rel, err := s.Rel(path)
	if err != nil {
		return err
	}
	return beneath.WriteWith(root, rel, perm, false, fill)
}

// Append adds data at the end of the store's file at path, a regular file that is
// there (the learnings file), reached as internal/beneath does.
func (s *Store) Append(path string, data []byte) error {
	root, rel, err := s.Rel(path)
	if err != nil {
		return err
	}
	f, err := beneath.OpenExisting(root, rel, os.O_WRONLY|os.O_APPEND)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// RemoveFile removes the store's file at path; nothing when it is not there (or a
// symlink is on its way).
func (s *Store) RemoveFile(path string) error {
	root, rel, err := s.Rel(path)
	if err != nil {
		return err
	}
	if err := beneath.Remove(root, rel); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

func (s *Store) recordPath(change string) string {
	return filepath.Join(s.ChangeDir(change), "run.json")
}

// LearningsPath is the learnings file shared by every story of the change.
func (s *Store) LearningsPath(change string) string {
	return filepath.Join(s.ChangeDir(change), "learnings.md")
}

// LogPath is the raw agent output of one attempt.
func (s *Store) LogPath(change, story string, n int) string {
	return filepath.Join(s.ChangeDir(change), "logs", story+"-"+strconv.Itoa(n)+".log")
}

// JudgeLogPath is the log of the judge of attempt n at story, beside the attempt's own;
// JudgeDiffPath the whole diff it was asked to judge, when too long for its prompt.
func (s *Store) JudgeLogPath(change, story string, n int) string {
	return filepath.Join(s.ChangeDir(change), "logs", story+"-"+strconv.Itoa(n)+".judge.log")
}

// JudgeDiffPath: see JudgeLogPath.
func (s *Store) JudgeDiffPath(change, story string, n int) string {
	return filepath.Join(s.ChangeDir(change), "logs", story+"-"+strconv.Itoa(n)+".judge.diff")
}

// EnsureLearnings creates the learnings file, empty, if it is not there. It reads
// nothing of it: the agent writes it, and its readers take its end (repofile.Tail).
func (s *Store) EnsureLearnings(change string) error {
	rel := s.rel(change, "learnings.md")
	if fi, err := beneath.Lstat(s.Root(), rel); err == nil && fi.Mode().IsRegular() {
		return nil
	} else if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	// Missing, or something else (a symlink the agent planted): a new empty file.
	return beneath.WriteFile(s.Root(), rel, nil, 0o644)
}

// The most read of a run's records: the agent can write them (it runs as the user),
// so they are read like input. A record of 10 000 attempts is a few MiB.
const (
	MaxRecord   = 32 << 20 // run.json
	maxFinished = 1 << 20  // finished.json
)

// UnreadableError is a run record that is there and cannot be read: not a regular
// file, larger than MaxRecord, or not a record. It is never taken for "no run".
type UnreadableError struct {
	Path string // the record's file
	Err  error
}

func (e *UnreadableError) Error() string {
	return fmt.Sprintf("cannot read the run record %s: %v", e.Path, e.Err)
}

// Unwrap returns the cause.
func (e *UnreadableError) Unwrap() error { return e.Err }

// Load reads the change's run record (at most MaxRecord bytes); ErrNoRun when there is
// none, an *UnreadableError when it cannot be read. Its cost and token totals are summed
// anew from its attempts (SumAttempts).
func (s *Store) Load(change string) (*Record, error) {
	path := s.recordPath(change)
	data, err := s.ReadFile(change, "run.json", MaxRecord)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, ErrNoRun
	}
	if err != nil {
		return nil, &UnreadableError{Path: path, Err: err}
	}
	var r Record
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, &UnreadableError{Path: path, Err: err}
	}
	r.SumAttempts()
	return &r, nil
}

// Save writes the record atomically: a temporary file, fsync, then rename, so a crash
// leaves either the old record or the new one, never half of one (beneath.WriteFile).
func (s *Store) Save(r *Record, now time.Time) error {
	r.Version = 1
	r.Updated = now
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	if err := beneath.WriteFile(s.Root(), s.rel(r.Change, "run.json"), append(data, '\n'), 0o644); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.written == nil {
		s.written = map[string][]byte{}
	}
	s.written[r.Change] = append(data, '\n')
	return nil
}

// Forged returns the record of change as it is on disk when it is not what this
// process last saved (someone else wrote it: while a loop holds the run lock, no
// git-ralph process does), and nil when it is, or when this process saved none.
func (s *Store) Forged(change string) ([]byte, error) {
	s.mu.Lock()
	want, ok := s.written[change]
	s.mu.Unlock()
	if !ok {
		return nil, nil
	}
	have, err := s.ReadFile(change, "run.json", MaxRecord)
	if errors.Is(err, fs.ErrNotExist) {
		return []byte{}, nil // or a symlink, which is no record: written again
	}
	if err != nil {
		// Larger than any record: not what this process wrote, and not kept.
		return []byte{}, nil
	}
	if bytes.Equal(have, want) {
		return nil, nil
	}
	return have, nil
}

// RecordPath is where the record of change is kept (run.json).
func (s *Store) RecordPath(change string) string { return s.recordPath(change) }

// Remove deletes the run record. Logs and learnings stay: they explain what happened.
func (s *Store) Remove(change string) error {
	return s.RemoveFile(s.recordPath(change))
}

// Changes lists the changes that have a run record, sorted.
func (s *Store) Changes() ([]string, error) {
	entries, err := beneath.ReadDir(s.Root(), filepath.Base(s.Dir))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var names []string
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		if fi, err := beneath.Lstat(s.Root(), s.rel(e.Name(), "run.json")); err == nil && fi.Mode().IsRegular() {
			names = append(names, e.Name())
		}
	}
	sort.Strings(names)
	return names, nil
}

// Stamps is surface.Options.Others: for each change but except with a directory in
// the store, busy while a git-ralph process holds its run lock, else its run record's
// and finished record's sizes and times ("none" when neither is there). Every process
// that changes a run's refs (a loop, a finish, a dispatch, a stop) holds its lock, and
// writes one of the records or ends before the next check.
func (s *Store) Stamps(busy, except string) map[string]string {
	entries, err := beneath.ReadDir(s.Root(), filepath.Base(s.Dir))
	if err != nil {
		return nil
	}
	var names []string
	for _, e := range entries {
		if e.IsDir() && e.Name() != except {
			names = append(names, e.Name())
		}
	}
	held := s.busyOf(names)
	out := map[string]string{}
	for _, x := range names {
		if held[x] {
			out[x] = busy
			continue
		}
		stamp := ""
		for _, name := range []string{"run.json", "finished.json"} {
			if st, err := beneath.Lstat(s.Root(), s.rel(x, name)); err == nil {
				stamp += fmt.Sprintf("%s:%d:%d ", name, st.Size(), st.ModTime().UnixNano())
			}
		}
		if stamp == "" {
			stamp = "none"
		}
		out[x] = strings.TrimSpace(stamp)
	}
	return out
}

// AttemptsOf returns the recorded attempts at one story, oldest first.
func (r *Record) AttemptsOf(story string) []Attempt {
	var out []Attempt
	for _, a := range r.Attempts {
		if a.Story == story {
			out = append(out, a)
		}
	}
	return out
}

// LastReason is the reason to pass on to the next attempt at story: the newest
// attempt's, when that attempt failed with a reason worth telling the agent.
func (r *Record) LastReason(story string) string {
	atts := r.AttemptsOf(story)
	if len(atts) == 0 {
		return ""
	}
	a := atts[len(atts)-1]
	if a.PassOn {
		return a.Reason
	}
	return ""
}

// NextAttemptN is the number of the next attempt at story.
func (r *Record) NextAttemptN(story string) int {
	n := 0
	for _, a := range r.AttemptsOf(story) {
		n = max(n, a.N)
	}
	return n + 1
}

// Last returns a pointer to the newest attempt, or nil.
func (r *Record) Last() *Attempt {
	if len(r.Attempts) == 0 {
		return nil
	}
	return &r.Attempts[len(r.Attempts)-1]
}

// Relocate points the store at the git common dir moved to commonDir (internal/gitdir):
// the locks this process holds stay held, on the same files.
func (s *Store) Relocate(commonDir string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.Dir = filepath.Join(commonDir, "ralph")
}
