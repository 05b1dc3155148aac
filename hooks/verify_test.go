package hooks

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"testing"
	"time"
)

func TestDetect(t *testing.T) {
	tests := []struct {
		name  string
		files map[string]string
		argv  []string // nil: nothing found
		from  string
	}{
		{"go", map[string]string{"go.mod": "module x\n", "Makefile": "test:\n\tgo test\n"}, []string{"go", "test", "./..."}, "go.mod"},
		{"cargo", map[string]string{"Cargo.toml": "[package]\n", "package.json": `{"scripts":{"test":"jest"}}`}, []string{"cargo", "test"}, "Cargo.toml"},
		{"npm", map[string]string{"package.json": `{"scripts":{"test":"jest"}}`, "pytest.ini": ""}, []string{"npm", "test"}, "package.json"},
		{"npm placeholder", map[string]string{"package.json": `{"scripts":{"test":"echo \"Error: no test specified\" && exit 1"}}`}, nil, ""},
		{"npm no test script", map[string]string{"package.json": `{"scripts":{"build":"tsc"}}`, "pyproject.toml": ""}, []string{"pytest"}, "pyproject.toml"},
		{"npm bad json", map[string]string{"package.json": `{`}, nil, ""},
		{"make", map[string]string{"Makefile": "all: build\n\ntest: all\n\tgo test\n"}, []string{"make", "test"}, "Makefile"},
		{"make lowercase", map[string]string{"makefile": "test::\n\techo\n"}, []string{"make", "test"}, "makefile"},
		{"GNUmakefile wins over Makefile", map[string]string{"GNUmakefile": "build:\n", "Makefile": "test:\n"}, nil, ""},
		{"make no test target", map[string]string{"Makefile": ".PHONY: test\ntest := 1\n\ttest:\n# test:\nTESTS = a:test\n"}, nil, ""},
		{"pyproject", map[string]string{"pyproject.toml": "[project]\n"}, []string{"pytest"}, "pyproject.toml"},
		{"pytest.ini", map[string]string{"pytest.ini": "[pytest]\n"}, []string{"pytest"}, "pytest.ini"},
		{"nothing", map[string]string{"README.md": "hi"}, nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			for name, content := range tt.files {
				write(t, filepath.Join(dir, name), content, 0o644)
			}
			cmd, ok, err := Detect(dir)
			if err != nil {
				t.Fatal(err)
			}
			if ok != (tt.argv != nil) || ok && (!reflect.DeepEqual(cmd.Argv, tt.argv) || cmd.From != tt.from) {
				t.Errorf("Detect = %+v, %v; want %v from %q", cmd, ok, tt.argv, tt.from)
			}
		})
	}
}

func TestDetectIgnoresADirectoryNamedLikeAProjectFile(t *testing.T) {
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "go.mod"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := Detect(dir); ok || err != nil {
		t.Errorf("Detect = %v, %v", ok, err)
	}
}

func TestMakeHasTarget(t *testing.T) {
	for content, want := range map[string]bool{
		"test:":                   true,
		"test: build":             true,
		"unit test: build":        true,
		"  test :":                true,
		"test::":                  true,
		"test: ; echo hi":         true,
		"test :=":                 false,
		"test ::= 1":              false,
		"test:=1":                 false,
		"\ttest:":                 false,
		"# test:":                 false,
		".PHONY: test":            false,
		"testing:":                false,
		"$(TEST): x":              false,
		"X = test: y":             false,
		"build: test":             false,
		"build: # test: in words": false,
	} {
		if got := makeHasTarget([]byte(content+"\n"), "test"); got != want {
			t.Errorf("%q: got %v, want %v", content, got, want)
		}
	}
}

func TestSplitWords(t *testing.T) {
	for in, want := range map[string][]string{
		`go test ./...`:                  {"go", "test", "./..."},
		`go test -run 'Test(A|B)' ./...`: {"go", "test", "-run", "Test(A|B)", "./..."},
		`sh -c "echo \"hi\" \$HOME"`:     {"sh", "-c", `echo "hi" $HOME`},
		`a\ b c;d $(rm -rf) ''`:          {"a b", "c;d", "$(rm", "-rf)", ""},
		"  \t ":                          nil,
		"x\n y":                          {"x", "y"},
	} {
		got, err := SplitWords(in)
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("SplitWords(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, in := range []string{`'open`, `"open`, `end\`} {
		if _, err := SplitWords(in); err == nil {
			t.Errorf("SplitWords(%q): no error", in)
		}
	}
}

func TestVerifyEnv(t *testing.T) {
	got := VerifyEnv([]string{"PATH=/bin", "GIT_DIR=.git", "GIT_INDEX_FILE=x", "GIT_RALPH=1", "GIT_RALPHX=1", "RALPH_STORY=2", "GIT_WORK_TREE=.", "GIT_PREFIX=a/"})
	want := []string{"PATH=/bin", "GIT_RALPHX=1", "RALPH_STORY=2"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %q", got)
	}
}

func TestRunCommandExitCodes(t *testing.T) {
	var out bytes.Buffer
	res, err := RunCommand(t.Context(), Command{Argv: []string{"sh", "-c", "echo out; echo err >&2; exit 3"}, Dir: t.TempDir(), Stdout: &out, Stderr: &out})
	if err != nil {
		t.Fatal(err)
	}
	if res.ExitCode != 3 || res.TimedOut || res.Interrupted || !res.Failed() || out.String() != "out\nerr\n" {
		t.Errorf("res %+v, output %q", res, out.String())
	}
	res, err = RunCommand(t.Context(), Command{Argv: []string{"true"}, Dir: t.TempDir()})
	if err != nil || res.Failed() {
		t.Errorf("true: %+v %v", res, err)
	}
	_, err = RunCommand(t.Context(), Command{Argv: []string{"no-such-command-git-ralph"}, Dir: t.TempDir()})
	if !errors.Is(err, exec.ErrNotFound) {
		t.Errorf("missing command: %v", err)
	}
}

func TestRunCommandRunsInDirWithoutAShell(t *testing.T) {
	dir := t.TempDir()
	var out bytes.Buffer
	res, err := RunCommand(t.Context(), Command{Argv: []string{"sh", "-c", `pwd; printf '%s\n' "$1"`, "sh", "$HOME; rm -rf /"}, Dir: dir, Stdout: &out})
	if err != nil || res.Failed() {
		t.Fatal(res, err)
	}
	real, _ := filepath.EvalSymlinks(dir)
	if out.String() != real+"\n$HOME; rm -rf /\n" {
		t.Errorf("output %q", out.String())
	}
}

func TestRunCommandStopsOnCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	time.AfterFunc(100*time.Millisecond, cancel)
	res, err := RunCommand(ctx, Command{Argv: []string{"sleep", "30"}, Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Interrupted || res.TimedOut || !res.Failed() {
		t.Errorf("res %+v", res)
	}
}
