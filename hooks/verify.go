package hooks

import (
	"bytes"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// TestCommand is a command that verifies a project, and what chose it.
type TestCommand struct {
	Argv []string
	From string // "ralph.verifyCommand", or the file it was detected from: "go.mod", "Makefile", …
}

// Detect finds the project's obvious test command from the files at the top
// of root, first match wins:
//
//	go.mod                               go test ./...
//	Cargo.toml                           cargo test
//	package.json with a "test" script    npm test   (npm init's "no test specified" placeholder does not count)
//	a makefile with a test target        make test  (GNUmakefile, makefile, Makefile: the one make reads)
//	pyproject.toml or pytest.ini         pytest
//
// ok is false when nothing matches. Only unreadable files are errors.
func Detect(root string) (cmd TestCommand, ok bool, err error) {
	if ok, err := isFile(root, "go.mod"); ok || err != nil {
		return TestCommand{Argv: []string{"go", "test", "./..."}, From: "go.mod"}, ok, err
	}
	if ok, err := isFile(root, "Cargo.toml"); ok || err != nil {
		return TestCommand{Argv: []string{"cargo", "test"}, From: "Cargo.toml"}, ok, err
	}
	if ok, err := npmHasTest(root); ok || err != nil {
		return TestCommand{Argv: []string{"npm", "test"}, From: "package.json"}, ok, err
	}
	for _, name := range []string{"GNUmakefile", "makefile", "Makefile"} {
		found, err := isFile(root, name)
		if err != nil {
			return TestCommand{}, false, err
		}
		if !found {
			continue
		}
		content, err := os.ReadFile(filepath.Join(root, name))
		if err != nil {
			return TestCommand{}, false, err
		}
		if makeHasTarget(content, "test") {
			return TestCommand{Argv: []string{"make", "test"}, From: name}, true, nil
		}
		break // make reads only the first of them
	}
	for _, name := range []string{"pyproject.toml", "pytest.ini"} {
		if ok, err := isFile(root, name); ok || err != nil {
			return TestCommand{Argv: []string{"pytest"}, From: name}, ok, err
		}
	}
	return TestCommand{}, false, nil
}

func isFile(root, name string) (bool, error) {
	fi, err := os.Stat(filepath.Join(root, name))
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrPermission) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return fi.Mode().IsRegular(), nil
}

// npmHasTest reports whether package.json has a real "test" script. A
// package.json that is not valid JSON has none: npm could not run it either.
func npmHasTest(root string) (bool, error) {
	ok, err := isFile(root, "package.json")
	if !ok || err != nil {
		return false, err
	}
	content, err := os.ReadFile(filepath.Join(root, "package.json"))
	if err != nil {
		return false, err
	}
	var pkg struct {
		Scripts map[string]any `json:"scripts"`
	}
	if json.Unmarshal(content, &pkg) != nil {
		return false, nil
	}
	s, _ := pkg.Scripts["test"].(string)
	return strings.TrimSpace(s) != "" && !strings.Contains(s, "no test specified"), nil
}

// makeHasTarget reports whether a makefile defines target in a rule line
// ("test:", "test unit: deps", "test::"), not in a variable assignment
// ("test := x"), a recipe line (tab) or a comment. It does not run make.
func makeHasTarget(content []byte, target string) bool {
	for line := range bytes.Lines(content) {
		s := strings.TrimRight(string(line), "\r\n")
		if s == "" || s[0] == '\t' {
			continue
		}
		if i := strings.IndexByte(s, '#'); i >= 0 {
			s = s[:i]
		}
		targets, rest, found := strings.Cut(s, ":")
		if !found || strings.ContainsAny(targets, "=$") {
			continue
		}
		rest = strings.TrimPrefix(rest, ":") // double-colon rule
		if strings.HasPrefix(rest, "=") || strings.HasPrefix(rest, ":=") {
			continue // := ::= :::= assignments
		}
		for _, t := range strings.Fields(targets) {
			if t == target {
				return true
			}
		}
	}
	return false
}

// scrubbedVerifyEnv lists the variables removed from the verify command's
// environment. git exports the first five to hooks (GIT_COMMON_DIR when
// git-ralph pins a linked worktree's repository), and a test suite that
// runs git in temporary repositories would otherwise work on this one;
// GIT_RALPH=1 would make git-ralph's own hooks skip their checks in them.
var scrubbedVerifyEnv = []string{"GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_PREFIX", "GIT_COMMON_DIR", "GIT_RALPH"}

// VerifyEnv returns base (KEY=VALUE entries) without the variables that
// would point the verify command at the wrong repository or disable our
// hooks inside it.
func VerifyEnv(base []string) []string {
	out := make([]string, 0, len(base))
	for _, kv := range base {
		k, _, _ := strings.Cut(kv, "=")
		drop := false
		for _, s := range scrubbedVerifyEnv {
			if k == s {
				drop = true
				break
			}
		}
		if !drop {
			out = append(out, kv)
		}
	}
	return out
}
