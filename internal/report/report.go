// Package report builds the morning report of a Ralph loop: one self-contained HTML
// page with the run's summary, a timeline of its attempts, every story with its
// attempts, diffs and log tails, and the learnings file.
//
// Build gathers the facts. While a run record exists it adds what only the record
// knows (the attempt under way, the run's status); everything a finished attempt left
// behind is read from git — the checkpoint commits' trailers, the attempt refs under
// refs/ralph/<change>/attempts/ and, once finish removed the branch, the backup ref —
// so the report of a finished run is the report of the run before it finished.
// Render writes the page; it makes no request of any kind when opened.
package report

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"io"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/git-ralph/git-ralph/internal/agents"
	"github.com/git-ralph/git-ralph/internal/git"
	"github.com/git-ralph/git-ralph/internal/repofile"
	"github.com/git-ralph/git-ralph/internal/run"
	"github.com/git-ralph/git-ralph/internal/source"
)

// Report is everything the page shows.
type Report struct {
	Change    string
	Why       string    // the proposal's "## Why" section
	Status    string    // running | interrupted | failed: … | complete | finished (…)
	Source    string    // where the facts came from
	Generated time.Time // when the report was made
	Agent     string    // of the newest attempt
	Model     string
	Verify    bool // a ralph-verify hook is installed
	// Sandbox is the agent's sandbox as the run's last start ran it (run.Record.Sandbox);
	// "" when the record is gone or predates it.
	Sandbox   string
	Stories   []Story
	Learnings string
	// LearningsPath is the learnings file; LearningsCut the bytes of its beginning
	// left out of Learnings (the page shows its last maxLearnings bytes).
	LearningsPath string
	LearningsCut  int64
	Notes         []string // what was left out, and why

	Done, Total int // stories
	Attempts    int
	Tokens      int64
	Cost        float64
	CostKnown   bool
	Start, End  time.Time // first attempt's start, last attempt's end (Generated while one runs)

	// The budget the run's last start had (--max-tokens, --max-cost), while its
	// record exists; 0 when none.
	MaxTokens int64
	MaxCost   float64
	ended     int // attempts that have ended (summarize)

	// FirstTry is how many stories were done on their first attempt;
	// FirstTryBy breaks it down by agent and model when more than one ran.
	FirstTry   Rate
	FirstTryBy []Rate
}

// Task is one checkbox of a story.
type Task struct {
	ID, Text string
	Done     bool
	Skipped  string // why a ticked task was not done (tasklist.Task.Skipped), "" otherwise
}

// Story is one story with its attempts.
type Story struct {
	ID, Title  string
	Tasks      []Task
	Done       bool
	Attempts   []Attempt
	Checkpoint string // the checkpoint commit, "" while not done
	Diff       *Diff  // the checkpoint's diff
}

// Attempt is one run of the agent on one story.
type Attempt struct {
	Story          string
	N              int
	Outcome        string // complete | failed | no-signal | agent-error | timeout | interrupted | running
	Reason         string
	Agent, Model   string
	Turns          int
	Tokens         int64
	Cost           *float64
	Verify         string // passed | failed | skipped | ""
	Judge          string // the judge's verdict and agent, "pass [claude]"; "" when none judged it
	Started, Ended time.Time
	Ref, Commit    string // the saved attempt (failed ones) or the checkpoint (complete)
	LogTail        string // the end of its log, "" when there is none or the page's room for logs is used up
	Log            string // the whole log on disk (absolute), "" when there is none
	Diff           *Diff  // a failed attempt's diff against its checkpoint
}

// Duration is how long the attempt ran; 0 while it runs or when unknown.
func (a Attempt) Duration() time.Duration {
	if a.Started.IsZero() || a.Ended.IsZero() {
		return 0
	}
	return a.Ended.Sub(a.Started)
}

// Diff is a commit's diff, bounded.
type Diff struct {
	Commit  string
	Stat    string
	Patch   string
	Cut     int  // bytes of the patch left out
	Omitted bool // the whole patch was left out: the report's diff budget was spent
}

