package sandbox

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestResolve(t *testing.T) {
	none, old, abi4, abi7 := Supported(0), Supported(2), Supported(4), Supported(7)
	for _, c := range []struct {
		mode  Mode
		s     Support
		ports bool
		want  string // the level's line, or "refused: <why>"
	}{
		{Auto, abi7, false, "landlock ABI 7, git directory read-only"},
		{On, abi7, false, "landlock ABI 7, git directory read-only"},
		{Off, abi7, false, "off; changes are detected and undone, not prevented"},
		{Auto, none, false, "unavailable (no Landlock in this kernel); changes are detected and undone, not prevented"},
		{On, none, false, "refused: no Landlock in this kernel"},
		{Off, none, false, "off; changes are detected and undone, not prevented"},
		{Auto, old, false, "unavailable (Landlock ABI 2 in this kernel; git-ralph needs ABI 3, Linux 6.2); changes are detected and undone, not prevented"},
		{On, old, false, "refused: Landlock ABI 2 in this kernel; git-ralph needs ABI 3, Linux 6.2"},
		{Auto, abi4, false, "landlock ABI 4, git directory read-only; not blocked: signals to git-ralph (ABI 6, Linux 6.12)"},
		{Auto, Supported(3), true, "landlock ABI 3, git directory read-only; not blocked: signals to git-ralph (ABI 6, Linux 6.12), ralph.sandboxNetwork (ABI 4, Linux 6.7)"},
		{On, Supported(3), true, "refused: ralph.sandboxNetwork needs Landlock ABI 4 (Linux 6.7); this kernel has ABI 3"},
		{On, abi4, true, "landlock ABI 4, git directory read-only; not blocked: signals to git-ralph (ABI 6, Linux 6.12)"},
		{Auto, Supported(11), false, "landlock ABI 9, git directory read-only"},
	} {
		lvl, err := Resolve(c.mode, c.s, c.ports)
		got := lvl.String()
		var ue *UnavailableError
		if errors.As(err, &ue) {
			got = "refused: " + ue.Why
		} else if err != nil {
			t.Fatal(err)
		}
		if got != c.want {
			t.Errorf("Resolve(%s, %+v, ports %v) = %q, want %q", c.mode, c.s, c.ports, got, c.want)
		}
	}
	lvl, _ := Resolve(Auto, abi7, false)
	lvl.InPlace = true
	if got, want := lvl.String(), "landlock ABI 7, git directory writable (in place: checked after each attempt; --worktree makes it read-only)"; got != want {
		t.Errorf("in place: %q, want %q", got, want)
	}
	lvl.InPlace, lvl.GitWritable = false, true
	if got, want := lvl.String(), "landlock ABI 7, git directory writable (ralph.sandboxWritable holds it: checked after each attempt)"; got != want {
		t.Errorf("git directory under a writable path: %q, want %q", got, want)
	}
	if (Settings{}).Decided() {
		t.Error("the zero Settings say a level was decided")
	}
}

func TestParseMode(t *testing.T) {
	for in, want := range map[string]Mode{"": Auto, "auto": Auto, " ON ": On, "off": Off} {
		if got, err := ParseMode(in); err != nil || got != want {
			t.Errorf("ParseMode(%q) = %q, %v", in, got, err)
		}
	}
	if _, err := ParseMode("maybe"); err == nil {
		t.Error("ParseMode(maybe) took it")
	}
}

func TestParsePorts(t *testing.T) {
	got, err := ParsePorts([]string{"443, 80", "8080"})
	if err != nil || !slices.Equal(got, []uint16{443, 80, 8080}) {
		t.Errorf("ParsePorts = %v, %v", got, err)
	}
	for _, bad := range []string{"https", "0", "65536", "-1"} {
		if _, err := ParsePorts([]string{bad}); err == nil {
			t.Errorf("ParsePorts(%q) took it", bad)
		}
	}
}

func TestCoversAndAddWrite(t *testing.T) {
	dirs := []string{"/home/ada/repo", "/dev/null"}
	for path, want := range map[string]bool{"/home/ada/repo": true, "/home/ada/repo/.git/config": true, "/home/ada/repo2": false, "/home/ada": false, "/dev/null": true} {
		if got := Covers(dirs, path); got != want {
			t.Errorf("Covers(%q) = %v", path, got)
		}
	}
	p := &Policy{}
	p.AddWrite("/a/", "/a", "/b/../c", "")
	if !slices.Equal(p.Write, []string{"/a", "/c"}) {
		t.Errorf("AddWrite: %q", p.Write)
	}
	c := p.Clone()
	c.AddWrite("/d")
	if len(p.Write) != 2 {
		t.Error("a clone shares Write with its original")
	}
}

