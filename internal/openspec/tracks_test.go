package openspec

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestTracksFile: the tasks file is what the change's schema tracks (apply.tracks names
// an artifact's generates), looked up as the OpenSpec CLI does; anything that cannot be
// resolved falls back to tasks.md with a warning.
func TestTracksFile(t *testing.T) {
	const planSchema = "name: plan-driven\nartifacts:\n  - id: proposal\n    generates: proposal.md\n  - id: plan\n    generates: plan.md\napply:\n  requires: [plan]\n  tracks: plan.md\n"
	for _, c := range []struct {
		name    string
		files   map[string]string // relative to the repository root; the change is openspec/changes/c
		xdg     bool              // XDG_DATA_HOME points at <root>/xdg
		want    string
		warning string // a substring of the warning; "" for none
	}{
		{name: "no metadata", want: "tasks.md"},
		{name: "spec-driven", files: map[string]string{"openspec/changes/c/.openspec.yaml": "schema: spec-driven\ncreated: 2026-11-25\n"}, want: "tasks.md"},
		{name: "project schema tracks plan.md", files: map[string]string{
			"openspec/changes/c/.openspec.yaml":        "schema: plan-driven\n",
			"openspec/schemas/plan-driven/schema.yaml": planSchema}, want: "plan.md"},
		{name: "schema from config.yaml", files: map[string]string{
			"openspec/config.yaml":                     "schema: plan-driven\ncontext: |\n  Go\n",
			"openspec/schemas/plan-driven/schema.yaml": planSchema}, want: "plan.md"},
		{name: "schema name with .yaml", files: map[string]string{
			"openspec/changes/c/.openspec.yaml":        "schema: plan-driven.yaml\n",
			"openspec/schemas/plan-driven/schema.yaml": planSchema}, want: "plan.md"},
		{name: "user schema", xdg: true, files: map[string]string{
			"openspec/changes/c/.openspec.yaml":            "schema: plan-driven\n",
			"xdg/openspec/schemas/plan-driven/schema.yaml": planSchema}, want: "plan.md"},
		{name: "project overrides spec-driven", files: map[string]string{
			"openspec/schemas/spec-driven/schema.yaml": "artifacts:\n  - id: tasks\n    generates: todo/tasks.md\n"}, want: "todo/tasks.md"},
		{name: "unknown schema", files: map[string]string{"openspec/changes/c/.openspec.yaml": "schema: nope\n"},
			want: "tasks.md", warning: `schema "nope" not found`},
		{name: "broken metadata", files: map[string]string{"openspec/changes/c/.openspec.yaml": "schema: [\n"},
			want: "tasks.md", warning: "openspec/changes/c/.openspec.yaml: yaml"},
		{name: "bad schema name", files: map[string]string{"openspec/changes/c/.openspec.yaml": "schema: ../../x\n"},
			want: "tasks.md", warning: "not valid"},
		{name: "tracks a glob", files: map[string]string{
			"openspec/changes/c/.openspec.yaml": "schema: g\n",
			"openspec/schemas/g/schema.yaml":    "artifacts:\n  - id: tasks\n    generates: \"**/tasks.md\"\n"},
			want: "tasks.md", warning: "tracks several files"},
		{name: "tracks a file outside the change", files: map[string]string{
			"openspec/changes/c/.openspec.yaml": "schema: g\n",
			"openspec/schemas/g/schema.yaml":    "artifacts:\n  - id: tasks\n    generates: ../other/tasks.md\n"},
			want: "tasks.md", warning: "outside the change"},
		{name: "tracks nothing", files: map[string]string{
			"openspec/changes/c/.openspec.yaml": "schema: g\n",
			"openspec/schemas/g/schema.yaml":    "artifacts:\n  - id: plan\n    generates: plan.md\napply:\n  tracks: nothing.md\n"},
			want: "tasks.md", warning: "tracks no artifact"},
		{name: "broken schema", files: map[string]string{
			"openspec/changes/c/.openspec.yaml": "schema: g\n",
			"openspec/schemas/g/schema.yaml":    "artifacts: {\n"},
			want: "tasks.md", warning: `schema "g": yaml`},
	} {
		t.Run(c.name, func(t *testing.T) {
			root := t.TempDir()
			t.Setenv("XDG_DATA_HOME", filepath.Join(root, "no-xdg"))
			if c.xdg {
				t.Setenv("XDG_DATA_HOME", filepath.Join(root, "xdg"))
			}
			files := map[string]string{"openspec/changes/c/proposal.md": "# c\n"}
			for k, v := range c.files {
				files[k] = v
			}
			for name, content := range files {
				p := filepath.Join(root, filepath.FromSlash(name))
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			ch, err := Load(root, "c")
			if err != nil {
				t.Fatal(err)
			}
			if ch.TasksRel != "openspec/changes/c/"+c.want || ch.TasksPath != filepath.Join(ch.Dir, filepath.FromSlash(c.want)) {
				t.Errorf("TasksRel %q TasksPath %q; want %s", ch.TasksRel, ch.TasksPath, c.want)
			}
			if c.warning == "" && ch.Warning != "" || !strings.Contains(ch.Warning, c.warning) {
				t.Errorf("Warning = %q, want one containing %q", ch.Warning, c.warning)
			}
		})
	}
}

// TestTrackedFileIsRead: stories come from the tracked file, not tasks.md.
func TestTrackedFileIsRead(t *testing.T) {
	root := t.TempDir()
	t.Setenv("XDG_DATA_HOME", filepath.Join(root, "no-xdg"))
	for name, content := range map[string]string{
		"openspec/changes/c/.openspec.yaml": "schema: p\n",
		"openspec/schemas/p/schema.yaml":    "artifacts:\n  - id: plan\n    generates: plan.md\napply:\n  tracks: plan.md\n",
		"openspec/changes/c/tasks.md":       "## 1. Not tracked\n- [ ] 1.1 x\n",
		"openspec/changes/c/plan.md":        "# Plan\n- [x] one\n- [ ] two\n",
	} {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ch, err := Load(root, "c")
	if err != nil {
		t.Fatal(err)
	}
	if d, n := ch.Counts(); !ch.HasTasks || d != 1 || n != 2 || len(ch.Stories) != 1 || ch.Stories[0].ID != "plan" {
		t.Errorf("Load = HasTasks %v, %d/%d, stories %+v; want plan.md's one story, 1/2", ch.HasTasks, d, n, ch.Stories)
	}
}

// TestListingTracksEachChangesSchema: a Listing reads the project config and each schema
// once, and still gives every change the file its own schema tracks.
func TestListingTracksEachChangesSchema(t *testing.T) {
	root := t.TempDir()
	for path, content := range map[string]string{
		"openspec/config.yaml":                     "schema: plan-driven\n",
		"openspec/schemas/plan-driven/schema.yaml": "artifacts:\n  - id: tasks\n    generates: plan.md\n",
		"openspec/changes/a/plan.md":               "- [x] 1.1 a\n",
		"openspec/changes/b/.openspec.yaml":        "schema: spec-driven\n",
		"openspec/changes/b/tasks.md":              "- [ ] 1.1 b\n",
		"openspec/changes/c/plan.md":               "- [ ] 1.1 c\n- [x] 1.2 c\n",
		"openspec/changes/d/.openspec.yaml":        "schema: nope\n",
	} {
		p := filepath.Join(root, filepath.FromSlash(path))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	l, err := List(root)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, name := range l.Names {
		ch, err := l.LoadTasks(name)
		if err != nil {
			t.Fatal(err)
		}
		d, n := ch.Counts()
		got = append(got, fmt.Sprintf("%s %s %d/%d %t", name, ch.TasksRel, d, n, ch.Warning != ""))
	}
	want := []string{
		"a openspec/changes/a/plan.md 1/1 false",
		"b openspec/changes/b/tasks.md 0/1 false",
		"c openspec/changes/c/plan.md 1/2 false",
		"d openspec/changes/d/tasks.md 0/0 true",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if _, err := l.LoadTasks("../x"); err == nil {
		t.Error("an unlisted name loaded")
	}
}