// Limits of the page's size: with them the page of a day-long run (500 stories of 4
// attempts, 20 MB of logs) stays under 5 MB (BenchmarkReport500x4).
const (
	DefaultMaxPatch = 128 << 10 // per diff
	DefaultMaxTotal = 2 << 20   // all diffs of a report
	DefaultMaxLogs  = 1 << 20   // all log tails of a report
	logTailLines    = 30
	logTailBytes    = 16 << 10
	logLineMax      = 400
	reasonMax       = 2000      // bytes of an attempt's reason on the page
	maxLearnings    = 256 << 10 // bytes of the learnings file on the page: its end
	maxWhy          = 16 << 10  // bytes of the proposal's "Why" on the page
)

// Options tunes Build; the zero value is the defaults.
type Options struct {
	MaxPatch int              // bytes of one diff's patch; 0: DefaultMaxPatch
	MaxTotal int              // bytes of all patches together; 0: DefaultMaxTotal
	MaxLogs  int              // bytes of all log tails together; 0: DefaultMaxLogs
	Now      func() time.Time // nil: time.Now
	Kinds    source.Kinds     // the kinds of task source; nil: source.Builtin()
}

// ErrNoRun is returned by Build when neither a run record nor git knows the change.
var ErrNoRun = errors.New("no run")

// Runs lists the changes a report can be made of, sorted: those with a run record,
// and those of which git keeps a branch ralph/<change> or refs under refs/ralph/<change>/.
func Runs(ctx context.Context, repo *git.Repo, store *run.Store) ([]string, error) {
	names, err := store.Changes()
	if err != nil {
		return nil, err
	}
	seen := make(map[string]bool, len(names))
	for _, n := range names {
		seen[n] = true
	}
	for _, prefix := range []string{"refs/ralph/", "refs/heads/ralph/"} {
		refs, err := repo.Refs(ctx, prefix)
		if err != nil {
			return nil, err
		}
		for _, r := range refs {
			rest := strings.TrimPrefix(r.Name, prefix)
			name, _, nested := strings.Cut(rest, "/")
			if prefix == "refs/ralph/" && !nested || prefix == "refs/heads/ralph/" && nested {
				continue
			}
			if !seen[name] { // a map: a run has many attempt refs, a repository many runs
				seen[name] = true
				names = append(names, name)
			}
		}
	}
	slices.Sort(names)
	return names, nil
}

// Build gathers the report of change from its run record (if any), git and the
// files under the change's state directory.
func Build(ctx context.Context, repo *git.Repo, store *run.Store, change string, o Options) (*Report, error) {
	o = o.withDefaults()
	rep := &Report{Change: change, Generated: o.Now().UTC().Truncate(time.Second)}
	rec, err := store.Load(change)
	if err != nil && !errors.Is(err, run.ErrNoRun) {
		return nil, err
	}
	tip, err := tipOf(ctx, repo, change, rec, rep)
	if err != nil {
		return nil, err
	}
	if rec == nil && tip == "" {
		return nil, ErrNoRun
	}
	kept, err := keptInGit(ctx, repo, change, tip, rec)
	if err != nil {
		return nil, err
	}
	atts := kept.attempts
	// What only the record knows: the attempt under way, attempts git has no commit of,
	// and the times of checkpoints made before commits carried them.
	if rec != nil {
		atts = mergeRecord(atts, rec)
	}
	if err := describeRun(ctx, repo, store, change, rec, rep); err != nil {
		return nil, err
	}
	if err := addStories(ctx, repo, o.Kinds, change, tip, rec, kept.checkpoints, atts, rep); err != nil {
		return nil, err
	}
	placeAttempts(rep, atts)
	if err := addLogsAndDiffs(ctx, repo, store, change, kept.commitOf, o, rep); err != nil {
		return nil, err
	}
	summarize(rep)
	rep.Learnings, rep.LearningsPath, rep.LearningsCut = learnings(store.Open, store.LearningsPath(change))
	if rep.Verify, err = repo.HookExists(ctx, "ralph-verify"); err != nil {
		return nil, err
	}
	return rep, nil
}

// withDefaults is o with its zero values replaced by the defaults.
func (o Options) withDefaults() Options {
	o.MaxPatch = cmp.Or(o.MaxPatch, DefaultMaxPatch)
	o.MaxTotal = cmp.Or(o.MaxTotal, DefaultMaxTotal)
	o.MaxLogs = cmp.Or(o.MaxLogs, DefaultMaxLogs)
	if o.Now == nil {
		o.Now = time.Now
	}
	return o
}