func TestLauncherArgsRoundTrip(t *testing.T) {
	p := &Policy{ABI: 7, Write: []string{"/w"}, Hide: []string{"/h"}, Dev: []string{"/dev/ptmx"}, Ports: []uint16{443}}
	args, err := LauncherArgs(p, 3, "/usr/bin/agent", []string{"agent", "-p"})
	if err != nil {
		t.Fatal(err)
	}
	if args[0] != "git-ralph" || args[1] != Command {
		t.Fatalf("argv %q", args)
	}
	fd, got, path, argv, err := parseArgs(args[2:])
	if err != nil || fd != 3 || path != "/usr/bin/agent" || !slices.Equal(argv, []string{"agent", "-p"}) ||
		!slices.Equal(got.Write, p.Write) || !slices.Equal(got.Hide, p.Hide) || !slices.Equal(got.Dev, p.Dev) || !slices.Equal(got.Ports, p.Ports) || got.ABI != 7 {
		t.Errorf("parseArgs = %d %+v %q %q %v", fd, got, path, argv, err)
	}
	if _, _, _, _, err := parseArgs([]string{"1", "{}", "/x", "x"}); err == nil {
		t.Error("a status descriptor below 3 was taken")
	}
}

// The run's read grants travel in the policy argument while they fit in half of what
// execve takes in one argument; beyond, the launcher works them out itself (a home of
// thousands of entries must not make every attempt fail with E2BIG).
func TestLauncherArgsGrantsBounded(t *testing.T) {
	small := &Policy{ABI: 7, Hide: []string{"/h/.ssh"}, Read: &Grants{Dirs: []string{"/usr", "/h/src"}, ListOnly: []string{"/", "/h"}, Hidden: []string{"/h/.ssh"}}}
	big := small.Clone()
	for i := range 5000 {
		big.Read.Files = append(big.Read.Files, fmt.Sprintf("/home/someone/a-file-with-a-long-name-%05d.txt", i))
	}
	for _, tc := range []struct {
		p        *Policy
		withRead bool
	}{{small, true}, {big, false}} {
		args, err := LauncherArgs(tc.p, 3, "/usr/bin/agent", []string{"agent"})
		if err != nil {
			t.Fatal(err)
		}
		if len(args[3]) > maxPolicyArg {
			t.Errorf("policy argument of %d bytes, want at most %d", len(args[3]), maxPolicyArg)
		}
		_, got, _, _, err := parseArgs(args[2:])
		if err != nil {
			t.Fatal(err)
		}
		if (got.Read != nil) != tc.withRead || tc.withRead && !slices.Equal(got.Read.Dirs, tc.p.Read.Dirs) {
			t.Errorf("%d granted files: Read %+v after the round trip, want it passed: %v", len(tc.p.Read.Files), got.Read, tc.withRead)
		}
		if !slices.Equal(got.Hide, tc.p.Hide) {
			t.Errorf("Hide %q, want %q", got.Hide, tc.p.Hide)
		}
	}
	if big.Read == nil {
		t.Error("LauncherArgs dropped the caller's grants")
	}
}

func TestCaches(t *testing.T) {
	if got := AgentCache([]string{"HOME=/home/ada", "XDG_CACHE_HOME=/c"}); got != "/c/git-ralph/agent-cache" {
		t.Errorf("AgentCache = %q", got)
	}
	if got := AgentCache([]string{"HOME=/home/ada", "XDG_CACHE_HOME=relative"}); got != "/home/ada/.cache/git-ralph/agent-cache" {
		t.Errorf("a relative XDG_CACHE_HOME: %q", got)
	}
	if AgentCache([]string{"HOME="}) != "" || CacheEnv("") != nil {
		t.Error("caches under no HOME")
	}
	for _, kv := range CacheEnv("/r") {
		if _, v, _ := strings.Cut(kv, "="); !Covers([]string{"/r"}, v) {
			t.Errorf("CacheEnv names %s, outside its root", kv)
		}
	}
	readable := ReadableIn([]string{"HOME=/home/ada", "PATH=/usr/bin:/home/ada/.npm-global/bin:/home/ada/.local/bin:/home/ada/bin:rel"}, []string{"/home/ada/notes/"})
	for _, want := range []string{"/home/ada/.gitconfig", "/home/ada/go", "/home/ada/.npm-global/bin", "/home/ada/.npm-global", "/home/ada/.local/bin", "/home/ada/bin", "/home/ada/notes"} {
		if !slices.Contains(readable, want) {
			t.Errorf("ReadableIn lacks %s: %q", want, readable)
		}
	}
	for _, no := range []string{"/home/ada", "/home/ada/.local", "/usr/bin", "rel"} {
		if slices.Contains(readable, no) {
			t.Errorf("ReadableIn names %s: %q", no, readable)
		}
	}
	hidden := HiddenIn("/home/ada", []string{"/srv/keys/"})
	if hidden[0] != "/home/ada" || !slices.Contains(hidden, filepath.Join("/home/ada", ".ssh")) || !slices.Contains(hidden, "/home/ada/.config/gh") || hidden[len(hidden)-1] != "/srv/keys" {
		t.Errorf("HiddenIn = %q", hidden)
	}
	if HiddenIn("", nil) != nil {
		t.Error("secrets under no HOME")
	}
	if !strings.HasPrefix(Self, "/proc/self/") {
		t.Errorf("Self = %q", Self)
	}
}

