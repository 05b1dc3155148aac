// Package prompt renders the prompt one attempt at one story sends to the agent, and
// reads the learnings that go into it (ReadLearnings: a source's own progress.txt only as
// a regular file inside the repository).
//
// The default template is embedded in the binary (story.tmpl); a user may replace it
// with a Go text/template file of their own named by `git config ralph.promptTemplate`.
// A template in the repository is never read on its own: the path comes from git config.
package prompt

import (
	_ "embed"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"text/template"

	"github.com/git-ralph/git-ralph/internal/openspec"
	"github.com/git-ralph/git-ralph/internal/source"
	"github.com/git-ralph/git-ralph/internal/tasklist"
)

// The embedded templates: one per source kind, sharing the blocks of common.tmpl.
var (
	//go:embed story.tmpl
	defaultTemplate string
	//go:embed speckit.tmpl
	speckitTemplate string
	//go:embed plan.tmpl
	planTemplate string
	//go:embed prd.tmpl
	prdTemplate string
	//go:embed issue.tmpl
	issueTemplate string
	//go:embed common.tmpl
	commonTemplate string
)

// builtins are the embedded templates by source kind (source.About.ID); a kind without
// one of its own gets story.tmpl, OpenSpec's.
var builtins = map[string]struct{ name, text string }{
	"speckit": {"speckit.tmpl", speckitTemplate},
	"plan":    {"plan.tmpl", planTemplate},
	"prd":     {"prd.tmpl", prdTemplate},
	"issue":   {"issue.tmpl", issueTemplate},
}

// builtin returns the embedded template of a source kind.
func builtin(kind string) (name, text string) {
	if t, ok := builtins[kind]; ok {
		return t.name, t.text
	}
	return "story.tmpl", defaultTemplate
}

// maxInline is the size above which a document is named by path instead of inlined,
// so that a huge design.md cannot push the story out of the agent's context.
const maxInline = 24 << 10

// Data is everything a story prompt may use.
type Data struct {
	Source        string           // the kind of task list: openspec, speckit, plan or prd
	Noun          string           // how the prompt names it: "change", "spec-kit feature", "plan", "prd"
	Change        string           // the run name (the change or feature name)
	ChangeDir     string           // the directory of its documents, relative to the repository root
	TasksPath     string           // relative path of the tracked file (tasks.md, the plan, prd.json)
	Story         openspec.Story   // the story to work on
	Section       source.Section   // the story's own part of the tracked file, as it stands
	Stories       []openspec.Story // every story of the change, for context
	Proposal      Doc
	Design        Doc
	Specs         []openspec.Spec
	Docs          []Doc    // the documents of a spec-kit feature, a plan or a prd (OpenSpec: Proposal, Design)
	Notes         []string // what to know before starting (spec-kit checklists with open items)
	LearningsPath string   // path of the learnings file: absolute, or relative for one in the repository
	// LearningsInRepo is set when the learnings file is the source's own, in the work
	// tree (progress.txt beside a prd.json), committed with the stories.
	LearningsInRepo  bool
	Learnings        string
	StoryDescription string // what a prd.json says of the story, "" for other sources
	Why              string // what the source says of the whole work (a prd's description), "" if nothing
	DoneMark         string // how the agent marks a task done: "[x]", spec-kit's "[X]"; "" for a prd
	// NoSkip leaves out the way to tick a task that cannot be done here (ralph.allowSkip
	// false); by default the prompt gives it: "(skipped - not automatable: <why>)".
	NoSkip      bool
	Attempt     int // 1-based
	MaxAttempts int
	Reason      string // why the previous attempt failed, "" when there is none to pass on
}

// Doc is a document of the change, inlined when small, named by path always.
type Doc struct {
	Title   string // "Proposal", "Plan", "Spec"…; "" for the Proposal and Design fields
	Path    string // relative to the repository root
	Content string // "" when absent or too large to inline
	Present bool
}

// NewDoc builds a Doc from a document's content.
func NewDoc(path, content string) Doc {
	d := Doc{Path: path, Present: content != ""}
	if len(content) <= maxInline {
		d.Content = strings.TrimSpace(content)
	}
	return d
}

// Render executes the template (the embedded default when tmplPath is "") with d.
func Render(tmplPath string, d Data) (string, error) {
	name, text := builtin(d.Source)
	if tmplPath != "" {
		b, err := os.ReadFile(tmplPath)
		if err != nil {
			return "", fmt.Errorf("read prompt template (ralph.promptTemplate): %w", err)
		}
		text, name = string(b), tmplPath
	}
	t, err := parse(name, text)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	if err := t.Execute(&b, d); err != nil {
		return "", fmt.Errorf("render prompt template %s: %w", name, err)
	}
	return b.String(), nil
}

// parsed are the templates parse made, by name and text: a run renders one per attempt.
var parsed sync.Map

// parse is the prompt template text (named name) with the shared blocks, parsed once.
func parse(name, text string) (*template.Template, error) {
	key := name + "\x00" + text
	if t, ok := parsed.Load(key); ok {
		return t.(*template.Template), nil
	}
	t := template.New(name).Option("missingkey=error").Funcs(template.FuncMap{
		"box": func(done bool) string {
			if done {
				return "[x]"
			}
			return "[ ]"
		},
		"indent": func(prefix, s string) string {
			return prefix + strings.ReplaceAll(s, "\n", "\n"+prefix)
		},
		// mark is a task's box as the file has it: [x], [ ], or what an odd box holds.
		"mark": func(t tasklist.Task) string {
			switch {
			case t.Done:
				return "[x]"
			case t.Box != "":
				return "[" + t.Box + "]"
			}
			return "[ ]"
		},
		// oddboxes lists the odd boxes ("[~]", "[-]") among tasks, once each.
		"oddboxes": func(ts []tasklist.Task) []string {
			var out []string
			for _, t := range ts {
				if b := "[" + t.Box + "]"; t.Box != "" && !t.Done && !slices.Contains(out, b) {
					out = append(out, b)
				}
			}
			return out
		},
		"join": strings.Join,
		// nest is the indent that shows a task under the task it is a sub-task of: two
		// spaces per level, the levels told apart by how far the file indents them.
		"nest": func(ts []tasklist.Task, i int) string {
			var levels []int // indents of the open enclosing tasks, outermost first
			for _, t := range ts[:i+1] {
				for len(levels) > 0 && levels[len(levels)-1] >= t.Indent {
					levels = levels[:len(levels)-1]
				}
				levels = append(levels, t.Indent)
			}
			return strings.Repeat("  ", len(levels)-1)
		},
		// kib is a size in KiB, rounded up.
		"kib": func(n int) int { return (n + 1023) / 1024 },
		// tag is a document title as an XML-ish tag: "Data model" is <data-model>.
		"tag": func(title string) string { return strings.ReplaceAll(strings.ToLower(title), " ", "-") },
	})
	// The shared blocks first, so that a user's template may use them, or redefine them.
	_, err := t.New("common.tmpl").Parse(commonTemplate)
	if err == nil {
		_, err = t.Parse(text)
	}
	if err != nil {
		return nil, fmt.Errorf("parse prompt template %s: %w", name, err)
	}
	parsed.Store(key, t)
	return t, nil
}