// gitKept is what git keeps of a run: its checkpoints and saved attempts, as attempts,
// and each of their commits by id (what the diffs need: the parents).
type gitKept struct {
	attempts    []Attempt
	checkpoints []git.Commit
	commitOf    map[string]git.Commit
}

// keptInGit reads the checkpoints of change up to tip and its attempt refs.
func keptInGit(ctx context.Context, repo *git.Repo, change, tip string, rec *run.Record) (gitKept, error) {
	k := gitKept{commitOf: map[string]git.Commit{}}
	if tip != "" {
		var err error
		if k.checkpoints, err = checkpointsOf(ctx, repo, change, tip, rec); err != nil {
			return k, err
		}
		for _, c := range k.checkpoints {
			k.attempts = append(k.attempts, fromCommit(c, run.OutcomeComplete))
			k.commitOf[c.ID] = c
		}
	}
	refs, err := repo.Refs(ctx, "refs/ralph/"+change+"/attempts/")
	if err != nil || len(refs) == 0 {
		return k, err
	}
	ids := make([]string, len(refs))
	for i, r := range refs {
		ids[i] = r.ID
	}
	commits, err := repo.Commits(ctx, ids)
	if err != nil {
		return k, err
	}
	for i, c := range commits {
		k.commitOf[c.ID] = c
		a := fromCommit(c, "")
		a.Ref = refs[i].Name
		if a.Story == "" { // a ref someone made by hand: name it from the ref
			a.Story, a.N = storyN(strings.TrimPrefix(refs[i].Name, "refs/ralph/"+change+"/attempts/"))
		}
		k.attempts = append(k.attempts, a)
	}
	return k, nil
}

// describeRun sets the report's status, source and limits: the record's, or, when the
// record is gone, what git says of the finished run.
func describeRun(ctx context.Context, repo *git.Repo, store *run.Store, change string, rec *run.Record, rep *Report) error {
	if rec != nil {
		rep.Status, rep.Source = recordStatus(store, rec), "the run record, git and "+store.ChangeDir(change)
		rep.MaxTokens, rep.MaxCost = rec.MaxTokens, rec.MaxCost
		rep.Sandbox = rec.Sandbox
	}
	if rep.Status != "" {
		return nil
	}
	if _, ok, err := repo.ResolveRef(ctx, "refs/heads/ralph/"+change); err != nil {
		return err
	} else if ok {
		rep.Status = "finished (kept on ralph/" + change + ")"
	} else {
		rep.Status = "finished (squashed; the branch is kept as " + rep.Source + ")"
	}
	rep.Source = "git alone (the run record is gone) and " + store.ChangeDir(change)
	return nil
}

// addStories sets the report's stories and Why from the tracked file as tip has it,
// read as the run's source reads it (the record says which, else the newest
// checkpoint's trailers). The ids of atts are kept as they were recorded.
func addStories(ctx context.Context, repo *git.Repo, kinds source.Kinds, change, tip string, rec *run.Record, checkpoints []git.Commit, atts []Attempt, rep *Report) error {
	ref := source.RefOf(&run.Record{Change: change}) // no record, no trailer: an OpenSpec change
	if rec != nil {
		ref = source.RefOf(rec)
	} else if len(checkpoints) > 0 {
		if r, ok := source.RefOfTrailers(change, checkpoints[len(checkpoints)-1].Trailers); ok {
			ref = r
		}
	}
	ch, err := kinds.AtCommit(source.Repo{Root: repo.Root}, ref, func(rel string, doc bool) ([]byte, error) { return readAt(ctx, repo, tip, rel, doc) })
	if err != nil {
		var e *source.Error
		if !errors.As(err, &e) { // a kind this git-ralph does not know: no stories
			return err
		}
		ch = &source.Source{}
	}
	parsed := ch.Tasks
	var known []string // a run recorded before slugs ended at a word keeps its ids
	for _, a := range atts {
		known = append(known, a.Story)
	}
	parsed.KeepIDs(known)
	if rep.Why = ch.Why; len(rep.Why) > maxWhy {
		rep.Why = strings.ToValidUTF8(rep.Why[:maxWhy], "") + " …"
	}
	for _, s := range parsed.Stories {
		st := Story{ID: s.ID, Title: s.Title, Done: s.Complete()}
		for _, t := range s.Tasks {
			st.Tasks = append(st.Tasks, Task{ID: t.ID, Text: t.Text, Done: t.Done, Skipped: t.Skipped})
		}
		rep.Stories = append(rep.Stories, st)
	}
	return nil
}

