package loop

import (
	"os"
	"slices"
	"testing"

	"github.com/git-ralph/git-ralph/internal/sandbox"
)

// A run's policy carries what the agents of other runs may write (Policy.Shared): the
// settings' (every driver's state), every build cache whatever the PATH, and the git
// directory, which a run in place lets its agent write. A link in any of them on the
// way to a writable path is refused (internal/sandbox).
func TestSandboxPolicyShared(t *testing.T) {
	set := sandbox.Settings{Level: sandbox.Level{ABI: 7}, Shared: []string{"/state/of/another/agent"}}
	p, err := sandboxPolicy(set, t.TempDir(), "/repo/.git", nil, false)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range append([]string{"/state/of/another/agent", "/repo/.git"}, sandbox.AllCaches(os.Environ())...) {
		if !slices.Contains(p.Shared, want) {
			t.Errorf("%s is not in the policy's Shared %q", want, p.Shared)
		}
	}
	if p, _ := sandboxPolicy(set, t.TempDir(), "", nil, false); slices.Contains(p.Shared, "") {
		t.Errorf("no git directory, yet Shared %q names one", p.Shared)
	}
}

// A secret the environment moves out of HOME (GNUPGHOME, GH_CONFIG_DIR, …) is hidden
// where it says.
func TestSandboxPolicyHidesMovedSecrets(t *testing.T) {
	gnupg, gh := t.TempDir(), t.TempDir()
	t.Setenv("GNUPGHOME", gnupg)
	t.Setenv("GH_CONFIG_DIR", gh)
	set := sandbox.Settings{Level: sandbox.Level{ABI: 7}}
	p, err := sandboxPolicy(set, t.TempDir(), "", nil, false)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{gnupg, gh} {
		if !slices.Contains(p.Hide, want) {
			t.Errorf("%s is not hidden: %q", want, p.Hide)
		}
	}
}
