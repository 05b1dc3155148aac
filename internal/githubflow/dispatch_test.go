package githubflow

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/git-ralph/git-ralph/internal/run"
	"github.com/git-ralph/git-ralph/internal/start"
)

// withRemote gives the repository at dir a bare remote "origin" holding main.
func withRemote(t *testing.T, dir string) string {
	t.Helper()
	bare := filepath.Join(t.TempDir(), "remote.git")
	gitOut(t, dir, "init", "-q", "--bare", bare)
	gitOut(t, dir, "remote", "add", "origin", bare)
	gitOut(t, dir, "push", "-q", "origin", "main")
	return bare
}

// userState is what dispatch must never touch: HEAD, the index, the work tree's status.
func userState(t *testing.T, dir string) string {
	return gitOut(t, dir, "symbolic-ref", "HEAD") + "\n" + gitOut(t, dir, "ls-files", "-s") + "\n" +
		gitOut(t, dir, "status", "--porcelain=v1", "--untracked-files=all")
}

// TestDispatchRoundTrip runs the whole git side of a run on GitHub Actions with a bare
// repository as GitHub: dispatch's start commit and push (the user's tree untouched),
// the runner's adopt, loop, export and publish in fresh clones, then finish at home,
// which brings the branch, the attempts and the record back and squashes.
func TestDispatchRoundTrip(t *testing.T) {
	dir := newRepo(t)
	bare := withRemote(t, dir)
	clock := &fakeClock{At: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	l, rep := newLoop(t, dir, clock)
	// uncommitted work outside the change stays where it is and out of the run
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("mine\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	before := userState(t, dir)
	ds, err := l.PrepareDispatch(t.Context(), DispatchOptions{Change: "c", GitRemote: "origin", Nonce: "n1"})
	if err != nil {
		t.Fatalf("PrepareDispatch: %v\n%s", err, rep.Text())
	}
	if after := userState(t, dir); after != before {
		t.Errorf("dispatch touched the user's repository:\n%s\n---\n%s", before, after)
	}
	rec := ds.Record
	if rec.Status != run.Dispatching || !ds.Pushed || ds.Resumed || rec.Remote.StartCommit == "" {
		t.Fatalf("record %+v, pushed %v, resumed %v", rec, ds.Pushed, ds.Resumed)
	}
	startID := rec.Remote.StartCommit
	if got := gitOut(t, bare, "rev-parse", "ralph/c"); got != startID {
		t.Errorf("remote ralph/c at %s, want %s", got, startID)
	}
	msg := gitOut(t, dir, "log", "-1", "--format=%B", startID)
	for _, want := range []string{"initial state\n", "Ralph-Change: c", "Ralph-Original: main", "Ralph-Base: " + rec.OriginalCommit, "Ralph-Dispatch: n1"} {
		if !strings.Contains(msg, want) {
			t.Errorf("start commit message lacks %q:\n%s", want, msg)
		}
	}
	if strings.Contains(gitOut(t, dir, "ls-tree", "-r", "--name-only", startID), "notes.txt") {
		t.Errorf("the start commit has uncommitted work without --include-wip")
	}
	// a dispatch that crashed after the push resumes without pushing again
	ds2, err := l.PrepareDispatch(t.Context(), DispatchOptions{Change: "c", GitRemote: "origin", Nonce: "other"})
	if err != nil || !ds2.Resumed || ds2.Pushed || ds2.Record.Remote.Nonce != "n1" {
		t.Fatalf("second PrepareDispatch: %v, %+v", err, ds2)
	}
	if err := l.Dispatched(rec, 42, "https://github.example/run/42"); err != nil {
		t.Fatal(err)
	}
	// not published yet: finish refuses and changes nothing
	before = userState(t, dir)
	if _, err := l.Finish(t.Context(), "c", run.Squash); err == nil || !strings.Contains(err.Error(), "has published nothing yet") {
		t.Fatalf("Finish before publish: %v", err)
	}
	if after := userState(t, dir); after != before {
		t.Errorf("a refused finish changed the repository")
	}

	// the runner: loop job, then publish job, each in its own clone
	loopDir := filepath.Join(t.TempDir(), "loop")
	gitOut(t, dir, "clone", "-q", "-b", "ralph/c", bare, loopDir)
	rl, rrep := newLoop(t, loopDir, clock)
	rl.Driver = scriptAgent(t, `{"type":"result","subtype":"success","is_error":false,"num_turns":1,"result":"<promise>FAILED: not yet</promise>"}`, resultComplete)
	if _, err := rl.Start(t.Context(), start.Options{Arg: "c", Adopt: true, RunID: 42, MaxRetries: 1, AllowSkip: true}); err != nil {
		t.Fatalf("runner Start: %v\n%s", err, rrep.Text())
	}
	out := filepath.Join(t.TempDir(), "artifact")
	if _, err := rl.Export(t.Context(), ExportOptions{Change: "c", RunID: 42, Out: out}); err != nil {
		t.Fatalf("Export: %v", err)
	}
	pubDir := filepath.Join(t.TempDir(), "publish")
	gitOut(t, dir, "clone", "-q", "-b", "ralph/c", bare, pubDir)
	pl, _ := newLoop(t, pubDir, clock)
	if _, err := Publish(t.Context(), pl.Repo, PublishOptions{Change: "c", RunID: 42, Bundle: filepath.Join(out, "ralph.bundle"), Start: startID}); err != nil {
		t.Fatalf("Publish: %v", err)
	}
	runnerTip := gitOut(t, loopDir, "rev-parse", "ralph/c")

	// home: finish brings it back and squashes onto main
	if err := os.Remove(filepath.Join(dir, "notes.txt")); err != nil {
		t.Fatal(err)
	}
	res, err := l.Finish(t.Context(), "c", run.Squash)
	if err != nil {
		t.Fatalf("Finish: %v\n%s", err, rep.Text())
	}
	if res.Target != "main" {
		t.Errorf("squashed onto %q", res.Target)
	}
	if got := gitOut(t, dir, "rev-parse", res.Backup); got != runnerTip {
		t.Errorf("backup %s is at %s, want the runner's tip %s", res.Backup, got, runnerTip)
	}
	if got := gitOut(t, dir, "for-each-ref", "--format=%(refname)", "refs/ralph/c/runs/"); got != "refs/ralph/c/runs/42/attempts/1-1\nrefs/ralph/c/runs/42/state" {
		t.Errorf("run refs here:\n%s", got)
	}
	if got := gitOut(t, dir, "status", "--porcelain"); got != "M openspec/changes/c/tasks.md" {
		t.Errorf("the story's work is not on main, uncommitted:\n%s", got)
	}
}

// TestDispatchRefusesUncommittedChange: without --include-wip, a change with
// uncommitted files is refused, naming them, and nothing changes: no record, no
// branch, nothing pushed. With it, the start commit carries them.
func TestDispatchRefusesUncommittedChange(t *testing.T) {
	dir := newRepo(t)
	bare := withRemote(t, dir)
	l, _ := newLoop(t, dir, &fakeClock{At: time.Now()})
	if err := os.WriteFile(filepath.Join(dir, "openspec/changes/c/design.md"), []byte("# new\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	before := userState(t, dir) + gitOut(t, dir, "for-each-ref") + gitOut(t, bare, "for-each-ref")
	_, err := l.PrepareDispatch(t.Context(), DispatchOptions{Change: "c", GitRemote: "origin", Nonce: "n1"})
	if err == nil || !strings.Contains(err.Error(), "uncommitted files: openspec/changes/c/design.md") {
		t.Fatalf("PrepareDispatch: %v", err)
	}
	if after := userState(t, dir) + gitOut(t, dir, "for-each-ref") + gitOut(t, bare, "for-each-ref"); after != before {
		t.Errorf("a refused dispatch changed something:\n%s\n---\n%s", before, after)
	}
	if _, err := l.Store.Load("c"); err != run.ErrNoRun {
		t.Errorf("record left behind: %v", err)
	}
	ds, err := l.PrepareDispatch(t.Context(), DispatchOptions{Change: "c", GitRemote: "origin", Nonce: "n1", IncludeWIP: true})
	if err != nil {
		t.Fatal(err)
	}
	if got := gitOut(t, bare, "show", ds.Record.Remote.StartCommit+":openspec/changes/c/design.md"); got != "# new" {
		t.Errorf("start commit lacks the uncommitted file: %q", got)
	}
	if st := gitOut(t, dir, "status", "--porcelain=v1", "--untracked-files=all"); st != "?? openspec/changes/c/design.md" {
		t.Errorf("the user's status changed: %q", st)
	}
}

const resultFailed = `{"type":"result","subtype":"success","is_error":false,"num_turns":1,"result":"<promise>FAILED: not yet</promise>"}`

// remoteRun dispatches change c of dir (git side), runs it on a "runner" with the given
// agent results and publishes it to bare; it returns the start commit.
func remoteRun(t *testing.T, dir, bare string, l *flowLoop, maxRetries int, results ...string) string {
	t.Helper()
	ds, err := l.PrepareDispatch(t.Context(), DispatchOptions{Change: "c", GitRemote: "origin", Nonce: "n1"})
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Dispatched(ds.Record, 42, ""); err != nil {
		t.Fatal(err)
	}
	clock := &fakeClock{At: time.Now()}
	loopDir := filepath.Join(t.TempDir(), "loop")
	gitOut(t, dir, "clone", "-q", "-b", "ralph/c", bare, loopDir)
	rl, _ := newLoop(t, loopDir, clock)
	rl.Driver = scriptAgent(t, results...)
	_, _ = rl.Start(t.Context(), start.Options{Arg: "c", Adopt: true, RunID: 42, MaxRetries: maxRetries, AllowSkip: true})
	out := filepath.Join(t.TempDir(), "artifact")
	if _, err := rl.Export(t.Context(), ExportOptions{Change: "c", RunID: 42, Out: out}); err != nil {
		t.Fatal(err)
	}
	pubDir := filepath.Join(t.TempDir(), "publish")
	gitOut(t, dir, "clone", "-q", "-b", "ralph/c", bare, pubDir)
	pl, _ := newLoop(t, pubDir, clock)
	if _, err := Publish(t.Context(), pl.Repo, PublishOptions{Change: "c", RunID: 42, Bundle: filepath.Join(out, "ralph.bundle"), Start: ds.Record.Remote.StartCommit}); err != nil {
		t.Fatal(err)
	}
	return ds.Record.Remote.StartCommit
}

// TestRemoteFinishRefusesMovedBranches: finish of a remote run refuses, changing
// nothing, when the local branch moved since the dispatch (docs/REMOTE.md, "Failure modes") and
// when the remote branch no longer descends from the start commit (row 20).
func TestRemoteFinishRefusesMovedBranches(t *testing.T) {
	dir := newRepo(t)
	bare := withRemote(t, dir)
	l, _ := newLoop(t, dir, &fakeClock{At: time.Now()})
	startID := remoteRun(t, dir, bare, l, 0, resultComplete)
	record := func() string {
		b, _ := os.ReadFile(filepath.Join(l.Store.ChangeDir("c"), "run.json"))
		return string(b)
	}

	// the user committed on ralph/c meanwhile
	gitOut(t, dir, "update-ref", "refs/heads/ralph/c", gitOut(t, dir, "commit-tree", "-p", startID, "-m", "mine", startID+"^{tree}"))
	before := userState(t, dir) + gitOut(t, dir, "rev-parse", "ralph/c") + record()
	if _, err := l.Finish(t.Context(), "c", run.Keep); err == nil || !strings.Contains(err.Error(), "moved here since the dispatch") {
		t.Fatalf("Finish with a moved local branch: %v", err)
	}
	if after := userState(t, dir) + gitOut(t, dir, "rev-parse", "ralph/c") + record(); after != before {
		t.Errorf("a refused finish changed something")
	}

	// someone pushed over the remote branch
	gitOut(t, dir, "update-ref", "refs/heads/ralph/c", startID)
	other := gitOut(t, dir, "commit-tree", "-m", "unrelated", startID+"^{tree}")
	gitOut(t, dir, "push", "-q", "-f", "--no-verify", "origin", other+":refs/heads/ralph/c")
	before = userState(t, dir) + gitOut(t, dir, "rev-parse", "ralph/c") + record()
	if _, err := l.Finish(t.Context(), "c", run.Keep); err == nil || !strings.Contains(err.Error(), "does not descend from the commit the run started from") {
		t.Fatalf("Finish over a pushed-over remote: %v", err)
	}
	if after := userState(t, dir) + gitOut(t, dir, "rev-parse", "ralph/c") + record(); after != before {
		t.Errorf("a refused finish changed something")
	}
}

// TestRemoteFailedRunContinuesLocally: a run that failed on the runner is brought home
// by a local start, which goes on from the remote checkpoint with the remote attempts
// in the record.
func TestRemoteFailedRunContinuesLocally(t *testing.T) {
	dir := newRepo(t)
	bare := withRemote(t, dir)
	l, rep := newLoop(t, dir, &fakeClock{At: time.Now()})
	startID := remoteRun(t, dir, bare, l, 0, resultFailed)
	l.Driver = scriptAgent(t, resultComplete)
	if _, err := l.Start(t.Context(), start.Options{Arg: "c", MaxRetries: 0, AllowSkip: true}); err != nil {
		t.Fatalf("local Start: %v\n%s", err, rep.Text())
	}
	rec, err := l.Store.Load("c")
	if err != nil {
		t.Fatal(err)
	}
	if rec.Status != run.Complete || len(rec.Attempts) != 2 || rec.Attempts[0].Ref != "refs/ralph/c/runs/42/attempts/1-1" {
		t.Errorf("record: %s, attempts %+v", rec.Status, rec.Attempts)
	}
	if got := gitOut(t, dir, "rev-parse", "ralph/c^"); got != startID {
		t.Errorf("the local checkpoint is not on the remote one: parent %s, start %s", got, startID)
	}
	if strings.Contains(gitOut(t, dir, "log", "-1", "--format=%B", "ralph/c"), "Ralph-Run:") {
		t.Errorf("a local checkpoint claims the remote run")
	}
}

// TestRemoteFinishKeepsTheLocalGuards: once a remote run is brought home, finish's
// ordinary guards apply (docs/REMOTE.md, "Failure modes"): a deleted original branch is refused,
// and the next finish, the branch recreated, completes from the imported record.
func TestRemoteFinishKeepsTheLocalGuards(t *testing.T) {
	dir := newRepo(t)
	bare := withRemote(t, dir)
	l, _ := newLoop(t, dir, &fakeClock{At: time.Now()})
	remoteRun(t, dir, bare, l, 0, resultComplete)
	base := gitOut(t, dir, "rev-parse", "main")
	gitOut(t, dir, "switch", "-q", "--detach")
	gitOut(t, dir, "branch", "-q", "-D", "main")
	if _, err := l.Finish(t.Context(), "c", run.Squash); err == nil || !strings.Contains(err.Error(), "the original branch main no longer exists") {
		t.Fatalf("Finish without the original branch: %v", err)
	}
	if got := gitOut(t, dir, "for-each-ref", "--format=%(refname)", "refs/heads/"); got != "refs/heads/ralph/c" {
		t.Errorf("branches after the refusal: %q", got)
	}
	gitOut(t, dir, "branch", "-q", "main", base)
	if _, err := l.Finish(t.Context(), "c", run.Squash); err != nil {
		t.Fatalf("Finish: %v", err)
	}
	if got := gitOut(t, dir, "symbolic-ref", "--short", "HEAD"); got != "main" {
		t.Errorf("on %q after the squash", got)
	}
}
