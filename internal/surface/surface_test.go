package surface

import (
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/git-ralph/git-ralph/internal/git"
)

// repo makes an isolated repository with one commit, a branch, a tag, a symbolic ref,
// a hook and a config file included from the repository, and opens it.
func repo(t testing.TB) (string, *git.Repo) {
	t.Helper()
	home := t.TempDir()
	for k, v := range map[string]string{"HOME": home, "XDG_CONFIG_HOME": filepath.Join(home, ".config"), "GIT_CONFIG_NOSYSTEM": "1",
		"GIT_AUTHOR_NAME": "T", "GIT_AUTHOR_EMAIL": "t@example.com", "GIT_COMMITTER_NAME": "T", "GIT_COMMITTER_EMAIL": "t@example.com",
		"GIT_CONFIG_COUNT": "0"} {
		t.Setenv(k, v)
	}
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	run(t, dir, "init", "-q", "-b", "main")
	if err := os.WriteFile(filepath.Join(dir, "a.txt"), []byte("a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	run(t, dir, "add", "-A")
	run(t, dir, "commit", "-q", "-m", "base")
	run(t, dir, "branch", "feature")
	run(t, dir, "tag", "v1")
	run(t, dir, "symbolic-ref", "refs/remotes/origin/HEAD", "refs/heads/main")
	write(t, filepath.Join(dir, ".git", "hooks", "ralph-verify"), "#!/bin/sh\nexit 1\n", 0o755)
	write(t, filepath.Join(dir, ".git", "extra.config"), "[ralph]\n\tmaxRetries = 2\n", 0o644)
	run(t, dir, "config", "include.path", "extra.config")
	r, err := git.Open(t.Context(), dir)
	if err != nil {
		t.Fatal(err)
	}
	return dir, r
}

func run(t testing.TB, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

func write(t testing.TB, path, content string, mode os.FileMode) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, mode); err != nil {
		t.Fatal(err)
	}
}

// Everything an agent can do to the surface is found, named, and put back exactly;
// what it made is kept.
func TestCompareAndRestore(t *testing.T) {
	dir, r := repo(t)
	ctx := t.Context()
	snap, err := Take(ctx, r, Options{Change: "x"})
	if err != nil {
		t.Fatal(err)
	}
	refsBefore := run(t, dir, "for-each-ref", "--format=%(objectname) %(refname) %(symref)")
	files := map[string]string{}
	for _, p := range []string{".git/config", ".git/extra.config", ".git/hooks/ralph-verify"} {
		b, err := os.ReadFile(filepath.Join(dir, p))
		if err != nil {
			t.Fatal(err)
		}
		files[p] = string(b)
	}
	if changes, err := snap.Compare(ctx, r); err != nil || len(changes) != 0 {
		t.Fatalf("nothing changed, yet Compare = %v, %v", changes, err)
	}

	// The run's own refs are the agent's to change.
	run(t, dir, "branch", "ralph/x")
	run(t, dir, "update-ref", "refs/ralph/x/attempts/1-1", "HEAD")
	// What it must not do.
	run(t, dir, "commit", "-q", "--allow-empty", "-m", "backdoor")
	run(t, dir, "branch", "-D", "feature")
	run(t, dir, "tag", "-d", "v1")
	run(t, dir, "branch", "evil")
	run(t, dir, "symbolic-ref", "refs/remotes/origin/HEAD", "refs/heads/evil")
	write(t, filepath.Join(dir, ".git", "extra.config"), "[ralph]\n\tagentCommand = /tmp/evil\n", 0o644)
	if err := os.Chmod(filepath.Join(dir, ".git", "hooks", "ralph-verify"), 0o644); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(dir, ".git", "hooks", "pre-commit"), "#!/bin/sh\nexit 0\n", 0o755)
	write(t, filepath.Join(dir, ".git", "info", "attributes"), "* filter=evil\n", 0o644)

	changes, err := snap.Compare(ctx, r)
	if err != nil {
		t.Fatal(err)
	}
	want := "tampered: refs/heads/evil created, refs/heads/feature deleted, refs/heads/main moved, refs/remotes/origin/HEAD moved, refs/tags/v1 deleted, " +
		".git/extra.config changed, .git/info/attributes created, .git/hooks/ralph-verify mode changed, .git/hooks/pre-commit created"
	if got := Reason(changes, r.Root); got != want {
		t.Errorf("Reason =\n  %s\nwant\n  %s", got, want)
	}
	if !ConfigChanged(changes, snap) {
		t.Errorf("ConfigChanged = false with an included config file changed")
	}
	keepDir := filepath.Join(dir, ".git", "ralph", "x", "tampered", "1-1")
	lines, err := Restore(ctx, r, changes, "refs/ralph/x/tampered/1-1/", keepDir)
	if err != nil {
		t.Fatal(err)
	}
	if len(lines) != len(changes) {
		t.Errorf("%d lines for %d changes:\n%s", len(lines), len(changes), strings.Join(lines, "\n"))
	}
	// Exactly as recorded: refs (the run's own aside), files and modes.
	var refsAfter []string
	for _, l := range strings.Split(run(t, dir, "for-each-ref", "--format=%(objectname) %(refname) %(symref)"), "\n") {
		if !strings.Contains(l, " refs/heads/ralph/") && !strings.Contains(l, " refs/ralph/") {
			refsAfter = append(refsAfter, l)
		}
	}
	if got := strings.Join(refsAfter, "\n"); got != refsBefore {
		t.Errorf("refs after restore:\n%s\nwant\n%s", got, refsBefore)
	}
	for p, content := range files {
		if b, _ := os.ReadFile(filepath.Join(dir, p)); string(b) != content {
			t.Errorf("%s = %q, want %q", p, b, content)
		}
	}
	if fi, err := os.Stat(filepath.Join(dir, ".git", "hooks", "ralph-verify")); err != nil || fi.Mode().Perm() != 0o755 {
		t.Errorf("ralph-verify mode %v, %v; want 0755", fi.Mode(), err)
	}
	for _, p := range []string{".git/hooks/pre-commit", ".git/info/attributes"} {
		if _, err := os.Lstat(filepath.Join(dir, p)); !os.IsNotExist(err) {
			t.Errorf("%s is still there", p)
		}
	}
	// Kept: the agent's refs and files.
	if got := run(t, dir, "log", "-1", "--format=%s", "refs/ralph/x/tampered/1-1/heads/main"); got != "backdoor" {
		t.Errorf("kept main = %q", got)
	}
	run(t, dir, "rev-parse", "--verify", "refs/ralph/x/tampered/1-1/heads/evil")
	if b, _ := os.ReadFile(filepath.Join(keepDir, "extra.config")); !strings.Contains(string(b), "/tmp/evil") {
		t.Errorf("the agent's extra.config is not kept: %q", b)
	}
	if b, _ := os.ReadFile(filepath.Join(keepDir, "hooks", "pre-commit")); !strings.Contains(string(b), "exit 0") {
		t.Errorf("the agent's pre-commit is not kept: %q", b)
	}
	// The run's own refs were left alone.
	run(t, dir, "rev-parse", "--verify", "refs/heads/ralph/x")
	run(t, dir, "rev-parse", "--verify", "refs/ralph/x/attempts/1-1")
	if changes, err := snap.Compare(ctx, r); err != nil || len(changes) != 0 {
		t.Errorf("after the restore Compare = %v, %v", changes, err)
	}
}

