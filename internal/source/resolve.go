package source

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/git-ralph/git-ralph/internal/openspec"
	"github.com/git-ralph/git-ralph/internal/speckit"
)

// Resolve finds what `git ralph start <arg>` names (SPEC §2b's table), in the repository
// whose top level is root; cwd is where the command runs, for a relative path:
//   - "openspec:<name>" and "speckit:<name>" pick the kind;
//   - a path ending in ".md" is a markdown plan, one ending in ".json" a prd.json;
//   - any other name is an OpenSpec change or a spec-kit feature (or a feature's number
//     alone, "001", when one feature has it). A name that is both is refused, and a name
//     that is neither lists what exists.
//
// A name is only ever looked up among the directories listed, never joined into a path;
// a path must lead to a regular file inside root.
func Resolve(root, cwd, arg string, o Options) (*Source, error) {
	if name, ok := strings.CutPrefix(arg, "openspec:"); ok {
		return openOpenSpec(root, name)
	}
	if name, ok := strings.CutPrefix(arg, "speckit:"); ok {
		return resolveFeature(root, name, true)
	}
	if IsPath(arg) {
		k := Plan
		if strings.ToLower(filepath.Ext(arg)) == ".json" {
			k = PRD
		}
		rel, err := inside(root, cwd, arg)
		if err != nil {
			return nil, err
		}
		return openFile(root, k, rel, o)
	}
	changes, err := openspec.ListChanges(root)
	if err != nil {
		return nil, err
	}
	features, err := speckit.ListFeatures(root)
	if err != nil {
		return nil, err
	}
	isChange, isFeature := slices.Contains(changes, arg), slices.Contains(features, arg)
	switch {
	case isChange && isFeature:
		return nil, &Error{Msg: fmt.Sprintf("%q is both an OpenSpec change and a spec-kit feature", arg),
			Hint: fmt.Sprintf("say which: 'git ralph start openspec:%s' or 'git ralph start speckit:%s'", arg, arg)}
	case isChange:
		return openOpenSpec(root, arg)
	case isFeature:
		return openSpecKit(root, arg)
	}
	if len(features) > 0 {
		if s, err := resolveFeature(root, arg, false); s != nil || err != nil {
			return s, err
		}
	}
	return nil, unknown(arg, changes, features)
}

// IsPath reports whether Resolve reads arg as the path of a plan or a prd.json.
func IsPath(arg string) bool {
	ext := strings.ToLower(filepath.Ext(arg))
	return (ext == ".md" || ext == ".json") && !strings.HasPrefix(arg, "openspec:") && !strings.HasPrefix(arg, "speckit:")
}

// resolveFeature opens the spec-kit feature name or, when it is only digits, the one
// feature with that number. With explicit (a "speckit:" argument) a name that is not a
// feature is an error; otherwise it returns nil, nil so the caller can say what exists.
func resolveFeature(root, name string, explicit bool) (*Source, error) {
	features, err := speckit.ListFeatures(root)
	if err != nil {
		return nil, err
	}
	if slices.Contains(features, name) {
		return openSpecKit(root, name)
	}
	if name != "" && strings.Trim(name, "0123456789") == "" {
		switch m := speckit.ByNumber(features, name); len(m) {
		case 1:
			return openSpecKit(root, m[0])
		case 0:
		default:
			return nil, &Error{Msg: fmt.Sprintf("%d spec-kit features are numbered %s: %s", len(m), name, strings.Join(m, ", ")),
				Hint: "name one in full, e.g. 'git ralph start " + m[0] + "'"}
		}
	}
	if !explicit {
		return nil, nil
	}
	// A directory under specs/ without tasks.md gets spec-kit's own advice.
	if s, err := openSpecKit(root, name); err == nil {
		return s, nil
	} else if e, ok := err.(*Error); ok {
		return nil, e
	}
	return nil, unknown(name, nil, features)
}

// unknown is the error for a name that is neither a change nor a feature.
func unknown(name string, changes, features []string) error {
	if len(features) == 0 && len(changes) > 0 { // an OpenSpec repository: OpenSpec's words
		e := &openspec.UnknownChangeError{Name: name, Known: changes}
		return &Error{Msg: e.Error(), Hint: e.Hint()}
	}
	var have []string
	if len(changes) > 0 {
		have = append(have, "OpenSpec changes: "+strings.Join(changes, ", "))
	}
	if len(features) > 0 {
		have = append(have, "spec-kit features: "+strings.Join(features, ", "))
	}
	hint := strings.Join(have, "\n")
	if hint == "" {
		hint = "nothing to run here: create an OpenSpec change ('openspec new change <name>') or a spec-kit feature (specs/<feature>/tasks.md), or give the path of a markdown plan or a prd.json"
	}
	return &Error{Msg: fmt.Sprintf("no change or feature %q", name), Hint: hint}
}

// inside returns arg, a path relative to cwd (or absolute), relative to root and
// slash-separated, if it is inside root; symlinks in the directories on the way are
// resolved so a path through a link out of the repository is refused.
func inside(root, cwd, arg string) (string, error) {
	p := arg
	if !filepath.IsAbs(p) {
		p = filepath.Join(cwd, p)
	}
	p = filepath.Clean(p)
	outside := &Error{Msg: fmt.Sprintf("%s is outside the repository", arg), Hint: "git-ralph runs a file of the repository it works in"}
	dir, err := filepath.EvalSymlinks(filepath.Dir(p))
	if err != nil {
		if rel, err := filepath.Rel(root, p); err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			return "", outside
		}
		return "", &Error{Msg: fmt.Sprintf("%s: no such file", arg), Hint: "give the path of a file in this repository"}
	}
	top, err := filepath.EvalSymlinks(root)
	if err != nil {
		return "", err
	}
	rel, err := filepath.Rel(top, filepath.Join(dir, filepath.Base(p)))
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) || filepath.IsAbs(rel) {
		return "", outside
	}
	rel = filepath.ToSlash(rel)
	if rel == ".git" || strings.HasPrefix(rel, ".git/") {
		return "", &Error{Msg: fmt.Sprintf("%s is inside .git", arg), Hint: "give the path of a file in the work tree"}
	}
	return rel, nil
}