// placeAttempts puts each attempt under its story, in order; a story no longer in the
// task list gets a place of its own at the end.
func placeAttempts(rep *Report, atts []Attempt) {
	index := map[string]int{}
	for i, s := range rep.Stories {
		index[s.ID] = i
	}
	slices.SortStableFunc(atts, func(a, b Attempt) int {
		if a.Story != b.Story {
			return strings.Compare(a.Story, b.Story)
		}
		return a.N - b.N
	})
	for _, a := range atts {
		i, ok := index[a.Story]
		if !ok { // a story no longer in tasks.md
			i = len(rep.Stories)
			index[a.Story] = i
			rep.Stories = append(rep.Stories, Story{ID: a.Story, Title: "(no longer in tasks.md)"})
		}
		a.Reason = cutReason(a.Reason)
		rep.Stories[i].Attempts = append(rep.Stories[i].Attempts, a)
		if a.Outcome == run.OutcomeComplete {
			rep.Stories[i].Checkpoint = a.Commit
		}
	}
}

// addLogsAndDiffs reads and decodes the log ends while git computes the diffs: the two
// largest costs of a long run's report, side by side on two cores. They write
// different fields of the attempts.
func addLogsAndDiffs(ctx context.Context, repo *git.Repo, store *run.Store, change string, commitOf map[string]git.Commit, o Options, rep *Report) error {
	logNote := make(chan string, 1)
	go func() { logNote <- addLogs(rep, store, change, o.MaxLogs) }()
	diffNotes, err := addDiffs(ctx, repo, rep, commitOf, o)
	if note := <-logNote; note != "" {
		rep.Notes = append(rep.Notes, note)
	}
	if err != nil {
		return err
	}
	rep.Notes = append(rep.Notes, diffNotes...)
	return nil
}

// tipOf is the commit the run's history ends at: the record's checkpoint, else the
// branch, else the newest backup (finish --squash made it).
func tipOf(ctx context.Context, repo *git.Repo, change string, rec *run.Record, rep *Report) (string, error) {
	if rec != nil {
		return rec.Checkpoint, nil
	}
	id, _, err := repo.ResolveRef(ctx, "refs/heads/ralph/"+change)
	if err != nil || id != "" {
		return id, err
	}
	backups, err := repo.Refs(ctx, "refs/ralph/"+change+"/backup/")
	if err != nil || len(backups) == 0 {
		return "", err
	}
	newest := slices.MaxFunc(backups, func(a, b git.Ref) int {
		return cmpNum(a.Name[strings.LastIndexByte(a.Name, '/')+1:], b.Name[strings.LastIndexByte(b.Name, '/')+1:])
	})
	rep.Source = newest.Name
	return newest.ID, nil
}

func cmpNum(a, b string) int {
	x, _ := strconv.ParseInt(a, 10, 64)
	y, _ := strconv.ParseInt(b, 10, 64)
	switch {
	case x != y:
		if x < y {
			return -1
		}
		return 1
	}
	return strings.Compare(a, b)
}

// checkpointsOf returns the change's checkpoint commits up to tip, oldest first: from
// the run's "initial state" commit on.
func checkpointsOf(ctx context.Context, repo *git.Repo, change, tip string, rec *run.Record) ([]git.Commit, error) {
	rng, limit := tip, 2000
	if rec != nil && rec.Initial != "" {
		rng, limit = rec.Initial+".."+tip, 0
	}
	commits, err := repo.Log(ctx, rng, limit)
	if err != nil {
		return nil, err
	}
	var out []git.Commit
	for _, c := range commits {
		if c.Subject == "initial state" {
			break
		}
		if c.Trailers["Ralph-Change"] == change && c.Trailers["Ralph-Story"] != "" { // whatever its subject (ralph.checkpointMessage)
			out = append(out, c)
		}
	}
	slices.Reverse(out)
	return out, nil
}

