// Package speckit reads GitHub Spec Kit features from the working tree: the feature
// directories under specs/ that hold a tasks.md, their tasks (stories are the "##"
// phases), the feature's documents and its checklists. It never runs spec-kit.
//
// docs/TASKS.md ("The kinds") has the layout and the template this follows.
package speckit

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/git-ralph/git-ralph/internal/repofile"
	"github.com/git-ralph/git-ralph/internal/tasklist"
)

// ParseTasks parses a spec-kit tasks.md: stories are the "##" sections (spec-kit's
// "## Phase N: …" gives id N), a task is an exact "[ ]", "[x]" or "[X]" box outside
// fenced code, and its id is its T### token ([P] and [USn] stay in its text).
func ParseTasks(data []byte) tasklist.Tasks {
	return tasklist.ParseMarkdown(data, tasklist.Rules{TaskID: TaskID})
}

var taskIDRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^T[0-9]{3,}\b`) })

// TaskID splits spec-kit's T### id off a task's description.
func TaskID(desc string) (id, text string) {
	id = taskIDRE().FindString(desc)
	if id == "" {
		return "", desc
	}
	return id, tasklist.Trim(desc[len(id):])
}

// ListFeatures returns the names of the directories under <root>/specs that hold a
// tasks.md file, sorted; hidden directories are skipped. No specs directory: nil, nil.
func ListFeatures(root string) ([]string, error) {
	dirs, err := listDirs(root)
	var out []string
	for _, d := range dirs {
		if isFile(filepath.Join(root, "specs", d, "tasks.md")) {
			out = append(out, d)
		}
	}
	return out, err
}

// Dirs returns every directory under <root>/specs, sorted, hidden ones skipped: the
// features, with tasks.md or not yet.
func Dirs(root string) ([]string, error) { return listDirs(root) }

// listDirs returns every directory under <root>/specs, sorted, hidden ones skipped.
func listDirs(root string) ([]string, error) {
	entries, err := os.ReadDir(filepath.Join(root, "specs"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range entries {
		if e.IsDir() && !strings.HasPrefix(e.Name(), ".") {
			out = append(out, e.Name())
		}
	}
	return out, nil
}

// ByNumber returns the features whose number (the digits before the first "-") is num.
func ByNumber(features []string, num string) []string {
	var out []string
	for _, f := range features {
		if n, _, _ := strings.Cut(f, "-"); n == num {
			out = append(out, f)
		}
	}
	return out
}

// branchPrefixRE is spec-kit's feature prefix of a branch name (find_feature_dir_by_prefix
// in scripts/bash/common.sh, up to v0.9.5): a timestamp or three or more digits, then "-".
var branchPrefixRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^([0-9]{8}-[0-9]{6}|[0-9]{3,})-`) })

// ForBranch returns the feature directories (of dirs) a branch name means, by spec-kit's
// own rule (find_feature_dir_by_prefix, which spec-kit used until v0.10.0 made the branch
// optional): a name of exactly two segments loses the first ("feat/004-x" is "004-x");
// a name with a numeric or timestamp prefix means every directory with that prefix
// (004-fix-bug and 004-add-feature share a spec); any other, the directory of that name.
func ForBranch(dirs []string, branch string) []string {
	if a, b, ok := strings.Cut(branch, "/"); ok && a != "" && b != "" && !strings.Contains(b, "/") {
		branch = b
	}
	m := branchPrefixRE().FindStringSubmatch(branch)
	if m == nil {
		if slices.Contains(dirs, branch) {
			return []string{branch}
		}
		return nil
	}
	var out []string
	for _, d := range dirs {
		if strings.HasPrefix(d, m[1]+"-") {
			out = append(out, d)
		}
	}
	return out
}

// FeatureDirectory is the "feature_directory" of .specify/feature.json, the current
// feature as /speckit.specify records it (spec-kit >= v0.5.1); "" when data holds none.
func FeatureDirectory(data []byte) string {
	var f struct {
		Dir any `json:"feature_directory"`
	}
	if json.Unmarshal(data, &f) != nil {
		return ""
	}
	s, _ := f.Dir.(string)
	return s
}

// NoTasksError is returned by Load for a directory under specs/ without tasks.md.
type NoTasksError struct{ Name string }

