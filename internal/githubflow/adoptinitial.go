package githubflow

import (
	"context"
	"strings"

	"github.com/git-ralph/git-ralph/internal/git"
	"github.com/git-ralph/git-ralph/internal/loop"
)

// initialTrailers returns the trailers of the "initial state" commit of ralph/<name>
// in repo (start --adopt on a runner: no record yet, and they say which source the run
// is), nil when there is none.
func initialTrailers(ctx context.Context, repo *git.Repo) func(name string) map[string]string {
	return func(name string) map[string]string {
		if strings.HasPrefix(name, "-") || repo.CheckBranchName(ctx, loop.BranchName(name)) != nil {
			return nil
		}
		cs, err := repo.Log(ctx, "refs/heads/"+loop.BranchName(name), 1000)
		if err != nil {
			return nil
		}
		for _, c := range cs {
			if c.Subject == "initial state" {
				return c.Trailers
			}
		}
		return nil
	}
}
