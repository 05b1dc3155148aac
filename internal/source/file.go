package source

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/git-ralph/git-ralph/internal/repofile"
)

// What the kinds that run one file named by its path (a plan, a prd.json) share.

// fileRef is the Ref of the file arg names, if it is a path inside r ending in ext (".md",
// ".json"): its path relative to the top level. A path out of the repository or into
// .git is an error; a path that ends otherwise is not this kind's.
func fileRef(r Repo, kind, ext, arg string) (Match, error) {
	if strings.ToLower(filepath.Ext(arg)) != ext {
		return Match{}, nil
	}
	rel, err := inside(r, arg)
	if err != nil {
		return Match{}, err
	}
	return Match{Ref: Ref{Kind: kind, Arg: rel}, Rank: Loose}, nil
}

// readFile reads the tracked file ref names: a regular file inside r (not a symlink,
// not a directory), read through repofile. what names the kind of file for the hint.
func readFile(r Repo, noun, what string, ref Ref) (rel string, data []byte, err error) {
	rel = filepath.ToSlash(filepath.Clean(filepath.FromSlash(ref.Arg)))
	if filepath.IsAbs(ref.Arg) || rel == ".." || strings.HasPrefix(rel, "../") {
		return "", nil, &Error{Msg: fmt.Sprintf("%s %q is outside the repository", noun, ref.Arg)}
	}
	path := filepath.Join(r.Root, filepath.FromSlash(rel))
	info, err := os.Lstat(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return "", nil, &Error{Msg: fmt.Sprintf("%s: no such file", rel), Hint: "give the path of a " + what + " in this repository"}
		}
		return "", nil, err
	}
	if !info.Mode().IsRegular() {
		return "", nil, &Error{Msg: fmt.Sprintf("%s is not a regular file", rel),
			Hint: "git-ralph runs a tracked file that is in the repository itself, not a symlink or a directory"}
	}
	data, ok, err := repofile.Read(r.Root, path) // repofile's rule: where, what, how large
	if err != nil {
		return "", nil, err // a *repofile.RefusedError says what to do
	}
	if !ok {
		return "", nil, &Error{Msg: fmt.Sprintf("%s: no such file", rel), Hint: "give the path of a file in this repository"}
	}
	return rel, data, nil
}

// baseName is a file's name without its extension.
func baseName(rel string) string {
	return strings.TrimSuffix(filepath.Base(rel), filepath.Ext(rel))
}
