package source

import (
	"os"

	"github.com/git-ralph/git-ralph/internal/run"
)

// RunNameIn is the run name of arg in the repository whose top level is root: the run
// arg names (RunOf, from the current directory), else arg itself.
func RunNameIn(root string, store *run.Store, arg string) string {
	cwd, _ := os.Getwd()
	if name := RunOf(Repo{Root: root, Cwd: cwd, Runs: store}, arg); name != "" {
		return name
	}
	return arg
}

// ResolveRunIn is the change a command means in the repository whose top level is root
// and whose run records store holds: the named one, or the only one with a run. A name
// is accepted only if it is one of the runs listed (never joined into a path). The
// workflows that look at runs without a Loop (githubflow.Remote) call it directly.
func ResolveRunIn(root string, store *run.Store, name string) (string, error) {
	names, err := store.Changes()
	if err != nil {
		return "", err
	}
	return run.PickRun(names, RunNameIn(root, store, name), "status")
}
