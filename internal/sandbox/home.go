package sandbox

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// DefaultHide are the places of secrets every policy hides, relative to HOME: keys,
// tokens and credential stores the agent needs none of to write code. A user adds
// more with ralph.sandboxHide.
var DefaultHide = []string{
	".ssh", ".gnupg", ".aws", ".azure", ".config/gcloud", ".config/gh", ".config/hub",
	".git-credentials", ".config/git/credentials", ".netrc", ".docker", ".kube",
	".password-store", ".local/share/keyrings", ".pgpass", ".vault-token", ".pypirc",
	".gem/credentials", ".cargo/credentials", ".cargo/credentials.toml", ".terraform.d",
}

// Devices are the device files every agent may write: the null device and the
// terminal (an agent has no controlling terminal, so /dev/tty fails to open, but
// tools try it).
var Devices = []string{"/dev/null", "/dev/tty"}

// PTY are the device paths of a pseudo-terminal, which a CLI running its shell tool
// on one needs with the ioctl right.
var PTY = []string{"/dev/ptmx", "/dev/pts"}

// Caches are the build caches the agent's builds and tests expect to write, in env:
// XDG_CACHE_HOME (~/.cache, where go-build, pip, pnpm and most tools keep theirs),
// GOCACHE and the module area GOPATH/pkg (~/go/pkg: mod and sumdb) and GOMODCACHE when
// go is on env's PATH, npm's (~/.npm) when npm is, pnpm's store when pnpm is.
// Missing ones are to be created (EnsureDirs) before a rule can name them.
func Caches(env []string) []string { return caches(env, false) }

// AllCaches are Caches as if go, npm and pnpm were on env's PATH: what another run's agent,
// with another PATH, may write.
func AllCaches(env []string) []string { return caches(env, true) }

func caches(env []string, all bool) []string {
	get := func(k string) string {
		v := ""
		for _, kv := range env {
			if key, val, ok := strings.Cut(kv, "="); ok && key == k {
				v = val
			}
		}
		return v
	}
	home := get("HOME")
	abs := func(p string) string {
		if filepath.IsAbs(p) {
			return filepath.Clean(p)
		}
		return ""
	}
	var out []string
	add := func(p string) {
		if p != "" {
			out = append(out, p)
		}
	}
	inHome := func(elem ...string) string {
		if home == "" {
			return ""
		}
		return filepath.Join(append([]string{home}, elem...)...)
	}
	cache := abs(get("XDG_CACHE_HOME"))
	if cache == "" {
		cache = inHome(".cache")
	}
	add(cache)
	onPath := func(name string) bool { // as exec.LookPath, in env's PATH
		if all {
			return true
		}
		for _, dir := range filepath.SplitList(get("PATH")) {
			if fi, err := os.Stat(filepath.Join(dir, name)); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
				return true
			}
		}
		return false
	}
	if onPath("go") {
		add(abs(get("GOCACHE")))
		// The whole module area, GOPATH/pkg: the module cache (pkg/mod) and the
		// checksum database's cache (pkg/sumdb), which go mod tidy writes as it adds
		// a module; GOMODCACHE too when it is set elsewhere.
		pkg := inHome("go", "pkg")
		if gp, _, _ := strings.Cut(get("GOPATH"), string(os.PathListSeparator)); abs(gp) != "" {
			pkg = filepath.Join(abs(gp), "pkg")
		}
		add(pkg)
		if mod := abs(get("GOMODCACHE")); mod != "" && !within(mod, pkg) {
			add(mod)
		}
	}
	if onPath("npm") {
		npm := abs(get("npm_config_cache"))
		if npm == "" {
			npm = inHome(".npm")
		}
		add(npm)
	}
	if onPath("pnpm") { // its content-addressed store (its cache is under XDG_CACHE_HOME)
		store := abs(get("XDG_DATA_HOME"))
		if store == "" {
			store = inHome(".local", "share")
		}
		if store != "" {
			add(filepath.Join(store, "pnpm", "store"))
		}
	}
	return out
}

// within reports whether p is dir or below it.
func within(p, dir string) bool {
	rel, err := filepath.Rel(dir, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, "../")
}

// HiddenIn is DefaultHide under home, then extra (ralph.sandboxHide).
func HiddenIn(home string, extra []string) []string {
	var out []string
	if home != "" {
		for _, h := range DefaultHide {
			out = append(out, filepath.Join(home, h))
		}
	}
	for _, h := range extra {
		out = append(out, filepath.Clean(h))
	}
	return out
}

// HiddenEnv are the secrets' places the environment moves out of HOME, as getenv reads
// it: XDG_CONFIG_HOME's gh, hub, gcloud and git credentials, GH_CONFIG_DIR (gh's
// hosts.yml), and each tool's own variable naming its file or directory. Relative or
// empty values are left out.
func HiddenEnv(getenv func(string) string) []string {
	var out []string
	add := func(p string) {
		if filepath.IsAbs(p) {
			out = append(out, filepath.Clean(p))
		}
	}
	if xdg := getenv("XDG_CONFIG_HOME"); filepath.IsAbs(xdg) {
		for _, rel := range []string{"gh", "hub", "gcloud", "git/credentials"} {
			add(filepath.Join(xdg, rel))
		}
	}
	for _, k := range []string{"GH_CONFIG_DIR", "GNUPGHOME", "CLOUDSDK_CONFIG", "AWS_SHARED_CREDENTIALS_FILE",
		"AWS_CONFIG_FILE", "AZURE_CONFIG_DIR", "DOCKER_CONFIG", "KUBECONFIG", "PASSWORD_STORE_DIR", "NETRC",
		"VAULT_CONFIG_PATH", "PGPASSFILE", "CARGO_HOME"} {
		v := getenv(k)
		if k == "KUBECONFIG" { // a list of files
			for _, f := range filepath.SplitList(v) {
				add(f)
			}
			continue
		}
		if k == "CARGO_HOME" && v != "" {
			add(filepath.Join(v, "credentials"))
			add(filepath.Join(v, "credentials.toml"))
			continue
		}
		add(v)
	}
	return out
}

