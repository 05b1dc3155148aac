package sandbox

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
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

// DefaultReadable are what the agent may read in the home directory, relative to HOME;
// the rest of it is hidden (HiddenIn): git's settings, the toolchains and version
// managers, where pip --user and the CLIs' installers put programs. A user adds more
// with ralph.sandboxReadable. DefaultHide beneath them stays hidden (~/.cargo's
// credentials).
var DefaultReadable = []string{
	".gitconfig", ".gitignore", ".gitignore_global", ".gitattributes", ".config/git", ".config/go",
	"go", "sdk", ".cargo", ".rustup", ".nvm", ".pyenv", ".rbenv", ".goenv", ".asdf", ".tool-versions",
	".config/mise", ".local/share/mise", ".local/share/fnm", ".volta", ".bun", ".deno", ".sdkman",
	".local/bin", ".local/lib", ".local/share/claude", ".local/share/cursor-agent", ".local/share/pnpm",
	".local/share/uv", ".npm-global", ".opencode", ".amp",
}

// ReadableIn are the paths of a hidden home that stay readable in env: DefaultReadable
// under HOME, git's and go's settings under XDG_CONFIG_HOME, each directory on PATH
// that lies in the home directory and, for one named bin, the directory that holds it
// (~/.npm-global/bin: the packages it links to), unless that is the home directory or
// ~/.local; then extra (ralph.sandboxReadable).
func ReadableIn(env []string, extra []string) []string {
	home := filepath.Clean(envValue(env, "HOME"))
	var out []string
	if filepath.IsAbs(home) && home != "/" {
		for _, r := range DefaultReadable {
			out = append(out, filepath.Join(home, r))
		}
		if xdg := envValue(env, "XDG_CONFIG_HOME"); filepath.IsAbs(xdg) {
			out = append(out, filepath.Join(xdg, "git"), filepath.Join(xdg, "go"))
		}
		for _, dir := range filepath.SplitList(envValue(env, "PATH")) {
			dir = filepath.Clean(dir)
			if !filepath.IsAbs(dir) || !Covers([]string{home}, dir) || dir == home {
				continue
			}
			out = append(out, dir)
			if up := filepath.Dir(dir); filepath.Base(dir) == "bin" && up != home && up != filepath.Join(home, ".local") {
				out = append(out, up)
			}
		}
	}
	for _, r := range extra {
		out = append(out, filepath.Clean(r))
	}
	return out
}

// envValue is the last value of key in env.
func envValue(env []string, key string) string {
	v := ""
	for _, kv := range env {
		if k, val, ok := strings.Cut(kv, "="); ok && k == key {
			v = val
		}
	}
	return v
}

// AgentCache is the directory that holds the agents' own caches in git-ralph's
// environment env: git-ralph/agent-cache in its XDG_CACHE_HOME (~/.cache). Every
// sandboxed agent of every run writes there, and nothing but agents reads it: what one
// plants there reaches later agents, never the user's builds. "" without a HOME.
func AgentCache(env []string) string {
	base := envValue(env, "XDG_CACHE_HOME")
	if !filepath.IsAbs(base) {
		home := envValue(env, "HOME")
		if !filepath.IsAbs(home) {
			return ""
		}
		base = filepath.Join(home, ".cache")
	}
	return filepath.Join(filepath.Clean(base), "git-ralph", "agent-cache")
}

// CacheEnv points an agent's tools at their caches under root (AgentCache): the XDG
// cache (go-build's default, pip's, uv's, corepack's, most tools'), Go's build cache,
// GOPATH (its module cache, the checksum database's cache in pkg/sumdb, what go
// install builds), npm's, yarn's and pip's. They override the user's
// own settings of them, which name the user's caches.
func CacheEnv(root string) []string {
	if root == "" {
		return nil
	}
	j := func(k string, elem ...string) string {
		return k + "=" + filepath.Join(append([]string{root}, elem...)...)
	}
	return []string{
		j("XDG_CACHE_HOME", "xdg"), j("GOCACHE", "go-build"), j("GOPATH", "go"), j("GOMODCACHE", "go", "pkg", "mod"),
		j("npm_config_cache", "npm"), j("YARN_CACHE_FOLDER", "yarn"), j("PIP_CACHE_DIR", "pip"),
	}
}

// CacheDirs are root and the directories CacheEnv names in it, to create before a
// rule can name root.
func CacheDirs(root string) []string {
	out := []string{root}
	for _, kv := range CacheEnv(root) {
		_, v, _ := strings.Cut(kv, "=")
		out = append(out, v)
	}
	return out
}

