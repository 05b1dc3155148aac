package hooks

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestShimsCarryTheMarkerAndRunTheHiddenCommand(t *testing.T) {
	for _, n := range Names() {
		b, ok := Shim(n)
		if !ok {
			t.Fatalf("Shim(%q): not found", n)
		}
		s := string(b)
		if !strings.HasPrefix(s, "#!/bin/sh\n"+Marker+"\n") {
			t.Errorf("%s: does not start with #!/bin/sh and the marker:\n%s", n, s)
		}
		if !strings.Contains(s, `exec git ralph hook `+n+` "$@"`) {
			t.Errorf("%s: does not exec git ralph hook %s:\n%s", n, n, s)
		}
		if !strings.Contains(s, "command -v git-ralph >/dev/null 2>&1 ||") {
			t.Errorf("%s: no guard for a missing git-ralph", n)
		}
		if out, err := exec.Command("sh", "-n", "-c", s).CombinedOutput(); err != nil {
			t.Errorf("%s: sh -n: %v: %s", n, err, out)
		}
	}
	if _, ok := Shim("post-commit"); ok {
		t.Error("Shim(post-commit) found")
	}
}

func write(t *testing.T, path, content string, mode os.FileMode) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), mode); err != nil {
		t.Fatal(err)
	}
}

func read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func actions(cs []Change) map[string]Action {
	m := map[string]Action{}
	for _, c := range cs {
		m[c.Name] = c.Action
	}
	return m
}

func TestInstallCreatesTheDirectoryAndIsIdempotent(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "a", "hooks")
	cs, err := Install(dir, nil, false)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range Names() {
		if actions(cs)[n] != Installed {
			t.Errorf("%s: action %v, want Installed", n, actions(cs)[n])
		}
		fi, err := os.Stat(filepath.Join(dir, n))
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != 0o755 {
			t.Errorf("%s: mode %v", n, fi.Mode())
		}
		shim, _ := Shim(n)
		if read(t, filepath.Join(dir, n)) != string(shim) {
			t.Errorf("%s: content differs from the shim", n)
		}
	}
	cs, err = Install(dir, nil, false)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range Names() {
		if actions(cs)[n] != Unchanged {
			t.Errorf("second install %s: %v, want Unchanged", n, actions(cs)[n])
		}
	}
	left, _ := os.ReadDir(dir)
	if len(left) != 3 {
		t.Errorf("files left in the hooks directory: %v", left)
	}
}

func TestInstallUpdatesAnOutdatedShimOfOurs(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "pre-push"), "#!/bin/sh\n"+Marker+"\nexit 0\n", 0o755)
	write(t, filepath.Join(dir, "pre-commit"), mustShim("pre-commit"), 0o644) // not executable
	e, err := Inspect(dir, "pre-push")
	if err != nil || e.State != Ours || !e.Outdated {
		t.Fatalf("Inspect = %+v, %v; want ours, outdated", e, err)
	}
	cs, err := Install(dir, []string{"pre-push", "pre-commit"}, false)
	if err != nil {
		t.Fatal(err)
	}
	if a := actions(cs); a["pre-push"] != Updated || a["pre-commit"] != Updated || len(a) != 2 {
		t.Fatalf("actions %v", a)
	}
	if read(t, filepath.Join(dir, "pre-push")) != mustShim("pre-push") {
		t.Error("pre-push not rewritten")
	}
	if _, err := os.Stat(filepath.Join(dir, "ralph-verify")); err == nil {
		t.Error("ralph-verify installed though not named")
	}
}

func mustShim(n string) string {
	b, _ := Shim(n)
	return string(b)
}

