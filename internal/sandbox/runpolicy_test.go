package sandbox

import (
	"os"
	"slices"
	"testing"
)

// A run's policy carries what the agents of other runs may write (Policy.Shared): the
// settings' (every driver's state), the agents' own caches, and the git
// directory, which a run in place lets its agent write. A link in any of them on the
// way to a writable path is refused (internal/sandbox).
func TestSandboxPolicyShared(t *testing.T) {
	set := Settings{Level: Level{ABI: 7}, Shared: []string{"/state/of/another/agent"}}
	p, err := set.AgentPolicy(t.TempDir(), "/repo/.git", nil, false)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"/state/of/another/agent", "/repo/.git", AgentCache(os.Environ())} {
		if !slices.Contains(p.Shared, want) {
			t.Errorf("%s is not in the policy's Shared %q", want, p.Shared)
		}
	}
	if p, _ := set.AgentPolicy(t.TempDir(), "", nil, false); slices.Contains(p.Shared, "") {
		t.Errorf("no git directory, yet Shared %q names one", p.Shared)
	}
}

// A secret the environment moves out of HOME (GNUPGHOME, GH_CONFIG_DIR, …) is hidden
// where it says.
func TestSandboxPolicyHidesMovedSecrets(t *testing.T) {
	gnupg, gh := t.TempDir(), t.TempDir()
	t.Setenv("GNUPGHOME", gnupg)
	t.Setenv("GH_CONFIG_DIR", gh)
	set := Settings{Level: Level{ABI: 7}}
	p, err := set.AgentPolicy(t.TempDir(), "", nil, false)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{gnupg, gh} {
		if !slices.Contains(p.Hide, want) {
			t.Errorf("%s is not hidden: %q", want, p.Hide)
		}
	}
}

// The agent's caches are its own: its tools are pointed at git-ralph's directory of
// them, which it may write, and the user's home (~/.cache, ~/go/pkg/mod) is not
// writable; the home directory is hidden but for what ReadableIn names, and the git
// directory is readable.
func TestSandboxPolicyCachesAndHome(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CACHE_HOME", "")
	set := Settings{Level: Level{ABI: 7}, Readable: []string{home + "/notes"}}
	p, err := set.AgentPolicy(t.TempDir(), home+"/src/repo/.git", nil, true)
	if err != nil {
		t.Fatal(err)
	}
	root := home + "/.cache/git-ralph/agent-cache"
	if !slices.Contains(p.Write, root) {
		t.Errorf("the agents' caches are not writable: %q", p.Write)
	}
	for _, w := range p.Write {
		if Covers([]string{w}, home+"/.cache/pre-commit") || Covers([]string{w}, home+"/go/pkg/mod") {
			t.Errorf("the user's cache is writable: %s", w)
		}
	}
	for _, want := range []string{"GOCACHE=" + root + "/go-build", "GOMODCACHE=" + root + "/go/pkg/mod", "GOPATH=" + root + "/go", "XDG_CACHE_HOME=" + root + "/xdg", "npm_config_cache=" + root + "/npm", "PIP_CACHE_DIR=" + root + "/pip"} {
		if !slices.Contains(p.Env, want) {
			t.Errorf("the agent's environment lacks %s: %q", want, p.Env)
		}
	}
	if fi, err := os.Stat(root + "/go/pkg/mod"); err != nil || !fi.IsDir() {
		t.Errorf("the module cache was not created: %v", err)
	}
	if !slices.Contains(p.Hide, home) {
		t.Errorf("the home directory is not hidden: %q", p.Hide)
	}
	for _, want := range []string{home + "/.gitconfig", home + "/go", home + "/notes", home + "/src/repo/.git"} {
		if !slices.Contains(p.Reveal, want) {
			t.Errorf("%s is not readable: %q", want, p.Reveal)
		}
	}
}

// The judge's policy is the agent's with nothing writable but the devices and what the
// user made writable away from the working tree and the git directory: not the tree,
// not the git directory (in place, inside the tree), not a writable path inside the
// tree or holding it, not the learnings file; the hidden paths stay hidden.
func TestJudgePolicy(t *testing.T) {
	tree := t.TempDir()
	elsewhere := t.TempDir()
	set := Settings{Level: Level{ABI: 7}, Writable: []string{elsewhere, tree + "/node_modules", "/"},
		Hide: []string{"/secret"}}
	learnings := t.TempDir() + "/learnings.md"
	pol, err := set.AgentPolicy(tree, tree+"/.git", []string{learnings}, false)
	if err != nil {
		t.Fatal(err)
	}
	ours := []string{tree, tree + "/.git", tree + "/.git"} // the working tree, the git directory, the common one
	j := set.JudgePolicy(pol, ours...)
	for _, w := range j.Write {
		if !slices.Contains(Devices, w) && w != elsewhere {
			t.Errorf("the judge may write %s (Write %q)", w, j.Write)
		}
	}
	for _, p := range []string{tree, tree + "/a.go", tree + "/.git/config", learnings} {
		if Covers(j.Write, p) {
			t.Errorf("the judge may write %s", p)
		}
	}
	if !Covers(j.Write, elsewhere) || !Covers(j.Write, "/dev/null") {
		t.Errorf("Write %q lacks %s or /dev/null", j.Write, elsewhere)
	}
	if !slices.Contains(j.Hide, "/secret") {
		t.Errorf("Hide %q lost /secret", j.Hide)
	}
	if !Covers(pol.Write, tree) {
		t.Errorf("the agent's own policy changed: %q", pol.Write)
	}
	if set.JudgePolicy(nil, ours...) != nil {
		t.Error("an unsandboxed run's judge got a policy")
	}
}