// fromCommit reads an attempt from the trailers of its commit.
func fromCommit(c git.Commit, outcome string) Attempt {
	t := c.Trailers
	a := Attempt{Story: t["Ralph-Story"], Outcome: orText(t["Ralph-Outcome"], outcome), Agent: t["Ralph-Agent"], Model: t["Ralph-Model"],
		Verify: t["Ralph-Verify"], Commit: c.ID}
	a.N, _ = strconv.Atoi(t["Ralph-Attempt"])
	a.Turns, _ = strconv.Atoi(t["Ralph-Turns"])
	a.Tokens, _ = strconv.ParseInt(t["Ralph-Tokens"], 10, 64)
	if v, err := strconv.ParseFloat(t["Ralph-Cost-USD"], 64); err == nil {
		a.Cost = &v
	}
	if v := t["Ralph-Judge"]; v != "" { // its use is counted with the agent's, as status does
		a.Judge = v + " [" + strings.TrimSpace(t["Ralph-Judge-Agent"]+" "+t["Ralph-Judge-Model"]) + "]"
		if n, err := strconv.ParseInt(t["Ralph-Judge-Tokens"], 10, 64); err == nil && n > 0 {
			a.Tokens += n
		}
		if v, err := strconv.ParseFloat(t["Ralph-Judge-Cost-USD"], 64); err == nil {
			if a.Cost != nil {
				v += *a.Cost
			}
			a.Cost = &v
		}
	}
	a.Started, _ = time.Parse(time.RFC3339, t["Ralph-Started"]) // fractions of a second are accepted
	a.Ended, _ = time.Parse(time.RFC3339, t["Ralph-Ended"])
	if a.Outcome != run.OutcomeComplete {
		// The body is the whole reason, then the trailers' paragraph.
		body := c.Body
		if i := strings.LastIndex(body, "\n\n"); i >= 0 {
			a.Reason = strings.TrimSpace(body[:i])
		} else if !strings.HasPrefix(body, "Ralph-") {
			a.Reason = strings.TrimSpace(body)
		}
		if a.Reason == "" { // written before commits kept the whole reason
			_, a.Reason, _ = strings.Cut(c.Subject, ": ")
			if a.Reason == a.Outcome {
				a.Reason = ""
			}
		}
	}
	return a
}

// storyN splits "<story>-<n>".
func storyN(s string) (string, int) {
	i := strings.LastIndexByte(s, '-')
	if i < 0 {
		return s, 0
	}
	n, _ := strconv.Atoi(s[i+1:])
	return s[:i], n
}

// mergeRecord adds the record's attempts that git does not have, and fills what older
// commits did not carry.
func mergeRecord(atts []Attempt, rec *run.Record) []Attempt {
	at := map[string]int{}
	for i, a := range atts {
		at[a.Story+"\x00"+strconv.Itoa(a.N)] = i
	}
	for _, r := range rec.Attempts {
		cost, tokens := r.Uses() // the judge's with the agent's
		ra := Attempt{Story: r.Story, N: r.N, Outcome: r.Outcome, Reason: r.Reason, Agent: r.Agent, Model: r.Model,
			Turns: r.Turns, Tokens: tokens, Cost: cost, Verify: r.Verify,
			Started: r.Started.UTC().Truncate(time.Millisecond), Ended: r.Ended.UTC().Truncate(time.Millisecond), Ref: r.Ref, Commit: r.Commit}
		if j := r.Judge; j != nil && j.Verdict != "" {
			ra.Judge = j.Verdict + " [" + strings.TrimSpace(j.Agent+" "+j.Model) + "]"
		}
		i, ok := at[r.Story+"\x00"+strconv.Itoa(r.N)]
		if !ok {
			if r.Outcome == run.OutcomeComplete || r.Ref != "" {
				continue // its commit is gone (a rewound branch, a deleted ref): nothing to show
			}
			atts = append(atts, ra)
			continue
		}
		if atts[i].Started.IsZero() {
			atts[i].Started, atts[i].Ended = ra.Started, ra.Ended
		}
	}
	return atts
}

// recordStatus is the record's status corrected by the lock, as status shows it.
func recordStatus(store *run.Store, rec *run.Record) string {
	held := store.Held(rec.Change)
	switch {
	case held:
		return "running"
	case rec.Status == run.Running || rec.Status == run.Starting:
		return "interrupted"
	case rec.Status == run.Failed && rec.StopReason != "":
		return "failed: " + rec.StopReason
	case rec.Status == run.Budget && rec.StopReason != "":
		return "budget: " + rec.StopReason
	}
	return string(rec.Status)
}

