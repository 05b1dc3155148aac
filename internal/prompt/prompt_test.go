package prompt

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/git-ralph/git-ralph/internal/openspec"
)

// A realistic change, as small inline documents parsed by the openspec package.
const (
	tasksMD = `# Tasks

## 1. Reset tokens
- [x] 1.1 Add the reset_tokens table
- [x] 1.2 Generate and hash tokens

## 2. Reset email
- [x] 2.1 Send the reset email with a one-time link
- [ ] 2.2 Rate-limit requests per address
- [ ] 2.3 Log every request

## 3. Reset form
- [ ] 3.1 Add the form that sets the new password
`
	proposalMD = `## Why

Users who forget their password have to write to support.

## What Changes

- A "forgot password" link on the login page.
- An email with a one-time link that expires after an hour.
`
	designMD = `## Decisions

Tokens are 32 random bytes, stored hashed (SHA-256); the email carries the raw token.
`
	specMD = `## ADDED Requirements

### Requirement: Password reset by email
Users SHALL be able to reset a forgotten password through a link sent by email.

#### Scenario: Known address
- **WHEN** a user asks for a reset with a registered address
- **THEN** an email with a one-time link is sent
- **AND** the link expires after one hour

#### Scenario: Unknown address
- **WHEN** a user asks for a reset with an unknown address
- **THEN** the answer is the same as for a known address

## MODIFIED Requirements

### Requirement: Request rate limits
Every endpoint that sends email SHALL be limited to 5 requests per address per hour.

#### Scenario: Too many requests
- **GIVEN** 5 reset requests for one address in the last hour
- **WHEN** a sixth arrives
- **THEN** it is refused with HTTP 429
`
	learningsText = "Run the tests with `make test`; `go test` alone misses the tags.\nThe mailer is faked in tests by MAILER=memory."
	reason        = "signalled COMPLETE but tasks 2.3 are still open"
	learningsPath = "/home/ada/src/shop/.git/ralph/add-password-reset/learnings.md"
)

// realistic is attempt 2 of 4 at story 2 of the change, with a reason to pass on.
func realistic(t *testing.T) Data {
	t.Helper()
	tasks := openspec.ParseTasks([]byte(tasksMD))
	story, ok := tasks.NextStory()
	if !ok || story.ID != "2" {
		t.Fatalf("next story = %+v, %v; want story 2", story, ok)
	}
	dir := "openspec/changes/add-password-reset"
	return Data{
		Change:    "add-password-reset",
		ChangeDir: dir,
		TasksPath: dir + "/tasks.md",
		Story:     story,
		Stories:   tasks.Stories,
		Proposal:  NewDoc(dir+"/proposal.md", proposalMD),
		Design:    NewDoc(dir+"/design.md", designMD),
		Specs: []openspec.Spec{{
			Capability:   "auth",
			Path:         dir + "/specs/auth/spec.md",
			Requirements: openspec.ParseSpec([]byte(specMD)),
		}},
		LearningsPath: learningsPath,
		Learnings:     learningsText,
		Attempt:       2,
		MaxAttempts:   4,
		Reason:        reason,
	}
}

func render(t *testing.T, tmplPath string, d Data) string {
	t.Helper()
	out, err := Render(tmplPath, d)
	if err != nil {
		t.Fatalf("Render(%q): %v", tmplPath, err)
	}
	return out
}

// TestRenderGolden renders the default template for a realistic story and compares it
// with testdata/story.golden; UPDATE_GOLDEN=1 rewrites the file.
func TestRenderGolden(t *testing.T) {
	got := render(t, "", realistic(t))
	golden := filepath.Join("testdata", "story.golden")
	if os.Getenv("UPDATE_GOLDEN") != "" {
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (UPDATE_GOLDEN=1 go test ./internal/prompt writes it)", err)
	}
	if got != string(want) {
		t.Errorf("the prompt differs from %s (UPDATE_GOLDEN=1 regenerates it):\n%s", golden, lineDiff(string(want), got))
	}
}

