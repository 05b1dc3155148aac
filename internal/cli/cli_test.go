package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/alecthomas/kong"

	"github.com/git-ralph/git-ralph/internal/git"
	"github.com/git-ralph/git-ralph/internal/source"
	"github.com/git-ralph/git-ralph/internal/tell"
	"github.com/git-ralph/git-ralph/internal/term"
)

// testdata is absolute: the tests chdir into a temporary directory.
var testdata = func() string {
	dir, err := filepath.Abs("testdata")
	if err != nil {
		panic(err)
	}
	return dir
}()

// hermetic runs the test in an empty directory (no repository around it) with a HOME
// and git config of its own, no colour and a fixed help width, so that neither the
// machine's git config nor the terminal can change what Main prints.
func hermetic(t *testing.T) {
	t.Helper()
	home := t.TempDir()
	for k, v := range map[string]string{
		"HOME":                    home,
		"XDG_CONFIG_HOME":         filepath.Join(home, ".config"),
		"GIT_CONFIG_NOSYSTEM":     "1",
		"GIT_CONFIG_GLOBAL":       filepath.Join(home, ".gitconfig"),
		"GIT_CEILING_DIRECTORIES": filepath.Dir(home),
		"COLUMNS":                 "80",
		"NO_COLOR":                "1",
	} {
		t.Setenv(k, v)
	}
	for _, k := range []string{"GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_RALPH_VERBOSE",
		"GIT_CONFIG_COUNT", "GIT_CONFIG_PARAMETERS", "CLICOLOR_FORCE"} {
		t.Setenv(k, "") // restored after the test
		os.Unsetenv(k)
	}
	t.Chdir(t.TempDir())
}

// gitRalph calls Main as main does and returns the exit code, stdout and stderr.
func gitRalph(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	s, out, errOut := term.Test()
	code = Main(args, s)
	return code, out.String(), errOut.String()
}

// TestHelpGolden renders -h of the root and of every visible command into
// testdata/help/<name>.txt; UPDATE_GOLDEN=1 rewrites the files.
func TestHelpGolden(t *testing.T) {
	hermetic(t)
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"root", []string{"-h"}},
		{"start", []string{"start", "-h"}},
		{"status", []string{"status", "-h"}},
		{"finish", []string{"finish", "-h"}},
		{"list", []string{"list", "-h"}},
		{"demo", []string{"demo", "-h"}},
		{"hooks", []string{"hooks", "-h"}},
		{"report", []string{"report", "-h"}},
		{"completion", []string{"completion", "-h"}},
		{"help", []string{"help", "-h"}},
		{"hooks-install", []string{"hooks", "install", "-h"}},
		{"hooks-uninstall", []string{"hooks", "uninstall", "-h"}},
		{"hooks-list", []string{"hooks", "list", "-h"}},
		{"ci-init", []string{"ci", "init", "-h"}},
		{"dispatch", []string{"dispatch", "-h"}},
		{"cancel", []string{"cancel", "-h"}},
		{"logs", []string{"logs", "-h"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := gitRalph(t, tc.args...)
			if code != 0 {
				t.Errorf("git ralph %s: exit %d, want 0; stderr:\n%s", strings.Join(tc.args, " "), code, errOut)
			}
			if errOut != "" {
				t.Errorf("git ralph %s wrote to stderr:\n%s", strings.Join(tc.args, " "), errOut)
			}
			if !strings.HasPrefix(out, "Usage: git ralph") {
				t.Errorf("git ralph %s does not start with the usage line:\n%s", strings.Join(tc.args, " "), out)
			}
			golden := filepath.Join(testdata, "help", tc.name+".txt")
			compareGolden(t, golden, out)
		})
	}
}

// TestHelpCommandMatchesDashH: `git ralph help <command>` prints what `<command> -h` does.
func TestHelpCommandMatchesDashH(t *testing.T) {
	hermetic(t)
	for _, cmd := range []string{"start", "status", "finish", "list", "demo", "hooks", "report", "completion"} {
		_, want, _ := gitRalph(t, cmd, "-h")
		code, got, errOut := gitRalph(t, "help", cmd)
		if code != 0 || got != want {
			t.Errorf("git ralph help %s: exit %d, stderr %q; output differs from %s -h:\n%s", cmd, code, errOut, cmd, got)
		}
	}
	_, want, _ := gitRalph(t, "-h")
	if code, got, _ := gitRalph(t, "help"); code != 0 || got != want {
		t.Errorf("git ralph help: exit %d, output differs from -h:\n%s", code, got)
	}
}