// Saved and loaded, a snapshot compares the same (a crash-resume's).
func TestSaveLoad(t *testing.T) {
	dir, r := repo(t)
	snap, err := Take(t.Context(), r, Options{Change: "x", Shared: true})
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	path := filepath.Join(tmp, "surface.json")
	if err := snap.Save(tmp, path); err != nil {
		t.Fatal(err)
	}
	back, err := Load(tmp, path)
	if err != nil || back == nil || !back.Shared || back.Change != "x" {
		t.Fatalf("Load = %+v, %v", back, err)
	}
	run(t, dir, "tag", "-d", "v1")
	changes, err := back.Compare(t.Context(), r)
	if err != nil || Reason(changes, r.Root) != "tampered: refs/tags/v1 deleted" {
		t.Errorf("Compare after Load = %v, %v", changes, err)
	}
	if s, err := Load(tmp, filepath.Join(tmp, "none.json")); s != nil || err != nil {
		t.Errorf("Load(missing) = %v, %v", s, err)
	}
}

// In a Shared run, the refs the next snapshot starts from (TakeAfter) are the ones the
// check left: what it let be as it is now, what it put back as recorded.
func TestTakeAfterShared(t *testing.T) {
	dir, r := repo(t)
	ctx := t.Context()
	snap, err := Take(ctx, r, Options{Change: "x", Shared: true})
	if err != nil {
		t.Fatal(err)
	}
	run(t, dir, "tag", "-d", "v1")
	run(t, dir, "commit", "-q", "--allow-empty", "-m", "forward") // main moves forward
	run(t, dir, "branch", "mine")
	changes, err := snap.Compare(ctx, r)
	if err != nil || Reason(changes, r.Root) != "tampered: refs/tags/v1 deleted" {
		t.Fatalf("Compare = %q, %v", Reason(changes, r.Root), err)
	}
	if _, err := Restore(ctx, r, changes, "refs/ralph/x/tampered/1-1/", t.TempDir()); err != nil {
		t.Fatal(err)
	}
	next, err := TakeAfter(ctx, r, snap, false)
	if err != nil {
		t.Fatal(err)
	}
	if changes, err := next.Compare(ctx, r); err != nil || len(changes) != 0 {
		t.Errorf("right after the check, Compare = %q, %v; want nothing", Reason(changes, r.Root), err)
	}
	fresh, err := Take(ctx, r, Options{Change: "x", Shared: true})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := refNames(next.Refs), refNames(fresh.Refs); got != want {
		t.Errorf("TakeAfter's refs\n  %s\nwant what for-each-ref says\n  %s", got, want)
	}
}