// readAt returns the file rel as commit tip has it, else as the working tree has it (nil
// when neither does), bounded as repofile bounds it: the tracked file whole up to
// repofile.MaxFile (a larger one refused: cut, it would hide stories), a document (doc) its
// start. A working-tree file that is not a regular file inside the repository is refused
// (*repofile.RefusedError): its content would go into the report.
func readAt(ctx context.Context, repo *git.Repo, tip, rel string, doc bool) ([]byte, error) {
	if tip != "" {
		limit := repofile.MaxFile
		if doc {
			limit = repofile.MaxDoc
		}
		b, size, ok, err := repo.ReadFile(ctx, tip, rel, limit)
		if err == nil && ok && !doc && size > int64(limit) {
			return nil, &repofile.RefusedError{Rel: rel, Why: repofile.Size(size) + " in " + tip[:min(7, len(tip))],
				Rule: "git-ralph reads at most " + repofile.Size(repofile.MaxFile) + " of a task list"}
		}
		if err == nil && ok {
			return b, nil
		}
	}
	var refused *repofile.RefusedError
	path := filepath.Join(repo.Root, filepath.FromSlash(rel))
	if doc {
		h, _, err := repofile.ReadHead(repo.Root, path)
		if errors.As(err, &refused) {
			return nil, err
		}
		return h.Data, nil
	}
	b, _, err := repofile.Read(repo.Root, path)
	if errors.As(err, &refused) {
		return nil, err
	}
	return b, nil
}

// learnings reads the end of the learnings file at path, opened with open (the store's:
// no link on the way is followed): at most maxLearnings bytes, from a line's start, and
// how many bytes before them were left out. The agent writes the file; a file of any
// size makes a page of bounded size.
func learnings(open func(string) (*os.File, error), path string) (text, shown string, cut int64) {
	f, err := open(path)
	if err != nil {
		return "", "", 0
	}
	defer f.Close()
	data, cut, err := repofile.Tail(f, maxLearnings)
	if err != nil {
		return "", "", 0
	}
	return string(data), path, cut
}

// addLogs links every attempt's log on disk and puts the ends of the logs on the page
// within max bytes: first of the attempts that did not complete, newest first (what a
// reader looks into), then of the complete ones, newest first. The logs are read only
// until the room is used up, so a long run's report does not read every log. It returns
// the note saying how many were left out, "" for none.
func addLogs(rep *Report, store *run.Store, change string, max int) string {
	var atts []*Attempt
	for i := range rep.Stories {
		for j := range rep.Stories[i].Attempts {
			atts = append(atts, &rep.Stories[i].Attempts[j])
		}
	}
	slices.SortStableFunc(atts, func(a, b *Attempt) int {
		if ac, bc := a.Outcome == run.OutcomeComplete, b.Outcome == run.OutcomeComplete; ac != bc {
			if ac {
				return 1
			}
			return -1
		}
		return b.Started.Compare(a.Started)
	})
	total, left := 0, 0
	for _, a := range atts {
		path := store.LogPath(change, a.Story, a.N)
		if total >= max {
			if fi, err := os.Lstat(path); err == nil && fi.Mode().IsRegular() {
				a.Log = path
				left++
			}
			continue
		}
		tail, ok := logTail(store.Open, path, a.Agent)
		if !ok {
			continue
		}
		a.Log = path
		if total+len(tail) > max {
			left++
			total = max // the rest only link their logs
			continue
		}
		a.LogTail = tail
		total += len(tail)
	}
	if left == 0 {
		return ""
	}
	return strconv.Itoa(left) + " log tail(s) are left out: the page holds at most " + kib(max) +
		" of logs; each attempt links its whole log on disk"
}

// logTail is the end of an attempt's log, as the agent spoke it: its words and its
// tool calls, decoded by the agent's own driver from the log's last bytes, then
// git-ralph's closing lines. A log no driver can read shows its raw last lines.
// Every line is bounded. open is the store's: a regular file, reached through no link
// the agent put on the way.
func logTail(open func(string) (*os.File, error), path, agentName string) (tail string, ok bool) {
	f, err := open(path)
	if err != nil {
		return "", false
	}
	defer f.Close()
	seeked := false
	if st, err := f.Stat(); err == nil && st.Size() > logTailBytes {
		if _, err := f.Seek(-logTailBytes, io.SeekEnd); err != nil {
			return "", true
		}
		seeked = true
	}
	data, _ := io.ReadAll(io.LimitReader(f, logTailBytes))
	if seeked { // the first line is cut
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			data = data[i+1:]
		}
	}
	data = bytes.ToValidUTF8(data, []byte("?"))
	lines := transcript(data, agentName)
	if len(lines) == 0 {
		lines = strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	}
	if len(lines) > logTailLines {
		lines = lines[len(lines)-logTailLines:]
	}
	for i, l := range lines {
		if len(l) > logLineMax {
			lines[i] = strings.ToValidUTF8(l[:logLineMax], "") + " …"
		}
	}
	return strings.Join(lines, "\n"), true
}

