// Package prompt renders the prompt one attempt at one story sends to the agent.
//
// The default template is embedded in the binary (story.tmpl); a user may replace it
// with a Go text/template file of their own named by `git config ralph.promptTemplate`.
// A template in the repository is never read on its own: the path comes from git config.
package prompt

import (
	_ "embed"
	"fmt"
	"os"
	"strings"
	"text/template"

	"github.com/git-ralph/git-ralph/internal/openspec"
)

//go:embed story.tmpl
var defaultTemplate string

// Default returns the embedded template text.
func Default() string { return defaultTemplate }

// maxInline is the size above which a document is named by path instead of inlined,
// so that a huge design.md cannot push the story out of the agent's context.
const maxInline = 24 << 10

// Data is everything a story prompt may use.
type Data struct {
	Change        string           // the change name
	ChangeDir     string           // "openspec/changes/<change>", relative to the repository root
	TasksPath     string           // relative path of tasks.md
	Story         openspec.Story   // the story to work on
	Stories       []openspec.Story // every story of the change, for context
	Proposal      Doc
	Design        Doc
	Specs         []openspec.Spec
	LearningsPath string // absolute path of the learnings file
	Learnings     string
	Attempt       int // 1-based
	MaxAttempts   int
	Reason        string // why the previous attempt failed, "" when there is none to pass on
}

// Doc is a document of the change, inlined when small, named by path always.
type Doc struct {
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
	text := defaultTemplate
	name := "story.tmpl"
	if tmplPath != "" {
		b, err := os.ReadFile(tmplPath)
		if err != nil {
			return "", fmt.Errorf("read prompt template (ralph.promptTemplate): %w", err)
		}
		text, name = string(b), tmplPath
	}
	t, err := template.New(name).Option("missingkey=error").Funcs(template.FuncMap{
		"box": func(done bool) string {
			if done {
				return "[x]"
			}
			return "[ ]"
		},
		"indent": func(prefix, s string) string {
			return prefix + strings.ReplaceAll(s, "\n", "\n"+prefix)
		},
	}).Parse(text)
	if err != nil {
		return "", fmt.Errorf("parse prompt template %s: %w", name, err)
	}
	var b strings.Builder
	if err := t.Execute(&b, d); err != nil {
		return "", fmt.Errorf("render prompt template %s: %w", name, err)
	}
	return b.String(), nil
}
