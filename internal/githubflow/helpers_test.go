package githubflow

// The test helpers of internal/loop's tests (loop_test.go, worktree_test.go), for the
// workflows' tests: a repository with one change, a scripted agent, a fake clock.

import (
	"context"
	"testing"

	"github.com/git-ralph/git-ralph/internal/finish"
	"github.com/git-ralph/git-ralph/internal/git"
	"github.com/git-ralph/git-ralph/internal/loop"
	"github.com/git-ralph/git-ralph/internal/looptest"
	"github.com/git-ralph/git-ralph/internal/run"
)

type (
	recorder  = looptest.Recorder
	fakeClock = looptest.Clock
)

var (
	newRepo     = looptest.NewRepo
	scriptAgent = looptest.ScriptAgent
	gitOut      = looptest.GitOut
)

const resultComplete = looptest.ResultComplete

// flowLoop is a test's one handle on the workflows (Flow) and the loop under them
// (Start, Finish): their repository and store are the same.
type flowLoop struct {
	*Flow
	*loop.Loop
}

// newLoop returns the workflows over a loop in dir, wired as the CLI wires them.
func newLoop(t *testing.T, dir string, clock *fakeClock) (*flowLoop, *recorder) {
	t.Helper()
	repo, err := git.Open(t.Context(), dir)
	if err != nil {
		t.Fatal(err)
	}
	rep := &recorder{}
	l := loop.New(repo, rep)
	l.Now, l.Waits.Sleep, l.Remote = clock.Now, clock.Sleep, Runs
	return &flowLoop{On(l), l}, rep
}

// Finish is finish --squash or --keep (internal/finish), as the CLI runs it.
func (l *flowLoop) Finish(ctx context.Context, change string, mode run.FinishMode) (*run.FinishResult, error) {
	return finish.Run(ctx, l.Loop, change, mode)
}
