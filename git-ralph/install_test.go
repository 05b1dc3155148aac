package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// TestInstallScript runs install.sh twice into a temporary PREFIX: it installs the
// binary, the man page and the bash, zsh and fish completions, writes nothing else there, is safe to run again, and says
// how to put $PREFIX/bin on PATH when it is not.
func TestInstallScript(t *testing.T) {
	if testing.Short() {
		t.Skip("builds git-ralph; skipped with -short")
	}
	t.Parallel() // a cold build takes most of a minute: let the scripts run meanwhile
	prefix := t.TempDir()
	home := t.TempDir()
	// Go's own caches are the only thing install.sh may write outside PREFIX; keep
	// using the real ones so that HOME stays empty and the build stays warm.
	goEnv, err := exec.Command(goBinary(t), "env", "GOCACHE", "GOMODCACHE", "GOPATH").Output()
	if err != nil {
		t.Fatal(err)
	}
	caches := strings.Fields(string(goEnv))
	if len(caches) != 3 {
		t.Fatalf("go env: %q", goEnv)
	}
	installing.Lock()
	defer installing.Unlock()
	for i := range 2 {
		cmd := exec.Command("sh", "../install.sh")
		cmd.Env = append(os.Environ(), "PREFIX="+prefix, "HOME="+home, "PATH=/usr/bin:/bin:"+filepath.Dir(goBinary(t)),
			"GOCACHE="+caches[0], "GOMODCACHE="+caches[1], "GOPATH="+caches[2], "XDG_CONFIG_HOME="+t.TempDir())
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("install.sh run %d: %v\n%s", i+1, err, out)
		}
		if !strings.Contains(string(out), `export PATH="`+prefix+`/bin:$PATH"`) {
			t.Errorf("install.sh run %d does not say how to put %s/bin on PATH:\n%s", i+1, prefix, out)
		}
	}
	var files []string
	err = filepath.WalkDir(prefix, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			rel, _ := filepath.Rel(prefix, p)
			files = append(files, rel)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := strings.Join(files, " "), "bin/git-ralph share/bash-completion/completions/git-ralph share/fish/vendor_completions.d/git-ralph.fish share/man/man1/git-ralph.1 share/zsh/site-functions/_git-ralph"; got != want {
		t.Errorf("PREFIX holds %q, want %q", got, want)
	}
	man, err := os.ReadFile(filepath.Join(prefix, "share/man/man1/git-ralph.1"))
	if err != nil || !strings.HasPrefix(string(man), ".TH GIT-RALPH 1") {
		t.Errorf("man page: %v %.40q", err, man)
	}
	for file, want := range map[string]string{
		"share/bash-completion/completions/git-ralph":    "\n_git_ralph ()\n",
		"share/zsh/site-functions/_git-ralph":            "#compdef git-ralph\n",
		"share/fish/vendor_completions.d/git-ralph.fish": "complete -c git-ralph ",
	} {
		if data, err := os.ReadFile(filepath.Join(prefix, file)); err != nil || !strings.Contains(string(data), want) {
			t.Errorf("%s: %v, lacks %q", file, err, want)
		}
	}
	out, err := exec.Command(filepath.Join(prefix, "bin/git-ralph"), "--version").Output()
	if err != nil || !strings.HasPrefix(string(out), "git-ralph ") {
		t.Errorf("git-ralph --version = %q, %v", out, err)
	}
	if entries, _ := os.ReadDir(home); len(entries) != 0 {
		t.Errorf("install.sh wrote into HOME: %v", entries)
	}
}

// installing is held while install.sh runs: the install tests run in parallel with the
// rest, one at a time, so that the second build finds the first one's in Go's cache.
var installing sync.Mutex

func goBinary(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go not on PATH")
	}
	return p
}

// TestInstallScriptDefaultPrefixIsOnPath: with no PREFIX and $HOME/.local/bin not on
// PATH, install.sh picks a prefix whose bin is (here Go's GOBIN), so that
// `./install.sh && git ralph demo` works in the same shell.
func TestInstallScriptDefaultPrefixIsOnPath(t *testing.T) {
	if testing.Short() {
		t.Skip("builds git-ralph; skipped with -short")
	}
	t.Parallel()
	goEnv, err := exec.Command(goBinary(t), "env", "GOCACHE", "GOMODCACHE", "GOPATH").Output()
	if err != nil {
		t.Fatal(err)
	}
	caches := strings.Fields(string(goEnv))
	prefix := t.TempDir()
	gobin := filepath.Join(prefix, "bin")
	if err := os.Mkdir(gobin, 0o755); err != nil {
		t.Fatal(err)
	}
	installing.Lock()
	defer installing.Unlock()
	cmd := exec.Command("sh", "../install.sh")
	cmd.Env = append(os.Environ(), "PREFIX=", "HOME="+t.TempDir(), "GOBIN="+gobin,
		"PATH=/usr/bin:/bin:"+filepath.Dir(goBinary(t))+":"+gobin,
		"GOCACHE="+caches[0], "GOMODCACHE="+caches[1], "GOPATH="+caches[2], "XDG_CONFIG_HOME="+t.TempDir())
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("install.sh: %v\n%s", err, out)
	}
	if _, err := os.Stat(filepath.Join(gobin, "git-ralph")); err != nil {
		t.Errorf("git-ralph not installed into GOBIN: %v\n%s", err, out)
	}
	if strings.Contains(string(out), "not on your PATH") {
		t.Errorf("install.sh says its bin is not on PATH:\n%s", out)
	}
}