// transcript decodes an agent's log into lines: its text, "↳ Tool summary" for each
// tool call, and git-ralph's "--- git-ralph: …" lines. nil when the agent is unknown
// or nothing decodes.
func transcript(data []byte, agentName string) (lines []string) {
	if agentName == "demo" {
		agentName = "claude" // the demo's scripted agent speaks Claude Code's stream-json
	}
	drv, err := agents.Lookup(agentName)
	if err != nil {
		return nil
	}
	c := &collector{}
	func() {
		defer func() { _ = recover() }() // a decoder bug must not cost the page
		_, _ = drv.Decode(bytes.NewReader(data), c)
	}()
	if len(c.lines) == 0 {
		return nil
	}
	for l := range strings.SplitSeq(string(data), "\n") {
		if strings.HasPrefix(l, "--- git-ralph: ") {
			c.lines = append(c.lines, l)
		}
	}
	return c.lines
}

// collector keeps what a decoder reports, as lines.
type collector struct{ lines []string }

func (c *collector) Text(t string) {
	for l := range strings.SplitSeq(strings.TrimRight(t, "\n"), "\n") {
		c.lines = append(c.lines, l)
	}
}

func (c *collector) Tool(name, summary string) {
	c.lines = append(c.lines, strings.TrimSpace("↳ "+name+" "+summary))
}

func (c *collector) Terminal() {}

// addDiffs reads every checkpoint's and saved attempt's diff in one git call, within
// the report's budget. It returns the notes saying what was cut or left out.
func addDiffs(ctx context.Context, repo *git.Repo, rep *Report, commitOf map[string]git.Commit, o Options) (notes []string, err error) {
	var commits []git.Commit
	add := func(id string) {
		if c, ok := commitOf[id]; ok {
			commits = append(commits, c)
		}
	}
	for _, s := range rep.Stories {
		if s.Checkpoint != "" {
			add(s.Checkpoint)
		}
		for j := range s.Attempts { // by pointer: addLogs writes other fields meanwhile
			if a := &s.Attempts[j]; a.Ref != "" && a.Commit != "" {
				add(a.Commit)
			}
		}
	}
	diffs, err := diffsSplit(ctx, repo, commits, o.MaxPatch)
	if err != nil {
		return nil, err
	}
	total, omitted, cut := 0, 0, 0
	take := func(id string) *Diff {
		d, ok := diffs[id]
		if !ok {
			return nil
		}
		out := &Diff{Commit: id, Stat: d.Stat, Patch: d.Patch, Cut: d.Cut}
		if d.Cut > 0 {
			cut++
		}
		if total+len(d.Patch) > o.MaxTotal {
			out.Patch, out.Omitted = "", true
			omitted++
		}
		total += len(out.Patch)
		return out
	}
	for i := range rep.Stories {
		s := &rep.Stories[i]
		if s.Checkpoint != "" {
			s.Diff = take(s.Checkpoint)
		}
		for j := range s.Attempts {
			if a := &s.Attempts[j]; a.Ref != "" && a.Commit != "" {
				a.Diff = take(a.Commit)
			}
		}
	}
	if cut > 0 {
		notes = append(notes, strconv.Itoa(cut)+" diff(s) longer than "+kib(o.MaxPatch)+" are cut; 'git show <commit>' shows the whole")
	}
	if omitted > 0 {
		notes = append(notes, strconv.Itoa(omitted)+" diff(s) are left out: the page holds at most "+kib(o.MaxTotal)+" of diffs")
	}
	return notes, nil
}

