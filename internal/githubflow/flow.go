// Package githubflow holds git-ralph's GitHub workflows, built on the local loop
// (internal/loop) and the GitHub client (internal/github), one file each:
//
//   - pr.go, prbody.go: finish --pr pushes the run's branch and opens or updates its
//     pull request, with a body written from the run;
//   - dispatch.go: dispatch makes and pushes the start commit, asks GitHub to run the
//     workflow and finds the run again by its nonce;
//   - remote.go, watch.go, joblog.go: a dispatched run seen from here: status,
//     status --watch and dispatch --wait, cancel, logs (the artifact's, else the job's);
//   - home.go: finish and start of a dispatched run bring its published result home;
//   - prune.go: finish --prune-remote deletes the run's refs on the remote;
//   - runner.go: the runner's side: start --adopt, export and publish.
//
// Every workflow hangs off Flow, which embeds the *loop.Loop whose record, locks, clock
// and reporter it shares. The loop reaches back only through loop.RemoteRuns (Runs), so
// this package depends on internal/loop and never the reverse.
//
// It never prints (progress goes to the loop's Reporter, failures come back as
// *loop.Error), runs git only through internal/git and talks to GitHub only through
// internal/github. Only internal/cli imports it.
package githubflow

import (
	"context"
	"fmt"
	"strings"

	"github.com/git-ralph/git-ralph/internal/loop"
	"github.com/git-ralph/git-ralph/internal/run"
)

// Flow runs the GitHub workflows of one repository over its local loop, whose record,
// locks, clock and reporter they share.
type Flow struct{ *loop.Loop }

// On returns the GitHub workflows over l.
func On(l *loop.Loop) *Flow { return &Flow{l} }

// Runs is how the local loop brings home a run made on GitHub Actions (loop.RemoteRuns):
// the CLI sets it on every Loop it makes.
var Runs loop.RemoteRuns = runs{}

type runs struct{}

func (runs) Adopt(ctx context.Context, l *loop.Loop, o loop.Options) (*run.Record, error) {
	return On(l).adopt(ctx, o)
}

func (runs) Import(ctx context.Context, l *loop.Loop, rec *run.Record) error {
	return On(l).importRemoteRun(ctx, rec)
}

// The small helpers below are the workflows' own; the loop's are exported (loop.Short, …).

func userErr(hint, format string, args ...any) *loop.Error {
	return &loop.Error{Msg: fmt.Sprintf(format, args...), Hint: hint}
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return s
}

func orText(s, alt string) string {
	if s == "" {
		return alt
	}
	return s
}

func isHex(s string) bool {
	if len(s) != 40 && len(s) != 64 {
		return false
	}
	for _, c := range s {
		if !strings.ContainsRune("0123456789abcdef", c) {
			return false
		}
	}
	return true
}
