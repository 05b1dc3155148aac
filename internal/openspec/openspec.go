// Package openspec reads OpenSpec changes from the working tree: the change directories
// under openspec/changes/, their tasks.md (stories and tasks), proposal, design and delta
// specs. It never runs the OpenSpec CLI.
//
// Tasks are counted exactly as OpenSpec 1.13.2 counts them (any checkbox line anywhere in
// tasks.md, done when the box holds x or X), so Tasks.Counts equals what `openspec list
// --json` reports. Stories are git-ralph's own layer on top: every level-2 section that
// holds a task, and the tasks before the first level-2 heading. Every task is in exactly
// one story.
package openspec

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/git-ralph/git-ralph/internal/repofile"
)

// Change is one change directory openspec/changes/<name>/.
type Change struct {
	Name      string
	Dir       string // absolute path of the change directory
	RelDir    string // relative to the repository root, slash-separated: "openspec/changes/<name>"
	TasksPath string // absolute path of the tasks file: tasks.md, or what the change's schema tracks
	TasksRel  string // TasksPath relative to the repository root, slash-separated
	Warning   string // why the tasks file fell back to tasks.md, "" when it did not
	HasTasks  bool   // the tasks file exists (as a file)
	Tasks            // the stories of the tasks file
	Proposal  string // proposal.md content (its first repofile.MaxDoc bytes), "" if absent
	Design    string // design.md content (likewise), "" if absent
	Specs     []Spec // delta specs, sorted by capability
	MoreSpecs bool   // there are more than repofile.MaxDocs of them: the others are not read

	root string // the repository root: every file is read inside it (repofile)
}

// NextStory returns the first incomplete story in file order.
func (c *Change) NextStory() (Story, bool) { return c.Tasks.NextStory() }

// Story returns the first story whose id is id.
func (c *Change) Story(id string) (Story, bool) { return c.Tasks.Story(id) }

// Reload re-reads the tasks file only: the agent ticks boxes as it works.
func (c *Change) Reload() error {
	data, ok, err := readFile(c.root, c.TasksPath)
	if err != nil {
		return err
	}
	c.HasTasks, c.Tasks = ok, ParseTasks(data)
	return nil
}

// UnknownChangeError is returned by Load for a name that is not a change directory.
type UnknownChangeError struct {
	Name  string
	Known []string // the changes that exist, as ListChanges returns them
}

// Error names the change that was asked for.
func (e *UnknownChangeError) Error() string {
	return fmt.Sprintf("no change %q in openspec/changes", e.Name)
}

// Hint tells the user which changes exist, or how to create one.
func (e *UnknownChangeError) Hint() string {
	if len(e.Known) == 0 {
		return "no changes here: create one with 'openspec new change <name>'"
	}
	return "changes here: " + strings.Join(e.Known, ", ")
}

