package git

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// quick keeps the waits of ClearStaleLocks short.
var quick = LockCheck{
	Branches: []string{"ralph/x", "main"},
	RefDirs:  []string{"refs/ralph/x"},
	MinAge:   50 * time.Millisecond,
	Wait:     300 * time.Millisecond,
	Poll:     10 * time.Millisecond,
}

// touchOld creates a lock file whose last change is a minute ago.
func touchOld(t *testing.T, path string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-time.Minute)
	if err := os.Chtimes(path, old, old); err != nil {
		t.Fatal(err)
	}
}

func requireProc(t *testing.T) {
	t.Helper()
	if _, err := os.Stat("/proc/self/fd"); err != nil || runtime.GOOS != "linux" {
		t.Skip("needs a Linux /proc")
	}
}

func TestClearStaleLocksRemovesWhatACrashLeft(t *testing.T) {
	requireProc(t)
	dir, r := newRepo(t)
	git := filepath.Join(dir, ".git")
	ours := []string{
		"index.lock", "HEAD.lock", "ORIG_HEAD.lock", "MERGE_RR.lock",
		"packed-refs.lock", "packed-refs.new", "config.lock",
		"objects/maintenance.lock", "gc.pid.lock", "gc.log.lock", "objects/info/commit-graph.lock",
		"refs/heads/ralph/x.lock", "refs/heads/main.lock",
		"refs/ralph/x/attempts/1-2.lock", "refs/ralph/x/backup/17.lock",
		tempIndexPrefix + "99999999-123.lock",
	}
	others := []string{"refs/heads/other.lock", "refs/ralph/y/attempts/1-1.lock", "refs/tags/v1.lock"}
	for _, p := range append(slices.Clone(ours), others...) {
		touchOld(t, filepath.Join(git, p))
	}
	removed, err := r.ClearStaleLocks(t.Context(), quick)
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, p := range ours {
		want = append(want, ".git/"+p)
		if exists(git, p) {
			t.Errorf("%s is still there", p)
		}
	}
	slices.Sort(want)
	slices.Sort(removed)
	if !slices.Equal(removed, want) {
		t.Errorf("removed\n  %v\nwant\n  %v", removed, want)
	}
	for _, p := range others {
		if !exists(git, p) {
			t.Errorf("%s was removed, but it is no lock of the run", p)
		}
	}
	// Nothing left: nothing to do, no wait.
	if removed, err := r.ClearStaleLocks(t.Context(), quick); err != nil || len(removed) != 0 {
		t.Errorf("second call: %v, %v", removed, err)
	}
}

