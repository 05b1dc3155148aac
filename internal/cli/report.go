package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/git-ralph/git-ralph/internal/loop"
	"github.com/git-ralph/git-ralph/internal/report"
	"github.com/git-ralph/git-ralph/internal/run"
	"github.com/git-ralph/git-ralph/internal/tell"
	"github.com/git-ralph/git-ralph/internal/term"
)

type reportCmd struct {
	Change string `arg:"" optional:"" help:"The change; may be left out when exactly one run (or finished run) exists."`
	Output string `short:"o" placeholder:"FILE" help:"Write the page to FILE ('-': standard output); default <git-common-dir>/ralph/<change>/report.html."`
	Open   bool   `help:"Open the page with the desktop's opener (xdg-open, open) once written."`
}

// Help is the long help of report.
func (c *reportCmd) Help() string {
	return `Writes one self-contained HTML page about a run: the summary, a timeline of every
attempt, each story's tasks and attempts (outcome, reason, duration, tokens, cost,
verify, the end of its log), each checkpoint's diff and each failed attempt's diff.
It works while a run goes on (a snapshot), after it stopped, and after finish, when it
is rebuilt from git alone: the checkpoint commits' trailers, the attempt refs and the
backup ref. The page makes no network request; it reads the same offline.

It prints the path of the page it wrote.`
}

func (c *reportCmd) Run(e *env) error {
	if c.Output == "-" && c.Open {
		return &usageError{msg: "--open needs a file, not standard output", hint: "drop -o - or --open"}
	}
	l, err := e.loop()
	if err != nil {
		return err
	}
	change, err := reportChange(e, l, c.Change)
	if err != nil {
		return err
	}
	if c.Output == "-" {
		rep, err := report.Build(e.ctx, l.Repo, l.Store, change, report.Options{Now: l.Now, Kinds: l.Sources})
		if err != nil {
			return err
		}
		return report.Render(e.s.Out, rep)
	}
	path := c.Output
	if path == "" {
		path = reportPath(l, change)
	}
	if err := writeReport(e.ctx, l, change, path); err != nil {
		return err
	}
	fmt.Fprintln(e.s.Out, path)
	if c.Open {
		if err := term.Open(path); errors.Is(err, term.ErrNoOpener) {
			return &tell.Error{Msg: "no desktop opener (xdg-open, open) found", Hint: "open " + path + " in a web browser"}
		} else if err != nil {
			return err
		}
	}
	return nil
}

// reportChange picks the change a report is of: the named one, or the only one.
func reportChange(e *env, l *loop.Loop, name string) (string, error) {
	names, err := report.Runs(e.ctx, l.Repo, l.Store)
	if err != nil {
		return "", err
	}
	return run.PickRun(names, l.RunNameOf(name), "report")
}

// reportPath is where a change's report is written by default.
func reportPath(l *loop.Loop, change string) string {
	return filepath.Join(l.Store.ChangeDir(change), "report.html")
}

// writeReport builds the report of change and writes it to path atomically (a reader
// never sees half a page).
func writeReport(ctx context.Context, l *loop.Loop, change, path string) error {
	rep, err := report.Build(ctx, l.Repo, l.Store, change, report.Options{Now: l.Now, Kinds: l.Sources})
	if err != nil {
		return err
	}
	if _, _, err := l.Store.Rel(path); err == nil {
		// In the store (the git directory): no symlink the agent planted there is followed.
		return l.Store.WriteWith(path, 0o644, func(w io.Writer) error { return report.Render(w, rep) })
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, ".report-*.html")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	if err := report.Render(f, rep); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Chmod(f.Name(), 0o644); err != nil {
		return err
	}
	return os.Rename(f.Name(), path)
}

// printReport writes the report at the end of a run and says where it is; a report
// that cannot be written is a warning, never the run's failure.
func printReport(e *env, l *loop.Loop, change string) {
	path := reportPath(l, change)
	if err := writeReport(context.WithoutCancel(e.ctx), l, change, path); err != nil {
		fmt.Fprintln(e.s.Err, e.s.Palette().Warn("! the report was not written: "+err.Error()))
		return
	}
	fmt.Fprintln(e.s.Err, "report: "+path)
}
