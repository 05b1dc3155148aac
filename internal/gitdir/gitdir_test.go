//go:build linux

package gitdir

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// repo makes a repository with one commit in a new directory, with its own HOME
// and state directory, and returns its working tree.
func repo(t *testing.T) string {
	t.Helper()
	base := t.TempDir()
	t.Setenv("HOME", filepath.Join(base, "home"))
	t.Setenv("XDG_STATE_HOME", filepath.Join(base, "state"))
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	t.Setenv("GIT_AUTHOR_NAME", "t")
	t.Setenv("GIT_AUTHOR_EMAIL", "t@example.com")
	t.Setenv("GIT_COMMITTER_NAME", "t")
	t.Setenv("GIT_COMMITTER_EMAIL", "t@example.com")
	tree := filepath.Join(base, "proj")
	git(t, base, "init", "-q", "-b", "main", tree)
	if err := os.WriteFile(filepath.Join(tree, "a.txt"), []byte("a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	git(t, tree, "add", "a.txt")
	git(t, tree, "commit", "-q", "-m", "base")
	return tree
}

func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "GIT_DIR=") && !strings.HasPrefix(kv, "GIT_WORK_TREE=") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

func isDir(t *testing.T, path string) bool {
	t.Helper()
	fi, err := os.Lstat(path)
	return err == nil && fi.IsDir()
}

func TestMoveAndRestore(t *testing.T) {
	tree := repo(t)
	head := git(t, tree, "rev-parse", "HEAD")
	m, err := Move(tree)
	if err != nil {
		t.Fatal(err)
	}
	if target, err := os.Readlink(filepath.Join(tree, ".git")); err != nil || target != m.Dir {
		t.Fatalf(".git = %q, %v; want a link to %s", target, err, m.Dir)
	}
	if inside(tree, m.Dir) {
		t.Fatalf("moved into the tree: %s", m.Dir)
	}
	// git goes on through the link, and names the real place.
	if got := git(t, tree, "rev-parse", "HEAD"); got != head {
		t.Fatalf("HEAD through the link = %s, want %s", got, head)
	}
	if got := git(t, tree, "rev-parse", "--path-format=absolute", "--git-dir"); got != m.Dir {
		t.Fatalf("git dir = %s, want %s", got, m.Dir)
	}
	if got := git(t, tree, "status", "--porcelain"); got != "" {
		t.Fatalf("status through the link: %q", got)
	}
	// A second run of the same tree cannot take it.
	if _, err := Move(tree); err != ErrBusy {
		t.Fatalf("second Move: %v, want ErrBusy", err)
	}
	// Recover leaves a live run's move alone.
	if notes, err := Recover(tree); err != nil || len(notes) > 0 {
		t.Fatalf("Recover during a run: %v %v", notes, err)
	}
	if note, err := m.Restore(); err != nil || note != "" {
		t.Fatalf("Restore: %q %v", note, err)
	}
	if !isDir(t, filepath.Join(tree, ".git")) {
		t.Fatal(".git is not a directory after Restore")
	}
	if _, err := os.Lstat(m.Home); !os.IsNotExist(err) {
		t.Fatalf("home left behind: %v", err)
	}
	if got := git(t, tree, "rev-parse", "HEAD"); got != head {
		t.Fatalf("HEAD after = %s", got)
	}
}

// A killed run (its lock gone with it) leaves the git directory moved: the next
// command, from anywhere in the tree, puts it back.
func TestRecoverAfterKill(t *testing.T) {
	tree := repo(t)
	m, err := Move(tree)
	if err != nil {
		t.Fatal(err)
	}
	m.release() // what a SIGKILL does to the flock
	sub := filepath.Join(tree, "deep", "er")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	notes, err := Recover(sub)
	if err != nil || len(notes) != 1 || !strings.Contains(notes[0], "put back the git directory of "+tree) {
		t.Fatalf("Recover: %q %v", notes, err)
	}
	if !isDir(t, filepath.Join(tree, ".git")) {
		t.Fatal(".git not put back")
	}
	git(t, tree, "rev-parse", "HEAD")
	// And again: nothing left to do.
	if notes, err := Recover(tree); err != nil || len(notes) != 0 {
		t.Fatalf("second Recover: %q %v", notes, err)
	}
}

// The agent removed the link and made a .git of its own (one whose config would run
// its program): after the attempt the link comes back and the agent's is kept; after a
// kill, Recover keeps it aside and puts the real one back.
func TestLinkReplacedByTheAgent(t *testing.T) {
	tree := repo(t)
	head := git(t, tree, "rev-parse", "HEAD")
	m, err := Move(tree)
	if err != nil {
		t.Fatal(err)
	}
	forge := func() {
		t.Helper()
		if err := os.Remove(filepath.Join(tree, ".git")); err != nil {
			t.Fatal(err)
		}
		git(t, t.TempDir(), "init", "-q", "--separate-git-dir", filepath.Join(tree, ".git"), t.TempDir())
	}
	forge()
	keep := filepath.Join(m.Home, "kept", "1-1", ".git")
	what, err := m.Link(keep, keep)
	if err != nil || !strings.Contains(what, "replaced by a directory") {
		t.Fatalf("Link: %q %v", what, err)
	}
	if !isDir(t, keep) {
		t.Fatal("the agent's .git was not kept")
	}
	if got := git(t, tree, "rev-parse", "HEAD"); got != head {
		t.Fatalf("HEAD = %s after the link came back", got)
	}
	if what, err := m.Link(keep+"2", keep+"2"); err != nil || what != "" {
		t.Fatalf("Link of a sound link: %q %v", what, err)
	}
	if err := os.RemoveAll(filepath.Join(m.Home, "kept")); err != nil {
		t.Fatal(err)
	}
	forge()
	m.release()
	notes, err := Recover(tree)
	if err != nil || len(notes) != 2 || !strings.Contains(notes[1], "kept as "+filepath.Join(tree, ".git.ralph-aside-1")) {
		t.Fatalf("Recover: %q %v", notes, err)
	}
	if got := git(t, tree, "rev-parse", "HEAD"); got != head {
		t.Fatalf("HEAD = %s after Recover", got)
	}
}

// A submodule's git directory lives in .git/modules with a core.worktree relative to
// it: moved, git still finds the submodule's working tree.
func TestMoveWithSubmodule(t *testing.T) {
	tree := repo(t)
	sub := filepath.Join(filepath.Dir(tree), "sub")
	git(t, filepath.Dir(tree), "init", "-q", "-b", "main", sub)
	git(t, sub, "commit", "-q", "--allow-empty", "-m", "s")
	git(t, tree, "-c", "protocol.file.allow=always", "submodule", "add", "-q", sub, "libs")
	git(t, tree, "commit", "-q", "-m", "sub")
	m, err := Move(tree)
	if err != nil {
		t.Fatal(err)
	}
	if got := git(t, tree, "status", "--porcelain"); got != "" {
		t.Fatalf("status with the submodule, moved: %q", got)
	}
	git(t, filepath.Join(tree, "libs"), "status", "--porcelain")
	if _, err := m.Restore(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(m.Home); !os.IsNotExist(err) {
		t.Fatalf("home left behind: %v", err)
	}
	git(t, tree, "status", "--porcelain")
}

// A linked worktree's git directory is already outside its tree: nothing to move.
func TestWhereRefusesALinkedWorktree(t *testing.T) {
	tree := repo(t)
	wt := filepath.Join(filepath.Dir(tree), "wt")
	git(t, tree, "worktree", "add", "-q", wt)
	_, err := Where(wt, filepath.Join(tree, ".git", "worktrees", "wt"))
	var nm *NotMovedError
	if err == nil || !asNotMoved(err, &nm) {
		t.Fatalf("Where(linked worktree) = %v", err)
	}
	if _, err := Move(wt); err == nil {
		t.Fatal("moved a linked worktree's .git file")
	}
	// The main tree moves, and the linked worktree goes on through the link.
	m, err := Move(tree)
	if err != nil {
		t.Fatal(err)
	}
	git(t, wt, "status", "--porcelain")
	if _, err := m.Restore(); err != nil {
		t.Fatal(err)
	}
}

func asNotMoved(err error, target **NotMovedError) bool {
	e, ok := err.(*NotMovedError)
	*target = e
	return ok
}

// Killed between the steps of a move or a put-back: what is left (the link that names
// itself, a home without a git directory) is no obstacle to the next move, and the
// tree keeps its .git throughout.
func TestKilledHalfWay(t *testing.T) {
	tree := repo(t)
	m, err := Move(tree)
	if err != nil {
		t.Fatal(err)
	}
	home := m.Home
	// A put-back killed after its exchange: .git back, the link still in the home.
	m.release()
	if err := os.Rename(filepath.Join(tree, ".git"), filepath.Join(tree, "link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(m.Dir, filepath.Join(tree, ".git")); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(filepath.Join(tree, "link"), m.Dir); err != nil {
		t.Fatal(err)
	}
	if notes, err := Recover(tree); err != nil || len(notes) != 0 {
		t.Fatalf("Recover with nothing moved: %q %v", notes, err)
	}
	git(t, tree, "rev-parse", "HEAD")
	m2, err := Move(tree)
	if err != nil {
		t.Fatalf("Move after a half put-back: %v", err)
	}
	if m2.Home != home {
		t.Fatalf("home %s, then %s", home, m2.Home)
	}
	if _, err := m2.Restore(); err != nil {
		t.Fatal(err)
	}
}

// BenchmarkMoveRestore is the cost of the move a run makes, and of putting it back.
func BenchmarkMoveRestore(b *testing.B) {
	base := b.TempDir()
	b.Setenv("XDG_STATE_HOME", filepath.Join(base, "state"))
	tree := filepath.Join(base, "proj")
	if err := exec.Command("git", "init", "-q", tree).Run(); err != nil {
		b.Fatal(err)
	}
	start, n := cpuMs(), 0
	for b.Loop() {
		n++
		m, err := Move(tree)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := m.Restore(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric((cpuMs()-start)/float64(n), "cpu-ms/op")
}

// cpuMs is the CPU time (user and system) this process has used, in milliseconds.
func cpuMs() float64 {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e6
}

// A worktree the user adds while the git directory is moved records the moved path in
// its .git file: putting the git directory back points it back too.
func TestWorktreeAddedWhileMoved(t *testing.T) {
	tree := repo(t)
	m, err := Move(tree)
	if err != nil {
		t.Fatal(err)
	}
	wt := filepath.Join(filepath.Dir(tree), "wt")
	git(t, tree, "worktree", "add", "-q", wt)
	if b, _ := os.ReadFile(filepath.Join(wt, ".git")); !strings.Contains(string(b), m.Dir) {
		t.Fatalf("git wrote %q, not the moved path", b)
	}
	if _, err := m.Restore(); err != nil {
		t.Fatal(err)
	}
	if got := git(t, wt, "rev-parse", "--path-format=absolute", "--git-common-dir"); got != filepath.Join(tree, ".git") {
		t.Fatalf("the worktree's common dir is %s", got)
	}
}

// A home inside a working tree could be the agent's (it writes that tree): Recover
// puts nothing from it anywhere. An agent planted proj/.src.git-ralph/.git, naming
// proj/src as its tree; a git-ralph command run in proj/src must not make that the
// .git of src.
func TestRecoverTrustsNoHomeInAWorkTree(t *testing.T) {
	tree := repo(t)
	src := filepath.Join(tree, "src")
	home := filepath.Join(tree, ".src.git-ralph")
	if err := os.MkdirAll(src, 0o755); err != nil {
		t.Fatal(err)
	}
	git(t, tree, "init", "-q", "--bare", filepath.Join(home, ".git"))
	if err := os.WriteFile(filepath.Join(home, treeName), []byte(src+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if notes, err := Recover(src); err != nil || len(notes) != 0 {
		t.Fatalf("Recover: %q %v", notes, err)
	}
	if _, err := os.Lstat(filepath.Join(src, ".git")); !os.IsNotExist(err) {
		t.Fatalf("the planted git directory became src/.git: %v", err)
	}
}

// Reached through a symbolic link, the tree is still found: git names it by its real
// path, and so does its home.
func TestRecoverThroughALink(t *testing.T) {
	tree := repo(t)
	m, err := Move(tree)
	if err != nil {
		t.Fatal(err)
	}
	m.release()
	via := filepath.Join(t.TempDir(), "via")
	if err := os.Symlink(tree, via); err != nil {
		t.Fatal(err)
	}
	if notes, err := Recover(via); err != nil || len(notes) != 1 {
		t.Fatalf("Recover through a link: %q %v", notes, err)
	}
	if !isDir(t, filepath.Join(tree, ".git")) {
		t.Fatal(".git not put back")
	}
}