func refNames(refs []git.RefWithSymref) string {
	var b strings.Builder
	for _, r := range refs {
		b.WriteString(r.Name + "=" + r.ID + "->" + r.Symref + "\n")
	}
	return b.String()
}

// BenchmarkCheck is what the surface costs an attempt after the first: the snapshot
// before it (files read, refs from the last check) and the check after it (one
// for-each-ref, the files read again), in a repository with 200 branches and git's
// sample hooks.
func BenchmarkCheck(b *testing.B) {
	dir, r := repo(b)
	for i := range 200 {
		run(b, dir, "branch", fmt.Sprintf("b%03d", i))
	}
	ctx := b.Context()
	prev, err := Take(ctx, r, Options{Change: "x"})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := prev.Compare(ctx, r); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		snap, err := TakeAfter(ctx, r, prev, false)
		if err != nil {
			b.Fatal(err)
		}
		if changes, err := snap.Compare(ctx, r); err != nil || len(changes) != 0 {
			b.Fatal(changes, err)
		}
		prev = snap
	}
}

// git takes a key on the same line as its section ("[include] path = x"), and a comment
// after a value: an included file written so is watched like any other.
func TestIncludesSameLine(t *testing.T) {
	dir := t.TempDir()
	config := filepath.Join(dir, "config")
	data := "[core]\n\tbare = false\n[include] path = ../a.config\n[includeIf \"gitdir:/x/\"]path=b.config ; the work one\n[include]\n\tpath = \"c.config\" # quoted\n"
	if err := os.WriteFile(config, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	got := includes(config)
	want := []string{filepath.Join(filepath.Dir(dir), "a.config"), filepath.Join(dir, "b.config"), filepath.Join(dir, "c.config")}
	if !slices.Equal(got, want) {
		t.Errorf("includes = %q, want %q", got, want)
	}
}

// A snapshot read back from disk may be the agent's forgery: it can pin no hooks
// directory of the agent's and name no file git-ralph does not watch, and a restore
// never removes a directory tree.
func TestValidRefusesForgery(t *testing.T) {
	dir, r := repo(t)
	ctx := t.Context()
	snap, err := Take(ctx, r, Options{Change: "x"})
	if err != nil {
		t.Fatal(err)
	}
	if err := snap.Valid(ctx, r); err != nil {
		t.Fatalf("Valid(the real snapshot) = %v", err)
	}
	forge := func(f func(s *Snapshot)) error {
		s := *snap
		s.Files, s.Dirs, s.Config = slices.Clone(snap.Files), slices.Clone(snap.Dirs), slices.Clone(snap.Config)
		f(&s)
		return s.Valid(ctx, r)
	}
	agentHooks := filepath.Join(dir, "agent-hooks")
	for name, f := range map[string]func(s *Snapshot){
		"hooks dir of the agent's": func(s *Snapshot) { s.HooksDir = agentHooks },
		"relative hooks dir":       func(s *Snapshot) { s.HooksDir = ".git/hooks" },
		"file outside":             func(s *Snapshot) { s.Files = append(s.Files, File{Path: filepath.Join(t.TempDir(), "precious")}) },
		"an object": func(s *Snapshot) {
			s.Files = append(s.Files, File{Path: filepath.Join(dir, ".git", "objects", "pack")})
		},
		"the index": func(s *Snapshot) { s.Files = append(s.Files, File{Path: filepath.Join(dir, ".git", "index")}) },
		"a path with ..": func(s *Snapshot) {
			s.Files = append(s.Files, File{Path: filepath.Join(dir, ".git", "hooks") + "/../index"})
		},
		"a work tree file": func(s *Snapshot) { s.Files = append(s.Files, File{Path: filepath.Join(dir, "a.txt")}) },
		// Every file of a watched directory is restored, a new one removed: the
		// agent's list of them would empty any directory.
		"a watched directory of the agent's": func(s *Snapshot) { s.Dirs = append(s.Dirs, dir) },
		"a file of it": func(s *Snapshot) {
			s.Dirs = append(s.Dirs, dir)
			s.Files = append(s.Files, File{Path: filepath.Join(dir, "a.txt")})
		},
		"config named outside": func(s *Snapshot) { s.Config = append(s.Config, filepath.Join(dir, "a.txt")) },
	} {
		if err := forge(f); err == nil {
			t.Errorf("%s: Valid = nil, want a refusal", name)
		}
	}
	// A hook the agent removed is still the snapshot's to restore.
	if err := forge(func(s *Snapshot) {
		s.Files = append(s.Files, File{Path: filepath.Join(dir, ".git", "hooks", "pre-commit"), Exists: true, Data: []byte("x"), Mode: 0o755})
	}); err != nil {
		t.Errorf("a hook no longer there: Valid = %v", err)
	}

}

// The agent names the files it plants: a name with a newline is quoted in the reason
// and the restore lines, never printed as a line of its own.
func TestNamesQuoted(t *testing.T) {
	dir, r := repo(t)
	ctx := t.Context()
	snap, err := Take(ctx, r, Options{Change: "x"})
	if err != nil {
		t.Fatal(err)
	}
	name := "x\n✓ story 1: checkpoint abc1234"
	write(t, filepath.Join(dir, ".git", "hooks", name), "#!/bin/sh\n", 0o755)
	changes, err := snap.Compare(ctx, r)
	if err != nil {
		t.Fatal(err)
	}
	reason := Reason(changes, r.Root)
	lines, err := Restore(ctx, r, changes, "refs/ralph/x/tampered/1-1/", filepath.Join(dir, ".git", "ralph", "x", "tampered", "1-1"))
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range append(lines, reason) {
		if strings.Contains(s, "\n") || !strings.Contains(s, `"`) {
			t.Errorf("not quoted: %q", s)
		}
	}
	if want := `tampered: ".git/hooks/x\n✓ story 1: checkpoint abc1234" created`; reason != want {
		t.Errorf("Reason = %q, want %q", reason, want)
	}
	if got := Quote("refs/heads/main"); got != "refs/heads/main" {
		t.Errorf("Quote(a plain name) = %q", got)
	}
}

// A branch checked out in another worktree is watched as a Shared run watches: a move
// forward (work done there) is let be and named; a deletion or a rewrite is found.
func TestBranchElsewhere(t *testing.T) {
	dir, r := repo(t)
	ctx := t.Context()
	other := filepath.Join(t.TempDir(), "other")
	run(t, dir, "worktree", "add", "-q", "-b", "there", other)
	snap, err := Take(ctx, r, Options{Change: "x"})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(snap.Elsewhere, "refs/heads/there") {
		t.Fatalf("Elsewhere = %v", snap.Elsewhere)
	}
	write(t, filepath.Join(other, "b.txt"), "b\n", 0o644)
	run(t, other, "add", "-A")
	run(t, other, "commit", "-q", "-m", "work there")
	run(t, dir, "branch", "made-by-agent")
	changes, err := snap.Compare(ctx, r)
	if err != nil {
		t.Fatal(err)
	}
	if got := Reason(changes, r.Root); got != "tampered: refs/heads/made-by-agent created" {
		t.Errorf("after a commit there: %s", got)
	}
	if !slices.Equal(snap.MovedOn, []string{"refs/heads/there"}) {
		t.Errorf("MovedOn = %v", snap.MovedOn)
	}
	if _, err := Restore(ctx, r, changes, "refs/ralph/x/tampered/1-1/", t.TempDir()); err != nil {
		t.Fatal(err)
	}
	// The next attempt's refs: "there" as it is now, the created ref gone.
	next := refNames(snap.Next())
	if strings.Contains(next, "made-by-agent") || !strings.Contains(next, "refs/heads/there") {
		t.Errorf("Next = %s", next)
	}

	snap, err = Take(ctx, r, Options{Change: "x"})
	if err != nil {
		t.Fatal(err)
	}
	run(t, dir, "update-ref", "refs/heads/there", "main")
	changes, err = snap.Compare(ctx, r)
	if err != nil || Reason(changes, r.Root) != "tampered: refs/heads/there moved" {
		t.Errorf("after a rewrite there: %v, %v", changes, err)
	}
	run(t, dir, "update-ref", "-d", "refs/heads/there")
	changes, err = snap.Compare(ctx, r)
	if err != nil || Reason(changes, r.Root) != "tampered: refs/heads/there deleted" {
		t.Errorf("after a deletion there: %v, %v", changes, err)
	}
}

// Other changes' runs are watched while no git-ralph process works on them: refs of an
// idle run are compared, those of a busy one are not recorded, and a difference on a run
// whose stamp changed (or that is busy now) is let be. Run names are matched whole, the
// longest first; a ralph ref of no known run is watched like any other.
func TestOtherRuns(t *testing.T) {
	dir, r := repo(t)
	ctx := t.Context()
	for _, b := range []string{"ralph/x", "ralph/o", "ralph/o-2", "ralph/busy", "ralph/stray"} {
		run(t, dir, "branch", b)
	}
	for _, ref := range []string{"refs/ralph/x/attempts/1-1", "refs/ralph/o/attempts/1-1", "refs/ralph/o/b/attempts/1-1", "refs/ralph/busy/attempts/1-1"} {
		run(t, dir, "update-ref", ref, "HEAD")
	}
	stamps := map[string]string{"x": "s", "o": "s1", "o/b": "s2", "o-2": "s3", "busy": Busy}
	others := func(string) map[string]string { return maps.Clone(stamps) }
	snap, err := Take(ctx, r, Options{Change: "x", Others: others})
	if err != nil {
		t.Fatal(err)
	}
	names := refNames(snap.Refs)
	for _, want := range []string{"refs/heads/ralph/o", "refs/heads/ralph/o-2", "refs/heads/ralph/stray", "refs/ralph/o/attempts/1-1", "refs/ralph/o/b/attempts/1-1"} {
		if !strings.Contains(names, want) {
			t.Errorf("%s not watched: %s", want, names)
		}
	}
	for _, not := range []string{"refs/heads/ralph/x", "refs/ralph/x/", "refs/heads/ralph/busy", "refs/ralph/busy/"} {
		if strings.Contains(names, not) {
			t.Errorf("%s watched: %s", not, names)
		}
	}
	if _, ok := snap.Stamps["x"]; ok {
		t.Errorf("the run's own stamp is recorded: %v", snap.Stamps)
	}
	run(t, dir, "branch", "-D", "ralph/o", "ralph/busy", "ralph/stray")
	run(t, dir, "update-ref", "-d", "refs/ralph/o/b/attempts/1-1")
	run(t, dir, "update-ref", "-d", "refs/ralph/busy/attempts/1-1")
	changes, err := snap.Compare(ctx, r)
	if got, want := Reason(changes, r.Root), "tampered: refs/heads/ralph/o deleted, refs/heads/ralph/stray deleted, refs/ralph/o/b/attempts/1-1 deleted"; err != nil || got != want {
		t.Fatalf("Compare = %q, %v; want %q", got, err, want)
	}
	// o/b is worked on meanwhile (its record written), o busy now: both let be.
	stamps["o/b"], stamps["o"] = "s2'", Busy
	changes, err = snap.Compare(ctx, r)
	if got, want := Reason(changes, r.Root), "tampered: refs/heads/ralph/stray deleted"; err != nil || got != want {
		t.Fatalf("Compare = %q, %v; want %q", got, err, want)
	}
	// The next snapshot reads the stamps anew: o's refs are no longer watched.
	next, err := TakeAfter(ctx, r, snap, false)
	if err != nil {
		t.Fatal(err)
	}
	if n := refNames(next.Refs); strings.Contains(n, "refs/ralph/o/attempts/") || next.Stamps["o"] != Busy {
		t.Errorf("TakeAfter: refs %s, stamps %v", n, next.Stamps)
	}
	// A snapshot saved and loaded keeps its stamps.
	tmp := t.TempDir()
	p := filepath.Join(tmp, "surface.json")
	if err := next.Save(tmp, p); err != nil {
		t.Fatal(err)
	}
	back, err := Load(tmp, p)
	if err != nil || !maps.Equal(back.Stamps, next.Stamps) {
		t.Errorf("Load: stamps %v, %v; want %v", back.Stamps, err, next.Stamps)
	}
}

// Every file git reads from the git directory that says what it runs or where the
// repository is, in a main worktree too: found, named, put back; what the agent wrote is
// kept. A worktree removed during the attempt takes its files with it, and that is let be.
func TestWatchesGitDirFiles(t *testing.T) {
	dir, r := repo(t)
	ctx := t.Context()
	gd := filepath.Join(dir, ".git")
	mine := filepath.Join(t.TempDir(), "mine")
	gone := filepath.Join(t.TempDir(), "gone")
	run(t, dir, "worktree", "add", "-q", "-b", "mine", mine)
	run(t, dir, "worktree", "add", "-q", "-b", "gone", gone)
	// A submodule's git directory, as git submodule absorbgitdirs leaves it.
	mod := filepath.Join(gd, "modules", "lib")
	run(t, dir, "init", "-q", "--bare", mod)
	write(t, filepath.Join(mod, "hooks", "post-checkout"), "#!/bin/sh\n", 0o755)
	snap, err := Take(ctx, r, Options{Change: "x"})
	if err != nil {
		t.Fatal(err)
	}
	run(t, dir, "worktree", "remove", "--force", gone)
	other := t.TempDir()
	head := run(t, dir, "rev-parse", "HEAD")
	write(t, filepath.Join(gd, "commondir"), other+"\n", 0o644)
	write(t, filepath.Join(gd, "objects", "info", "alternates"), other+"/objects\n", 0o644)
	write(t, filepath.Join(gd, "shallow"), head+"\n", 0o644)
	write(t, filepath.Join(gd, "info", "grafts"), "x\n", 0o644)
	write(t, filepath.Join(gd, "info", "whatever"), "x\n", 0o644)
	write(t, filepath.Join(gd, "worktrees", "mine", "commondir"), other+"\n", 0o644)
	write(t, filepath.Join(gd, "worktrees", "mine", "config.worktree"), "[core]\n\tfsmonitor = /x\n", 0o644)
	write(t, filepath.Join(mod, "config"), "[core]\n\tfsmonitor = /x\n", 0o644)
	write(t, filepath.Join(mod, "hooks", "post-checkout"), "#!/bin/sh\nevil\n", 0o755)
	write(t, filepath.Join(mod, "hooks", "pre-commit"), "#!/bin/sh\nevil\n", 0o755)

	changes, err := snap.Compare(ctx, r)
	if err != nil {
		t.Fatal(err)
	}
	want := "tampered: .git/info/grafts created, .git/commondir created, " +
		".git/objects/info/alternates created, .git/shallow created, .git/worktrees/mine/commondir changed, " +
		".git/worktrees/mine/config.worktree created, .git/modules/lib/config changed, .git/modules/lib/hooks/post-checkout changed, " +
		".git/info/whatever created, .git/modules/lib/hooks/pre-commit created"
	if got := Reason(changes, r.Root); got != want {
		t.Errorf("Reason =\n  %s\nwant\n  %s", got, want)
	}
	if !snap.Relocated {
		t.Error("Relocated = false with the repository's commondir written")
	}
	if ConfigChanged(changes, snap) {
		t.Error("ConfigChanged: none of these is the repository's or the user's config")
	}
	keep := filepath.Join(gd, "ralph", "x", "tampered", "1-1")
	if _, err := Restore(ctx, r, changes, "refs/ralph/x/tampered/1-1/", keep); err != nil {
		t.Fatal(err)
	}
	if changes, err := snap.Compare(ctx, r); err != nil || len(changes) != 0 || snap.Relocated {
		t.Errorf("after the restore Compare = %q, %v (relocated %v)", Reason(changes, r.Root), err, snap.Relocated)
	}
	if got := run(t, mine, "rev-parse", "--path-format=absolute", "--git-common-dir"); got != gd {
		t.Errorf("the other worktree's git finds %q, want %q", got, gd)
	}
	for _, p := range []string{"commondir", "modules/lib/config", "modules/lib/hooks/pre-commit", "worktrees/mine/commondir"} {
		if _, err := os.Lstat(filepath.Join(keep, p)); err != nil {
			t.Errorf("the agent's %s is not kept: %v", p, err)
		}
	}
}

// A dotfiles-style symlinked ~/.gitconfig edited through the link, and a hook that is a
// link to a script kept elsewhere, rewritten there: the link is the same, what git reads
// through it is not. Found, and put back where it lives.
func TestSymlinkTargets(t *testing.T) {
	dir, r := repo(t)
	ctx := t.Context()
	dots := t.TempDir()
	write(t, filepath.Join(dots, "gitconfig"), "[user]\n\tname = T\n", 0o644)
	write(t, filepath.Join(dots, "verify"), "#!/bin/sh\nexit 1\n", 0o755)
	home := os.Getenv("HOME")
	if err := os.Symlink(filepath.Join(dots, "gitconfig"), filepath.Join(home, ".gitconfig")); err != nil {
		t.Fatal(err)
	}
	hook := filepath.Join(dir, ".git", "hooks", "ralph-verify")
	if err := os.Remove(hook); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(dots, "verify"), hook); err != nil {
		t.Fatal(err)
	}
	snap, err := Take(ctx, r, Options{Change: "x"})
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(filepath.Join(home, ".gitconfig"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString("[filter \"evil\"]\n\tclean = /x\n"); err != nil {
		t.Fatal(err)
	}
	f.Close()
	write(t, filepath.Join(dots, "verify"), "#!/bin/sh\nexit 0\n", 0o755)

	changes, err := snap.Compare(ctx, r)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := Reason(changes, r.Root), "tampered: "+filepath.Join(home, ".gitconfig")+" changed, .git/hooks/ralph-verify changed"; got != want {
		t.Fatalf("Reason = %q, want %q", got, want)
	}
	if !ConfigChanged(changes, snap) {
		t.Error("ConfigChanged = false with the global config changed through its link")
	}
	keep := t.TempDir()
	lines, err := Restore(ctx, r, changes, "refs/ralph/x/tampered/1-1/", keep)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(strings.Join(lines, "\n"), "and what it leads to, "+filepath.Join(dots, "gitconfig")) {
		t.Errorf("the restore does not name the link's target:\n%s", strings.Join(lines, "\n"))
	}
	if b, _ := os.ReadFile(filepath.Join(dots, "gitconfig")); string(b) != "[user]\n\tname = T\n" {
		t.Errorf("the target is %q after the restore", b)
	}
	if b, _ := os.ReadFile(filepath.Join(dots, "verify")); string(b) != "#!/bin/sh\nexit 1\n" {
		t.Errorf("the hook's target is %q after the restore", b)
	}
	if l, err := os.Readlink(hook); err != nil || l != filepath.Join(dots, "verify") {
		t.Errorf("the hook is no longer the link: %q, %v", l, err)
	}
	if b, _ := os.ReadFile(filepath.Join(keep, "hooks", "ralph-verify.target")); string(b) != "#!/bin/sh\nexit 0\n" {
		t.Errorf("the agent's version of the hook's target is not kept: %q", b)
	}
	if changes, err := snap.Compare(ctx, r); err != nil || len(changes) != 0 {
		t.Errorf("after the restore Compare = %q, %v", Reason(changes, r.Root), err)
	}
}

// A fake worktree (.git/worktrees/x/HEAD naming a branch) made during the attempt does
// not make a branch the agent creates anyone's: only branches checked out before the
// attempt are. One checked out (unborn) before, committed to during it, is let be.
func TestCheckedOutOnlyBefore(t *testing.T) {
	dir, r := repo(t)
	ctx := t.Context()
	other := filepath.Join(t.TempDir(), "other")
	run(t, dir, "worktree", "add", "-q", "--detach", other)
	run(t, other, "checkout", "-q", "--orphan", "fresh")
	snap, err := Take(ctx, r, Options{Change: "x"})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(snap.CheckedOut, "refs/heads/fresh") {
		t.Fatalf("CheckedOut = %v", snap.CheckedOut)
	}
	run(t, other, "commit", "-q", "--allow-empty", "-m", "first there")
	fake := filepath.Join(dir, ".git", "worktrees", "fake")
	write(t, filepath.Join(fake, "HEAD"), "ref: refs/heads/evil\n", 0o644)
	write(t, filepath.Join(fake, "gitdir"), filepath.Join(t.TempDir(), ".git")+"\n", 0o644)
	write(t, filepath.Join(fake, "commondir"), "../..\n", 0o644)
	run(t, dir, "branch", "evil")
	if got := run(t, dir, "worktree", "list", "--porcelain"); !strings.Contains(got, "branch refs/heads/evil") {
		t.Fatalf("control: git does not list the fake worktree:\n%s", got)
	}
	changes, err := snap.Compare(ctx, r)
	if err != nil {
		t.Fatal(err)
	}
	if got := Reason(changes, r.Root); got != "tampered: refs/heads/evil created" {
		t.Errorf("Reason = %q", got)
	}
}

// git's repack, which an automatic gc after git-ralph's own commit runs, rewrites
// info/refs for dumb HTTP servers: no change of the agent's.
func TestServerInfoNotWatched(t *testing.T) {
	dir, r := repo(t)
	ctx := t.Context()
	snap, err := Take(ctx, r, Options{Change: "x"})
	if err != nil {
		t.Fatal(err)
	}
	run(t, dir, "gc", "-q")
	if _, err := os.Stat(filepath.Join(dir, ".git", "info", "refs")); err != nil {
		t.Fatalf("control: git gc wrote no info/refs: %v", err)
	}
	if changes, err := snap.Compare(ctx, r); err != nil || len(changes) != 0 {
		t.Errorf("after git gc, Compare = %q, %v", Reason(changes, r.Root), err)
	}
}

// What an agent writes into the watched files cannot grow git-ralph's memory: a file
// over MaxKept is recorded by its sum (a change still seen, the agent's version kept by
// copying it in pieces), the user's own put back, and past MaxKeptTotal every further
// file is recorded by its sum too.
func TestLargeFilesBySum(t *testing.T) {
	dir, r := repo(t)
	ctx := t.Context()
	snap, err := Take(ctx, r, Options{Change: "x"})
	if err != nil {
		t.Fatal(err)
	}
	verify := filepath.Join(dir, ".git", "hooks", "ralph-verify")
	mine, _ := os.ReadFile(verify)
	big := strings.Repeat("#", MaxKept+1)
	write(t, verify, "#!/bin/sh\n"+big+"\nexit 0\n", 0o755)
	// More than MaxKeptTotal in new hooks, each within MaxKept.
	n := MaxKeptTotal/MaxKept + 2
	for i := range n {
		write(t, filepath.Join(dir, ".git", "hooks", fmt.Sprintf("h%02d", i)), strings.Repeat("x", MaxKept), 0o755)
	}
	changes, err := snap.Compare(ctx, r)
	if err != nil {
		t.Fatal(err)
	}
	if len(changes) != n+1 {
		t.Fatalf("%d changes, want %d", len(changes), n+1)
	}
	var kept, summed int64
	for _, c := range changes {
		kept += int64(len(c.NowFile.Data))
		if c.NowFile.Sum != "" {
			summed++
		}
	}
	if kept > MaxKeptTotal || summed < 3 {
		t.Errorf("kept %d bytes in memory (at most %d), %d files by their sum (want the big one and those past the total)", kept, MaxKeptTotal, summed)
	}
	keepDir := filepath.Join(dir, ".git", "ralph", "x", "tampered", "1-1")
	if _, err := Restore(ctx, r, changes, "refs/ralph/x/tampered/1-1/", keepDir); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(verify); string(b) != string(mine) {
		t.Errorf("ralph-verify after the restore: %d bytes, want the user's own", len(b))
	}
	if b, err := os.ReadFile(filepath.Join(keepDir, "hooks", "ralph-verify")); err != nil || !strings.Contains(string(b), big) {
		t.Errorf("the agent's large ralph-verify is not kept whole: %d bytes, %v", len(b), err)
	}
	if changes, err := snap.Compare(ctx, r); err != nil || len(changes) != 0 {
		t.Errorf("after the restore Compare = %v, %v", changes, err)
	}
}

// A worktree another process is adding when the surface is taken (another loop of a
// -j run, or the user) is not the agent's doing when its add completes: its git
// directory, caught with no HEAD yet or the null object name git writes first, is not
// watched, so the commondir the add writes next is no change (it was removed as one,
// and the other loop lost its worktree).
func TestHalfMadeWorktreeNotWatched(t *testing.T) {
	for _, head := range []string{"", strings.Repeat("0", 40) + "\n"} {
		dir, r := repo(t)
		ctx := t.Context()
		half := filepath.Join(dir, ".git", "worktrees", "half")
		write(t, filepath.Join(half, "gitdir"), filepath.Join(t.TempDir(), "half", ".git")+"\n", 0o644)
		if head != "" {
			write(t, filepath.Join(half, "HEAD"), head, 0o644)
		}
		snap, err := Take(ctx, r, Options{Change: "x"})
		if err != nil {
			t.Fatal(err)
		}
		write(t, filepath.Join(half, "HEAD"), "ref: refs/heads/feature\n", 0o644)
		write(t, filepath.Join(half, "commondir"), "../..\n", 0o644)
		changes, err := snap.Compare(ctx, r)
		if err != nil {
			t.Fatal(err)
		}
		if len(changes) != 0 {
			t.Errorf("HEAD %q when taken: the add's own files are changes: %s", head, Reason(changes, r.Root))
		}
	}
}
