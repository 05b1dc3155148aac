package source

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/git-ralph/git-ralph/internal/plan"
	"github.com/git-ralph/git-ralph/internal/prd"
	"github.com/git-ralph/git-ralph/internal/repofile"
	"github.com/git-ralph/git-ralph/internal/tasklist"
)

// openFile reads a plan or a prd.json at rel, a clean relative path.
func openFile(root string, k Kind, rel string, o Options) (*Source, error) {
	path := filepath.Join(root, filepath.FromSlash(rel))
	info, err := os.Lstat(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, &Error{Msg: fmt.Sprintf("%s: no such file", rel), Hint: "give the path of a " + map[Kind]string{Plan: ".md plan", PRD: "prd.json"}[k] + " in this repository"}
		}
		return nil, err
	}
	if !info.Mode().IsRegular() {
		return nil, &Error{Msg: fmt.Sprintf("%s is not a regular file", rel),
			Hint: "git-ralph runs a tracked file that is in the repository itself, not a symlink or a directory"}
	}
	dir := filepath.ToSlash(filepath.Dir(rel))
	s := &Source{Kind: k, Arg: rel, RelDir: dir, TasksPath: path, TasksRel: rel, HasTasks: true, root: root}
	data, ok, err := repofile.Read(root, path)
	if err != nil {
		return nil, &Error{Msg: err.Error(), Hint: "git-ralph runs a file that is in the repository itself"}
	}
	if !ok {
		return nil, &Error{Msg: fmt.Sprintf("%s: no such file", rel), Hint: "give the path of a file in this repository"}
	}
	base := strings.TrimSuffix(filepath.Base(rel), filepath.Ext(rel))
	switch k {
	case Plan:
		level := o.StoryLevel
		s.Name, s.DoneMark = base, "[x]"
		s.parse = func(b []byte) (tasklist.Tasks, error) { return plan.Parse(b, level), nil }
		s.Why = firstParagraph(string(data))
		s.Title = firstHeading(string(data))
	case PRD:
		p, err := prd.Parse(data)
		if err != nil {
			return nil, &Error{Msg: fmt.Sprintf("%s: %v", rel, err), Hint: "fix the file (snarktank/ralph's prd.json: {\"branchName\", \"userStories\": [{\"id\", \"title\", \"acceptanceCriteria\", \"priority\", \"passes\"}]})"}
		}
		s.Name = prdName(p.BranchName, dir, base)
		s.Why, s.Title = p.Description, p.Project
		s.want = p.IDs
		var last []string // the ids of the file parse read last: it is decoded once
		branch := p.BranchName
		s.parse = func(b []byte) (tasklist.Tasks, error) {
			p, err := prd.Parse(b)
			if err != nil {
				return tasklist.Tasks{}, err
			}
			if p.BranchName != branch { // the run is named after it
				return tasklist.Tasks{}, fmt.Errorf("its branchName changed from %q to %q", branch, p.BranchName)
			}
			last = p.IDs
			return p.Tasks, nil
		}
		s.ids = func([]byte) []string { return last }
		progress := "progress.txt"
		if dir != "." {
			progress = dir + "/progress.txt"
		}
		if _, ok, err := repofile.Read(root, filepath.Join(root, filepath.FromSlash(progress))); err == nil && ok {
			s.Learnings = progress // read into every prompt: a regular file inside the repository only
		}
	}
	return s, s.Reload()
}

// prdName is a prd's run name: its branchName without a leading "ralph/", else the name
// of the directory it is in (the file's own name at the top level). A "/" left in a
// branch name becomes "-": the run name is one path element.
func prdName(branch, dir, base string) string {
	if b := strings.TrimPrefix(strings.TrimSpace(branch), "ralph/"); b != "" {
		return strings.ReplaceAll(b, "/", "-")
	}
	if dir != "." {
		return filepath.Base(dir)
	}
	return base
}