// HiddenIn is home itself (what ReadableIn names of it stays readable), DefaultHide
// under home (hidden again where it lies beneath one of those), then extra
// (ralph.sandboxHide).
func HiddenIn(home string, extra []string) []string {
	var out []string
	if home = filepath.Clean(home); filepath.IsAbs(home) && home != "/" {
		out = append(out, home)
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
// everything beneath them and on Files, listing only on ListOnly, the readable
// directories on the way to a hidden path. Hidden are the paths of the policy's Hide
// that existed when they were computed, Revealed those of its Reveal.
type Grants struct {
	Dirs     []string `json:"dirs,omitempty"`
	Files    []string `json:"files,omitempty"`
	ListOnly []string `json:"listOnly,omitempty"`
	Hidden   []string `json:"hidden,omitempty"`
	// Targets are where each of Hidden leads ("" for a dangling link): a hidden link
	// pointed elsewhere since, or whose target has appeared, changes what is hidden.
	Targets []string `json:"targets,omitempty"`
	// Revealed and RevealTargets are the same for the policy's Reveal.
	Revealed      []string `json:"revealed,omitempty"`
	RevealTargets []string `json:"revealTargets,omitempty"`
}

// ReadGrants are the grants that leave out hide but keep reveal, computed by walking
// the file system (see readGrants): git-ralph computes them once for a run, and each
// attempt's launcher grants them instead of walking again (Policy.Read).
func ReadGrants(hide, reveal []string) *Grants {
	g := &Grants{}
	g.Hidden, g.Targets = present(hide)
	g.Revealed, g.RevealTargets = present(reveal)
	g.Dirs, g.Files, g.ListOnly = readGrants(hide, reveal)
	return g
}

// Current reports whether g still holds: no path of hide or reveal has appeared or
// gone since g was computed (a hidden one would be readable through the grant of a
// directory above it), and none that is a link leads elsewhere now. A granted path
// that is gone, or reached through a link now, is left out when granted.
func (g *Grants) Current(hide, reveal []string) bool {
	if g == nil {
		return false
	}
	now, real := present(hide)
	if !slices.Equal(now, g.Hidden) || !slices.Equal(real, g.Targets) {
		return false
	}
	shown, real := present(reveal)
	return slices.Equal(shown, g.Revealed) && slices.Equal(real, g.RevealTargets)
}

// present are the absolute paths of ps that exist (Lstat), cleaned, in order, and the
// real path of each ("" for one that does not resolve). A path that is no link is its
// directory's real path and its name: the directories, most of them the home's, are
// resolved once each. One lstat a path, the attempt's start asks it of every hidden and
// revealed path.
func present(ps []string) (paths, real []string) {
	dirs := map[string]string{}
	for _, p := range ps {
		p = filepath.Clean(p)
		var st unix.Stat_t
		if !filepath.IsAbs(p) || unix.Lstat(p, &st) != nil {
			continue
		}
		paths = append(paths, p)
		r, dir := "", filepath.Dir(p)
		switch {
		case st.Mode&unix.S_IFMT == unix.S_IFLNK || dir == p:
			r, _ = filepath.EvalSymlinks(p)
		default:
			d, ok := dirs[dir]
			if !ok {
				d, _ = filepath.EvalSymlinks(dir)
				dirs[dir] = d
			}
			if d != "" {
				r = filepath.Join(d, filepath.Base(p))
			}
		}
		real = append(real, r)
	}
	return paths, real
}

// existing are the absolute paths of hide that exist, cleaned, in order.
func existing(hide []string) []string {
	var out []string
	for _, h := range hide {
		h = filepath.Clean(h)
		var st unix.Stat_t
		if filepath.IsAbs(h) && unix.Lstat(h, &st) == nil {
			out = append(out, h)
		}
	}
	return out
}

// rules are the hidden and revealed paths of a policy, with the real paths they lead
// to: whether a path may be read is decided by the deepest of them that is the path or
// lies above it (a revealed path within a hidden one is readable, a hidden one within
// that is not again; the same path in both is readable), and by none: readable.
type rules map[string]bool // path: readable

func newRules(hide, reveal []string) rules {
	r := rules{}
	// A hidden path that does not exist yet beneath a revealed one (~/.cargo's
	// credentials) has its rule all the same: the revealed directory is then granted
	// entry by entry, so that the file, made during the attempt, is not readable.
	shown := existing(reveal)
	for _, h := range hide {
		if h = filepath.Clean(h); filepath.IsAbs(h) && Covers(shown, h) {
			r[h] = false
		}
	}
	for _, set := range []struct {
		paths    []string
		readable bool
	}{{hide, false}, {reveal, true}} {
		for _, p := range existing(set.paths) {
			r[p] = set.readable
			if real, err := filepath.EvalSymlinks(p); err == nil {
				if _, ok := r[real]; !ok || set.readable {
					r[real] = set.readable
				}
			}
		}
	}
	return r
}

// readable reports whether p may be read under r.
func (r rules) readable(p string) bool {
	for q := p; ; q = filepath.Dir(q) {
		if ok, found := r[q]; found {
			return ok
		}
		if q == "/" || q == "." {
			return true
		}
	}
}

// mixed reports whether a rule beneath the directory p decides otherwise than p's own.
func (r rules) mixed(p string) bool {
	prefix := strings.TrimSuffix(p, "/") + "/"
	own := r.readable(p)
	for q, ok := range r {
		if ok != own && strings.HasPrefix(q, prefix) {
			return true
		}
	}
	return false
}

// readGrants splits the file system by rules: directories and files to grant read
// on, and the readable directories on the way to a path decided otherwise, which it
// may only list (a hidden one on the way to a revealed path is passed through). A
// symbolic link is granted as what it leads to, where that is readable and holds
// nothing decided otherwise; such a directory is granted where the walk reaches it.
func readGrants(hide, reveal []string) (dirs, files, listOnly []string) {
	r := newRules(hide, reveal)
	if len(r) == 0 || !r.mixed("/") && r.readable("/") {
		return []string{"/"}, nil, nil
	}
	var walk func(dir string)
	walk = func(dir string) {
		if r.readable(dir) {
			listOnly = append(listOnly, dir)
		}
		entries, err := os.ReadDir(dir)
		if err != nil {
			return
		}
		for _, e := range entries {
			p := filepath.Join(dir, e.Name())
			real, isDir := p, e.IsDir()
			if e.Type()&fs.ModeSymlink != 0 { // the only entries worth a stat
				if !r.readable(p) && !r.mixed(p) {
					continue
				}
				if real, err = filepath.EvalSymlinks(p); err != nil {
					continue
				}
				fi, err := os.Stat(real)
				if err != nil {
					continue
				}
				isDir = fi.IsDir()
			}
			switch {
			case isDir && r.mixed(real):
				if real == p {
					walk(p)
				}
			case !r.readable(real):
			case isDir:
				dirs = append(dirs, real)
			default:
				files = append(files, real)
			}
		}
	}
	walk("/")
	return dirs, files, listOnly
}

// UserModuleDownloads is where the user's Go module cache keeps what it downloaded
// (GOMODCACHE's cache/download), in git-ralph's environment env and the user's go env
// file: GOMODCACHE, else the first GOPATH's pkg/mod, else ~/go/pkg/mod. "" when that
// does not exist.
func UserModuleDownloads(env []string) string {
	get := goEnv(env)
	mod := get("GOMODCACHE")
	if !filepath.IsAbs(mod) {
		mod = ""
		if gp, _, _ := strings.Cut(get("GOPATH"), string(os.PathListSeparator)); filepath.IsAbs(gp) {
			mod = filepath.Join(gp, "pkg", "mod")
		} else if home := envValue(env, "HOME"); filepath.IsAbs(home) {
			mod = filepath.Join(home, "go", "pkg", "mod")
		}
	}
	if mod == "" {
		return ""
	}
	dl := filepath.Join(filepath.Clean(mod), "cache", "download")
	if fi, err := os.Stat(dl); err != nil || !fi.IsDir() {
		return ""
	}
	return dl
}

// GoProxyEnv is the agent's GOPROXY: the user's module downloads (read-only, as a
// file:// proxy) first, then the user's own GOPROXY (the environment's, the go env
// file's, else Go's default), so that a module the user's builds have fetched needs
// no network in the agent's own module cache (offline, GOPROXY=off, too). nil when
// the user has no module downloads.
func GoProxyEnv(env []string) []string {
	dl := UserModuleDownloads(env)
	if dl == "" {
		return nil
	}
	proxy := goEnv(env)("GOPROXY")
	if proxy == "" {
		proxy = "https://proxy.golang.org,direct"
	}
	return []string{"GOPROXY=file://" + dl + "," + proxy}
}

// goEnv reads a go setting as the go command does: the environment, else the go env
// file (GOENV, else go/env in the user's configuration directory).
func goEnv(env []string) func(string) string {
	file := map[string]string{}
	path := envValue(env, "GOENV")
	if path == "" {
		cfg := envValue(env, "XDG_CONFIG_HOME")
		if !filepath.IsAbs(cfg) {
			if home := envValue(env, "HOME"); filepath.IsAbs(home) {
				cfg = filepath.Join(home, ".config")
			}
		}
		if filepath.IsAbs(cfg) {
			path = filepath.Join(cfg, "go", "env")
		}
	}
	if path != "" && path != "off" {
		if b, err := os.ReadFile(path); err == nil {
			for _, line := range strings.Split(string(b), "\n") {
				if k, v, ok := strings.Cut(strings.TrimSpace(line), "="); ok {
					file[k] = v
				}
			}
		}
	}
	return func(k string) string {
		if v := envValue(env, k); v != "" {
			return v
		}
		return file[k]
	}
}