// diffsSplit is repo.Diffs in up to one git process per CPU, each on a part of commits,
// side by side: one diff-tree over the 2,000 commits of a long run is the report's
// longest step, and it uses one core.
func diffsSplit(ctx context.Context, repo *git.Repo, commits []git.Commit, maxPatch int) (map[string]git.Diff, error) {
	parts := min(runtime.NumCPU(), len(commits)/diffsPerPart)
	if parts <= 1 {
		return repo.Diffs(ctx, commits, maxPatch)
	}
	results := make([]map[string]git.Diff, parts)
	errs := make([]error, parts)
	var wg sync.WaitGroup
	for i := range parts {
		part := commits[i*len(commits)/parts : (i+1)*len(commits)/parts]
		wg.Go(func() { results[i], errs[i] = repo.Diffs(ctx, part, maxPatch) })
	}
	wg.Wait()
	out := map[string]git.Diff{}
	for i, r := range results {
		if errs[i] != nil {
			return nil, errs[i]
		}
		maps.Copy(out, r)
	}
	return out, nil
}

// diffsPerPart is the fewest commits worth a git process of their own in diffsSplit.
const diffsPerPart = 200

func kib(n int) string { return strconv.Itoa(n>>10) + " KiB" }

// summarize fills the summary line.
func summarize(rep *Report) {
	running := false
	var last time.Time // the start of the attempt whose agent the summary names
	for _, s := range rep.Stories {
		rep.Total++
		if s.Done {
			rep.Done++
		}
		for _, a := range s.Attempts {
			rep.Attempts++
			rep.Tokens += a.Tokens
			if a.Cost != nil {
				rep.Cost += *a.Cost
				rep.CostKnown = true
			}
			if !a.Started.IsZero() && (rep.Start.IsZero() || a.Started.Before(rep.Start)) {
				rep.Start = a.Started
			}
			if a.Ended.After(rep.End) {
				rep.End = a.Ended
			}
			if a.Outcome == run.OutcomeRunning {
				running = true
			} else {
				rep.ended++
			}
			if rep.Agent == "" || !a.Started.Before(last) {
				rep.Agent, rep.Model, last = a.Agent, a.Model, a.Started
			}
		}
	}
	if running && rep.Generated.After(rep.End) {
		rep.End = rep.Generated
	}
	var tries []Try
	for _, s := range rep.Stories {
		for _, a := range s.Attempts {
			tries = append(tries, Try{Story: a.Story, N: a.N, Outcome: a.Outcome, Agent: a.Agent, Model: a.Model})
		}
	}
	rep.FirstTry, rep.FirstTryBy = FirstAttempts(tries)
}

// BudgetText says what the budget is and how much of it is used, "" without one:
// "240 of 200 tokens (120%); $0.0200 of $0.015".
func (r *Report) BudgetText() string {
	// Before any attempt has ended nothing could have been reported: 0 so far.
	return Budget(r.Tokens, r.MaxTokens, r.Tokens > 0 || r.ended == 0, r.Cost, r.MaxCost, r.CostKnown || r.ended == 0)
}

// Budget says what a run's budget is and how much of it is used, "" without one:
// "240 of 200 tokens (120%); $0.0200 of $0.015". A use the agent never reported is
// said to be unknown rather than shown as 0 (a run stops when that happens).
func Budget(tokens, maxTokens int64, tokensKnown bool, cost, maxCost float64, costKnown bool) string {
	var parts []string
	if maxTokens > 0 {
		if tokensKnown {
			parts = append(parts, thousands(tokens)+" of "+thousands(maxTokens)+" tokens ("+strconv.FormatInt(tokens*100/maxTokens, 10)+"%)")
		} else {
			parts = append(parts, "tokens not reported, budget "+thousands(maxTokens))
		}
	}
	if maxCost > 0 {
		limit := "$" + strconv.FormatFloat(maxCost, 'f', -1, 64)
		if costKnown {
			parts = append(parts, money(cost)+" of "+limit)
		} else {
			parts = append(parts, "cost not reported, limit "+limit)
		}
	}
	return strings.Join(parts, "; ")
}

func orText(s, alt string) string {
	if s == "" {
		return alt
	}
	return s
}

// cutReason bounds a reason for the page to about reasonMax bytes, keeping its first
// line and its end: a hook's output says what failed in its last lines.
func cutReason(r string) string {
	if len(r) <= reasonMax {
		return r
	}
	first, _, _ := strings.Cut(r, "\n")
	if len(first) > reasonMax/2 {
		first = first[:reasonMax/2]
	}
	tail := r[len(r)-(reasonMax-len(first)):]
	return strings.ToValidUTF8(first, "") + "\n…\n" + strings.ToValidUTF8(tail, "")
}
