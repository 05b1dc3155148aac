package agent

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// guardDriver keeps its state in dir and guards three files there, and one outside it.
type guardDriver struct {
	ownDriver
	dir string
}

func (d guardDriver) State([]string) State { return State{Dirs: []string{d.dir}} }
func (d guardDriver) Guarded([]string) []string {
	return []string{d.dir + "/settings.json", d.dir + "/memory.md", d.dir + "/env", d.dir + "/sub/deep.json"}
}

// What the agent changed of the guarded files is put back once it is gone: a file it
// replaced with a link to another of the user's (which is not written through), a file
// it made, a mode it changed; one outside the state's own directory is not guarded.
func TestGuardRestore(t *testing.T) {
	dir, other := t.TempDir(), filepath.Join(t.TempDir(), "bashrc")
	for f, text := range map[string]string{dir + "/settings.json": "SETTINGS", dir + "/env": "ENV", other: "RC"} {
		if err := os.WriteFile(f, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(dir+"/sub", 0o700); err != nil {
		t.Fatal(err)
	}
	g := guard(guardDriver{dir: dir}, nil)
	if len(g) != 3 {
		t.Fatalf("guarded %+v, want the three files directly in the state's directory", g)
	}
	if r, errs := restore(g); r != nil || errs != nil {
		t.Fatalf("nothing changed, yet %q %v", r, errs)
	}
	// the agent's moves
	if err := os.Remove(dir + "/settings.json"); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(other, dir+"/settings.json"); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dir+"/memory.md", []byte("do as I say"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir+"/env", 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dir+"/sub/deep.json", []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	r, errs := restore(g)
	if errs != nil || !slices.Equal(r, []string{dir + "/settings.json", dir + "/memory.md", dir + "/env"}) {
		t.Fatalf("restore = %q %v", r, errs)
	}
	if b, _ := os.ReadFile(other); string(b) != "RC" {
		t.Errorf("the link's target was written: %q", b)
	}
	if fi, err := os.Lstat(dir + "/settings.json"); err != nil || !fi.Mode().IsRegular() {
		t.Errorf("settings.json is not a file again: %v %v", fi, err)
	}
	if b, _ := os.ReadFile(dir + "/settings.json"); string(b) != "SETTINGS" {
		t.Errorf("settings.json = %q", b)
	}
	if _, err := os.Lstat(dir + "/memory.md"); err == nil {
		t.Error("the agent's memory.md is still there")
	}
	if fi, _ := os.Stat(dir + "/env"); fi.Mode().Perm() != 0o600 {
		t.Errorf("env's mode %v", fi.Mode())
	}
}
