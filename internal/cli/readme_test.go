package cli

import (
	"bytes"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/alecthomas/kong"

	"github.com/git-ralph/git-ralph/internal/git"
	"github.com/git-ralph/git-ralph/internal/manual"
	"github.com/git-ralph/git-ralph/internal/term"
)

// manualSections are the sections git-ralph(1) must have, in this order. A new section
// goes into internal/manual (and here); the page is the whole manual.
var manualSections = []string{
	"NAME", "SYNOPSIS", "DESCRIPTION", "OPTIONS", "COMMANDS",
	"STORIES", "TASK SOURCES", "THE PROMISE PROTOCOL", "CHECKPOINTS AND ATTEMPTS", "JUDGE", "RESUME",
	"FINISH", "AGENTS", "HOOKS AND THE VERIFY GATE", "PULL REQUESTS", "GITHUB ACTIONS",
	"PARALLEL RUNS", "STATUS", "THE REPORT", "SHELL COMPLETION", "INSTALLATION AND THE DEMO",
	"CONFIGURATION", "ENVIRONMENT", "FILES", "EXIT STATUS", "SECURITY MODEL", "NOTES",
	"PERFORMANCE", "EXAMPLES", "SEE ALSO",
}

func repoRoot() string { return filepath.Join(testdata, "..", "..", "..") }

