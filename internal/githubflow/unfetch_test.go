package githubflow

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/git-ralph/git-ralph/internal/run"
)

// lockRef is a git trace that plants the lock file of ref under commonDir when
// git-ralph is about to update or delete it: that git fails as it would beside another
// git holding the ref.
type lockRef struct {
	commonDir, ref string
}

func (w lockRef) Write(p []byte) (int, error) {
	if line := string(p); strings.Contains(line, "update-ref") && strings.Contains(line, w.ref) {
		if err := os.WriteFile(filepath.Join(w.commonDir, filepath.FromSlash(w.ref)+".lock"), nil, 0o644); err != nil {
			return 0, err
		}
	}
	return len(p), nil
}

// A run brought home whose record is refused has the refs its fetch made put back;
// one that cannot be put back is named in a warning, not passed over.
func TestUnfetchSaysWhatItCouldNotPutBack(t *testing.T) {
	dir := newRepo(t)
	bare := withRemote(t, dir)
	l, rep := newLoop(t, dir, &fakeClock{At: time.Now()})
	remoteRun(t, dir, bare, l, 0, resultComplete)
	// The remote's state commit is forged: its record.json is no record.
	state := "refs/ralph/c/runs/42/state"
	blob := strings.TrimSpace(gitStdin(t, bare, "not a record\n", "hash-object", "-w", "--stdin"))
	tree := strings.TrimSpace(gitStdin(t, bare, "100644 blob "+blob+"\trecord.json\n", "mktree"))
	forged := gitOut(t, bare, "commit-tree", tree, "-m", "state")
	gitOut(t, bare, "update-ref", state, forged)

	tracking := "refs/remotes/origin/ralph/c"
	l.Repo.Trace = lockRef{commonDir: l.Repo.CommonDir, ref: tracking}
	_, err := l.Finish(t.Context(), "c", run.Squash)
	if err == nil || !strings.Contains(err.Error(), "record") {
		t.Fatalf("Finish = %v, want the forged record refused", err)
	}
	if !strings.Contains(rep.Text(), "warn: could not put back "+tracking) {
		t.Errorf("no warning names %s, which could not be put back:\n%s", tracking, rep.Text())
	}
	if out := gitOut(t, dir, "for-each-ref", "--format=%(refname)", "refs/ralph/c/runs/"); out != "" {
		t.Errorf("the fetched run refs are left: %s", out)
	}
}

// gitStdin runs git in dir with stdin and returns its output, failing the test on an
// error.
func gitStdin(t *testing.T, dir, stdin string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
	cmd.Stdin = strings.NewReader(stdin)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("git %v: %v", args, err)
	}
	return string(out)
}