func compareGolden(t *testing.T, golden, got string) {
	t.Helper()
	if os.Getenv("UPDATE_GOLDEN") != "" {
		if err := os.MkdirAll(filepath.Dir(golden), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (UPDATE_GOLDEN=1 go test ./internal/cli writes it)", err)
	}
	if got != string(want) {
		t.Errorf("output differs from %s (UPDATE_GOLDEN=1 regenerates it)\n--- got ---\n%s--- want ---\n%s", golden, got, want)
	}
}

// TestExitCodes: usage errors exit 2 with a hint, --version exits 0.
func TestExitCodes(t *testing.T) {
	hermetic(t)
	for _, tc := range []struct {
		args     []string
		code     int
		out, err string // substrings of stdout and stderr
	}{
		{[]string{"--version"}, 0, "git-ralph ", ""},
		{[]string{"--no-such-flag"}, 2, "", "error: unknown flag --no-such-flag"},
		{[]string{"start", "x", "--no-such-flag"}, 2, "", "error: unknown flag --no-such-flag"},
		{[]string{"finish", "--squash", "--keep"}, 2, "", "error: "},
		{[]string{"finish"}, 2, "", "error: "},
		{[]string{"start"}, 1, "", "error: not a git repository"}, // a bare start is what is current there
		{[]string{"no-such-command"}, 2, "", "error: unexpected argument no-such-command\nhint: see 'git ralph -h'\n"},
		{[]string{"help", "no-such-command"}, 2, "", "error: no command no-such-command"},
		{[]string{"start", "x", "--max-retries=-1"}, 2, "", "--max-retries must be 0 or more"},
		{[]string{"start", "x", "--max-cost=-1"}, 2, "", "--max-cost must not be negative"},
		{[]string{"start", "x", "--timeout", "soon"}, 2, "", "error: "},
	} {
		name := strings.Join(tc.args, " ")
		code, out, errOut := gitRalph(t, tc.args...)
		if code != tc.code {
			t.Errorf("git ralph %s: exit %d, want %d\nstdout:\n%s\nstderr:\n%s", name, code, tc.code, out, errOut)
			continue
		}
		if !strings.Contains(out, tc.out) {
			t.Errorf("git ralph %s: stdout %q lacks %q", name, out, tc.out)
		}
		if !strings.Contains(errOut, tc.err) {
			t.Errorf("git ralph %s: stderr %q lacks %q", name, errOut, tc.err)
		}
		if tc.code == 2 && !strings.Contains(errOut, "hint: ") {
			t.Errorf("git ralph %s: a usage error without a hint: %q", name, errOut)
		}
		if strings.Contains(errOut, "panic") || strings.Contains(errOut, "goroutine ") {
			t.Errorf("git ralph %s: a stack trace on stderr:\n%s", name, errOut)
		}
	}
}

// TestVersionLine: --version prints one line, "git-ralph <version>".
func TestVersionLine(t *testing.T) {
	hermetic(t)
	code, out, errOut := gitRalph(t, "--version")
	if code != 0 || errOut != "" {
		t.Fatalf("--version: exit %d, stderr %q", code, errOut)
	}
	if !strings.HasPrefix(out, "git-ralph ") || strings.Count(out, "\n") != 1 || strings.TrimSpace(out) == "git-ralph" {
		t.Errorf("--version printed %q, want one line \"git-ralph <version>\"", out)
	}
}

// TestMan: the man page is roff for section 1 and covers every visible command and
// none of the hidden ones; its generated command reference is kept as a golden copy.
func TestMan(t *testing.T) {
	hermetic(t)
	code, out, errOut := gitRalph(t, "man")
	if code != 0 || errOut != "" {
		t.Fatalf("man: exit %d, stderr %q", code, errOut)
	}
	if !strings.HasPrefix(out, ".TH GIT-RALPH 1") {
		t.Errorf("the man page starts with %q", firstLine(out))
	}
	for _, sec := range []string{".SH NAME", ".SH SYNOPSIS", `.SH "DESCRIPTION"`, ".SH OPTIONS", ".SH COMMANDS", `.SH "FILES"`, `.SH "EXIT STATUS"`} {
		if !strings.Contains(out, "\n"+sec+"\n") {
			t.Errorf("the man page has no %s section", sec)
		}
	}
	visible := []string{"start", "status", "finish", "list", "hooks install", "hooks uninstall", "hooks list", "demo", "report", "completion", "help", "ci init", "dispatch", "cancel", "logs"}
	for _, c := range visible {
		if !strings.Contains(out, ".B git ralph "+c+"\n") {
			t.Errorf("the man page's synopsis does not mention %q", c)
		}
		if !strings.Contains(out, `.SS "git ralph `+c+`"`) {
			t.Errorf("the man page has no section for %q", c)
		}
	}
	// the synopsis says what -h says: start takes several changes, --draft has a
	// --no-draft, --worktree may take a path, -j is --jobs, and root flags exist
	for _, want := range []string{
		".B git ralph start\n[<change> ...] [",
		"[--[no-]draft]",
		"[--worktree[=PATH]] [-j N | --jobs=N]",
		"(--squash | --keep | --pr)",
		".B git ralph\n[-v | --verbose] [--version] <command> [<args>]\n",
		".B git ralph hooks install\n[<hooks> ...] [--force] [--list]\n",
		".B git ralph completion\n<shell>\n",
	} {
		if !strings.Contains(out, strings.ReplaceAll(want, "-", `\-`)) {
			t.Errorf("the man page's synopsis lacks %q", want)
		}
	}
	for _, hidden := range []string{"hook", "man", "demo-agent", "__complete"} {
		if strings.Contains(out, ".B git ralph "+hidden+"\n") || strings.Contains(out, `.SS "git ralph `+hidden+`"`) {
			t.Errorf("the man page shows the hidden command %q", hidden)
		}
	}
	// the hard-coded list above is the command model's: a new command must be added
	s, _, _ := term.Test()
	var r root
	p, err := newParser(&r, s, func(int) {}, func() (*git.Repo, error) { return nil, nil })
	if err != nil {
		t.Fatal(err)
	}
	var model []string
	for _, n := range p.Model.Leaves(true) {
		model = append(model, n.Path())
		if !strings.Contains(out, ".B git ralph "+n.Path()+"\n") {
			t.Errorf("the man page does not mention the command %q", n.Path())
		}
		if _, err := os.Stat(filepath.Join(testdata, "help", strings.ReplaceAll(n.Path(), " ", "-")+".txt")); err != nil {
			t.Errorf("no -h golden for %q: add it to TestHelpGolden", n.Path())
		}
	}
	// the golden copy is the part generated from the command model; the manual's own
	// sections (internal/manual) are checked by TestManual*, not copied here
	var ref strings.Builder
	if err := writeMan(&ref, p.Model, nil); err != nil {
		t.Fatal(err)
	}
	compareGolden(t, filepath.Join(testdata, "man", "git-ralph.1"), ref.String())
	if strings.Join(model, ",") != strings.Join(visible, ",") {
		t.Errorf("visible commands are %v; update this test and the help goldens", model)
	}
	// every visible flag of every command is in the synopsis and has its entry
	for _, n := range append([]*kong.Node{p.Model.Node}, p.Model.Leaves(true)...) {
		for _, f := range n.Flags {
			if f.Hidden {
				continue
			}
			if f.Name != "help" && !strings.Contains(out, roff(synopsisFlag(f))) {
				t.Errorf("the man page's synopsis of %q lacks %s", n.Path(), synopsisFlag(f))
			}
			if !strings.Contains(out, ".B "+roff(manFlag(f))+"\n") {
				t.Errorf("the man page has no entry for %s of %q", manFlag(f), n.Path())
			}
		}
	}
	// a line starting with "." or "'" is a roff request: text must never produce one by accident
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "'") {
			t.Errorf("unescaped roff control line: %q", l)
		}
	}
}

