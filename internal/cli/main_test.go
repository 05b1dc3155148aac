package cli

import (
	"os"
	"testing"

	"github.com/git-ralph/git-ralph/internal/sandbox"

	"github.com/git-ralph/git-ralph/internal/testtmp"
)

// TestMain makes the test binary the agent's launcher when a sandboxed start run
// in-process re-executes it as one, as git-ralph re-executes itself.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == sandbox.Command {
		os.Exit(sandbox.Main(os.Args[2:]))
	}
	os.Exit(testtmp.Main(m))
}
