package main

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// devNullConfig is GIT_CONFIG_GLOBAL (or GIT_CONFIG_SYSTEM) set to the null device.
var devNullConfig = regexp.MustCompile(`GIT_CONFIG_(GLOBAL|SYSTEM)\W{0,6}(/dev/null|os\.DevNull)`)

// TestNoTestPointsGitConfigAtDevNull: every test's global git config is a file in its
// own temporary directory. Pointed at /dev/null, a `git config --global` write run as
// root (as CI runs) makes git rename its lock file over the device, which breaks every
// later process on the machine.
func TestNoTestPointsGitConfigAtDevNull(t *testing.T) {
	var found []string
	err := filepath.WalkDir("..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == "testdata" && path != filepath.Join("..", "git-ralph", "testdata")) {
			return fs.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") && !strings.HasSuffix(path, ".txtar") {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if path != filepath.Join("..", "git-ralph", "hermetic_test.go") && devNullConfig.Match(data) {
			found = append(found, path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(found) > 0 {
		t.Errorf("GIT_CONFIG_GLOBAL at the null device in %s; use a file in the test's temporary directory", strings.Join(found, ", "))
	}
	if !devNullConfig.MatchString(`"GIT_CONFIG_GLOBAL=/dev/null"`) || !devNullConfig.MatchString(`"GIT_CONFIG_GLOBAL": os.DevNull`) {
		t.Error("the pattern misses the forms it is for")
	}
}