// TestRenderHoldsWhatSpecRequires checks, independently of the golden file, every item
// docs/LOOP.md, "The prompt" asks of a story prompt.
func TestRenderHoldsWhatSpecRequires(t *testing.T) {
	got := render(t, "", realistic(t))
	for _, want := range []struct{ what, text string }{
		{"change name", `"add-password-reset"`},
		{"where the change's files are", "openspec/changes/add-password-reset/"},
		{"story id and title", "Story 2: Reset email"},
		{"attempt of max", "attempt 2 of 4"},
		{"a done task with its state", "- [x] 2.1 Send the reset email with a one-time link"},
		{"an open task with its state", "- [ ] 2.2 Rate-limit requests per address"},
		{"another open task", "- [ ] 2.3 Log every request"},
		{"where tasks.md is", "openspec/changes/add-password-reset/tasks.md"},
		{"proposal path", "openspec/changes/add-password-reset/proposal.md"},
		{"proposal content", "Users who forget their password have to write to support."},
		{"design path", "openspec/changes/add-password-reset/design.md"},
		{"design content", "Tokens are 32 random bytes, stored hashed (SHA-256)"},
		{"spec path", "openspec/changes/add-password-reset/specs/auth/spec.md"},
		{"requirement", "Password reset by email"},
		{"modified requirement", "Request rate limits"},
		{"scenario", "Scenario: Known address"},
		{"second scenario", "Scenario: Unknown address"},
		{"scenario step", "WHEN a user asks for a reset with a registered address"},
		{"scenario THEN step", "THEN it is refused with HTTP 429"},
		{"learnings path", learningsPath},
		{"learnings content", "Run the tests with `make test`"},
		{"learnings second line", "The mailer is faked in tests by MAILER=memory."},
		{"reason heading", "Why the previous attempt failed"},
		{"the reason", reason},
		{"rule: this story only", "Work on story 2 only"},
		{"rule: check tasks off", "Check each task off in openspec/changes/add-password-reset/tasks.md"},
		{"rule: do not commit", "Do not commit"},
		{"rule: git-ralph commits", "git-ralph makes the commits"},
		{"rule: run the checks", "Run the project's checks"},
		{"promise COMPLETE on a line of its own", "\n   <promise>COMPLETE</promise>\n"},
		{"promise FAILED", "<promise>FAILED: "},
	} {
		if !strings.Contains(got, want.text) {
			t.Errorf("the prompt lacks the %s: %q", want.what, want.text)
		}
	}
	// the other stories are context, listed with their state, never as work
	for _, s := range []string{"- [x] 1: Reset tokens", "- [ ] 2: Reset email", "- [ ] 3: Reset form"} {
		if !strings.Contains(got, s) {
			t.Errorf("the story list lacks %q", s)
		}
	}
	if strings.Contains(got, "3.1 Add the form") {
		t.Error("the prompt lists another story's tasks as if they were this story's")
	}
	if strings.Contains(got, "<no value>") {
		t.Error(`the prompt contains "<no value>": a template field is missing`)
	}
}

// TestRenderWithoutReason: a first attempt (or one whose predecessor left no reason)
// has no "why the previous attempt failed" section at all.
func TestRenderWithoutReason(t *testing.T) {
	d := realistic(t)
	d.Reason, d.Attempt = "", 1
	got := render(t, "", d)
	for _, s := range []string{"Why the previous attempt failed", reason, "avoid that failure"} {
		if strings.Contains(got, s) {
			t.Errorf("a prompt without a reason contains %q", s)
		}
	}
	if !strings.Contains(got, "attempt 1 of 4") {
		t.Error("the prompt does not say attempt 1 of 4")
	}
	// everything else is still there
	with := render(t, "", realistic(t))
	if !strings.Contains(with, "Why the previous attempt failed") {
		t.Fatal("the prompt with a reason lacks the reason section")
	}
}

// TestRenderEmptyLearnings: the learnings file is named even when it is empty.
func TestRenderEmptyLearnings(t *testing.T) {
	d := realistic(t)
	d.Learnings = ""
	got := render(t, "", d)
	if !strings.Contains(got, learningsPath) {
		t.Errorf("the prompt does not name the learnings file %s", learningsPath)
	}
	if !strings.Contains(got, "It is empty so far.") {
		t.Error("the prompt does not say the learnings file is empty")
	}
}

// TestRenderUserTemplate: ralph.promptTemplate names a file that replaces the default.
func TestRenderUserTemplate(t *testing.T) {
	path := filepath.Join(t.TempDir(), "my prompt.tmpl")
	tmpl := `MINE {{.Change}} story {{.Story.ID}} ({{.Story.Title}}) try {{.Attempt}}/{{.MaxAttempts}}
{{range .Story.Tasks}}{{box .Done}} {{.ID}}
{{end}}{{if .Reason}}because: {{.Reason}}{{end}}
`
	if err := os.WriteFile(path, []byte(tmpl), 0o644); err != nil {
		t.Fatal(err)
	}
	got := render(t, path, realistic(t))
	want := "MINE add-password-reset story 2 (Reset email) try 2/4\n[x] 2.1\n[ ] 2.2\n[ ] 2.3\nbecause: " + reason + "\n"
	if got != want {
		t.Errorf("user template rendered\n%q\nwant\n%q", got, want)
	}
	if strings.Contains(got, "# Rules") || got == render(t, "", realistic(t)) {
		t.Error("the default template was used instead of the user's")
	}
}

