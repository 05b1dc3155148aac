package finish

import (
	"testing"

	"github.com/git-ralph/git-ralph/internal/git"
	"github.com/git-ralph/git-ralph/internal/loop"
	"github.com/git-ralph/git-ralph/internal/looptest"
)

// The helpers of internal/loop's tests that the finish tests use.

type (
	recorder  = looptest.Recorder
	fakeClock = looptest.Clock
)

var (
	newRepo     = looptest.NewRepo
	scriptAgent = looptest.ScriptAgent
)

const resultComplete = looptest.ResultComplete

func newLoop(t *testing.T, dir string, clock *fakeClock) (*loop.Loop, *recorder) {
	t.Helper()
	repo, err := git.Open(t.Context(), dir)
	if err != nil {
		t.Fatal(err)
	}
	rep := &recorder{}
	l := loop.New(repo, rep)
	l.Now = clock.Now
	return l, rep
}