func (e *NoTasksError) Error() string {
	return fmt.Sprintf("specs/%s has no tasks.md", e.Name)
}

// Hint says how spec-kit makes one.
func (e *NoTasksError) Hint() string {
	return "generate it with spec-kit's /speckit.tasks, then start again"
}

// Feature is one feature directory specs/<name>/.
type Feature struct {
	Name      string
	RelDir    string // "specs/<name>"
	TasksPath string // absolute
	TasksRel  string // "specs/<name>/tasks.md"
	Spec      string // spec.md content (its first repofile.MaxDoc bytes), "" if absent
	Plan      string // plan.md content (likewise), "" if absent
	// Docs are the feature's documents that exist, relative to the repository root, in
	// the order spec-kit names them: spec.md, plan.md, research.md, data-model.md,
	// quickstart.md, contracts/, checklists/, .specify/memory/constitution.md.
	Docs       []string
	Checklists []Checklist // checklists/*.md with their counts
}

// Checklist is one file of the feature's checklists/ directory.
type Checklist struct {
	Path        string // relative to the repository root
	Open, Total int    // unchecked and all boxes, as /speckit.implement counts them
}

// Load reads the feature name of the repository at root. name must be one of the
// directories under specs/ (never joined into a path before that check).
func Load(root, name string) (*Feature, error) {
	dirs, err := listDirs(root)
	if err != nil {
		return nil, err
	}
	if !slices.Contains(dirs, name) {
		return nil, fmt.Errorf("no feature %q in specs", name)
	}
	rel := "specs/" + name
	dir := filepath.Join(root, "specs", name)
	f := &Feature{Name: name, RelDir: rel, TasksPath: filepath.Join(dir, "tasks.md"), TasksRel: rel + "/tasks.md"}
	if !isFile(f.TasksPath) {
		return nil, &NoTasksError{Name: name}
	}
	for _, doc := range []string{"spec.md", "plan.md", "research.md", "data-model.md", "quickstart.md"} {
		h, ok, err := repofile.ReadHead(root, filepath.Join(dir, doc)) // its start: a longer one is named, not inlined
		if err != nil {
			return nil, err // a symlink out of the repository: it would go into the prompt
		}
		if ok {
			f.Docs = append(f.Docs, rel+"/"+doc)
			switch doc {
			case "spec.md":
				f.Spec = string(h.Data)
			case "plan.md":
				f.Plan = string(h.Data)
			}
		}
	}
	for _, sub := range []string{"contracts", "checklists"} {
		if entries, err := os.ReadDir(filepath.Join(dir, sub)); err == nil && len(entries) > 0 {
			f.Docs = append(f.Docs, rel+"/"+sub+"/")
		}
	}
	if _, ok, _ := repofile.ReadHead(root, filepath.Join(root, ".specify", "memory", "constitution.md")); ok {
		f.Docs = append(f.Docs, ".specify/memory/constitution.md")
	}
	f.Checklists, err = checklists(root, dir, rel)
	return f, err
}

// checklists counts the boxes of every checklists/*.md, as the checklist gate of
// /speckit.implement does ("- [ ]", "- [x]", "- [X]"; unchecked is "- [ ]").
func checklists(root, dir, rel string) ([]Checklist, error) {
	entries, err := os.ReadDir(filepath.Join(dir, "checklists"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []Checklist
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".md") {
			continue
		}
		if len(out) == repofile.MaxDocs {
			break // the prompt names the directory; it is not read past this many files
		}
		data, ok, err := repofile.Read(root, filepath.Join(dir, "checklists", e.Name()))
		if err != nil {
			return nil, err
		}
		if !ok {
			continue
		}
		c := Checklist{Path: rel + "/checklists/" + e.Name()}
		var fences tasklist.Fences
		for line := range strings.SplitSeq(string(data), "\n") {
			if fences.Skip(line) {
				continue
			}
			if _, done, ok := tasklist.ExactTask(line); ok {
				c.Total++
				if !done {
					c.Open++
				}
			}
		}
		out = append(out, c)
	}
	return out, nil
}

func isFile(path string) bool {
	info, err := os.Stat(path)
	return err == nil && info.Mode().IsRegular()
}