func firstLine(s string) string {
	l, _, _ := strings.Cut(s, "\n")
	return l
}

// TestSourceErrorPrintsAsTheLoopsWrapping: a source's error that reaches the CLI
// unwrapped (internal/status passes them on) prints as the loop's wrapping of the same
// error (sourceErr) prints: its message, each hint line, exit 1.
func TestSourceErrorPrintsAsTheLoopsWrapping(t *testing.T) {
	for _, hint := range []string{"", "one line", "first\nsecond"} {
		raw := &source.Error{Msg: "plan docs/x.md has no task", Hint: hint}
		wrapped := &tell.Error{Msg: raw.Msg, Hint: raw.Hint, Err: raw}
		var got [2]string
		var codes [2]int
		for i, err := range []error{raw, wrapped} {
			s, _, errOut := term.Test()
			codes[i] = printErr(s, err, false)
			got[i] = errOut.String()
		}
		if got[0] != got[1] || codes[0] != codes[1] {
			t.Errorf("hint %q: unwrapped prints %q (exit %d), wrapped %q (exit %d)", hint, got[0], codes[0], got[1], codes[1])
		}
		if hint != "" && !strings.Contains(got[0], "hint: "+strings.Split(hint, "\n")[0]) {
			t.Errorf("hint %q: %q has no hint line", hint, got[0])
		}
	}
}

// Every error keeps its cause: -v prints it under the hints (the error a tell.Error
// wraps, and all git printed when git failed); without -v the output is as before.
func TestVerboseErrorPrintsItsCause(t *testing.T) {
	ge := &git.Error{Args: []string{"commit", "-q"}, ExitCode: 1, Stderr: "lint: 3 problems\nline two"}
	err := &tell.Error{Msg: "the checkpoint failed", Hint: "fix it", Err: fmt.Errorf("commit: %w", ge)}
	want := map[bool]string{
		false: "error: the checkpoint failed\nhint: fix it\n",
		true: "error: the checkpoint failed\nhint: fix it\n" +
			"cause: commit: git commit: lint: 3 problems\n" +
			"cause: git commit -q exited 1:\ncause:   lint: 3 problems\ncause:   line two\n",
	}
	for _, verbose := range []bool{false, true} {
		s, _, errOut := term.Test()
		if code := printErr(s, err, verbose); code != 1 {
			t.Errorf("verbose %v: exit %d, want 1", verbose, code)
		}
		if got := errOut.String(); got != want[verbose] {
			t.Errorf("verbose %v: printed\n%s\nwant\n%s", verbose, got, want[verbose])
		}
	}
}
