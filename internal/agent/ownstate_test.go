package agent

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// ownDriver is a driver whose CLI takes its configuration directory from OWN_DIR.
type ownDriver struct{ files []OwnFile }

func (ownDriver) Name() string                             { return "own" }
func (ownDriver) Binary() string                           { return "own" }
func (ownDriver) Argv(Request) []string                    { return []string{"own"} }
func (ownDriver) Decode(io.Reader, Events) (Result, error) { return Result{}, nil }
func (ownDriver) InstallHint() string                      { return "" }
func (d ownDriver) OwnState([]string) OwnState             { return OwnState{Var: "OWN_DIR", Files: d.files} }

// The configuration directory of its own holds copies of the user's files that exist
// (0600, in a new 0700 directory): writing them changes nothing of the user's; a missing
// one, a directory, a relative path are left out.
func TestMakeOwnState(t *testing.T) {
	user := t.TempDir()
	if err := os.WriteFile(filepath.Join(user, "login.json"), []byte("LOGIN"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(user, "dir"), 0o755); err != nil {
		t.Fatal(err)
	}
	d := ownDriver{files: []OwnFile{{filepath.Join(user, "login.json"), "login.json"}, {filepath.Join(user, "missing"), "missing"},
		{filepath.Join(user, "dir"), "dir"}, {"relative", "relative"}, {filepath.Join(user, "login.json"), "sub/copy.json"}}}
	kv, dir, err := makeOwnState(d, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	if kv != "OWN_DIR="+dir || !strings.Contains(filepath.Base(dir), "git-ralph-own-state-") {
		t.Errorf("makeOwnState = %q %q", kv, dir)
	}
	if fi, err := os.Stat(dir); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("the directory: %v %v", fi, err)
	}
	for _, name := range []string{"login.json", "sub/copy.json"} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if fi, _ := os.Stat(filepath.Join(dir, name)); err != nil || string(b) != "LOGIN" || fi.Mode().Perm() != 0o600 {
			t.Errorf("%s: %q %v", name, b, err)
		}
	}
	for _, name := range []string{"missing", "dir", "relative"} {
		if _, err := os.Lstat(filepath.Join(dir, name)); err == nil {
			t.Errorf("%s was copied", name)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "login.json"), []byte("AGENT"), 0o600); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(user, "login.json")); string(b) != "LOGIN" {
		t.Errorf("the user's file changed: %q", b)
	}
	if kv, dir, err := makeOwnState(claudeLess{}, nil); kv != "" || dir != "" || err != nil {
		t.Errorf("a driver with none: %q %q %v", kv, dir, err)
	}
}

// claudeLess is a driver with no configuration directory of its own.
type claudeLess struct{ ownDriver }

func (claudeLess) OwnState([]string) OwnState { return OwnState{} }
