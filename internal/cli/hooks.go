package cli

import (
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"

	"github.com/git-ralph/git-ralph/hooks"
	"github.com/git-ralph/git-ralph/internal/git"
	"github.com/git-ralph/git-ralph/internal/term"
)

type hooksCmd struct {
	Install   hooksInstallCmd   `cmd:"" help:"Install the hooks where git takes hooks from (core.hooksPath honoured)."`
	Uninstall hooksUninstallCmd `cmd:"" help:"Remove git-ralph's hooks, and put back any <name>.local."`
	List      hooksListCmd      `cmd:"" default:"1" help:"Show each hook: git-ralph's, someone else's, or absent (the default)."`
}

// Help is the long help of hooks, which is also what the man page says about them.
func (c *hooksCmd) Help() string {
	return `The hooks are optional; the loop works without them.

  pre-commit    refuses a commit while RALPH_AGENT is set: git-ralph sets it for the
                agent only, and during a loop git-ralph makes the commits. Other commits
                pass untouched.
  pre-push      refuses to push ralph/* branches (and refs/ralph/*), git ralph's local
                checkpoints, unless 'git config ralph.allowPush true'. Other refs, and
                deleting a remote ralph/* branch, pass.
  ralph-verify  the checkpoint gate: the loop runs it after a COMPLETE, with
                RALPH_CHANGE, RALPH_STORY and RALPH_ATTEMPT set; a non-zero exit fails
                the attempt and the end of its output is the reason in the next prompt.
                It runs ralph.verifyCommand (split like a shell would, never run by one),
                else the project's test command: go.mod: go test ./...; Cargo.toml: cargo
                test; package.json with a test script: npm test; a Makefile with a test
                target: make test; pyproject.toml or pytest.ini: pytest. Nothing found:
                it passes and says so. --verify-timeout / ralph.verifyTimeout bound it.

install writes them into 'git rev-parse --git-path hooks' (so core.hooksPath is
honoured), creating the directory if needed. Each is a small sh script with the line
"# installed by git-ralph" that runs 'git ralph hook <name>'; without git-ralph on
PATH it lets everything through. A hook of the same name that is not git-ralph's is
left alone; with --force it is kept as <name>.local, which git-ralph's runs first.
uninstall removes only files with that line and puts <name>.local back. Both can be
run again safely; name hooks to install or remove only those. 'git ralph hooks list'
(or 'hooks install --list') shows each hook: git-ralph's, someone else's, or absent.`
}

type hooksInstallCmd struct {
	Hooks []string `arg:"" optional:"" enum:"pre-commit,pre-push,ralph-verify" help:"Only these hooks (default: all)." placeholder:"HOOK"`
	Force bool     `help:"Replace a hook that is not git-ralph's: it is kept as <name>.local, and git-ralph's runs it first."`
	List  bool     `help:"Only show each hook's state; change nothing."`
}

type hooksUninstallCmd struct {
	Hooks []string `arg:"" optional:"" enum:"pre-commit,pre-push,ralph-verify" help:"Only these hooks (default: all)." placeholder:"HOOK"`
}

type hooksListCmd struct{}

// hooksDir opens the repository and returns the directory git takes hooks from.
func hooksDir(e *env) (*git.Repo, string, error) {
	repo, err := e.openRepo()
	if err != nil {
		return nil, "", err
	}
	dir, err := repo.HooksDir(e.ctx)
	if err != nil {
		return nil, "", fmt.Errorf("find the hooks directory: %w", err)
	}
	return repo, dir, nil
}

