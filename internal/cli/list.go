package cli

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/cli/go-gh/v2/pkg/tableprinter"

	"github.com/git-ralph/git-ralph/internal/status"
)

type listCmd struct {
	JSON bool `name:"json" help:"Print JSON: {\"changes\": [...]}, each with its \"source\", counted as 'openspec list --json' counts."`
}

func (c *listCmd) Run(e *env) error {
	l, err := e.loop()
	if err != nil {
		return err
	}
	changes, err := reader(l).List(e.ctx)
	if err != nil {
		return err
	}
	if c.JSON {
		return writeJSON(e, map[string]any{"changes": changes})
	}
	if len(changes) == 0 {
		fmt.Fprintln(e.s.Out, "no changes in openspec/changes and no spec-kit features in specs; create one with 'openspec new change <name>', or give 'git ralph start' a plan or a prd.json")
		return nil
	}
	// A source column once anything but OpenSpec changes is listed.
	sources := false
	for _, ch := range changes {
		sources = sources || ch.Source != "openspec"
	}
	p := e.s.Palette()
	t := tableprinter.New(e.s.Out, e.s.StdoutTTY, 120)
	header := []string{"CHANGE", "TASKS", "STORIES", "RUN"}
	if sources {
		header = []string{"NAME", "SOURCE", "TASKS", "STORIES", "RUN"}
	}
	t.AddHeader(header)
	if !e.s.StdoutTTY {
		// The table printer leaves the header out of its tab-separated form; a reader of
		// a piped list still needs to know the columns (--json is the form for scripts).
		fmt.Fprintln(e.s.Out, strings.Join(header, "\t"))
	}
	for _, ch := range changes {
		done := status.Done(ch.Stories)
		runText := "-"
		if ch.Run != nil {
			runText = ch.Run.Status + " on " + ch.Run.Branch
			if wt := ch.Run.Worktree; wt != nil {
				runText += " in " + wt.Path
				if wt.Missing {
					runText += " (worktree missing)"
				}
			}
			if ch.Run.CurrentStory != "" {
				runText += " (story " + ch.Run.CurrentStory + ")"
			}
		}
		t.AddField(ch.Name, tableprinter.WithColor(func(s string) string { return p.Bold(s) }))
		if sources {
			src := ch.Source
			if ch.TasksFile != "" {
				src += " " + ch.TasksFile
			}
			t.AddField(src)
		}
		t.AddField(fmt.Sprintf("%d/%d", ch.CompletedTasks, ch.TotalTasks))
		t.AddField(fmt.Sprintf("%d/%d", done, len(ch.Stories)))
		t.AddField(runText)
		t.EndRow()
	}
	if err := t.Render(); err != nil {
		return err
	}
	return nil
}

func writeJSON(e *env, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(e.s.Out, "%s\n", b)
	return err
}
