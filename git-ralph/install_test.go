package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// TestInstall runs install.sh's tests one after the other, beside the scripts. Each
// builds git-ralph; one at a time, the next finds the first build in Go's cache. As one
// test they hold one of the parallel slots: six tests, each waiting for the others'
// builds, held six the scripts could not use.
func TestInstall(t *testing.T) {
	if testing.Short() {
		t.Skip("builds git-ralph; skipped with -short")
	}
	t.Parallel() // a cold build takes most of a minute: let the scripts run meanwhile
	for _, tc := range []struct {
		name string
		test func(*testing.T)
	}{
		{"Script", testInstallScript},
		{"DefaultPrefixIsOnPath", testInstallDefaultPrefixIsOnPath},
		{"AddsToPath", testInstallAddsToPath},
		{"RelativePrefix", testInstallRelativePrefix},
		{"KeepsABrokenBlock", testInstallKeepsABrokenBlock},
		{"SaysWhatShadowsIt", testInstallSaysWhatShadowsIt},
	} {
		// The lock a subtest at a time: the new user's test seeds its cache in between.
		t.Run(tc.name, func(t *testing.T) {
			installing.Lock()
			defer installing.Unlock()
			tc.test(t)
		})
	}
}

// testInstallScript runs install.sh --no-modify-path twice into a temporary PREFIX: it
// installs the binary, the man page and the bash, zsh and fish completions, writes
// nothing else there nor in HOME, is safe to run again, and says how to put
// $PREFIX/bin on PATH when it is not.
func testInstallScript(t *testing.T) {
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
	for i := range 2 {
		cmd := exec.Command("sh", "../install.sh", "--no-modify-path")
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

// installing is held while install.sh runs (TestInstall, and the new user's test while
// it fills the cache it seeds from), so that the second build finds the first one's in
// Go's cache.
var installing sync.Mutex

func goBinary(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go not on PATH")
	}
	return p
}

// testInstallDefaultPrefixIsOnPath: with no PREFIX and $HOME/.local/bin not on
// PATH, install.sh picks a prefix whose bin is (here Go's GOBIN), so that
// `./install.sh && git ralph demo` works in the same shell.
func testInstallDefaultPrefixIsOnPath(t *testing.T) {
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

// installEnv is the environment of an install.sh run: HOME, PATH and PREFIX as given,
// Go's own caches the real ones (so that the build stays warm and HOME holds only what
// install.sh writes there).
func installEnv(t *testing.T, home, path, prefix string, extra ...string) []string {
	t.Helper()
	goEnv, err := exec.Command(goBinary(t), "env", "GOCACHE", "GOMODCACHE", "GOPATH").Output()
	if err != nil {
		t.Fatal(err)
	}
	caches := strings.Fields(string(goEnv))
	env := []string{"HOME=" + home, "PATH=" + path, "PREFIX=" + prefix, "GOCACHE=" + caches[0],
		"GOMODCACHE=" + caches[1], "GOPATH=" + caches[2], "XDG_CONFIG_HOME=" + t.TempDir(), "GOFLAGS=-buildvcs=false",
		"GIT_CONFIG_NOSYSTEM=1", "GOTOOLCHAIN=local"}
	return append(env, extra...)
}

// testInstallAddsToPath: with $PREFIX/bin not on PATH, install.sh adds it in a
// marked block to ~/.profile, to bash's own login file when the user has one, and to
// ~/.zshenv for a zsh user, keeping what they held and saying which file it changed;
// a second run changes nothing, a run with another PREFIX replaces the block, and a
// login shell then finds git-ralph.
func testInstallAddsToPath(t *testing.T) {
	home := t.TempDir()
	writeFile(t, filepath.Join(home, ".profile"), "# the user's own\nexport EDITOR=vi") // no final newline
	writeFile(t, filepath.Join(home, ".bash_profile"), ". ~/.profile\n")
	path := "/usr/bin:/bin:" + filepath.Dir(goBinary(t))
	files := []string{".profile", ".bash_profile", ".zshenv"}
	run := func(prefix string) string {
		t.Helper()
		cmd := exec.Command("sh", "../install.sh")
		cmd.Env = installEnv(t, home, path, prefix, "SHELL=/bin/zsh")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("install.sh: %v\n%s", err, out)
		}
		return string(out)
	}
	check := func(prefix string) {
		t.Helper()
		for _, f := range files {
			data, err := os.ReadFile(filepath.Join(home, f))
			if err != nil {
				t.Fatal(err)
			}
			if n := strings.Count(string(data), "# >>> git-ralph PATH >>>"); n != 1 {
				t.Errorf("%s holds %d git-ralph blocks:\n%s", f, n, data)
			}
			if !strings.Contains(string(data), `export PATH="`+prefix+`/bin:${PATH}"`) {
				t.Errorf("%s does not put %s/bin on PATH:\n%s", f, prefix, data)
			}
		}
		profile, _ := os.ReadFile(filepath.Join(home, ".profile"))
		if !strings.HasPrefix(string(profile), "# the user's own\nexport EDITOR=vi\n# >>> git-ralph PATH >>>") {
			t.Errorf(".profile lost what it held:\n%s", profile)
		}
		// a login shell, as the next one the user opens: ~/.profile, then git ralph
		sh := exec.Command("sh", "-c", `. "$HOME/.profile" && . "$HOME/.profile" && echo "$PATH" && git ralph --version`)
		sh.Env = []string{"HOME=" + home, "PATH=/usr/bin:/bin"}
		out, err := sh.CombinedOutput()
		if err != nil || !strings.Contains(string(out), "git-ralph ") {
			t.Errorf("a login shell does not find git ralph: %v\n%s", err, out)
		}
		if strings.Count(string(out), prefix+"/bin") != 1 {
			t.Errorf("reading ~/.profile twice puts %s/bin on PATH %d times: %s", prefix, strings.Count(string(out), prefix+"/bin"), out)
		}
	}
	prefix := t.TempDir()
	out := run(prefix)
	for _, f := range files {
		if !strings.Contains(out, "added "+prefix+"/bin to PATH in "+filepath.Join(home, f)) {
			t.Errorf("install.sh does not say it changed %s:\n%s", f, out)
		}
	}
	check(prefix)
	if out := run(prefix); strings.Contains(out, "added ") || !strings.Contains(out, "already puts") {
		t.Errorf("a second run changed a start-up file:\n%s", out)
	}
	check(prefix)
	other := t.TempDir()
	run(other)
	check(other)
	if entries, _ := os.ReadDir(home); len(entries) != len(files) {
		t.Errorf("HOME holds %v; install.sh writes only the start-up files there", entries)
	}
}

func writeFile(t *testing.T, name, content string) {
	t.Helper()
	if err := os.WriteFile(name, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestInstallReadmeAsNewUser runs the README's first set-up line, taken from the README,
// as a new non-root user would: a throwaway account (useradd, with the distribution's
// start-up files), a fresh HOME, the login PATH of /etc/login.defs plus Go's bin and
// nothing git-ralph installs into, in a checkout of their own. The demo must run, and the
// user's next login shell must find git ralph and its manual. Needs root and useradd; it builds
// git-ralph as that user, offline, with Go caches of the user's own: the modules come from a
// copy of this machine's module download cache, served as a file:// GOPROXY, and the build
// cache is seeded from this machine's (seedBuildCache).
func TestInstallReadmeAsNewUser(t *testing.T) {
	if testing.Short() {
		t.Skip("creates a user and builds git-ralph as that user; skipped with -short")
	}
	if os.Geteuid() != 0 {
		t.Skip("runs the README's set-up line as a throwaway non-root user, which needs root (useradd): not checked here")
	}
	for _, tool := range []string{"useradd", "userdel", "runuser", "chown"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("runs the README's set-up line as a throwaway user, which needs %s: not checked here", tool)
		}
	}
	// Its build (the user's own module cache, a build cache seeded from this machine's)
	// takes seconds to a minute: run it beside the scripts, not before them.
	t.Parallel()
	line := readmeSetupLine(t)
	if !strings.HasPrefix(line, "./install.sh") {
		t.Fatalf("the README's first set-up line is %q", line)
	}

	dir, err := os.MkdirTemp("", "git-ralph-newuser-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	name := fmt.Sprintf("grnew%d", os.Getpid()%1000000)
	home := filepath.Join(dir, name)
	if out, err := exec.Command("useradd", "-m", "-d", home, "-s", "/bin/bash", name).CombinedOutput(); err != nil {
		t.Fatalf("useradd: %v\n%s", err, out)
	}
	t.Cleanup(func() {
		if out, err := exec.Command("userdel", "-r", name).CombinedOutput(); err != nil {
			t.Logf("userdel %s: %v\n%s", name, err, out)
		}
	})

	// the user's checkout: this one's files, as their clone would hold them
	checkout := filepath.Join(home, "git-ralph")
	list, err := exec.Command("git", "-C", "..", "ls-files", "-z", "--cached", "--others", "--exclude-standard").Output()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range strings.Split(strings.TrimRight(string(list), "\x00"), "\x00") {
		data, err := os.ReadFile(filepath.Join("..", f))
		if errors.Is(err, fs.ErrNotExist) {
			continue // deleted in the work tree
		}
		if err != nil {
			t.Fatal(err)
		}
		info, _ := os.Stat(filepath.Join("..", f))
		if err := os.MkdirAll(filepath.Dir(filepath.Join(checkout, f)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(checkout, f), data, info.Mode().Perm()); err != nil {
			t.Fatal(err)
		}
	}
	// Go's modules, offline: the download cache served as a file:// proxy
	modcache, err := exec.Command(goBinary(t), "env", "GOMODCACHE").Output()
	if err != nil {
		t.Fatal(err)
	}
	proxy := filepath.Join(dir, "goproxy")
	if out, err := exec.Command("cp", "-R", filepath.Join(strings.TrimSpace(string(modcache)), "cache", "download"), proxy).CombinedOutput(); err != nil {
		t.Fatalf("copy the module download cache: %v\n%s", err, out)
	}
	for _, args := range [][]string{{"chmod", "-R", "a+rX", proxy}, {"chown", "-R", name + ":", checkout}} {
		if out, err := exec.Command(args[0], args[1:]...).CombinedOutput(); err != nil {
			t.Fatalf("%s: %v\n%s", args, err, out)
		}
	}

	seedBuildCache(t, filepath.Join(home, ".cache"), name)

	env := []string{"HOME=" + home, "USER=" + name, "LOGNAME=" + name, "SHELL=/bin/bash", "LANG=C.UTF-8",
		"PATH=/usr/local/bin:/usr/bin:/bin:/usr/local/games:/usr/games:" + filepath.Dir(goBinary(t)),
		"GOPROXY=file://" + proxy, "GOSUMDB=off", "GOTOOLCHAIN=local", "GIT_CONFIG_NOSYSTEM=1",
		"TMPDIR=" + home} // the demo's repository goes with the user
	cmd := exec.Command("runuser", append([]string{"-u", name, "--", "env", "-i"}, append(env, "sh", "-c", line)...)...)
	cmd.Dir = checkout
	out, err := cmd.CombinedOutput()
	t.Logf("$ %s\n%s", line, out)
	if err != nil {
		t.Fatalf("the README's first set-up line failed for a new user: %v", err)
	}
	for _, want := range []string{
		"installed " + home + "/.local/bin/git-ralph",
		"added " + home + "/.local/bin to PATH in " + home + "/.profile",
		"demo: a throwaway repository",
		"✓ story 3: checkpoint",
		"$ git ralph finish --squash",
	} {
		if !strings.Contains(string(out), want) {
			t.Errorf("the output lacks %q", want)
		}
	}
	// the user's next login shell
	login := exec.Command("runuser", "-l", name, "-c", "git ralph --version")
	if out, err := login.CombinedOutput(); err != nil || !strings.HasPrefix(string(out), "git-ralph ") {
		t.Errorf("git ralph --version in the user's next login shell: %v\n%s", err, out)
	}
	// and the manual: git turns --help into 'git help ralph', which asks man
	if _, err := exec.LookPath("man"); err == nil {
		help := exec.Command("runuser", "-l", name, "-c", "MANPAGER=cat git ralph --help")
		if out, err := help.CombinedOutput(); err != nil || !strings.Contains(string(out), "TASK SOURCES") {
			t.Errorf("git ralph --help in the user's next login shell does not show the manual: %v\n%.2000s", err, out)
		}
	}
}

// seedBuildCache gives the new user (name) a Go build cache at cacheDir/go-build that
// already holds what install.sh's build compiles: hard links to this machine's cache, in
// directories the user owns (Go writes new entries as new files and never into old
// ones). Without it the user's build compiles the standard library and every module from
// nothing, a minute of both cores that is Go's cost, not install.sh's, and the slowest
// part of the suite. The module cache is not seeded: the user's build still fetches every
// module through the file:// proxy, as a fresh machine's would from the network. Where
// the cache cannot be linked (another file system) the user's build starts cold.
func seedBuildCache(t *testing.T, cacheDir, name string) {
	t.Helper()
	installing.Lock() // the install tests' builds fill the same cache
	defer installing.Unlock()
	out, err := exec.Command(goBinary(t), "env", "GOCACHE").Output()
	gocache := strings.TrimSpace(string(out))
	if err != nil || gocache == "" || gocache == "off" {
		t.Logf("no Go build cache to seed from (%v): the new user's build starts cold", err)
		return
	}
	// the packages install.sh's build compiles (its -ldflags are the link's alone),
	// static as it builds them
	build := exec.Command(goBinary(t), "build", "-trimpath", "-o", os.DevNull, "./git-ralph")
	build.Dir = ".."
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build -trimpath: %v\n%s", err, out)
	}
	dst := filepath.Join(cacheDir, "go-build")
	if err := os.MkdirAll(cacheDir, 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("cp", "-al", gocache, dst).CombinedOutput(); err != nil {
		t.Logf("cannot link the Go build cache (%v: %s): the new user's build starts cold", err, out)
		os.RemoveAll(dst)
		return
	}
	// A link reaches its file from the user's side of /root's 0700: only files nobody
	// else may write are shared (Go writes them 0666 less the umask it ran under).
	if out, err := exec.Command("find", dst, "-type", "f", "-perm", "/022", "-print", "-quit").Output(); err != nil || len(out) > 0 {
		t.Logf("the Go build cache holds files others may write (%s%v): the new user's build starts cold", out, err)
		os.RemoveAll(dst)
		return
	}
	// the cache's own files (trim.txt, README) are rewritten in place: not shared
	entries, err := os.ReadDir(dst)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if !e.IsDir() {
			os.Remove(filepath.Join(dst, e.Name()))
		}
	}
	chown := exec.Command("find", cacheDir, "-type", "d", "-exec", "chown", name+":", "{}", "+")
	if out, err := chown.CombinedOutput(); err != nil {
		t.Fatalf("chown the seeded cache: %v\n%s", err, out)
	}
}

// readmeSetupLine is the first command of the README's set-up block, its comment dropped.
func readmeSetupLine(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, after, ok := strings.Cut(string(data), "\n## Set up\n")
	if !ok {
		t.Fatal(`the README has no "## Set up" section`)
	}
	_, block, ok := strings.Cut(after, "```sh\n")
	if !ok {
		t.Fatal("the README's set-up has no sh block")
	}
	first, _, _ := strings.Cut(block, "\n")
	cmd, _, _ := strings.Cut(first, "#")
	return strings.TrimSpace(cmd)
}

// testInstallRelativePrefix: PREFIX=rel, from a directory other than the checkout,
// installs into rel under that directory (the build runs in the checkout) and puts its
// absolute bin on PATH: a relative directory in PATH would be looked up from wherever the
// user stands.
func testInstallRelativePrefix(t *testing.T) {
	script, err := filepath.Abs("../install.sh")
	if err != nil {
		t.Fatal(err)
	}
	home, cwd := t.TempDir(), t.TempDir()
	rel := fmt.Sprintf("prefix-%d", os.Getpid()) // a name the checkout does not hold
	t.Cleanup(func() { os.RemoveAll(filepath.Join("..", rel)) })
	cmd := exec.Command("sh", script)
	cmd.Dir = cwd
	cmd.Env = installEnv(t, home, "/usr/bin:/bin:"+filepath.Dir(goBinary(t)), rel, "SHELL=/bin/sh")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("PREFIX=rel install.sh: %v\n%s", err, out)
	}
	abs := filepath.Join(cwd, rel)
	if _, err := os.Stat(filepath.Join(abs, "bin", "git-ralph")); err != nil {
		t.Errorf("git-ralph not installed under %s: %v\n%s", abs, err, out)
	}
	profile, _ := os.ReadFile(filepath.Join(home, ".profile"))
	if !strings.Contains(string(profile), `export PATH="`+abs+`/bin:${PATH}"`) || strings.Contains(string(profile), `"`+rel+`/bin`) {
		t.Errorf("~/.profile does not put %s/bin on PATH:\n%s", abs, profile)
	}
	if _, err := os.Stat(filepath.Join("..", rel)); err == nil {
		t.Errorf("install.sh wrote %s/ into the checkout", rel)
	}
}

// testInstallKeepsABrokenBlock: a start-up file whose git-ralph block has lost its
// end line (the user deleted part of it) is left as it is, with a word saying so:
// replacing the block would take everything after its first line with it.
func testInstallKeepsABrokenBlock(t *testing.T) {
	home := t.TempDir()
	profile := "# the user's own\n# >>> git-ralph PATH >>> (added by git-ralph install.sh; delete this block to undo)\n" +
		"export PATH=\"/old/bin:$PATH\"\nexport EDITOR=vi\nalias ll='ls -l'\n"
	writeFile(t, filepath.Join(home, ".profile"), profile)
	prefix := t.TempDir()
	cmd := exec.Command("sh", "../install.sh")
	cmd.Env = installEnv(t, home, "/usr/bin:/bin:"+filepath.Dir(goBinary(t)), prefix, "SHELL=/bin/sh")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("install.sh: %v\n%s", err, out)
	}
	if got, _ := os.ReadFile(filepath.Join(home, ".profile")); string(got) != profile {
		t.Errorf("~/.profile changed:\n%s\nwant it as it was:\n%s", got, profile)
	}
	if !strings.Contains(string(out), "without its end line: add "+prefix+"/bin to PATH there yourself") {
		t.Errorf("install.sh does not say why it left ~/.profile alone:\n%s", out)
	}
}

// testInstallSaysWhatShadowsIt: with $PREFIX/bin on PATH but an older git-ralph in
// a directory before it, install.sh says that 'git ralph' runs that one (its version line
// would otherwise be the older binary's, with no word why).
func testInstallSaysWhatShadowsIt(t *testing.T) {
	prefix, shadow := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(shadow, "git-ralph"), []byte("#!/bin/sh\necho 'git-ralph old'\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(prefix, "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("sh", "../install.sh")
	cmd.Env = installEnv(t, t.TempDir(), shadow+":"+prefix+"/bin:/usr/bin:/bin:"+filepath.Dir(goBinary(t)), prefix)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("install.sh: %v\n%s", err, out)
	}
	if want := "note: " + shadow + "/git-ralph comes before " + prefix + "/bin on your PATH"; !strings.Contains(string(out), want) {
		t.Errorf("install.sh does not say %q:\n%s", want, out)
	}
	// and no note where the installed one is the one found
	cmd = exec.Command("sh", "../install.sh")
	cmd.Env = installEnv(t, t.TempDir(), prefix+"/bin:"+shadow+":/usr/bin:/bin:"+filepath.Dir(goBinary(t)), prefix)
	if out, err := cmd.CombinedOutput(); err != nil || strings.Contains(string(out), "note:") {
		t.Errorf("install.sh with its own git-ralph first: %v\n%s", err, out)
	}
}