func (c *hooksInstallCmd) Run(e *env) error {
	repo, dir, err := hooksDir(e)
	if err != nil {
		return err
	}
	if c.List {
		return printHookList(e.s, dir, uniq(c.Hooks))
	}
	changes, err := hooks.Install(dir, uniq(c.Hooks), c.Force)
	fmt.Fprintf(e.s.Err, "hooks directory: %s\n", dir)
	p := e.s.Palette()
	var left []hooks.Change
	for _, ch := range changes {
		name := fmt.Sprintf("%-13s", ch.Name)
		switch ch.Action {
		case hooks.Installed:
			fmt.Fprintf(e.s.Err, "%s %s installed\n", p.Success("✓"), name)
		case hooks.Updated:
			fmt.Fprintf(e.s.Err, "%s %s updated to this git-ralph's version\n", p.Success("✓"), name)
		case hooks.Unchanged:
			fmt.Fprintf(e.s.Err, "%s %s already installed\n", p.Success("✓"), name)
		case hooks.Replaced:
			fmt.Fprintf(e.s.Err, "%s %s installed; the hook that was there is now %s, and runs first\n", p.Success("✓"), name, ch.Name+hooks.LocalSuffix)
		case hooks.LeftAlone:
			fmt.Fprintf(e.s.Err, "%s %s left alone: %s\n", p.Warn("!"), name, ch.Reason)
			left = append(left, ch)
		}
	}
	if err != nil {
		return err
	}
	for _, ch := range left {
		switch {
		case ch.NotFile:
			fmt.Fprintf(e.s.Err, "hint: %s is not a file; move it away to install git-ralph's %s\n", ch.Path, ch.Name)
		case ch.Local:
			fmt.Fprintf(e.s.Err, "hint: move %s away, then run 'git ralph hooks install --force' to chain %s\n", ch.LocalPath(), ch.Path)
		default:
			fmt.Fprintf(e.s.Err, "hint: to run both, 'git ralph hooks install --force' keeps %s as %s and runs it first\n", ch.Name, ch.Name+hooks.LocalSuffix)
			stdin := ""
			if ch.Name == "pre-push" {
				stdin = ", giving it the same stdin"
			}
			fmt.Fprintf(e.s.Err, "hint: or call git-ralph's from yours%s: git ralph hook %s \"$@\" || exit\n", stdin, ch.Name)
		}
	}
	warnInWorkTree(e.s.Err, repo, dir)
	return nil
}

// warnInWorkTree warns when the hooks directory (core.hooksPath) is inside the work
// tree: the shims are files there, and a checkpoint's 'git add -A' would commit them.
func warnInWorkTree(w io.Writer, repo *git.Repo, dir string) {
	inside := func(base string) bool {
		rel, err := filepath.Rel(base, dir)
		return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
	}
	if inside(repo.Root) && !inside(repo.CommonDir) && !inside(repo.GitDir) {
		fmt.Fprintf(w, "warning: %s is inside the work tree: commit the hooks or ignore them, or git ralph's checkpoint commits will pick them up\n", dir)
	}
}

func (c *hooksUninstallCmd) Run(e *env) error {
	_, dir, err := hooksDir(e)
	if err != nil {
		return err
	}
	changes, err := hooks.Uninstall(dir, uniq(c.Hooks))
	fmt.Fprintf(e.s.Err, "hooks directory: %s\n", dir)
	p := e.s.Palette()
	for _, ch := range changes {
		name := fmt.Sprintf("%-13s", ch.Name)
		switch ch.Action {
		case hooks.Removed:
			back := ""
			if ch.Local {
				back = "; " + ch.Name + hooks.LocalSuffix + " is back in its place"
			}
			fmt.Fprintf(e.s.Err, "%s %s removed%s\n", p.Success("✓"), name, back)
		case hooks.Restored:
			fmt.Fprintf(e.s.Err, "%s %s not installed; %s is back in its place\n", p.Success("✓"), name, ch.Name+hooks.LocalSuffix)
		case hooks.Unchanged:
			fmt.Fprintf(e.s.Err, "%s %s not installed\n", p.Dim("-"), name)
		case hooks.LeftAlone:
			fmt.Fprintf(e.s.Err, "%s %s left alone: %s\n", p.Warn("!"), name, ch.Reason)
		}
	}
	return err
}

func (c *hooksListCmd) Run(e *env) error {
	_, dir, err := hooksDir(e)
	if err != nil {
		return err
	}
	return printHookList(e.s, dir, nil)
}

// printHookList prints, on stdout, each hook's state: git-ralph's, someone else's,
// or absent, and what git-ralph's does.
func printHookList(s *term.Streams, dir string, names []string) error {
	entries, err := hooks.List(dir, names)
	if err != nil {
		return err
	}
	p := s.Palette()
	fmt.Fprintf(s.Out, "hooks directory: %s\n", dir)
	for _, en := range entries {
		state := fmt.Sprintf("%-15s", en.State)
		note := hooks.Description(en.Name)
		switch en.State {
		case hooks.Ours:
			state = p.Success(state)
			if en.Outdated {
				note += "; outdated: 'git ralph hooks install' updates it"
			}
			if en.Local {
				note += "; runs " + en.Name + hooks.LocalSuffix + " first"
			}
		case hooks.Foreign:
			state = p.Warn(state)
			note = "not git-ralph's; install leaves it alone (--force keeps it as " + en.Name + hooks.LocalSuffix + ")"
			if en.Name == "ralph-verify" {
				note = "not git-ralph's; git ralph runs it before each checkpoint"
			}
		default:
			state = p.Dim(state)
		}
		fmt.Fprintf(s.Out, "%-13s %s %s\n", en.Name, state, note)
	}
	return nil
}

// uniq drops repeated hook names, keeping the first.
func uniq(names []string) []string {
	var out []string
	for _, n := range names {
		if !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	return out
}