// Existing is the paths of ps that exist (Lstat), in order.
func Existing(ps []string) []string {
	var out []string
	for _, p := range ps {
		if _, err := os.Lstat(p); err == nil {
			out = append(out, p)
		}
	}
	return out
}

// EnsureDirs creates the directories of ps that are missing.
func EnsureDirs(ps []string) error {
	for _, p := range ps {
		if _, err := os.Lstat(p); err == nil {
			continue
		}
		if err := os.MkdirAll(p, 0o755); err != nil {
			return err
		}
	}
	return nil
}

// ParsePorts reads ralph.sandboxNetwork's values: TCP port numbers separated by commas
// or spaces, each value adding to the list.
func ParsePorts(values []string) ([]uint16, error) {
	var out []uint16
	for _, v := range values {
		for f := range strings.FieldsFuncSeq(v, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' }) {
			n, err := strconv.Atoi(f)
			if err != nil || n < 1 || n > 65535 {
				return nil, fmt.Errorf("%q is not a TCP port (1 to 65535)", f)
			}
			out = append(out, uint16(n))
		}
	}
	return out, nil
}

// Grants are what an agent may read under a policy: read (and execute) on Dirs and
// everything beneath them and on Files, listing only on ListOnly, the directories on
// the way to a hidden path. Hidden are the paths of the policy's Hide that existed
// when they were computed.
type Grants struct {
	Dirs     []string `json:"dirs,omitempty"`
	Files    []string `json:"files,omitempty"`
	ListOnly []string `json:"listOnly,omitempty"`
	Hidden   []string `json:"hidden,omitempty"`
	// Targets are where each of Hidden leads ("" for a dangling link): a hidden link
	// pointed elsewhere since, or whose target has appeared, changes what is hidden.
	Targets []string `json:"targets,omitempty"`
}

// ReadGrants are the grants that leave out hide, computed by walking the file system
// (see readGrants): git-ralph computes them once for a run, and each attempt's
// launcher grants them instead of walking again (Policy.Read).
func ReadGrants(hide []string) *Grants {
	g := &Grants{}
	g.Hidden, g.Targets = existing(hide), targets(existing(hide))
	g.Dirs, g.Files, g.ListOnly = readGrants(hide)
	return g
}

// Current reports whether g still leaves out everything of hide: no hidden path has
// appeared since g was computed (one that did would be readable through the grant of
// a directory above it), and none that is a link leads elsewhere now. A path g names
// that is gone since, or is reached through a link now (the launcher opens each with
// no link in it), is left out when granted.
func (g *Grants) Current(hide []string) bool {
	if g == nil {
		return false
	}
	now := existing(hide)
	return slices.Equal(now, g.Hidden) && slices.Equal(targets(now), g.Targets)
}

// targets are the real paths of paths, "" for one that does not resolve.
func targets(paths []string) []string {
	out := make([]string, len(paths))
	for i, p := range paths {
		out[i], _ = filepath.EvalSymlinks(p)
	}
	return out
}

// existing are the absolute paths of hide that exist, cleaned, in order.
func existing(hide []string) []string {
	var out []string
	for _, h := range hide {
		h = filepath.Clean(h)
		if !filepath.IsAbs(h) {
			continue
		}
		if _, err := os.Lstat(h); err == nil {
			out = append(out, h)
		}
	}
	return out
}

// readGrants splits the file system into what the agent may read without the hidden
// paths: whole directories and files to grant read on, and the directories on the way
// to a hidden path, which it may only list. A symbolic link to a hidden path, or to a
// directory holding one, is left out; the directory itself is granted where the walk
// reaches it by its real path.
func readGrants(hide []string) (dirs, files, listOnly []string) {
	hidden := map[string]bool{}
	for _, h := range existing(hide) {
		hidden[h] = true
		if real, err := filepath.EvalSymlinks(h); err == nil {
			hidden[real] = true
		}
	}
	if len(hidden) == 0 {
		return []string{"/"}, nil, nil
	}
	holds := func(dir string) bool { // a hidden path is beneath dir
		prefix := strings.TrimSuffix(dir, "/") + "/"
		for h := range hidden {
			if strings.HasPrefix(h, prefix) {
				return true
			}
		}
		return false
	}
	within := func(p string) bool { // p is a hidden path or beneath one
		for h := range hidden {
			if p == h || strings.HasPrefix(p, strings.TrimSuffix(h, "/")+"/") {
				return true
			}
		}
		return false
	}
	var walk func(dir string)
	walk = func(dir string) {
		listOnly = append(listOnly, dir)
		entries, err := os.ReadDir(dir)
		if err != nil {
			return
		}
		for _, e := range entries {
			p := filepath.Join(dir, e.Name())
			if hidden[p] {
				continue
			}
			real, isDir := p, e.IsDir()
			if e.Type()&fs.ModeSymlink != 0 { // the only entries worth a stat
				if real, err = filepath.EvalSymlinks(p); err != nil {
					continue
				}
				fi, err := os.Stat(real)
				if err != nil {
					continue
				}
				isDir = fi.IsDir()
			}
			if within(real) { // a link to a hidden path, or to something in one
				continue
			}
			if holds(real) {
				if real == p {
					walk(p)
				}
				continue
			}
			if isDir {
				dirs = append(dirs, real)
			} else {
				files = append(files, real)
			}
		}
	}
	walk("/")
	return dirs, files, listOnly
}
