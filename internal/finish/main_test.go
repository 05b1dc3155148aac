package finish

import (
	"os"
	"testing"

	"github.com/git-ralph/git-ralph/internal/testtmp"
)

// TestMain puts the tests' repositories in memory (see testtmp).
func TestMain(m *testing.M) { os.Exit(testtmp.Main(m)) }