// ListChanges returns the names of the change directories under <root>/openspec/changes,
// sorted bytewise, excluding "archive" and hidden (dot) directories. Like `openspec list`,
// it counts every real directory, even an empty one, and skips files and symlinks.
// A missing openspec/changes directory is not an error: it returns nil, nil.
func ListChanges(root string) ([]string, error) {
	entries, err := os.ReadDir(filepath.Join(root, "openspec", "changes"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var names []string
	for _, e := range entries { // os.ReadDir sorts by name
		if e.IsDir() && e.Name() != "archive" && !strings.HasPrefix(e.Name(), ".") {
			names = append(names, e.Name())
		}
	}
	return names, nil
}

// Load reads the change name of the repository at root. name must be one of
// ListChanges(root); otherwise Load returns an *UnknownChangeError. A change without
// tasks.md loads with HasTasks false.
func Load(root, name string) (*Change, error) {
	l, err := List(root)
	if err != nil {
		return nil, err
	}
	return l.Load(name)
}

// Listing is the change directories of one repository, read once: loading every change
// of a repository through it reads openspec/changes once, not once per change (which
// made `list` over a thousand changes quadratic).
type Listing struct {
	Root  string
	Names []string // as ListChanges returns them
	known map[string]bool
	sc    *schemas
}

// List reads the change directories of the repository at root.
func List(root string) (*Listing, error) {
	names, err := ListChanges(root)
	if err != nil {
		return nil, err
	}
	known := make(map[string]bool, len(names))
	for _, n := range names {
		known[n] = true
	}
	return &Listing{Root: root, Names: names, known: known, sc: newSchemas()}, nil
}

// Load reads the change name, which must be one of l.Names; otherwise it returns an
// *UnknownChangeError.
func (l *Listing) Load(name string) (*Change, error) { return l.load(name, true) }

// LoadTasks is Load without the proposal, design and specs: what `list` shows.
func (l *Listing) LoadTasks(name string) (*Change, error) { return l.load(name, false) }

func (l *Listing) load(name string, full bool) (*Change, error) {
	if !l.known[name] { // never join an unlisted name into a path
		return nil, &UnknownChangeError{Name: name, Known: l.Names}
	}
	return loadDir(l.sc, l.Root, "openspec/changes/"+name, name, full)
}

// loadDir reads the change in <root>/<relDir>; relDir is trusted. Only its tasks file
// unless full.
func loadDir(sc *schemas, root, relDir, name string, full bool) (*Change, error) {
	dir, err := filepath.Abs(filepath.Join(root, filepath.FromSlash(relDir)))
	if err != nil {
		return nil, err
	}
	tracks, warning := sc.tracksFile(root, dir)
	c := &Change{Name: name, Dir: dir, RelDir: relDir, TasksPath: filepath.Join(dir, filepath.FromSlash(tracks)),
		TasksRel: relDir + "/" + tracks, Warning: warning, root: root}
	if err := c.Reload(); err != nil {
		return nil, err
	}
	if !full {
		return c, nil
	}
	for path, dst := range map[string]*string{"proposal.md": &c.Proposal, "design.md": &c.Design} {
		// Their start: the prompt inlines a short one and names a longer one, and the
		// title and the "Why" are at the start.
		h, _, err := repofile.ReadHead(root, filepath.Join(dir, path))
		if err != nil {
			return nil, err
		}
		*dst = string(h.Data)
	}
	c.Specs, c.MoreSpecs, err = loadSpecs(root, dir, relDir)
	return c, err
}

// loadSpecs reads every specs/<capability>/spec.md below the change directory dir, at
// most repofile.MaxDocs of them (more says there are others) and the first
// repofile.MaxDoc bytes of each (Spec.Cut). A spec.md directly in specs/ belongs to no
// capability and is skipped, as the CLI does.
func loadSpecs(root, dir, relDir string) (specs []Spec, more bool, err error) {
	base := filepath.Join(dir, "specs")
	err = filepath.WalkDir(base, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if path == base && errors.Is(err, fs.ErrNotExist) {
				return fs.SkipAll
			}
			return err
		}
		rel, _ := filepath.Rel(base, path)
		capability := filepath.ToSlash(filepath.Dir(rel))
		if d.IsDir() || d.Name() != "spec.md" || capability == "." {
			return nil
		}
		if len(specs) == repofile.MaxDocs {
			more = true
			return fs.SkipAll
		}
		h, ok, err := repofile.ReadHead(root, path)
		if err != nil || !ok {
			return err
		}
		purpose, reqs := parseSpec(h.Data)
		specs = append(specs, Spec{Capability: capability, Path: relDir + "/specs/" + capability + "/spec.md",
			Purpose: purpose, Requirements: reqs, Cut: h.Cut()})
		return nil
	})
	slices.SortFunc(specs, func(a, b Spec) int { return strings.Compare(a.Capability, b.Capability) })
	return specs, more, err
}

// readFile reads path, a file of the repository at root; ok is false, without an error,
// when path does not exist or is a directory (the CLI ignores a directory named
// tasks.md). A file whose real path is outside the repository, a FIFO or a device is a
// *repofile.RefusedError: its content would go into the agent's prompt.
func readFile(root, path string) (data []byte, ok bool, err error) {
	return repofile.Read(root, path)
}
