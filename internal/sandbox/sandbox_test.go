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
	env := []string{"HOME=/home/ada", "XDG_CACHE_HOME=/c", "PATH=/nonexistent"}
	if got := Caches(env); !slices.Equal(got, []string{"/c"}) {
		t.Errorf("Caches without go or npm on PATH = %q", got)
	}
	if got := Caches([]string{"HOME=/home/ada", "XDG_CACHE_HOME=relative"}); len(got) == 0 || got[0] != "/home/ada/.cache" {
		t.Errorf("a relative XDG_CACHE_HOME: %q", got)
	}
	hidden := HiddenIn("/home/ada", []string{"/srv/keys/"})
	if !slices.Contains(hidden, filepath.Join("/home/ada", ".ssh")) || !slices.Contains(hidden, "/home/ada/.config/gh") || hidden[len(hidden)-1] != "/srv/keys" {
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

// With go on PATH the whole module area is writable, the checksum database's cache
// (pkg/sumdb, which go mod tidy writes as it adds a module) beside the module cache;
// with pnpm, its store.
func TestCachesModuleArea(t *testing.T) {
	bin := t.TempDir()
	for _, name := range []string{"go", "pnpm"} {
		if err := os.WriteFile(filepath.Join(bin, name), []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	got := Caches([]string{"HOME=/home/ada", "PATH=" + bin})
	want := []string{"/home/ada/.cache", "/home/ada/go/pkg", "/home/ada/.local/share/pnpm/store"}
	if !slices.Equal(got, want) {
		t.Errorf("Caches = %q, want %q", got, want)
	}
	got = Caches([]string{"HOME=/home/ada", "PATH=" + bin, "GOPATH=/g:/h", "GOMODCACHE=/m", "XDG_DATA_HOME=/d"})
	want = []string{"/home/ada/.cache", "/g/pkg", "/m", "/d/pnpm/store"}
	if !slices.Equal(got, want) {
		t.Errorf("Caches = %q, want %q", got, want)
	}
	got = Caches([]string{"HOME=/home/ada", "PATH=" + bin, "GOMODCACHE=/home/ada/go/pkg/mod"})
	if slices.Contains(got, "/home/ada/go/pkg/mod") {
		t.Errorf("Caches names the module cache inside the module area twice: %q", got)
	}
}

// A denial names the path right before it, else the one right after: never the
// shell's own path on the line.
func TestDeniedPaths(t *testing.T) {
	for line, want := range map[string]string{
		"/bin/sh: 1: /w/out/f.txt: Permission denied":                        "/w/out/f.txt",
		"touch: cannot touch '/w/x': Permission denied":                      "/w/x",
		"mkdir: cannot create directory ‘/w/d’: Permission denied":           "/w/d",
		`verifying module: open /h/go/pkg/sumdb/x/latest: permission denied`: "/h/go/pkg/sumdb/x/latest",
		"Error: EACCES: permission denied, open '/h/.npm/_cacache/tmp'":      "/h/.npm/_cacache/tmp",
		"PermissionError: [Errno 13] Permission denied: '/h/.local/lib'":     "/h/.local/lib",
		`{"content":"bash: /w/y: Permission denied\n","is_error":true}`:      "/w/y",
		"no denial here: /w/z":             "",
		"Permission denied, nothing named": "",
	} {
		got := strings.Join(deniedPaths(line), " ")
		if got != want {
			t.Errorf("deniedPaths(%q) = %q, want %q", line, got, want)
		}
	}
}
