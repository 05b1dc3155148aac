package sandbox

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// What an agent can change of the home directory without writing it (chmod, utime:
// Landlock governs neither) is found after the attempt, put back and named; a file the
// user edits meanwhile is not taken for one the agent back-dated.
func TestHomeMarksPutBack(t *testing.T) {
	home := t.TempDir()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.Chmod(home, 0o755))
	must(os.MkdirAll(filepath.Join(home, ".ssh"), 0o700))
	must(os.MkdirAll(filepath.Join(home, "bin"), 0o755))
	key, bashrc, tool, profile := filepath.Join(home, ".ssh/id_ed25519"), filepath.Join(home, ".bashrc"), filepath.Join(home, "bin/tool"), filepath.Join(home, ".profile")
	must(os.WriteFile(key, []byte("KEY\n"), 0o600))
	must(os.WriteFile(bashrc, []byte("# rc\n"), 0o644))
	must(os.WriteFile(tool, []byte("#!/bin/sh\n"), 0o755))
	must(os.WriteFile(profile, []byte("# profile\n"), 0o644))
	var before unix.Stat_t
	must(unix.Stat(bashrc, &before))

	h := MarkHome(home)
	// The agent's moves.
	must(os.Chmod(key, 0o644))
	must(os.Chmod(home, 0o777))
	must(os.Chmod(tool, 0o644))
	old := time.Date(2001, 1, 1, 0, 0, 0, 0, time.UTC)
	must(os.Chtimes(bashrc, old, old))
	// The user's own edit, meanwhile.
	must(os.WriteFile(profile, []byte("# profile, edited\n"), 0o644))

	said := strings.Join(h.PutBack(), "\n")
	for _, want := range []string{
		"the mode of ~/.ssh/id_ed25519 (0644, was 0600) put back",
		"the mode of ~ (0777, was 0755) put back",
		"the mode of ~/bin/tool (0644, was 0755) put back",
		"the modification time of ~/.bashrc (set to 2001-01-01 00:00:00 UTC) put back",
	} {
		if !strings.Contains(said, want) {
			t.Errorf("no %q in:\n%s", want, said)
		}
	}
	if strings.Contains(said, ".profile") {
		t.Errorf("the user's edit of .profile taken for the agent's:\n%s", said)
	}
	for path, mode := range map[string]os.FileMode{key: 0o600, home: 0o755, tool: 0o755} {
		if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != mode {
			t.Errorf("%s: %v %v, want %v", path, fi.Mode(), err, mode)
		}
	}
	var after unix.Stat_t
	must(unix.Stat(bashrc, &after))
	if after.Mtim != before.Mtim {
		t.Errorf(".bashrc's time is %v, was %v", after.Mtim, before.Mtim)
	}
	if again := h.PutBack(); len(again) != 0 {
		t.Errorf("put back twice: %q", again)
	}

	// A marked path that is another file now is named, not touched.
	must(os.WriteFile(key+".new", []byte("OTHER\n"), 0o644))
	must(os.Rename(key+".new", key))
	if said := h.PutBack(); len(said) != 1 || !strings.Contains(said[0], "~/.ssh/id_ed25519 is another file now") {
		t.Errorf("a replaced file: %q", said)
	}
}