func TestInstallLeavesAForeignHookAlone(t *testing.T) {
	dir := t.TempDir()
	mine := "#!/bin/sh\necho mine\n"
	write(t, filepath.Join(dir, "pre-commit"), mine, 0o755)
	// Mentioning git-ralph is not carrying the marker.
	write(t, filepath.Join(dir, "pre-push"), "#!/bin/sh\n# not "+Marker+"\n", 0o755)
	for range 2 {
		cs, err := Install(dir, nil, false)
		if err != nil {
			t.Fatal(err)
		}
		if a := actions(cs); a["pre-commit"] != LeftAlone || a["pre-push"] != LeftAlone {
			t.Fatalf("actions %v", a)
		}
	}
	if read(t, filepath.Join(dir, "pre-commit")) != mine {
		t.Error("pre-commit changed")
	}
	cs, err := Uninstall(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	if a := actions(cs); a["pre-commit"] != LeftAlone || a["ralph-verify"] != Removed {
		t.Fatalf("uninstall actions %v", a)
	}
	if read(t, filepath.Join(dir, "pre-commit")) != mine {
		t.Error("pre-commit changed by uninstall")
	}
}

func TestForceKeepsTheForeignHookAsLocalAndUninstallPutsItBack(t *testing.T) {
	dir := t.TempDir()
	mine := "#!/bin/sh\necho mine\n"
	write(t, filepath.Join(dir, "pre-commit"), mine, 0o700)
	cs, err := Install(dir, []string{"pre-commit"}, true)
	if err != nil {
		t.Fatal(err)
	}
	if actions(cs)["pre-commit"] != Replaced {
		t.Fatalf("actions %v", actions(cs))
	}
	if read(t, filepath.Join(dir, "pre-commit.local")) != mine {
		t.Error("pre-commit.local is not the old hook")
	}
	if fi, _ := os.Stat(filepath.Join(dir, "pre-commit.local")); fi.Mode().Perm() != 0o700 {
		t.Errorf("pre-commit.local mode %v, want the old hook's", fi.Mode())
	}
	e, _ := Inspect(dir, "pre-commit")
	if e.State != Ours || e.Outdated || !e.Local {
		t.Errorf("after --force: %+v", e)
	}
	if p, ok, err := LocalHook(dir, "pre-commit"); err != nil || !ok || p != filepath.Join(dir, "pre-commit.local") {
		t.Errorf("LocalHook = %q, %v, %v", p, ok, err)
	}
	// Forcing again changes nothing.
	if cs, _ := Install(dir, []string{"pre-commit"}, true); actions(cs)["pre-commit"] != Unchanged {
		t.Errorf("second --force: %v", actions(cs))
	}
	cs, err = Uninstall(dir, []string{"pre-commit"})
	if err != nil {
		t.Fatal(err)
	}
	if actions(cs)["pre-commit"] != Removed || !cs[0].Local {
		t.Errorf("uninstall: %+v", cs)
	}
	if read(t, filepath.Join(dir, "pre-commit")) != mine {
		t.Error("the old hook is not back")
	}
	if _, err := os.Lstat(filepath.Join(dir, "pre-commit.local")); err == nil {
		t.Error("pre-commit.local still there")
	}
	if cs, _ := Uninstall(dir, []string{"pre-commit"}); actions(cs)["pre-commit"] != LeftAlone {
		t.Errorf("second uninstall: %v", actions(cs))
	}
}

func TestForceNeverOverwritesALocalOrMovesADirectory(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "pre-commit"), "#!/bin/sh\n", 0o755)
	write(t, filepath.Join(dir, "pre-commit.local"), "#!/bin/sh\necho older\n", 0o755)
	if err := os.Mkdir(filepath.Join(dir, "pre-push"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("elsewhere", filepath.Join(dir, "ralph-verify")); err != nil {
		t.Fatal(err)
	}
	cs, err := Install(dir, nil, true)
	if err != nil {
		t.Fatal(err)
	}
	a := actions(cs)
	if a["pre-commit"] != LeftAlone || a["pre-push"] != LeftAlone || a["ralph-verify"] != Replaced {
		t.Fatalf("actions %v", a)
	}
	if read(t, filepath.Join(dir, "pre-commit.local")) != "#!/bin/sh\necho older\n" {
		t.Error("pre-commit.local overwritten")
	}
	if target, err := os.Readlink(filepath.Join(dir, "ralph-verify.local")); err != nil || target != "elsewhere" {
		t.Errorf("the symlink was not kept as ralph-verify.local: %q, %v", target, err)
	}
}

func TestUninstallPutsBackALocalWhoseShimIsGone(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "pre-push.local"), "#!/bin/sh\n", 0o755)
	cs, err := Uninstall(dir, []string{"pre-push"})
	if err != nil {
		t.Fatal(err)
	}
	if actions(cs)["pre-push"] != Restored {
		t.Fatalf("actions %v", actions(cs))
	}
	if _, err := os.Stat(filepath.Join(dir, "pre-push")); err != nil {
		t.Error(err)
	}
}

func TestListOnAMissingDirectory(t *testing.T) {
	es, err := List(filepath.Join(t.TempDir(), "none"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(es) != 3 {
		t.Fatalf("got %d entries", len(es))
	}
	for _, e := range es {
		if e.State != Absent || e.Local {
			t.Errorf("%+v", e)
		}
	}
}

func TestRunLocalPassesArgsStdinAndExitCode(t *testing.T) {
	dir := t.TempDir()
	// No #! line: git runs such a hook with sh, and so must we.
	write(t, filepath.Join(dir, "pre-push.local"), "echo \"args: $*\"\ncat\nexit 3\n", 0o755)
	path, ok, err := LocalHook(dir, "pre-push")
	if err != nil || !ok {
		t.Fatalf("LocalHook: %v %v", ok, err)
	}
	var out bytes.Buffer
	code, err := RunLocal(Local{Path: path, Args: []string{"origin", "url"}, Stdin: strings.NewReader("a b c d\n"), Stdout: &out, Stderr: &out})
	if err != nil {
		t.Fatal(err)
	}
	if code != 3 || out.String() != "args: origin url\na b c d\n" {
		t.Errorf("code %d, output %q", code, out.String())
	}
	write(t, filepath.Join(dir, "pre-commit.local"), "#!/bin/sh\nexit 1\n", 0o644)
	if _, ok, _ := LocalHook(dir, "pre-commit"); ok {
		t.Error("a hook that is not executable counts")
	}
}