// Where the environment moves a secret out of HOME, it is hidden there.
func TestHiddenEnv(t *testing.T) {
	env := map[string]string{"XDG_CONFIG_HOME": "/x/cfg", "GH_CONFIG_DIR": "/x/gh", "KUBECONFIG": "/k/a:/k/b",
		"CARGO_HOME": "/c", "DOCKER_CONFIG": "relative/not"}
	got := strings.Join(HiddenEnv(func(k string) string { return env[k] }), " ")
	want := "/x/cfg/gh /x/cfg/hub /x/cfg/gcloud /x/cfg/git/credentials /x/gh /k/a /k/b /c/credentials /c/credentials.toml"
	if got != want {
		t.Errorf("HiddenEnv = %q\nwant       %q", got, want)
	}
}

// The agent's GOPROXY reads the user's module downloads first, then goes where the
// user's go would: the environment's GOPROXY, else the go env file's, else Go's default.
func TestGoProxyEnv(t *testing.T) {
	home := t.TempDir()
	mod := filepath.Join(home, "mods")
	if err := os.MkdirAll(filepath.Join(mod, "cache", "download"), 0o755); err != nil {
		t.Fatal(err)
	}
	if got := GoProxyEnv([]string{"HOME=" + home}); got != nil {
		t.Errorf("no module downloads in ~/go, yet %q", got)
	}
	if err := os.MkdirAll(filepath.Join(home, ".config", "go"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, ".config", "go", "env"), []byte("GOMODCACHE="+mod+"\nGOPROXY=https://corp.example/proxy\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	want := "GOPROXY=file://" + mod + "/cache/download,https://corp.example/proxy"
	if got := GoProxyEnv([]string{"HOME=" + home}); !slices.Equal(got, []string{want}) {
		t.Errorf("from the go env file: %q, want %q", got, want)
	}
	want = "GOPROXY=file://" + mod + "/cache/download,off"
	if got := GoProxyEnv([]string{"HOME=" + home, "GOPROXY=off"}); !slices.Equal(got, []string{want}) {
		t.Errorf("the environment's GOPROXY: %q, want %q", got, want)
	}
	want = "GOPROXY=file://" + mod + "/cache/download,https://proxy.golang.org,direct"
	if got := GoProxyEnv([]string{"HOME=" + t.TempDir(), "GOMODCACHE=" + mod}); !slices.Equal(got, []string{want}) {
		t.Errorf("Go's default: %q, want %q", got, want)
	}
}

// present resolves each path that exists as filepath.EvalSymlinks does, the
// directories shared by several resolved once: a link as the path, a link above it, a
// dangling link, the root; a missing path and a relative one are left out.
func TestPresentAsEvalSymlinks(t *testing.T) {
	root := t.TempDir()
	for _, d := range []string{"real/home/.config/git", "real/home/.ssh", "other"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for target, link := range map[string]string{
		filepath.Join(root, "real/home"): filepath.Join(root, "home"),
		"../../other":                    filepath.Join(root, "real/home/.gnupg"),
		filepath.Join(root, "gone"):      filepath.Join(root, "real/home/.netrc"),
	} {
		if err := os.Symlink(target, link); err != nil {
			t.Fatal(err)
		}
	}
	home := filepath.Join(root, "home")
	paths, got := present([]string{home + "/.config/git", home + "/.ssh/", home + "/.gnupg", home + "/.netrc", home + "/.aws", "relative", home, "/"})
	if want := []string{home + "/.config/git", home + "/.ssh", home + "/.gnupg", home + "/.netrc", home, "/"}; !slices.Equal(paths, want) {
		t.Fatalf("present: %q, want %q", paths, want)
	}
	for i, p := range paths {
		want, _ := filepath.EvalSymlinks(p)
		if got[i] != want {
			t.Errorf("present: %s resolves to %q; EvalSymlinks says %q", p, got[i], want)
		}
	}
	if got[1] != filepath.Join(root, "real/home/.ssh") || got[2] != filepath.Join(root, "other") || got[3] != "" {
		t.Errorf("present = %q", got)
	}
}