func TestClearStaleLocksWaitsForAYoungLock(t *testing.T) {
	requireProc(t)
	dir, r := newRepo(t)
	lock := filepath.Join(dir, ".git", "index.lock")
	if err := os.WriteFile(lock, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	// A lock's age is read from its mtime, which the kernel's coarse clock may set a
	// few milliseconds before time.Now() after the write: measure from the same mtime.
	info, err := os.Stat(lock)
	if err != nil {
		t.Fatal(err)
	}
	start := info.ModTime()
	removed, err := r.ClearStaleLocks(t.Context(), quick)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(removed, []string{".git/index.lock"}) {
		t.Errorf("removed %v", removed)
	}
	if d := time.Since(start); d < quick.MinAge {
		t.Errorf("a lock %v old was removed: younger than MinAge %v", d, quick.MinAge)
	}
}

// A lock that never grows old is named with its own path, also where the git
// directory is outside the worktree (a linked worktree's .git/worktrees/<name>).
func TestClearStaleLocksNamesAYoungLockByItsPath(t *testing.T) {
	requireProc(t)
	dir, _ := newRepo(t)
	wt := filepath.Join(realDir(t, t.TempDir()), "w")
	gitT(t, dir, "worktree", "add", "-q", "-b", "ralph/x", wt)
	r, err := Open(t.Context(), wt)
	if err != nil {
		t.Fatal(err)
	}
	lock := filepath.Join(r.GitDir, "index.lock")
	if err := os.WriteFile(lock, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	future := time.Now().Add(time.Hour) // always younger than MinAge
	if err := os.Chtimes(lock, future, future); err != nil {
		t.Fatal(err)
	}
	_, err = r.ClearStaleLocks(t.Context(), quick)
	var he *LockHeldError
	if !errors.As(err, &he) || he.PID != 0 {
		t.Fatalf("got %v; want a *LockHeldError for a young lock", err)
	}
	if he.Path != lock {
		t.Errorf("Path = %q, want %q", he.Path, lock)
	}
	if !exists(r.GitDir, "index.lock") {
		t.Error("the young lock was removed")
	}
}

func TestClearStaleLocksLeavesAnOpenLock(t *testing.T) {
	requireProc(t)
	dir, r := newRepo(t)
	stale := filepath.Join(dir, ".git", "HEAD.lock")
	touchOld(t, stale)
	held := filepath.Join(dir, ".git", "index.lock")
	touchOld(t, held)
	f, err := os.Open(held)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	// A child that has the lock open, as a running git has.
	cmd := exec.Command("sleep", "30")
	cmd.ExtraFiles = []*os.File{f}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()

	removed, err := r.ClearStaleLocks(t.Context(), quick)
	var he *LockHeldError
	if !errors.As(err, &he) {
		t.Fatalf("got %v, %v; want a *LockHeldError", removed, err)
	}
	if he.PID != cmd.Process.Pid || !he.Open || he.Name != ".git/index.lock" || he.Command != "sleep 30" {
		t.Errorf("got %+v", he)
	}
	if !exists(dir, ".git/index.lock") || !exists(dir, ".git/HEAD.lock") {
		t.Errorf("a lock was removed while another is held: nothing may change")
	}
}

// A git that runs in the repository may hold a lock it has closed (git commit with
// its editor open holds index.lock that way): no lock is removed while it runs.
func TestClearStaleLocksLeavesLocksWhileGitRuns(t *testing.T) {
	requireProc(t)
	dir, r := newRepo(t)
	touchOld(t, filepath.Join(dir, ".git", "index.lock"))
	cmd := exec.Command("git", "cat-file", "--batch") // waits on its stdin
	cmd.Dir = filepath.Join(dir)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { stdin.Close(); _ = cmd.Wait() }()
	_, err = r.ClearStaleLocks(t.Context(), quick)
	var he *LockHeldError
	if !errors.As(err, &he) || he.PID != cmd.Process.Pid || he.Open {
		t.Fatalf("got %v; want a *LockHeldError naming git (pid %d)", err, cmd.Process.Pid)
	}
	if !exists(dir, ".git/index.lock") {
		t.Errorf("the lock was removed while git runs in the repository")
	}
	stdin.Close()
	_ = cmd.Wait()
	if _, err := r.ClearStaleLocks(t.Context(), quick); err != nil || exists(dir, ".git/index.lock") {
		t.Errorf("after git ended: %v, lock there: %v", err, exists(dir, ".git/index.lock"))
	}
}

// Without a process table nothing can tell a stale lock from a live one: none is
// removed, and the error carries the rm command for the user.
func TestClearStaleLocksWithoutProc(t *testing.T) {
	dir, r := newRepo(t)
	touchOld(t, filepath.Join(dir, ".git", "index.lock"))
	touchOld(t, filepath.Join(dir, ".git", "refs", "heads", "ralph", "x.lock"))
	c := quick
	c.Proc = t.TempDir()
	_, err := r.ClearStaleLocks(t.Context(), c)
	var ue *LockUnknownError
	if !errors.As(err, &ue) {
		t.Fatalf("got %v; want a *LockUnknownError", err)
	}
	if got, want := ue.Error(), ".git/index.lock, .git/refs/heads/ralph/x.lock exist and git-ralph cannot tell whether a git command still uses them"; got != want {
		t.Errorf("message %q\nwant %q", got, want)
	}
	want := "rm " + filepath.Join(dir, ".git", "index.lock") + " " + filepath.Join(dir, ".git", "refs", "heads", "ralph", "x.lock")
	if got := ue.RmCommand(); got != want {
		t.Errorf("rm command %q\nwant %q", got, want)
	}
	if !exists(dir, ".git/index.lock") {
		t.Errorf("a lock was removed without a process table")
	}
}

func TestParentPID(t *testing.T) {
	requireProc(t)
	if got := parentPID("/proc", os.Getpid()); got != os.Getppid() {
		t.Errorf("parentPID = %d, want %d", got, os.Getppid())
	}
}

// A git-ralph killed while it saved an attempt leaves its temporary index; the next
// crash-resume sweeps it (found by the chaos test: no later save came to sweep it).
func TestClearStaleLocksSweepsDeadTemporaryIndexes(t *testing.T) {
	requireProc(t)
	dir, r := newRepo(t)
	dead := tempIndexPrefix + "99999999-1"
	touchOld(t, filepath.Join(dir, ".git", dead))
	live := tempIndexPrefix + strconv.Itoa(os.Getpid()) + "-2"
	touchOld(t, filepath.Join(dir, ".git", live))
	removed, err := r.ClearStaleLocks(t.Context(), quick)
	if err != nil || len(removed) != 0 {
		t.Fatalf("got %v, %v; want no lock removed", removed, err)
	}
	if exists(dir, ".git/"+dead) {
		t.Errorf("the temporary index of a dead process is left")
	}
	if !exists(dir, ".git/"+live) {
		t.Errorf("the temporary index of a live process was removed")
	}
}

// LockCheck.Also: the locks of another worktree count too, and are judged with this
// one's: a lock in use there keeps every stale lock here.
func TestClearStaleLocksAlsoLooksInOtherWorktrees(t *testing.T) {
	requireProc(t)
	dir, r := newRepo(t)
	wtDir := filepath.Join(realDir(t, t.TempDir()), "wt")
	gitT(t, dir, "worktree", "add", "-q", "-b", "ralph/x", wtDir)
	wt := open(t, wtDir)
	here := filepath.Join(dir, ".git", "index.lock")
	there := filepath.Join(wt.GitDir, "index.lock")
	touchOld(t, here)
	touchOld(t, there)
	f, err := os.Open(there)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("sleep", "30")
	cmd.ExtraFiles = []*os.File{f}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	c := quick
	c.Also = []*Repo{wt}
	removed, err := r.ClearStaleLocks(t.Context(), c)
	var he *LockHeldError
	if !errors.As(err, &he) || he.Path != there {
		t.Fatalf("got %v, %v; want a *LockHeldError for %s", removed, err, there)
	}
	if _, err := os.Stat(here); err != nil {
		t.Errorf("the stale lock here was removed while the other worktree's is held")
	}
	_ = cmd.Process.Kill()
	_ = cmd.Wait()

	removed, err = r.ClearStaleLocks(t.Context(), c)
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(removed)
	if want := []string{".git/index.lock", ".git/worktrees/wt/index.lock"}; !slices.Equal(removed, want) {
		t.Errorf("removed %v, want %v", removed, want)
	}
}

// killInPackedRefsRewrite installs a reference-transaction hook that SIGKILLs the git
// running it once packed-refs.new exists: git 2.39 runs the hook ("prepared") for the
// packed-refs transaction after it has written packed-refs.new under packed-refs.lock
// and before it renames it, so the git is killed inside the rewrite, by a signal it
// cannot catch, exactly as a power loss would. It kills once (a marker file).
func killInPackedRefsRewrite(t *testing.T, dir string) (marker string) {
	t.Helper()
	marker = filepath.Join(t.TempDir(), "killed")
	writeHook(t, dir, "reference-transaction", `cat >/dev/null
if [ -e "`+filepath.Join(dir, ".git", "packed-refs.new")+`" ] && [ ! -e "`+marker+`" ]; then
	touch "`+marker+`"
	kill -KILL $PPID
fi
`)
	return marker
}

// A git killed inside its packed-refs rewrite leaves packed-refs.new beside its
// packed-refs.lock, and every later ref deletion fails on it ("unable to create file
// packed-refs.new: File exists"): the crash-resume removes both (found by the chaos
// test: finish --squash could never delete its branch again).
func TestClearStaleLocksRemovesPackedRefsNew(t *testing.T) {
	requireProc(t)
	dir, r := newRepo(t)
	gitT(t, dir, "branch", "ralph/x")
	gitT(t, dir, "branch", "other")
	marker := killInPackedRefsRewrite(t, dir)
	if err := r.DeleteBranch(t.Context(), "ralph/x"); err == nil {
		t.Fatal("branch -D succeeded: the hook did not kill it")
	}
	if !exists(marker, "") || !exists(dir, ".git/packed-refs.new") || !exists(dir, ".git/packed-refs.lock") {
		t.Fatalf("killed: %v, packed-refs.new: %v, packed-refs.lock: %v; want all",
			exists(marker, ""), exists(dir, ".git/packed-refs.new"), exists(dir, ".git/packed-refs.lock"))
	}
	// What the issue saw: with the lock alone removed, no ref can be deleted any more.
	if err := os.Remove(filepath.Join(dir, ".git", "packed-refs.lock")); err != nil {
		t.Fatal(err)
	}
	if err := r.DeleteBranch(t.Context(), "other"); err == nil || !strings.Contains(err.Error(), "packed-refs.new: File exists") {
		t.Fatalf("branch -D beside a left packed-refs.new: %v; want git's File exists", err)
	}
	// The state of the kill itself again (the failed branch -D removed its own lock).
	touchOld(t, filepath.Join(dir, ".git", "packed-refs.lock"))

	removed, err := r.ClearStaleLocks(t.Context(), quick)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{".git/packed-refs.new", ".git/packed-refs.lock"}; !slices.Equal(removed, want) {
		t.Errorf("removed %v, want %v", removed, want)
	}
	for _, b := range []string{"ralph/x", "other"} {
		if err := r.DeleteBranch(t.Context(), b); err != nil {
			t.Errorf("branch -D %s after the crash-resume: %v", b, err)
		}
	}
	if out := gitT(t, dir, "for-each-ref", "refs/heads/ralph/x", "refs/heads/other"); out != "" {
		t.Errorf("left: %s", out)
	}
	gitT(t, dir, "fsck", "--no-progress")
}

// packed-refs.new is removed under the same proof as a lock: not while a process has
// it open (a git writing it), not while a git runs in the repository (between its
// close and its rename), not while it is young.
func TestClearStaleLocksLeavesPackedRefsNewInUse(t *testing.T) {
	requireProc(t)
	dir, r := newRepo(t)
	leftover := filepath.Join(dir, ".git", "packed-refs.new")
	touchOld(t, leftover)
	f, err := os.Open(leftover)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("sleep", "30")
	cmd.ExtraFiles = []*os.File{f}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	_, err = r.ClearStaleLocks(t.Context(), quick)
	var he *LockHeldError
	if !errors.As(err, &he) || !he.Open || he.PID != cmd.Process.Pid || he.Name != ".git/packed-refs.new" {
		t.Errorf("open: got %v; want a *LockHeldError naming pid %d", err, cmd.Process.Pid)
	}
	_ = cmd.Process.Kill()
	_ = cmd.Wait()

	git := exec.Command("git", "cat-file", "--batch") // waits on its stdin
	git.Dir = dir
	stdin, err := git.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := git.Start(); err != nil {
		t.Fatal(err)
	}
	_, err = r.ClearStaleLocks(t.Context(), quick)
	if !errors.As(err, &he) || he.PID != git.Process.Pid || he.Open {
		t.Errorf("git running: got %v; want a *LockHeldError naming git (pid %d)", err, git.Process.Pid)
	}
	stdin.Close()
	_ = git.Wait()
	if !exists(dir, ".git/packed-refs.new") {
		t.Fatal("packed-refs.new was removed while in use")
	}

	future := time.Now().Add(time.Hour) // always younger than MinAge
	if err := os.Chtimes(leftover, future, future); err != nil {
		t.Fatal(err)
	}
	if _, err = r.ClearStaleLocks(t.Context(), quick); !errors.As(err, &he) || he.PID != 0 {
		t.Errorf("young: got %v; want a *LockHeldError for a young file", err)
	}
	if !exists(dir, ".git/packed-refs.new") {
		t.Fatal("a young packed-refs.new was removed")
	}
}

// fakeProc makes a proc directory in which this process (pid 4242) sees only itself,
// in the PID namespace ns, with the mountinfo given.
func fakeProc(t *testing.T, ns, mountinfo string) string {
	t.Helper()
	proc := t.TempDir()
	self := filepath.Join(proc, "4242")
	for _, d := range []string{filepath.Join(self, "fd"), filepath.Join(self, "ns")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("4242", filepath.Join(proc, "self")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(ns, filepath.Join(self, "ns", "pid")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(self, "mountinfo"), []byte(strings.ReplaceAll(mountinfo, "PROC", proc)), 0o644); err != nil {
		t.Fatal(err)
	}
	return proc
}

// Where /proc cannot show every process (another PID namespace, hidepid), a lock
// held by an invisible git (a user's git commit with its editor open, on the host)
// looks stale: it is removed only once older than PartialMinAge.
func TestClearStaleLocksWithPartialProc(t *testing.T) {
	for _, tc := range []struct {
		name, ns, mountinfo, why string
	}{
		{"pid namespace", "pid:[4026532198]", "", "PID namespace of its own"},
		{"hidepid", initPIDNamespace, "22 27 0:21 / PROC rw,relatime - proc proc rw,hidepid=invisible\n", "hidepid"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir, r := newRepo(t)
			lock := filepath.Join(dir, ".git", "index.lock")
			touchOld(t, lock) // a minute old: an editor open that long is common
			c := quick
			c.Proc = fakeProc(t, tc.ns, tc.mountinfo)
			_, err := r.ClearStaleLocks(t.Context(), c)
			var ue *LockUnknownError
			if !errors.As(err, &ue) || !strings.Contains(ue.Error(), tc.why) || !strings.Contains(ue.Error(), "locks older than 1h0m0s are removed") {
				t.Fatalf("got %v; want a *LockUnknownError saying why (%s)", err, tc.why)
			}
			if !exists(dir, ".git/index.lock") {
				t.Fatal("a lock an invisible git may hold was removed")
			}
			old := time.Now().Add(-2 * time.Hour)
			if err := os.Chtimes(lock, old, old); err != nil {
				t.Fatal(err)
			}
			removed, err := r.ClearStaleLocks(t.Context(), c)
			if err != nil || !slices.Equal(removed, []string{".git/index.lock"}) || exists(dir, ".git/index.lock") {
				t.Errorf("a two-hour-old lock: removed %v, %v", removed, err)
			}
		})
	}
	// The same table in the initial namespace without hidepid is complete: the
	// minute-old lock goes.
	dir, r := newRepo(t)
	touchOld(t, filepath.Join(dir, ".git", "index.lock"))
	c := quick
	c.Proc = fakeProc(t, initPIDNamespace, "22 27 0:21 / PROC rw,relatime - proc proc rw\n")
	if removed, err := r.ClearStaleLocks(t.Context(), c); err != nil || len(removed) != 1 {
		t.Errorf("complete table: removed %v, %v", removed, err)
	}
}