// TestRenderTemplateErrors: a broken user template is an error that names the file.
func TestRenderTemplateErrors(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct{ name, text string }{
		{"parse.tmpl", "story {{.Story.ID"},
		{"unknown-field.tmpl", "story {{.NoSuchField}}"},
		{"unknown-func.tmpl", "story {{shout .Change}}"},
		{"exec.tmpl", "{{index .Stories 99}}"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(dir, tc.name)
			if err := os.WriteFile(path, []byte(tc.text), 0o644); err != nil {
				t.Fatal(err)
			}
			out, err := Render(path, realistic(t))
			if err == nil {
				t.Fatalf("Render succeeded with %q:\n%s", tc.text, out)
			}
			if !strings.Contains(err.Error(), path) {
				t.Errorf("error %q does not name the template %s", err, path)
			}
		})
	}
	t.Run("missing", func(t *testing.T) {
		path := filepath.Join(dir, "absent.tmpl")
		_, err := Render(path, realistic(t))
		if err == nil {
			t.Fatal("Render of a missing template succeeded")
		}
		if !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "ralph.promptTemplate") {
			t.Errorf("error %q should name %s and ralph.promptTemplate", err, path)
		}
	})
}

// TestRenderHugeDesign: a design.md over 24 KiB is named by path, not inlined, so it
// cannot push the story out of the agent's context; the change is read with Load.
func TestRenderHugeDesign(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "openspec", "changes", "big")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	marker := "HUGE-DESIGN-LINE"
	huge := strings.Repeat(marker+" lorem ipsum dolor sit amet\n", (24<<10)/20)
	if len(huge) <= 24<<10 {
		t.Fatalf("the design is only %d bytes", len(huge))
	}
	for name, content := range map[string]string{"tasks.md": tasksMD, "design.md": huge, "proposal.md": proposalMD} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ch, err := openspec.Load(root, "big")
	if err != nil {
		t.Fatal(err)
	}
	story, _ := ch.NextStory()
	d := Data{
		Change: ch.Name, ChangeDir: ch.RelDir, TasksPath: ch.RelDir + "/tasks.md",
		Story: story, Stories: ch.Stories, Specs: ch.Specs,
		Proposal:      NewDoc(ch.RelDir+"/proposal.md", ch.Proposal),
		Design:        NewDoc(ch.RelDir+"/design.md", ch.Design),
		LearningsPath: learningsPath, Attempt: 1, MaxAttempts: 4,
	}
	got := render(t, "", d)
	if strings.Contains(got, marker) {
		t.Error("the huge design.md was inlined")
	}
	if !strings.Contains(got, "read openspec/changes/big/design.md") {
		t.Errorf("the prompt does not name the huge design by path:\n%s", got)
	}
	if !strings.Contains(got, "Users who forget their password") {
		t.Error("the small proposal.md was not inlined next to the huge design")
	}
	if len(got) > 16<<10 {
		t.Errorf("the prompt is %d bytes: the design leaked into it", len(got))
	}
}

// TestNewDocLimit: exactly 24 KiB is inlined, one byte more is not; an absent
// document is not present.
func TestNewDocLimit(t *testing.T) {
	at := strings.Repeat("a", 24<<10)
	if d := NewDoc("p", at); !d.Present || d.Content != at {
		t.Errorf("a 24 KiB document is not inlined (present %v, %d bytes)", d.Present, len(d.Content))
	}
	if d := NewDoc("p", at+"a"); !d.Present || d.Content != "" || d.Path != "p" {
		t.Errorf("a document over 24 KiB: %+v", Doc{Path: d.Path, Present: d.Present})
	}
	if d := NewDoc("p", ""); d.Present {
		t.Error("an absent document is present")
	}
}

// lineDiff shows the first differing line of want and got.
func lineDiff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	line := func(l []string, i int) string {
		if i < len(l) {
			return fmt.Sprintf("%q", l[i])
		}
		return "(end of text)"
	}
	for i := 0; i < len(w) || i < len(g); i++ {
		if i >= len(w) || i >= len(g) || w[i] != g[i] {
			return fmt.Sprintf("line %d:\n  want: %s\n  got:  %s", i+1, line(w, i), line(g, i))
		}
	}
	return "(no line differs)"
}
