package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// gitBashCompletion finds git's own bash completion script, where Debian, Fedora,
// Homebrew and git's source tree put it.
func gitBashCompletion() string {
	for _, p := range []string{
		"/usr/share/bash-completion/completions/git",
		"/usr/share/git-core/contrib/completion/git-completion.bash",
		"/usr/share/git/completion/git-completion.bash",
		"/etc/bash_completion.d/git",
		"/opt/homebrew/etc/bash_completion.d/git-completion.bash",
		"/usr/local/etc/bash_completion.d/git-completion.bash",
	} {
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	return ""
}

// TestBashCompletion sources git's own bash completion and ours, sets COMP_WORDS and
// COMP_CWORD as bash does for "git ralph …<TAB>", calls the function git binds to git,
// and checks the candidates: commands, flags, the repository's change and run names,
// agents, hooks, shells.
func TestBashCompletion(t *testing.T) {
	gitCompletion := gitBashCompletion()
	if gitCompletion == "" {
		t.Skip("SKIPPED: git's bash completion script is not installed (Debian: the git package puts it in /usr/share/bash-completion/completions/git)")
	}
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("SKIPPED: no bash")
	}
	root := t.TempDir()
	dir, env := makeRun(t, root, 1, 0) // a finished run of change x: a run name
	for _, c := range []string{"add-login", "fix-typo"} {
		benchMkdir(t, filepath.Join(dir, "openspec", "changes", c))
	}
	ours := filepath.Join(root, "git-ralph.bash")
	benchWrite(t, ours, benchRalphT(t, env, dir, "completion", "bash"))

	complete := func(t *testing.T, cwd, line string) []string {
		t.Helper()
		script := `. "$1"; . "$2"
read -r -a COMP_WORDS <<<"$3"
case "$3" in *" ") COMP_WORDS+=("") ;; esac
COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); COMP_LINE="$3"; COMP_POINT=${#COMP_LINE}
__git_wrap__git_main
printf '%s\n' "${COMPREPLY[@]}"`
		cmd := exec.Command("bash", "--norc", "--noprofile", "-c", script, "bash", gitCompletion, ours, line)
		cmd.Dir, cmd.Env = cwd, env
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		if err := cmd.Run(); err != nil {
			t.Fatalf("%q: %v\n%s", line, err, errb.String())
		}
		var words []string
		for w := range strings.FieldsSeq(out.String()) {
			words = append(words, w)
		}
		slices.Sort(words)
		return words
	}
	for _, tc := range []struct {
		line string
		want []string // exactly these
		has  []string // at least these
	}{
		{line: "git ralph st", want: []string{"start", "status"}},
		{line: "git ralph ", has: []string{"completion", "finish", "hooks", "list", "report", "start", "status"}},
		{line: "git ralph start ", want: []string{"add-login", "fix-typo", "x"}},
		{line: "git ralph start a", want: []string{"add-login"}},
		{line: "git ralph start --ag", want: []string{"--agent", "--agent-env-keep"}},
		{line: "git ralph start x --dry", want: []string{"--dry-run"}},
		{line: "git ralph start x --agent ", has: []string{"claude", "codex", "custom"}},
		{line: "git ralph start x --agent=co", want: []string{"codex", "copilot"}},
		{line: "git ralph start x --judge ", has: []string{"claude", "codex", "custom"}},
		{line: "git ralph start x --judge=co", want: []string{"codex", "copilot"}},
		{line: "git ralph finish --s", want: []string{"--squash"}},
		{line: "git ralph status ", want: []string{"x"}},
		{line: "git ralph report ", want: []string{"x"}},
		{line: "git ralph report x --o", want: []string{"--open", "--output"}},
		{line: "git ralph hooks ", want: []string{"install", "list", "uninstall"}},
		{line: "git ralph hooks install ", want: []string{"pre-commit", "pre-push", "ralph-verify"}},
		{line: "git ralph completion ", want: []string{"bash", "fish", "zsh"}},
		{line: "git ralph __c", want: nil}, // hidden commands are not offered
	} {
		got := complete(t, dir, tc.line)
		if tc.want != nil || tc.has == nil {
			if !slices.Equal(got, tc.want) {
				t.Errorf("%q completes to %q, want %q", tc.line, got, tc.want)
			}
		}
		for _, w := range tc.has {
			if !slices.Contains(got, w) {
				t.Errorf("%q completes to %q, lacking %q", tc.line, got, w)
			}
		}
	}
	// git -C <repo> from elsewhere: the candidates are that repository's.
	if got := complete(t, root, "git -C "+dir+" ralph start "); !slices.Equal(got, []string{"add-login", "fix-typo", "x"}) {
		t.Errorf("git -C: %q", got)
	}
}

// TestZshFishCompletionParse: the zsh and fish scripts at least parse, in the shells
// that are installed.
func TestZshFishCompletionParse(t *testing.T) {
	root := t.TempDir()
	env := benchEnv(t, root)
	for shell, check := range map[string][]string{"zsh": {"zsh", "-n"}, "fish": {"fish", "-n"}} {
		t.Run(shell, func(t *testing.T) {
			if _, err := exec.LookPath(check[0]); err != nil {
				t.Skipf("SKIPPED: %s is not installed", check[0])
			}
			file := filepath.Join(root, "completion."+shell)
			benchWrite(t, file, benchRalphT(t, env, root, "completion", shell))
			if out, err := exec.Command(check[0], append(check[1:], file)...).CombinedOutput(); err != nil {
				t.Errorf("%s -n: %v\n%s", check[0], err, out)
			}
		})
	}
}