func readme(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(repoRoot(), "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// manPage is git-ralph(1) as `git ralph man` prints it.
func manPage(t *testing.T) string {
	t.Helper()
	hermetic(t)
	code, out, errOut := gitRalph(t, "man")
	if code != 0 || errOut != "" {
		t.Fatalf("man: exit %d, stderr %q", code, errOut)
	}
	return out
}

// TestReadmeIsAnIntroduction: the README stays short, its set-up is the two commands
// (the first installs and runs the demo, as TestInstallReadmeAsNewUser runs it), it says
// where the manual is, and its commands-at-a-glance table has a row for every visible
// command (hooks' subcommands included), so that a new command cannot ship unlisted.
func TestReadmeIsAnIntroduction(t *testing.T) {
	readme := readme(t)
	if n := strings.Count(readme, "\n"); n > 250 {
		t.Errorf("the README has %d lines; it is an introduction of at most 250 (the manual is internal/manual)", n)
	}
	setup := readmeSetup(t, readme)
	if len(setup) != 2 || !strings.HasPrefix(setup[0], "./install.sh") || !strings.Contains(setup[0], "demo") || setup[1] != "go test ./..." {
		t.Errorf("the README's set-up is %q; want two commands: ./install.sh … that runs the demo, and go test ./...", setup)
	}
	for _, want := range []string{"git ralph --help", "man git-ralph", "CONTRIBUTING.md", "ARCHITECTURE.md"} {
		if !strings.Contains(readme, want) {
			t.Errorf("the README does not say %q", want)
		}
	}
	var rows []string
	for _, l := range strings.Split(readme, "\n") {
		if strings.HasPrefix(l, "| `git ralph ") {
			rows = append(rows, l)
		}
	}
	for _, n := range commandNodes(t) {
		words := strings.Fields(n.Path())
		found := false
		for _, row := range rows {
			cmd, _, _ := strings.Cut(strings.TrimPrefix(row, "| `git ralph "), "|")
			if strings.HasPrefix(cmd, words[0]) && containsAll(row, words[1:]) {
				found = true
			}
		}
		if !found {
			t.Errorf("the README's commands at a glance have no row for 'git ralph %s'", n.Path())
		}
	}
}

// readmeSetup is the commands of the README's first code block under "## Set up",
// comments dropped.
func readmeSetup(t *testing.T, readme string) []string {
	t.Helper()
	_, after, ok := strings.Cut(readme, "\n## Set up\n")
	if !ok {
		t.Fatal(`the README has no "## Set up" section`)
	}
	_, block, ok := strings.Cut(after, "```sh\n")
	if !ok {
		t.Fatal("the README's set-up has no sh block")
	}
	block, _, _ = strings.Cut(block, "```")
	var cmds []string
	for _, l := range strings.Split(strings.TrimSpace(block), "\n") {
		cmd, _, _ := strings.Cut(l, "#")
		cmds = append(cmds, strings.TrimSpace(cmd))
	}
	return cmds
}

func commandNodes(t *testing.T) []*kong.Node {
	t.Helper()
	s, _, _ := term.Test()
	var r root
	p, err := newParser(&r, s, func(int) {}, func() (*git.Repo, error) { return nil, nil })
	if err != nil {
		t.Fatal(err)
	}
	return p.Model.Leaves(true)
}

func containsAll(s string, words []string) bool {
	for _, w := range words {
		if !strings.Contains(s, w) {
			return false
		}
	}
	return true
}

// TestManualSections: the man page has the manual's sections, in order, each once.
func TestManualSections(t *testing.T) {
	out := manPage(t)
	var got []string
	for _, l := range strings.Split(out, "\n") {
		if title, ok := strings.CutPrefix(l, ".SH "); ok {
			got = append(got, strings.Trim(title, `"`))
		}
	}
	if strings.Join(got, "|") != strings.Join(manualSections, "|") {
		t.Errorf("the man page's sections are\n  %s\nwant\n  %s", strings.Join(got, ", "), strings.Join(manualSections, ", "))
	}
}

// TestManualDocumentsEveryKey: every ralph.* git config key the code reads is in the
// CONFIGURATION section, and every RALPH_* variable it sets is in ENVIRONMENT.
func TestManualDocumentsEveryKey(t *testing.T) {
	sections, err := manual.Sections()
	if err != nil {
		t.Fatal(err)
	}
	text := map[string]string{}
	for _, s := range sections {
		text[s.Title] = s.Markdown()
	}
	keyRE := regexp.MustCompile(`"(ralph\.[A-Za-z]+)["=]`)
	envRE := regexp.MustCompile(`"(RALPH_[A-Z_]+)=`)
	notKeys := map[string]bool{"ralph.yml": true, "ralph.bundle": true}
	keys, envs := map[string]bool{}, map[string]bool{}
	err = filepath.WalkDir(repoRoot(), func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "testdata" || d.Name() == "fakeagent" || d.Name() == "githubtest" || strings.HasPrefix(d.Name(), ".")) {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		for _, m := range keyRE.FindAllSubmatch(data, -1) {
			if k := string(m[1]); !notKeys[strings.ToLower(k)] {
				keys[k] = true
			}
		}
		for _, m := range envRE.FindAllSubmatch(data, -1) {
			envs[string(m[1])] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(keys) < 15 || !keys["ralph.maxRetries"] || !envs["RALPH_WORKTREE"] {
		t.Fatalf("the scan found too little: keys %v, variables %v", keys, envs)
	}
	config := strings.ToLower(text["CONFIGURATION"])
	for k := range keys {
		if !strings.Contains(config, "`"+strings.ToLower(k)+"`") {
			t.Errorf("the manual's CONFIGURATION (internal/manual) does not document %s", k)
		}
	}
	for v := range envs {
		if !strings.Contains(text["ENVIRONMENT"], "`"+v+"`") {
			t.Errorf("the manual's ENVIRONMENT (internal/manual) does not document %s", v)
		}
	}
}

// TestManualReadsCleanly: groff reads the whole page without a warning (lines it cannot
// adjust at its width aside), on a UTF-8 device and on an ASCII one, so no markdown or
// escape leaks into what man shows, and no character is missing in a C locale.
func TestManualReadsCleanly(t *testing.T) {
	out := manPage(t)
	groff, err := exec.LookPath("groff")
	if err != nil {
		t.Skip("groff is not installed: the page is not checked by a roff")
	}
	// a UTF-8 terminal, and one without (man in the C locale): no glyph may be missing
	for _, device := range []string{"-Tutf8", "-Tascii"} {
		cmd := exec.Command(groff, "-man", device, "-ww", "-Wbreak", "-z")
		cmd.Stdin = strings.NewReader(out)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Run(); err != nil || stderr.Len() > 0 {
			t.Errorf("groff %s: %v\n%s", device, err, stderr.String())
		}
	}
	cmd := exec.Command(groff, "-man", "-Tascii", "-P-c", "-P-b", "-P-u")
	cmd.Stdin = strings.NewReader(out)
	text, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	for _, leak := range []string{"**", "```", "](http", `\f`, "| --- |", "|---|"} {
		if i := bytes.Index(text, []byte(leak)); i >= 0 {
			t.Errorf("the rendered page shows %q: …%s…", leak, text[max(0, i-60):min(len(text), i+60)])
		}
	}
}

// TestDocumentedCommandsParse: every `git ralph` command in a sh block of the README
// or of the manual parses: its command exists and takes those flags and arguments.
func TestDocumentedCommandsParse(t *testing.T) {
	hermetic(t)
	docs := map[string]string{"README.md": readme(t)}
	sections, err := manual.Sections()
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range sections {
		docs["internal/manual/"+s.File] = s.Markdown()
	}
	n := 0
	for name, text := range docs {
		for _, block := range shBlocks(text) {
			for _, line := range strings.Split(block, "\n") {
				if i := strings.Index(line, " #"); i >= 0 {
					line = line[:i]
				}
				for _, cmd := range strings.Split(line, "&&") {
					args, ok := strings.CutPrefix(strings.TrimSpace(cmd), "git ralph ")
					words := shellWords(args)
					if !ok || slices.Contains(words, "-h") || slices.Contains(words, "--help") {
						continue // help is shown by kong (and git), not parsed into a command
					}
					n++
					s, _, _ := term.Test()
					var r root
					p, err := newParser(&r, s, func(int) {}, func() (*git.Repo, error) { return nil, nil })
					if err != nil {
						t.Fatal(err)
					}
					if _, err := p.Parse(words); err != nil {
						t.Errorf("%s: git ralph %s: %v", name, args, err)
					}
				}
			}
		}
	}
	if n < 20 {
		t.Errorf("found only %d git ralph commands in the docs' sh blocks", n)
	}
}

// shBlocks are the contents of the ```sh fences of a markdown text.
func shBlocks(text string) []string {
	var out []string
	for {
		_, after, ok := strings.Cut(text, "```sh\n")
		if !ok {
			return out
		}
		block, rest, _ := strings.Cut(after, "```")
		out = append(out, block)
		text = rest
	}
}

// shellWords splits a command line as sh would for the simple quoting docs use.
func shellWords(s string) []string {
	var words []string
	var cur strings.Builder
	in, quote := false, byte(0)
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quote != 0 && c == quote:
			quote = 0
		case quote != 0:
			cur.WriteByte(c)
		case c == '\'' || c == '"':
			quote, in = c, true
		case c == ' ' || c == '\t':
			if in {
				words = append(words, cur.String())
				cur.Reset()
				in = false
			}
		default:
			cur.WriteByte(c)
			in = true
		}
	}
	if in {
		words = append(words, cur.String())
	}
	return words
}
