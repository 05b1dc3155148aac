package openspec

import (
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"

	"go.yaml.in/yaml/v3"
)

// defaultSchema is OpenSpec's built-in schema; it tracks tasks.md.
const defaultSchema = "spec-driven"

// tracksFile returns the file (relative to the change directory dir, slash-separated) whose
// checkboxes OpenSpec counts: the output of the artifact apply.tracks names in the change's
// schema (.openspec.yaml's, else openspec/config.yaml's, else spec-driven), looked up in
// openspec/schemas/<name>/schema.yaml, then in the user's OpenSpec data directory, as the
// CLI does. Unresolved (or a glob): "tasks.md", as OpenSpec falls back, and a warning.
// A schemas remembers what does not depend on the change; nil reads everything each time.
func (sc *schemas) tracksFile(root, dir string) (file, warning string) {
	name, err := sc.schemaName(root, dir)
	if err != nil {
		return "tasks.md", fmt.Sprintf("%v; reading tasks.md", err)
	}
	if sc == nil {
		return schemaTracks(root, name)
	}
	r, ok := sc.tracks[name]
	if !ok {
		r.file, r.warning = schemaTracks(root, name)
		sc.tracks[name] = r
	}
	return r.file, r.warning
}

// schemas is tracksFile's cache; see there.
type schemas struct {
	config    *string // the project config's schema, once read ("" for none)
	configErr error
	tracks    map[string]struct{ file, warning string }
}

func newSchemas() *schemas {
	return &schemas{tracks: map[string]struct{ file, warning string }{}}
}

// schemaTracks is tracksFile for the schema name.
func schemaTracks(root, name string) (file, warning string) {
	var err error
	name = strings.TrimSuffix(strings.TrimSuffix(name, ".yaml"), ".yml")
	if name == "" || strings.ContainsAny(name, `/\`) || name == "." || name == ".." {
		return "tasks.md", fmt.Sprintf("schema name %q is not valid; reading tasks.md", name)
	}
	var data []byte
	for i, d := range schemaDirs(root) {
		file := filepath.Join(d, name, "schema.yaml")
		if i == 0 { // the repository's own: only a regular file inside it
			var ok bool
			if data, ok, err = readFile(root, file); err != nil {
				return "tasks.md", fmt.Sprintf("%v; reading tasks.md", err)
			} else if ok {
				break
			}
			data = nil
			continue
		}
		if data, err = os.ReadFile(file); err == nil {
			break
		}
	}
	if data == nil {
		if name == defaultSchema {
			return "tasks.md", ""
		}
		return "tasks.md", fmt.Sprintf("schema %q not found in openspec/schemas or the OpenSpec data directory; reading tasks.md", name)
	}
	var s struct {
		Artifacts []struct {
			ID        string `yaml:"id"`
			Generates string `yaml:"generates"`
		} `yaml:"artifacts"`
		Apply *struct {
			Tracks *string `yaml:"tracks"`
		} `yaml:"apply"`
	}
	if err := yaml.Unmarshal(data, &s); err != nil {
		return "tasks.md", fmt.Sprintf("schema %q: %v; reading tasks.md", name, err)
	}
	generates := ""
	for _, a := range s.Artifacts {
		if s.Apply != nil && s.Apply.Tracks != nil && a.Generates == *s.Apply.Tracks ||
			(s.Apply == nil || s.Apply.Tracks == nil) && a.ID == "tasks" {
			generates = a.Generates
			break
		}
	}
	switch clean := path.Clean(generates); {
	case generates == "":
		return "tasks.md", fmt.Sprintf("schema %q tracks no artifact's file; reading tasks.md", name)
	case strings.ContainsAny(generates, `*?[{\`):
		return "tasks.md", fmt.Sprintf("schema %q tracks several files (%s); reading tasks.md only", name, generates)
	case path.IsAbs(clean) || clean == "." || clean == ".." || strings.HasPrefix(clean, "../"):
		return "tasks.md", fmt.Sprintf("schema %q tracks %s, outside the change; reading tasks.md", name, generates)
	default:
		return clean, ""
	}
}

// schemaName is the schema named by the change's .openspec.yaml, else by
// openspec/config.yaml (or config.yml), else spec-driven.
func (sc *schemas) schemaName(root, dir string) (string, error) {
	name, err := schemaIn(root, filepath.Join(dir, ".openspec.yaml"))
	if err != nil || name != "" {
		return name, err
	}
	if sc == nil {
		name, err = projectSchema(root)
	} else {
		if sc.config == nil {
			c, err := projectSchema(root)
			sc.config, sc.configErr = &c, err
		}
		name, err = *sc.config, sc.configErr
	}
	if err != nil || name != "" {
		return name, err
	}
	return defaultSchema, nil
}

// projectSchema is the schema openspec/config.yaml (or config.yml) names, "" for none.
func projectSchema(root string) (string, error) {
	for _, p := range []string{filepath.Join(root, "openspec", "config.yaml"), filepath.Join(root, "openspec", "config.yml")} {
		if name, err := schemaIn(root, p); err != nil || name != "" {
			return name, err
		}
	}
	return "", nil
}

// schemaIn is the schema the YAML file p names, "" when p is missing or names none.
func schemaIn(root, p string) (string, error) {
	data, ok, err := readFile(root, p)
	if err != nil || !ok {
		return "", err
	}
	var m struct {
		Schema string `yaml:"schema"`
	}
	if err := yaml.Unmarshal(data, &m); err != nil {
		rel, _ := filepath.Rel(root, p)
		return "", fmt.Errorf("%s: %v", filepath.ToSlash(rel), err)
	}
	return m.Schema, nil
}

// schemaDirs are the directories OpenSpec looks for schemas in, in its order: the
// project's, then the user's (XDG_DATA_HOME, else ~/.local/share).
func schemaDirs(root string) []string {
	dirs := []string{filepath.Join(root, "openspec", "schemas")}
	data := os.Getenv("XDG_DATA_HOME")
	if data == "" {
		if home, err := os.UserHomeDir(); err == nil {
			data = filepath.Join(home, ".local", "share")
		}
	}
	if data != "" {
		dirs = append(dirs, filepath.Join(data, "openspec", "schemas"))
	}
	return dirs
}
