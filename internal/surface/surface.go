// Package surface holds the trust surface of a run: what the agent must not change
// during an attempt, recorded right before it and compared right after it. That is
// every ref but the run's own (refs/heads/ralph/<change>, refs/ralph/<change>/) and those
// of other changes' runs a git-ralph process works on (Options.Others), and every file git
// reads from the git directory that says what it runs or where the repository is: the
// repository's config (config, config.worktree, and the files they include that live
// in the repository), the user's global config, the hooks in effect (names, contents,
// modes), every file of info/, commondir, objects/info/alternates, shallow, the config
// of the other worktrees and of the submodules and their hooks. A symlink is watched
// with what it leads to (a dotfiles ~/.gitconfig, a hook kept elsewhere): git reads
// through it. Restore puts back exactly what was recorded and keeps what the agent
// made: refs under refs/ralph/<change>/tampered/<attempt>/, files in the run's state
// directory.
//
// In place the git directory lies inside the working tree the agent writes, so every
// name in it may be a symlink the agent planted. The check and the restore follow none
// (internal/beneath): a watched file is reached beneath the git directory (or the work
// tree, or for a file of the user's outside the repository, its own directory) with no
// symlink below it; a watched directory's own type is recorded, and one that became a
// symlink (.git/info -> ~) is a change: the link is moved into the keep directory, never
// followed, and the directory made again with its recorded files. A symlink among the
// watched files is followed only where it led when recorded, by that real path, never
// where a link found afterwards leads. What the agent made is moved aside into the keep
// directory by rename, not copied nor removed; a restore goes on past a path it cannot
// put back and names every one. Nothing of the user's outside the repository is read,
// copied, written or removed through a link the agent planted.
//
// It is cheap: one for-each-ref, a few stats and file reads (plus one worktree list
// where linked worktrees exist). It runs git only through internal/git and prints
// nothing: it returns lines for the caller's reporter.
package surface

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"unicode"

	"github.com/git-ralph/git-ralph/internal/beneath"
	"github.com/git-ralph/git-ralph/internal/git"
	"github.com/git-ralph/git-ralph/internal/gitdir"
	"github.com/git-ralph/git-ralph/internal/repofile"
)

// Options says what a run watches.
type Options struct {
	Change string // the run's change: its own refs are the agent's to change
	// NoRefs turns the ref part off (--allow-ref-changes); config and hooks stay.
	NoRefs bool
	// Shared is a --worktree run: the user works in their own checkout meanwhile, so a
	// new ref or a ref moved forward may be theirs and is let be; a ref deleted or
	// moved to a commit that does not contain its old one is still restored.
	Shared bool
	// Others returns a stamp for each change but except (the run's own) that has a run
	// directory: "busy" while a git-ralph process holds its run lock, else its run
	// record's size and time. Another change's run refs are watched unless it is busy at
	// the snapshot, and a difference on them is let be when its stamp changed meanwhile.
	// Nil: none known.
	Others func(except string) map[string]string `json:"-"`
}

// Busy is the stamp of a change some git-ralph process works on now.
const Busy = "busy"

// Snapshot is the surface at one moment.
type Snapshot struct {
	Options
	Refs     []git.RefWithSymref `json:"refs,omitempty"`
	Files    []File              `json:"files"`
	HooksDir string              `json:"hooksDir"`
	// Dirs are the directories each of whose files is watched (the hooks directory,
	// info/, the submodules' hooks): a file that appears there was created.
	Dirs []string `json:"dirs,omitempty"`
	// DirStates are those directories themselves as they were (a directory, or the
	// user's symlink to one, with its real path): one that became a symlink or anything
	// else is a change. Missing in a snapshot saved before they were recorded.
	DirStates []File `json:"dirStates,omitempty"`
	// Elsewhere are the watched branches checked out in another worktree when the
	// snapshot was taken: someone works there, so they are compared as in a Shared run.
	Elsewhere []string `json:"elsewhere,omitempty"`
	// Config are the watched files that are git config (the repository's, the global
	// one, what they include): a change there means settings read meanwhile were the
	// agent's (ConfigChanged).
	Config []string `json:"config,omitempty"`
	// CheckedOut are the branches checked out in another worktree when the snapshot was
	// taken, born or not: one of them created during the attempt is let be (its first
	// commit, made there). Only those: a worktree that appears during the attempt, or a
	// HEAD the agent points elsewhere, makes no branch anyone's.
	CheckedOut []string `json:"checkedOut,omitempty"`
	// Stamps are Options.Others when the snapshot was taken.
	Stamps map[string]string `json:"stamps,omitempty"`
	// MovedOn are the refs the last Compare let be although they moved (forward, in a
	// Shared run or on a branch checked out elsewhere), for the caller to name.
	MovedOn []string `json:"-"`
	// Relocated says the last Compare found the files that say where the repository is
	// changed, and compared no refs: restore its changes, then compare again.
	Relocated bool `json:"-"`

	// checked is what the last Compare saw of the watched refs, and restored what
	// Restore put back; Next derives the refs after the check from them.
	checked  []git.RefWithSymref
	reported map[string]bool
	compared bool
	// saved is what Save wrote, for Forged.
	saved []byte
	// loaded: read back by Load, so maybe the agent's (Outside).
	loaded bool
	// only: made by Only, watching no directory.
	only bool
}

// Only is s reduced to its files at paths: no refs and no watched directory, for a
// check of those files alone.
func (s *Snapshot) Only(paths ...string) *Snapshot {
	o := &Snapshot{Options: s.Options, HooksDir: s.HooksDir, Config: s.Config, only: true}
	o.NoRefs = true
	for _, f := range s.Files {
		if slices.Contains(paths, f.Path) {
			o.Files = append(o.Files, f)
		}
	}
	return o
}

// Next returns the watched refs as they are once the last Compare and the Restore of its
// changes are done: as recorded, except, in a Shared run, the changes let be.
func (s *Snapshot) Next() []git.RefWithSymref {
	if s.NoRefs || !s.compared {
		return nil
	}
	// What Compare saw, with what it reported (and Restore put back) as recorded, and
	// what it reported as created (Restore removed it) left out.
	recorded := map[string]git.RefWithSymref{}
	for _, r := range s.Refs {
		recorded[r.Name] = r
	}
	seen := map[string]bool{}
	var out []git.RefWithSymref
	for _, r := range s.checked {
		seen[r.Name] = true
		if s.reported[r.Name] {
			then, ok := recorded[r.Name]
			if !ok {
				continue
			}
			r = then
		}
		out = append(out, r)
	}
	for _, r := range s.Refs {
		if !seen[r.Name] && s.reported[r.Name] { // deleted, then recreated
			out = append(out, r)
		}
	}
	slices.SortFunc(out, func(a, b git.RefWithSymref) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// File is one watched file as it was.
type File struct {
	Path   string      `json:"path"` // absolute
	Exists bool        `json:"exists"`
	Mode   fs.FileMode `json:"mode,omitempty"` // type and permission bits
	Data   []byte      `json:"data,omitempty"` // a regular file's content
	Link   string      `json:"link,omitempty"` // a symlink's target
	// Target is where a symlink leads in the end (every link followed), when that is
	// there: git reads through the link, so what it leads to is watched too, the content
	// of a regular file and its mode.
	Target     string      `json:"target,omitempty"`
	TargetMode fs.FileMode `json:"targetMode,omitempty"`
	TargetData []byte      `json:"targetData,omitempty"`
	// Sum and TargetSum stand for Data and TargetData when the file was too large to
	// keep (over MaxKept, or past the snapshot's MaxKeptTotal): its SHA-256, so that a
	// change is still seen, while memory stays bounded whatever the agent writes there.
	// Such a file cannot be put back from the record; the check says so.
	Sum       string `json:"sum,omitempty"`
	TargetSum string `json:"targetSum,omitempty"`
	// Via is the name on the way to the file that is not a directory (a symlink): the
	// file is not reached, since git-ralph follows no link in the git directory. Exists
	// is false then.
	Via string `json:"via,omitempty"`
}

// leadsNow is the TargetMode of a symlink that led nowhere when recorded and leads to
// something now (the agent made what it names).
const leadsNow = fs.ModeIrregular

// MaxKept is the largest watched file whose content a snapshot keeps, and MaxKeptTotal
// what it keeps of all of them: a hook, a config or a file of info/ is a few KiB, and
// what an agent writes there must not grow git-ralph's memory (or surface.json) without
// bound. A larger file is recorded by its SHA-256.
const (
	MaxKept      = 1 << 20
	MaxKeptTotal = 32 << 20
)

// keeper reads watched files within MaxKeptTotal.
type keeper struct{ left int64 }

func newKeeper() *keeper { return &keeper{left: MaxKeptTotal} }

// Take records the surface of repo now.
func Take(ctx context.Context, repo *git.Repo, o Options) (*Snapshot, error) {
	return take(ctx, repo, o)
}

// TakeAfter records the surface for the attempt that follows prev's, as prev's check
// and restore left it, without reading the files again, so that nothing a planted
// program wrote between attempts becomes the record. freshRefs reads the refs anew
// (after a wait). Why: docs/LOOP.md, "Each attempt".
func TakeAfter(ctx context.Context, repo *git.Repo, prev *Snapshot, freshRefs bool) (*Snapshot, error) {
	s := &Snapshot{Options: prev.Options, HooksDir: prev.HooksDir, Dirs: prev.Dirs, DirStates: prev.DirStates, Config: prev.Config, Files: slices.Clone(prev.Files),
		Elsewhere: prev.Elsewhere, CheckedOut: prev.CheckedOut}
	if prev.NoRefs {
		return s, nil
	}
	s.Stamps = s.stamps()
	// Another change's run that a git-ralph process took up or let go of since: which
	// of its refs are watched is decided anew, from the refs as they are.
	freshRefs = freshRefs || !maps.Equal(s.Stamps, prev.Stamps)
	if !freshRefs {
		if s.Refs = prev.Next(); s.Refs == nil {
			s.Refs = []git.RefWithSymref{}
		}
		return s, nil
	}
	var err error
	if s.Refs, s.Elsewhere, s.CheckedOut, err = watchedRefs(ctx, repo, prev.Options, s.Stamps, true); err != nil {
		return nil, err
	}
	return s, nil
}

func take(ctx context.Context, repo *git.Repo, o Options) (*Snapshot, error) {
	s := &Snapshot{Options: o}
	if !o.NoRefs {
		s.Stamps = s.stamps()
		refs, elsewhere, checkedOut, err := watchedRefs(ctx, repo, o, s.Stamps, true)
		if err != nil {
			return nil, err
		}
		s.Refs, s.Elsewhere, s.CheckedOut = refs, elsewhere, checkedOut
	}
	hooks, err := repo.HooksDir(ctx)
	if err != nil {
		return nil, err
	}
	s.HooksDir = hooks
	w := watchList(repo, hooks, o.NoRefs)
	s.Dirs, s.Config = w.dirs, w.config
	k := newKeeper()
	// The watched directories first: where their files are read depends on what they
	// are (a directory, or the user's symlink to one, read at its real path).
	for _, d := range w.dirs {
		root, rel := base(repo, d)
		st, err := k.read(d, root, rel, nil)
		if err != nil {
			return nil, err
		}
		s.DirStates = append(s.DirStates, st)
	}
	paths := w.files
	for _, dir := range w.dirs {
		root, rel := s.dirPlace(repo, dir)
		entries, err := beneath.ReadDir(root, rel)
		if err != nil {
			continue
		}
		for _, e := range entries {
			if p := filepath.Join(dir, e.Name()); !e.IsDir() && !slices.Contains(paths, p) && !serverInfo(p, repo.CommonDir) {
				paths = append(paths, p)
			}
		}
	}
	for _, p := range paths {
		root, rel := s.place(repo, p)
		f, err := k.read(p, root, rel, nil)
		if err != nil {
			return nil, err
		}
		s.Files = append(s.Files, f)
	}
	return s, nil
}

// base returns the directory beneath which path is reached, following no symlink below
// it, and path relative to it: the git common dir, the git directory or the work tree
// path is in; for a path elsewhere (the user's global config, a hooks directory outside
// the repository), its own directory, which is the user's.
func base(repo *git.Repo, path string) (root, rel string) {
	for _, d := range []string{repo.CommonDir, repo.GitDir, repo.Root} {
		if r, err := beneath.Rel(d, path); err == nil {
			return filepath.Clean(d), r
		}
	}
	return filepath.Dir(path), filepath.Base(path)
}

// dirPlace is where the watched directory dir is listed: at the real path it led to
// when recorded, when it was the user's symlink to a directory (by that path, "/" its
// root, so that no link on it is followed now); else beneath its base.
func (s *Snapshot) dirPlace(repo *git.Repo, dir string) (root, rel string) {
	for _, d := range s.DirStates {
		if d.Path == dir && d.Mode&fs.ModeSymlink != 0 && d.Target != "" && d.TargetMode.IsDir() {
			return string(filepath.Separator), strings.TrimPrefix(d.Target, string(filepath.Separator))
		}
	}
	return base(repo, dir)
}

// place is where the watched file path is reached: in its directory's place when that
// is a watched one, else beneath its base.
func (s *Snapshot) place(repo *git.Repo, path string) (root, rel string) {
	if dir := filepath.Dir(path); slices.Contains(s.Dirs, dir) {
		root, rel := s.dirPlace(repo, dir)
		return root, filepath.Join(rel, filepath.Base(path))
	}
	return base(repo, path)
}

// watched is what a snapshot of a repository reads.
type watched struct {
	files  []string // every watched file
	config []string // those that are git config
	// included are the files only a config include names (never git's own data,
	// which Valid checks when the include is read anew from a record).
	included map[string]bool
	dirs     []string // directories each of whose files is watched
}

// watchList lists the watched files: the config files and what they include inside the
// repository, the user's global config files and what they include, every file of
// info/, the stash list (logs/refs/stash) unless refs are not watched, commondir (in a
// main worktree's git directory too, where git writes none but follows one), a linked
// worktree's .git file and gitdir, objects/info/alternates, shallow, the config and
// commondir of the other worktrees (not those of git-ralph's runs, which come and go),
// the config, commondir and hooks of the submodules' git directories, and every file in
// the hooks directory (listed by Take). Files that do not exist are recorded as missing:
// one that appears was created. Nothing here follows a symlink below the git directory.
func watchList(repo *git.Repo, hooks string, noRefs bool) watched {
	common, gitDir := repo.CommonDir, repo.GitDir
	linked := gitDir != common
	paths := []string{filepath.Join(common, "config"), filepath.Join(common, "config.worktree")}
	if linked {
		paths = append(paths, filepath.Join(gitDir, "config.worktree"))
	}
	// The user's global config is git config too, which git-ralph's git reads (a clean
	// filter planted there runs in its add -A); what it includes is the user's wherever
	// it lives.
	global := globalConfigs()
	paths = append(paths, global...)
	w := watched{included: map[string]bool{}}
	for i := 0; i < len(paths) && i < 32; i++ { // includes of includes, bounded
		for _, inc := range includes(paths[i]) {
			if (inside(repo, inc) || slices.Contains(global, paths[i])) && !slices.Contains(paths, inc) {
				paths = append(paths, inc)
				w.included[inc] = true
				if slices.Contains(global, paths[i]) {
					global = append(global, inc)
				}
			}
		}
	}
	w.configFiles(paths)
	// info/: attributes, exclude, grafts (history git shows), sparse-checkout (what add
	// -A sees), and whatever else is there.
	info := filepath.Join(common, "info")
	for _, name := range []string{"attributes", "exclude", "grafts", "sparse-checkout"} {
		paths = append(paths, filepath.Join(info, name))
	}
	w.dirs = append(w.dirs, info)
	if linked {
		paths = append(paths, filepath.Join(gitDir, "info", "sparse-checkout")) // per worktree
	}
	if !noRefs {
		// The stash list is refs/stash's reflog: restoring the ref alone brings back
		// no entry of it (update-ref writes no reflog outside refs/heads), so after a
		// "git stash clear" every stash of the user's would be lost.
		paths = append(paths, filepath.Join(common, "logs", "refs", "stash"))
	}
	// Where the repository is: a commondir in the git directory sends every git that
	// finds it to another repository (its config, hooks, refs), a main worktree's too.
	paths = append(paths, filepath.Join(common, "commondir"),
		filepath.Join(common, "objects", "info", "alternates"), filepath.Join(common, "objects", "info", "http-alternates"),
		filepath.Join(common, "shallow"))
	if linked {
		// A linked worktree: the .git file in its work tree, and commondir and gitdir
		// beside its git directory. git-ralph's git pins them; the user's git in that
		// worktree reads them.
		paths = append(paths, filepath.Join(repo.Root, ".git"), filepath.Join(gitDir, "commondir"), filepath.Join(gitDir, "gitdir"))
	}
	// The user's other worktrees: where each one's git finds the repository, and its
	// own config. Those on a run's branch are git-ralph's, made and removed by other
	// loops and finishes at any moment.
	if entries, err := beneath.ReadDir(common, "worktrees"); err == nil {
		for _, e := range entries {
			d := filepath.Join(common, "worktrees", e.Name())
			if !e.IsDir() || git.SamePath(d, gitDir) || runWorktree(common, d) || halfMade(common, d) {
				continue
			}
			paths = append(paths, filepath.Join(d, "commondir"), filepath.Join(d, "config.worktree"))
		}
	}
	// Submodules: their git directories hold config and hooks the user's git runs in
	// them (git status recurses).
	for _, d := range moduleDirs(common) {
		paths = append(paths, filepath.Join(d, "config"), filepath.Join(d, "commondir"))
		w.dirs = append(w.dirs, filepath.Join(d, "hooks"))
	}
	w.dirs = append([]string{hooks}, w.dirs...)
	w.files = paths
	return w
}

// configFiles ends the list of config files once the includes are followed: everything
// listed so far.
func (w *watched) configFiles(paths []string) { w.config = slices.Clone(paths) }

// serverInfo reports whether path is info/refs, which git's repack (an automatic gc after
// git-ralph's own commit) rewrites for dumb HTTP servers and no local git reads.
func serverInfo(path, common string) bool {
	return path == filepath.Join(common, "info", "refs")
}

// maxModules bounds the submodule git directories watched, and how deep they are looked for.
const maxModules, maxModuleDepth = 64, 4

// moduleDirs are the git directories of submodules under common/modules (a name may hold
// a '/', and a submodule has submodules of its own under its modules/).
func moduleDirs(common string) []string {
	var out []string
	var walk func(dir string, depth int)
	walk = func(dir string, depth int) {
		rel, err := beneath.Rel(common, dir)
		if err != nil || depth > maxModuleDepth {
			return
		}
		entries, err := beneath.ReadDir(common, rel)
		if err != nil {
			return
		}
		for _, e := range entries {
			if len(out) >= maxModules {
				return
			}
			d := filepath.Join(dir, e.Name())
			if !e.IsDir() {
				continue
			}
			if fi, err := beneath.Lstat(common, filepath.Join(rel, e.Name(), "HEAD")); err == nil && fi.Mode().IsRegular() {
				out = append(out, d)
				walk(filepath.Join(d, "modules"), depth+1)
				continue
			}
			walk(d, depth+1)
		}
	}
	walk(filepath.Join(common, "modules"), 0)
	return out
}

// runWorktree reports whether the linked worktree whose git directory is dir (under
// common) is on a run's branch (HEAD: ref: refs/heads/ralph/…).
func runWorktree(common, dir string) bool {
	rel, err := beneath.Rel(common, filepath.Join(dir, "HEAD"))
	if err != nil {
		return false
	}
	b, err := beneath.ReadFile(common, rel, 4096)
	return err == nil && strings.HasPrefix(string(b), "ref: refs/heads/ralph/")
}

// halfMade reports whether the worktree whose git directory is dir is still being
// written by a git worktree add: its HEAD missing, or still the null object name add
// writes first. Another loop or the user is making it, so it is not watched: recorded
// now, the rest of the add would read as the agent's.
func halfMade(common, dir string) bool {
	rel, err := beneath.Rel(common, filepath.Join(dir, "HEAD"))
	if err != nil {
		return false
	}
	b, err := beneath.ReadFile(common, rel, 4096)
	if errors.Is(err, fs.ErrNotExist) {
		return true
	}
	head := strings.TrimSpace(string(b))
	return err == nil && (head == "" || strings.Trim(head, "0") == "")
}

// optionalRoot is the directory whose removal takes a watched file with it, legitimately:
// another worktree's git directory (git worktree remove), a submodule's; "" for the
// others, which are the repository's own.
func optionalRoot(repo *git.Repo, path string) string {
	rel, err := filepath.Rel(repo.CommonDir, path)
	if err != nil || !repofile.Inside(repo.CommonDir, path) {
		return ""
	}
	rel = filepath.ToSlash(rel)
	switch {
	case strings.HasPrefix(rel, "worktrees/"):
		if git.SamePath(filepath.Dir(path), repo.GitDir) {
			return ""
		}
		return filepath.Dir(path)
	case strings.HasPrefix(rel, "modules/"):
		if filepath.Base(filepath.Dir(path)) == "hooks" {
			return filepath.Dir(filepath.Dir(path))
		}
		return filepath.Dir(path)
	}
	return ""
}

// globalConfigs are the files git reads as the user's global config: GIT_CONFIG_GLOBAL
// when set, else ~/.gitconfig and $XDG_CONFIG_HOME/git/config (~/.config/git/config).
func globalConfigs() []string {
	if g := os.Getenv("GIT_CONFIG_GLOBAL"); g != "" {
		if g == os.DevNull {
			return nil
		}
		return []string{filepath.Clean(g)}
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return nil
	}
	xdg := os.Getenv("XDG_CONFIG_HOME")
	if xdg == "" {
		xdg = filepath.Join(home, ".config")
	}
	return []string{filepath.Join(home, ".gitconfig"), filepath.Join(xdg, "git", "config")}
}

// inside reports whether path is in the repository: its git directories or work tree.
func inside(repo *git.Repo, path string) bool {
	for _, d := range []string{repo.CommonDir, repo.GitDir, repo.Root} {
		if repofile.Inside(filepath.Clean(d), filepath.Clean(path)) {
			return true
		}
	}
	return false
}

// includes returns the files a config file includes ([include] and [includeIf] path
// values), resolved as git does: relative to the including file, ~/ from HOME.
func includes(config string) []string {
	data, err := readConfig(config)
	if err != nil {
		return nil
	}
	var out []string
	section := ""
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if strings.HasPrefix(line, "[") {
			name, rest, _ := strings.Cut(strings.TrimPrefix(line, "["), "]")
			section = strings.ToLower(strings.Fields(name + " ")[0])
			// git takes a key on the section's line too: "[include] path = x".
			if line = strings.TrimSpace(rest); line == "" {
				continue
			}
		}
		if section != "include" && section != "includeif" {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok || !strings.EqualFold(strings.TrimSpace(k), "path") {
			continue
		}
		v = configValue(v)
		switch {
		case v == "":
			continue
		case strings.HasPrefix(v, "~/"):
			home, _ := os.UserHomeDir()
			v = filepath.Join(home, v[2:])
		case !filepath.IsAbs(v):
			v = filepath.Join(filepath.Dir(config), v)
		}
		out = append(out, filepath.Clean(v))
	}
	return out
}

// readConfig reads a config file for its includes: at most MaxKept (a larger one names
// none), a regular file only (a FIFO would block), through a symlink as git reads it
// (the user's dotfiles): the path is the one git reads, so what it leads to is git's
// input as much as git-ralph's, and nothing of it is kept.
func readConfig(path string) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", path)
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxKept+1))
	if err == nil && len(data) > MaxKept {
		return nil, fmt.Errorf("%s is over %d MiB", path, MaxKept>>20)
	}
	return data, err
}

// configValue is a config value as git reads it, for a path: a quoted part taken
// as it is, a comment (# or ;) outside quotes dropped, surrounding space trimmed.
func configValue(v string) string {
	var b strings.Builder
	quoted := false
	for _, r := range strings.TrimSpace(v) {
		switch {
		case r == '"':
			quoted = !quoted
		case !quoted && (r == '#' || r == ';'):
			return strings.TrimSpace(b.String())
		default:
			b.WriteRune(r)
		}
	}
	return strings.TrimSpace(b.String())
}

// read records the watched path as it is, reached at rel beneath root (Snapshot.place)
// following no symlink below root. A symlink is recorded as one; what it leads to is
// read only by a real path: when then is nil (the snapshot's own reading, before any
// agent ran), where the link leads now; afterwards, where it led when recorded
// (then.Target), and only while the link is the same. A link the check finds new or
// changed is never followed.
func (k *keeper) read(path, root, rel string, then *File) (File, error) {
	f := File{Path: path}
	info, err := beneath.Lstat(root, rel)
	var way *beneath.WayError
	if errors.As(err, &way) {
		f.Via = way.Path
		return f, nil
	}
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrInvalid) || errors.Is(err, syscall.ENOTDIR) {
		return f, nil
	}
	if err != nil {
		return f, err
	}
	f.Exists, f.Mode = true, info.Mode()&(fs.ModeType|fs.ModePerm)
	switch {
	case info.Mode()&fs.ModeSymlink != 0:
		if f.Link, err = beneath.Readlink(root, rel); err != nil {
			return f, err
		}
		switch {
		case then == nil:
			// What git reads through the link. A link that leads nowhere (yet) has no
			// target: one that appears there is a change.
			target, err := filepath.EvalSymlinks(filepath.Join(root, rel))
			if err != nil {
				return f, nil
			}
			f.Target = target
			err = k.readTarget(&f)
			return f, err
		case then.Exists && then.Link == f.Link && then.Target != "":
			f.Target = then.Target
			return f, k.readTarget(&f)
		case then.Exists && then.Link == f.Link && then.Mode&fs.ModeSymlink != 0:
			// It led nowhere: whether it leads somewhere now is asked of the system
			// (a stat, nothing read).
			if _, err := os.Stat(filepath.Join(root, rel)); err == nil {
				f.TargetMode = leadsNow
			}
		}
		return f, nil
	case info.Mode().IsRegular():
		f.Data, f.Sum, err = k.readRegular(root, rel)
	}
	return f, err
}

// readTarget reads what the symlink f leads to, by its real path f.Target beneath "/"
// (a real path has no link on it: one there now is a change, never followed).
func (k *keeper) readTarget(f *File) error {
	root, rel := realPlace(f.Target)
	tinfo, err := beneath.Lstat(root, rel)
	var way *beneath.WayError
	if errors.As(err, &way) {
		f.TargetMode = leadsNow
		return nil
	}
	if err != nil {
		return nil
	}
	f.TargetMode = tinfo.Mode() & (fs.ModeType | fs.ModePerm)
	if tinfo.Mode().IsRegular() {
		f.TargetData, f.TargetSum, err = k.readRegular(root, rel)
	}
	return err
}

// realPlace is a real path (every symlink resolved) as a root and a path beneath it:
// "/" and the rest, so that no component of it is followed.
func realPlace(real string) (root, rel string) {
	return string(filepath.Separator), strings.TrimPrefix(filepath.Clean(real), string(filepath.Separator))
}

// readRegular reads the regular file rel beneath root, or nothing when it is something
// else by the time it is opened (swapped for a FIFO, which would block the read
// forever, or for a symlink): the recorded content then differs, which is the point.
//
// Within MaxKept (and what is left of MaxKeptTotal) it returns the content; past that,
// only its SHA-256 (sum), read in pieces.
func (k *keeper) readRegular(root, rel string) (data []byte, sum string, err error) {
	file, err := beneath.Open(root, rel)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, "", nil
	}
	if err != nil {
		return nil, "", err
	}
	defer file.Close()
	fi, err := file.Stat()
	if err != nil {
		return nil, "", err
	}
	if fi.Size() <= MaxKept && fi.Size() <= k.left {
		data, err = io.ReadAll(io.LimitReader(file, MaxKept+1))
		if err == nil && int64(len(data)) <= MaxKept && int64(len(data)) <= k.left {
			k.left -= int64(len(data))
			return data, "", nil
		}
		if err != nil {
			return nil, "", err
		}
		// It grew while read: from the start, by its sum.
		if _, err := file.Seek(0, io.SeekStart); err != nil {
			return nil, "", err
		}
	}
	h := sha256.New()
	if _, err := io.Copy(h, file); err != nil {
		return nil, "", err
	}
	return nil, "sha256:" + hex.EncodeToString(h.Sum(nil)), nil
}

func (f File) same(g File) bool {
	return f.Exists == g.Exists && f.Mode == g.Mode && f.Link == g.Link && bytes.Equal(f.Data, g.Data) && f.Sum == g.Sum && f.Via == g.Via &&
		f.Target == g.Target && f.TargetMode == g.TargetMode && bytes.Equal(f.TargetData, g.TargetData) && f.TargetSum == g.TargetSum
}

// stamps asks Options.Others for the other changes' stamps now; never this run's own.
func (s *Snapshot) stamps() map[string]string {
	if s.Others == nil {
		return nil
	}
	m := s.Others(s.Change) // the run's own lock is held: no need to ask who holds it
	delete(m, s.Change)
	return m
}

// owner is the change among names whose run ref name is (refs/heads/ralph/<change>, or
// under refs/ralph/<change>/: the longest such name, as a run name could hold a '/'),
// or "" when it is none of theirs.
func owner(name string, names func(yield func(string) bool)) string {
	best := ""
	for n := range names {
		if n == "" {
			continue
		}
		if name == "refs/heads/ralph/"+n || strings.HasPrefix(name, "refs/ralph/"+n+"/") {
			if len(n) > len(best) {
				best = n
			}
		}
	}
	return best
}

// watchedRefs lists the refs the agent must not change: all but this run's own
// (refs/heads/ralph/<change> and refs/ralph/<change>/: the agent's to change) and the
// runs of other changes that a git-ralph process works on now (stamps says Busy: a
// parallel loop, a finish or a dispatch changes them at any moment, which a check here
// could not tell from an agent). Refs under refs/heads/ralph/ or refs/ralph/ of no known
// run are watched like any other. elsewhere are the branches among them checked out in
// another worktree: someone works there, so they are compared as a Shared run compares
// (a move forward is let be); checkedOut are all the branches checked out there, born or
// not. Both only when worktrees is set (a snapshot: a check compares with the recorded
// ones, never with worktrees the attempt may have made).
func watchedRefs(ctx context.Context, repo *git.Repo, o Options, stamps map[string]string, worktrees bool) (refs []git.RefWithSymref, elsewhere, checkedOut []string, err error) {
	all, err := repo.AllRefs(ctx)
	if err != nil {
		return nil, nil, nil, err
	}
	there := map[string]bool{}
	if _, err := os.Stat(filepath.Join(repo.CommonDir, "worktrees")); err == nil && worktrees {
		wts, err := repo.WorktreeBranches(ctx)
		if err != nil {
			return nil, nil, nil, err
		}
		for b, path := range wts {
			if !git.SamePath(path, repo.Root) {
				there["refs/heads/"+b] = true
				checkedOut = append(checkedOut, "refs/heads/"+b)
			}
		}
		slices.Sort(checkedOut)
	}
	for _, r := range all {
		if r.Name == "refs/heads/ralph/"+o.Change || strings.HasPrefix(r.Name, "refs/ralph/"+o.Change+"/") {
			continue
		}
		if strings.HasPrefix(r.Name, "refs/heads/ralph/") || strings.HasPrefix(r.Name, "refs/ralph/") {
			if x := owner(r.Name, maps.Keys(stamps)); x != "" && stamps[x] == Busy {
				continue
			}
		}
		refs = append(refs, r)
		if there[r.Name] {
			elsewhere = append(elsewhere, r.Name)
		}
	}
	return refs, elsewhere, checkedOut, nil
}

// Change is one difference between the snapshot and now.
type Change struct {
	Ref  string // the ref, or "" for a file
	File string // the file's absolute path, or ""
	What string // "moved", "deleted", "created", "changed", "mode changed"
	Then git.RefWithSymref
	Now  git.RefWithSymref
	// NowFile is the file as the agent left it.
	NowFile File
	then    File
	// root and rel are where the file is reached (Snapshot.place).
	root, rel string
	// dir: a watched directory's own change (it became a symlink, a file), put back with
	// the recorded files in it (files) when it was a directory.
	dir   bool
	files []File
}

// Compare returns what differs now from s, in a stable order: refs, then files. When a
// file that says where the repository is differs (its commondir, a linked worktree's
// .git file), git cannot be asked about refs until it is put back (it would read another
// repository's, and git-ralph's git refuses to start): Compare then returns the file
// differences alone and Relocated says so; compare again once they are restored.
func (s *Snapshot) Compare(ctx context.Context, repo *git.Repo) ([]Change, error) {
	s.MovedOn, s.Relocated = nil, false
	files, err := s.compareFiles(repo)
	if err != nil {
		return nil, err
	}
	for _, c := range files {
		if c.File == filepath.Join(repo.GitDir, "commondir") || repo.GitDir != repo.CommonDir && c.File == filepath.Join(repo.Root, ".git") {
			s.Relocated = true
			return files, nil
		}
	}
	if s.NoRefs {
		return files, nil
	}
	refs, err := s.compareRefs(ctx, repo)
	if err != nil {
		return nil, err
	}
	return append(refs, files...), nil
}

// compareRefs returns the watched refs that differ now, by name.
func (s *Snapshot) compareRefs(ctx context.Context, repo *git.Repo) (changes []Change, err error) {
	now, _, _, err := watchedRefs(ctx, repo, s.Options, s.Stamps, false)
	if err != nil {
		return nil, err
	}
	// Another change's run that a git-ralph process worked on during the attempt
	// (its stamp is not the recorded one, or it is busy now; a run begun meanwhile
	// has none recorded): what changed on its refs may be that process's doing.
	nowStamps := s.stamps()
	worked := func(name string) bool {
		if !strings.HasPrefix(name, "refs/heads/ralph/") && !strings.HasPrefix(name, "refs/ralph/") {
			return false
		}
		x := owner(name, func(yield func(string) bool) {
			for n := range s.Stamps {
				if !yield(n) {
					return
				}
			}
			for n := range nowStamps {
				if !yield(n) {
					return
				}
			}
		})
		if x == "" {
			return false
		}
		then, ok := s.Stamps[x]
		cur, okNow := nowStamps[x]
		return !ok || !okNow || then != cur || cur == Busy
	}
	// Shared: the user works in their checkout meanwhile (a --worktree run), or
	// someone works in the worktree the branch is checked out in (recorded before
	// the attempt: an agent that adds a worktree for a branch makes it no one's).
	shared := func(name string) bool { return s.Shared || slices.Contains(s.Elsewhere, name) }
	s.checked, s.reported, s.compared = now, map[string]bool{}, true
	defer func() {
		for _, c := range changes {
			if c.Ref != "" {
				s.reported[c.Ref] = true
			}
		}
	}()
	byName := map[string]git.RefWithSymref{}
	for _, r := range now {
		byName[r.Name] = r
	}
	for _, then := range s.Refs {
		cur, ok := byName[then.Name]
		delete(byName, then.Name)
		if worked(then.Name) {
			continue
		}
		switch {
		case !ok:
			changes = append(changes, Change{Ref: then.Name, What: "deleted", Then: then})
		case then.Symref != "" || cur.Symref != "":
			if then.Symref != cur.Symref {
				changes = append(changes, Change{Ref: then.Name, What: "moved", Then: then, Now: cur})
			}
		case then.ID != cur.ID:
			if shared(then.Name) {
				if ff, err := repo.IsAncestor(ctx, then.ID, cur.ID); err == nil && ff {
					s.MovedOn = append(s.MovedOn, then.Name)
					continue // maybe the user's own work in their checkout
				}
			}
			changes = append(changes, Change{Ref: then.Name, What: "moved", Then: then, Now: cur})
		}
	}
	if !s.Shared {
		for _, r := range now {
			// A branch that was checked out in another worktree before the
			// attempt, unborn, is let be: its first commit was made there. A
			// worktree made during the attempt (a .git/worktrees/x/HEAD the
			// agent wrote) makes no branch anyone's.
			if _, ok := byName[r.Name]; ok && !slices.Contains(s.CheckedOut, r.Name) && !worked(r.Name) {
				changes = append(changes, Change{Ref: r.Name, What: "created", Now: r})
			}
		}
	}
	slices.SortFunc(changes, func(a, b Change) int { return strings.Compare(a.Ref, b.Ref) })
	return changes, nil
}

// compareFiles returns the watched files that differ now: the watched directories
// first (one replaced by a symlink is one change, which puts back its files too), then
// the files, then the files that appeared in a watched directory.
func (s *Snapshot) compareFiles(repo *git.Repo) (changes []Change, err error) {
	seen := map[string]bool{}
	k := newKeeper()
	replaced := map[string]bool{} // directories whose change covers their files
	for _, then := range s.DirStates {
		root, rel := base(repo, then.Path)
		cur, err := k.read(then.Path, root, rel, &then)
		if err != nil {
			return nil, err
		}
		if then.same(cur) || then.Mode.IsDir() && cur.Mode.IsDir() && cur.Via == "" {
			continue // a directory still (its mode is not git's business)
		}
		if optionalGone(repo, then.Path) {
			continue
		}
		c := Change{File: then.Path, What: whatChanged(repo, then, cur), NowFile: cur, then: then, root: root, rel: rel, dir: true}
		if then.Mode.IsDir() {
			// Its files go back with it; the user's symlink to a directory, put back
			// as a link, leaves its files where they are, compared there below.
			for _, f := range s.Files {
				if filepath.Dir(f.Path) == then.Path {
					c.files = append(c.files, f)
				}
			}
			replaced[then.Path] = true
		}
		changes = append(changes, c)
	}
	for _, then := range s.Files {
		seen[then.Path] = true
		if replaced[filepath.Dir(then.Path)] {
			continue
		}
		root, rel := s.place(repo, then.Path)
		cur, err := k.read(then.Path, root, rel, &then)
		if err != nil {
			return nil, err
		}
		if then.same(cur) {
			continue
		}
		if optionalGone(repo, then.Path) {
			continue // that worktree or submodule was removed, with its files
		}
		changes = append(changes, Change{File: then.Path, What: whatChanged(repo, then, cur), NowFile: cur, then: then, root: root, rel: rel})
	}
	// A file that was not there in a directory whose every file is watched: the hooks
	// directory as recorded, info/, the submodules' hooks. Listed without following a
	// link to it (one there is a change of the directory, above).
	for _, dir := range s.dirs() {
		if replaced[dir] {
			continue
		}
		root, rel := s.dirPlace(repo, dir)
		entries, err := beneath.ReadDir(root, rel)
		if err != nil {
			continue
		}
		for _, e := range entries {
			p := filepath.Join(dir, e.Name())
			if seen[p] || e.IsDir() && dir != s.HooksDir || serverInfo(p, repo.CommonDir) {
				continue
			}
			seen[p] = true
			frel := filepath.Join(rel, e.Name())
			cur, err := k.read(p, root, frel, &File{Path: p})
			if err != nil {
				return nil, err
			}
			changes = append(changes, Change{File: p, What: "created", NowFile: cur, then: File{Path: p}, root: root, rel: frel})
		}
	}
	return changes, nil
}

// optionalGone reports whether path is in another worktree's or a submodule's git
// directory that is gone (git worktree remove): its files went with it.
func optionalGone(repo *git.Repo, path string) bool {
	root := optionalRoot(repo, path)
	if root == "" {
		return false
	}
	rel, err := beneath.Rel(repo.CommonDir, root)
	if err != nil {
		return false
	}
	_, err = beneath.Lstat(repo.CommonDir, rel)
	var way *beneath.WayError
	return errors.Is(err, fs.ErrNotExist) && !errors.As(err, &way)
}

// whatChanged says how cur differs from then: "deleted", "created", "mode changed",
// "replaced by a symlink" (a directory, or by a directory), "cut off (… is no longer a
// directory)", or "changed".
func whatChanged(repo *git.Repo, then, cur File) string {
	switch {
	case cur.Via != "" && then.Via == "":
		return "cut off (" + Change{File: cur.Via}.Name(repo.Root) + " is no longer a directory)"
	case !cur.Exists:
		return "deleted"
	case !then.Exists:
		return "created"
	case then.Mode.Type() != cur.Mode.Type() && (then.Mode.IsDir() || cur.Mode.IsDir()):
		return "replaced by " + beneath.Describe(cur.Mode)
	case then.Mode != cur.Mode && then.Link == cur.Link && bytes.Equal(then.Data, cur.Data) && then.Sum == cur.Sum:
		return "mode changed"
	}
	return "changed"
}

// dirs are the directories whose every file is watched: Dirs, or the hooks directory
// alone in a snapshot saved before Dirs was (a crash-resume across an upgrade).
func (s *Snapshot) dirs() []string {
	if s.only {
		return nil
	}
	if len(s.Dirs) == 0 {
		return []string{s.HooksDir}
	}
	return s.Dirs
}

// ConfigChanged reports whether any of changes is to a config file (the repository's,
// the global one, an include): the settings git-ralph read before it restored them were
// the agent's.
func ConfigChanged(changes []Change, s *Snapshot) bool {
	for _, c := range changes {
		if c.File == "" {
			continue
		}
		if len(s.Config) == 0 { // saved before Config was: all but hooks and info/
			if filepath.Dir(c.File) != filepath.Clean(s.HooksDir) && filepath.Base(filepath.Dir(c.File)) != "info" {
				return true
			}
		} else if slices.Contains(s.Config, c.File) {
			return true
		}
	}
	return false
}

// Loaded reports whether s was read back from disk (Load): a record the agent could have
// written, unlike one this process took.
func (s *Snapshot) Loaded() bool { return s.loaded }

// Outside reports whether putting c back would write outside the repository (its git
// directories and work tree): the user's global config, or what a symlink leads to
// elsewhere, or a file of a watched directory recorded as a symlink to one elsewhere. From a record the agent could have written (a crash-resume's), that would
// let it write such a file through git-ralph, which a sandbox keeps it from writing
// itself.
func (c Change) Outside(repo *git.Repo) bool {
	if c.File == "" {
		return false
	}
	return !inside(repo, c.File) || c.then.Target != "" && !inside(repo, c.then.Target) ||
		c.root != "" && !inside(repo, filepath.Join(c.root, c.rel))
}

// Reason is "tampered: <each ref or file that changed>", paths shown relative to root.
func Reason(changes []Change, root string) string {
	parts := make([]string, len(changes))
	for i, c := range changes {
		parts[i] = c.Name(root) + " " + c.What
	}
	return "tampered: " + strings.Join(parts, ", ")
}

// Name is the ref, or the file relative to root when it is inside it.
func (c Change) Name(root string) string {
	if c.Ref != "" {
		return Quote(c.Ref)
	}
	file := shown(root, c.File)
	if rel, err := filepath.Rel(root, file); err == nil && repofile.Inside(root, file) {
		return Quote(filepath.ToSlash(rel))
	}
	return Quote(file)
}

// shown is path as the user knows it: one in the git directory of the working tree
// root while an in-place run has it moved (internal/gitdir) is shown under root's .git.
func shown(root, path string) string {
	for _, home := range gitdir.Homes(root) {
		if rel, err := beneath.Rel(filepath.Join(home, ".git"), path); err == nil {
			return filepath.Join(root, ".git", rel)
		}
	}
	return path
}

// Quote returns name as it is when it is plain (printable, no space, quote or
// backslash), else Go-quoted: the agent names refs and hooks, and a name holding a
// newline would otherwise print a line of its own (a fake "✓ story 1: checkpoint").
func Quote(name string) string {
	for _, r := range name {
		if !unicode.IsPrint(r) || r == ' ' || r == '"' || r == '\\' {
			return strconv.Quote(name)
		}
	}
	return name
}

// Restore puts back what changes undid: the watched directories as they were, with
// their files, and the files byte for byte with their modes, then refs to their recorded
// values (deleted ones recreated; created ones, and the agent's value of a moved one,
// kept first under keepRefs + the ref's name without "refs/"). What the agent left where
// a watched file or directory is (a file, a symlink, a directory with all it holds) is
// moved into keepDir by rename, never followed, copied nor removed. A file it cannot put
// back does not stop the others: the error, a *RestoreError, names every one, and the
// refs are then left as they are (the git that puts them back reads the config and runs
// hooks, which must be the recorded ones). It returns one line per restored thing.
//
// It runs once every process of the attempt is gone (the loop kills them before any
// check), so nothing changes under it: the names it moves and writes are the ones
// Compare looked at.
func Restore(ctx context.Context, repo *git.Repo, changes []Change, keepRefs, keepDir string) ([]string, error) {
	var lines []string
	r := &restorer{repo: repo}
	r.keepRoot, r.keepRel = keepPlace(repo, keepDir)
	// Files first: the git that puts refs back runs hooks (reference-transaction) and
	// reads the config, which must be the recorded ones by then, not the agent's. A
	// directory made again before the files (one goes in it), the user's symlink to a
	// directory put back after them (its files are where it leads, and the agent's
	// versions of them are kept first).
	ordered := slices.Clone(changes)
	rank := func(c Change) int {
		switch {
		case c.dir && c.then.Mode.IsDir():
			return 0
		case c.dir:
			return 2
		}
		return 1
	}
	slices.SortStableFunc(ordered, func(a, b Change) int { return rank(a) - rank(b) })
	var failed []string
	for _, c := range ordered {
		if c.File == "" {
			continue
		}
		line, err := r.file(c)
		if err != nil {
			failed = append(failed, c.Name(repo.Root)+" ("+err.Error()+")")
			continue
		}
		lines = append(lines, line)
	}
	if len(failed) > 0 {
		e := &RestoreError{Failed: failed}
		for _, c := range changes {
			if c.Ref != "" {
				e.RefsLeft = append(e.RefsLeft, Quote(c.Ref))
			}
		}
		return lines, e
	}
	return restoreRefs(ctx, repo, changes, keepRefs, lines)
}

// MaxRefRestores is the most refs one Restore puts back: more is no agent's slip (a
// link loop in refs/ shows every ref again beneath it, thousands of times), and the
// restore stops and says what it found instead of working for hours.
const MaxRefRestores = 1000

// TooManyRefsError is Restore's refusal past MaxRefRestores: how many refs changed,
// and the first few.
type TooManyRefsError struct {
	N     int
	First []string
}

func (e *TooManyRefsError) Error() string {
	return fmt.Sprintf("%d refs changed during the attempt (%s, …), more than the %d git-ralph puts back; none was touched", e.N, strings.Join(e.First, ", "), MaxRefRestores)
}

// restoreRefs puts the refs of changes back in one transaction, the agent's values
// kept first under keepRefs; a symbolic ref, which a transaction cannot set, by its own
// git. It appends a line per ref to lines.
func restoreRefs(ctx context.Context, repo *git.Repo, changes []Change, keepRefs string, lines []string) ([]string, error) {
	var refs []Change
	for _, c := range changes {
		if c.Ref != "" {
			refs = append(refs, c)
		}
	}
	if len(refs) > MaxRefRestores {
		names := make([]string, 0, 5)
		for _, c := range refs[:5] {
			names = append(names, Quote(c.Ref)+" "+c.What)
		}
		return lines, &TooManyRefsError{N: len(refs), First: names}
	}
	kept := func(r git.RefWithSymref) string {
		if r.ID == "" || strings.Trim(r.ID, "0") == "" {
			return ""
		}
		return keepRefs + strings.TrimPrefix(r.Name, "refs/")
	}
	var ups []git.RefUpdate
	var symrefs []git.RefWithSymref
	put := func(r git.RefWithSymref) {
		if r.Symref != "" {
			symrefs = append(symrefs, r)
			return
		}
		ups = append(ups, git.RefUpdate{Name: r.Name, ID: r.ID})
	}
	var done []string
	for _, c := range refs {
		switch c.What {
		case "created":
			k := kept(c.Now)
			if k != "" {
				ups = append(ups, git.RefUpdate{Name: k, ID: c.Now.ID})
			}
			ups = append(ups, git.RefUpdate{Name: c.Ref}) // no-deref: a symbolic ref itself
			done = append(done, fmt.Sprintf("removed %s, which the agent created (kept as %s)", Quote(c.Ref), Quote(k)))
		case "deleted":
			put(c.Then)
			done = append(done, fmt.Sprintf("recreated %s at %s, which the agent deleted", Quote(c.Ref), describe(c.Then)))
		case "moved":
			k := kept(c.Now)
			if k != "" {
				ups = append(ups, git.RefUpdate{Name: k, ID: c.Now.ID})
			}
			put(c.Then)
			line := fmt.Sprintf("restored %s to %s (the agent had moved it to %s", Quote(c.Ref), describe(c.Then), describe(c.Now))
			if k != "" {
				line += ", kept as " + Quote(k)
			}
			done = append(done, line+")")
		}
	}
	if err := repo.UpdateRefs(ctx, ups); err != nil {
		if ctx.Err() != nil {
			return lines, ctx.Err()
		}
		// One transaction refuses what two steps allow (a ref to delete where a
		// directory of refs is to be made): one git per change then, still bounded.
		for _, u := range ups {
			if ctx.Err() != nil {
				return lines, ctx.Err()
			}
			var uerr error
			if u.ID == "" {
				uerr = repo.DeleteRefNoDeref(ctx, u.Name)
			} else {
				uerr = repo.UpdateRefNoDeref(ctx, u.Name, u.ID)
			}
			if uerr != nil {
				return lines, uerr
			}
		}
	}
	for _, r := range symrefs {
		if err := putRef(ctx, repo, r); err != nil {
			return lines, err
		}
	}
	return append(lines, done...), nil
}

// RestoreError names every watched file or directory a restore could not put back, and
// the refs it left as the agent left them.
type RestoreError struct {
	Failed   []string // "name (why)"
	RefsLeft []string
}

func (e *RestoreError) Error() string {
	msg := "could not put back " + strings.Join(e.Failed, "; ")
	if len(e.RefsLeft) > 0 {
		msg += "; the refs " + strings.Join(e.RefsLeft, ", ") + " are left as the agent left them until then (the git that puts them back would read what is not back)"
	}
	return msg
}

func putRef(ctx context.Context, repo *git.Repo, r git.RefWithSymref) error {
	if r.Symref != "" {
		return repo.SetSymbolicRef(ctx, r.Name, r.Symref)
	}
	return repo.UpdateRefNoDeref(ctx, r.Name, r.ID)
}

func describe(r git.RefWithSymref) string {
	if r.Symref != "" {
		return Quote(r.Symref)
	}
	if len(r.ID) > 7 {
		return r.ID[:7]
	}
	return r.ID
}

// restorer puts back the files of one Restore.
type restorer struct {
	repo              *git.Repo
	keepRoot, keepRel string // the keep directory, beneath keepRoot
}

// keepPlace is the keep directory as a root and a path beneath it: beneath the git
// common dir, where it is (.git/ralph/<change>/tampered/<id>); else its own parent.
func keepPlace(repo *git.Repo, keepDir string) (root, rel string) {
	if rel, err := beneath.Rel(repo.CommonDir, keepDir); err == nil {
		return filepath.Clean(repo.CommonDir), rel
	}
	return filepath.Dir(keepDir), filepath.Base(keepDir)
}

// file puts back one file or directory and returns its line.
func (r *restorer) file(c Change) (string, error) {
	if c.root == "" {
		c.root, c.rel = base(r.repo, c.File)
	}
	cur, then := c.NowFile, c.then
	// The same symlink: what it leads to is what changed.
	through := then.Exists && cur.Exists && then.Mode&fs.ModeSymlink != 0 && cur.Mode&fs.ModeSymlink != 0 && then.Link == cur.Link
	var kept, note string
	var err error
	switch {
	case cur.Via != "" && !c.dir:
		return "", fmt.Errorf("%s is no longer a directory, and git-ralph follows no symlink in the git directory: move it away, then run the command again", Change{File: cur.Via}.Name(r.repo.Root))
	case through && c.dir:
		return "", fmt.Errorf("what it leads to, %s, is no longer a directory, and git-ralph follows no symlink on its way", Quote(then.Target))
	case through && then.Target == "":
		return "", errors.New("it leads to something now that it did not lead to when recorded, and git-ralph removes nothing through a symlink: look at what it leads to, then remove it")
	case through:
		kept, note, err = r.keepTarget(c)
	case cur.Exists:
		kept, note, err = r.moveAside(c)
	}
	if err != nil {
		return "", err
	}
	if err := r.put(c); err != nil {
		return "", err
	}
	verb, did := "restored", map[string]string{"changed": "changed it", "mode changed": "changed its mode",
		"deleted": "deleted it", "created": "created it"}[c.What]
	if rest, ok := strings.CutPrefix(c.What, "replaced by "); ok {
		did = "replaced it by " + rest
	}
	if !then.Exists {
		verb = "removed"
	}
	name := c.Name(r.repo.Root)
	if through {
		name += " and what it leads to, " + Quote(then.Target) + ","
		did = "changed it through the link"
	}
	if c.dir && then.Mode.IsDir() {
		name += " as the directory it was, with its files,"
	}
	line := fmt.Sprintf("%s %s (the agent %s", verb, name, did)
	if kept != "" {
		line += "; its version is kept as " + Quote(shown(r.repo.Root, kept))
		if cur.Mode&fs.ModeSymlink != 0 && !through {
			line += ", a symlink, never followed"
		}
	}
	return line + note + ")", nil
}

// keepName is the name the agent's version of path is kept under in the keep
// directory: its path in the git directory, hooks/<name> for a hook of a hooks
// directory outside it, else its base name.
func (r *restorer) keepName(path string) string {
	if rel, err := beneath.Rel(r.repo.CommonDir, path); err == nil {
		return rel
	}
	if filepath.Base(filepath.Dir(path)) == "hooks" {
		return filepath.Join("hooks", filepath.Base(path))
	}
	return filepath.Base(path)
}

// free returns name, or name.2, name.3, … : the first that is free in the keep
// directory.
func (r *restorer) free(name string) string {
	for n := 1; ; n++ {
		try := name
		if n > 1 {
			try = fmt.Sprintf("%s.%d", name, n)
		}
		if _, err := beneath.Lstat(r.keepRoot, filepath.Join(r.keepRel, try)); errors.Is(err, fs.ErrNotExist) || n > 100 {
			return try
		}
	}
}

// moveAside moves what the agent left at c's place into the keep directory, by rename:
// a file (however large), a symlink (kept as one, never followed) or a directory with
// all it holds. Where the two are on different file systems (a file of the user's
// outside the repository), a file is kept by the copy the check read (none over
// MaxKept: the line says so) and a symlink made again; anything else is moved aside
// beside itself.
func (r *restorer) moveAside(c Change) (kept, note string, err error) {
	name := r.free(r.keepName(c.File))
	dst := filepath.Join(r.keepRel, name)
	full := filepath.Join(r.keepRoot, dst)
	err = beneath.Rename(c.root, c.rel, r.keepRoot, dst)
	if err == nil {
		return full, "", nil
	}
	if !errors.Is(err, syscall.EXDEV) {
		return "", "", err
	}
	cur := c.NowFile
	switch {
	case cur.Mode.IsRegular() && cur.Sum == "":
		if err := beneath.WriteFile(r.keepRoot, dst, cur.Data, 0o600); err != nil {
			return "", "", err
		}
		return full, "", beneath.Remove(c.root, c.rel)
	case cur.Mode&fs.ModeSymlink != 0:
		if err := beneath.Symlink(cur.Link, r.keepRoot, dst); err != nil {
			return "", "", err
		}
		return full, "", beneath.Remove(c.root, c.rel)
	case cur.Mode.IsRegular():
		aside, err := beneath.MoveAside(c.root, c.rel)
		if err != nil {
			return "", "", err
		}
		return "", fmt.Sprintf("; its version, over %d MiB, is not copied into git-ralph's keep: it is moved aside as %s", MaxKept>>20, Quote(filepath.Join(c.root, aside))), nil
	}
	aside, err := beneath.MoveAside(c.root, c.rel)
	if err != nil {
		return "", "", err
	}
	return filepath.Join(c.root, aside), "", nil
}

// keepTarget keeps the agent's version of what the symlink of c leads to (the link
// itself is the user's, as recorded): the copy the check read, as <name>.target, none
// past MaxKept (the line says so).
func (r *restorer) keepTarget(c Change) (kept, note string, err error) {
	cur := c.NowFile
	switch {
	case cur.TargetData != nil:
		dst := filepath.Join(r.keepRel, r.free(r.keepName(c.File)+".target"))
		if err := beneath.WriteFile(r.keepRoot, dst, cur.TargetData, 0o600); err != nil {
			return "", "", err
		}
		return filepath.Join(r.keepRoot, dst), "", nil
	case cur.TargetSum != "":
		return "", fmt.Sprintf("; its version, over %d MiB, is not kept", MaxKept>>20), nil
	}
	return "", "", nil
}

// put makes c's place what was recorded: a directory made again with its recorded
// files, a file written (through a temporary file and a rename, so a reader never sees
// half of it) with its mode, a symlink made again with what it led to as it was.
// Nothing is there any more (moveAside), or it is the user's symlink.
func (r *restorer) put(c Change) error {
	then := c.then
	if c.dir && then.Mode.IsDir() {
		if err := beneath.MkdirAll(c.root, c.rel, then.Mode.Perm()); err != nil {
			return err
		}
		var errs []error
		for _, f := range c.files {
			if err := putFile(f, c.root, filepath.Join(c.rel, filepath.Base(f.Path))); err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", filepath.Base(f.Path), err))
			}
		}
		return errors.Join(errs...)
	}
	return putFile(then, c.root, c.rel)
}

// putFile makes rel beneath root what f recorded; nothing when it did not exist.
func putFile(f File, root, rel string) error {
	switch {
	case !f.Exists:
		return nil
	case f.Sum != "":
		return fmt.Errorf("it was over %d MiB when recorded: git-ralph keeps no copy of a file that large to put back", MaxKept>>20)
	case f.Mode&fs.ModeSymlink != 0:
		if err := beneath.Symlink(f.Link, root, rel); err != nil {
			return err
		}
		return putTarget(f)
	case f.Mode.IsDir():
		return beneath.MkdirAll(root, rel, f.Mode.Perm())
	case f.Mode.IsRegular():
		return beneath.WriteFileMode(root, rel, f.Data, f.Mode.Perm())
	}
	return nil
}

// putTarget makes what the symlink f led to, by its recorded real path, what f recorded:
// a regular file's content and mode written back.
func putTarget(f File) error {
	if f.Target == "" || !f.TargetMode.IsRegular() {
		return nil
	}
	cur := File{Target: f.Target}
	if err := newKeeper().readTarget(&cur); err == nil && cur.TargetMode == f.TargetMode && bytes.Equal(cur.TargetData, f.TargetData) && cur.TargetSum == f.TargetSum {
		return nil
	}
	if f.TargetSum != "" {
		return fmt.Errorf("%s was over %d MiB when recorded: git-ralph keeps no copy of a file that large to put back", f.Target, MaxKept>>20)
	}
	root, rel := realPlace(f.Target)
	return beneath.WriteFileMode(root, rel, f.TargetData, f.TargetMode.Perm())
}

// MaxSaved is the most Load and Forged read of a saved snapshot: what it keeps of the
// files (MaxKeptTotal), as JSON, and the refs.
const MaxSaved = 4 * MaxKeptTotal

// Save writes s to path, a file beneath root (the git common dir), for a
// crash-resume, whole or not at all and following no symlink below root
// (internal/beneath); Load reads it back; a missing file is nil, nil.
func (s *Snapshot) Save(root, path string) error {
	b, err := json.Marshal(s)
	if err != nil {
		return err
	}
	rel, err := beneath.Rel(root, path)
	if err != nil {
		return err
	}
	if err := beneath.WriteFile(root, rel, b, 0o600); err != nil {
		return err
	}
	s.saved = b
	return nil
}

// readSaved reads path beneath root as Load and Forged do: at most MaxSaved, no link.
func readSaved(root, path string) ([]byte, error) {
	rel, err := beneath.Rel(root, path)
	if err != nil {
		return nil, err
	}
	return beneath.ReadFile(root, rel, MaxSaved)
}

// Forged returns the file at path when it is not what Save last wrote there (someone
// else wrote it), and nil when it is, or when s was never saved.
//
// A symlink there is no file (as removed: written again); one larger than MaxSaved is
// forged too, and none of it is returned (as removed).
func (s *Snapshot) Forged(root, path string) ([]byte, error) {
	if s.saved == nil {
		return nil, nil
	}
	have, err := readSaved(root, path)
	var big *beneath.TooLargeError
	if errors.Is(err, fs.ErrNotExist) || errors.As(err, &big) {
		return []byte{}, nil
	}
	if err != nil {
		return nil, err
	}
	if bytes.Equal(have, s.saved) {
		return nil, nil
	}
	return have, nil
}

// Recorded returns the file at path as the snapshot recorded it.
func (s *Snapshot) Recorded(path string) (File, bool) {
	for _, f := range s.Files {
		if f.Path == path {
			return f, true
		}
	}
	return File{}, false
}

// tooLargeHook is what the gate runs for a hook recorded by its sum alone (over
// MaxKept): it fails, saying why, rather than run a file git-ralph did not keep.
var tooLargeHook = []byte("#!/bin/sh\necho 'git-ralph: this hook is over 1 MiB; git-ralph runs the gate from a copy it keeps and keeps none that large' >&2\nexit 1\n")

// Runnable returns what git would run for the recorded file f as a hook: its content
// when it was an executable regular file, or what it led to when it was a symlink to
// one; ok is false when git would run nothing.
func (f File) Runnable() (content []byte, ok bool) {
	switch {
	case !f.Exists:
		return nil, false
	case f.Mode.IsRegular() && f.Mode.Perm()&0o111 != 0:
		if f.Sum != "" {
			return tooLargeHook, true
		}
		return f.Data, true
	case f.Mode&fs.ModeSymlink != 0 && f.TargetMode.IsRegular() && f.TargetMode.Perm()&0o111 != 0:
		if f.TargetSum != "" {
			return tooLargeHook, true
		}
		return f.TargetData, true
	}
	return nil, false
}

// Valid checks a snapshot read back from disk, which the agent could have written: its
// hooks directory, watched directories and files must all be ones git-ralph computes
// or watches now, so that a restore from a forged snapshot can neither run the agent's
// hooks nor write or remove any other file.
func (s *Snapshot) Valid(ctx context.Context, repo *git.Repo) error {
	hooks, err := repo.HooksDir(ctx)
	if err != nil {
		return err
	}
	def := filepath.Join(repo.CommonDir, "hooks")
	if !filepath.IsAbs(s.HooksDir) || !(git.SamePath(s.HooksDir, def) || git.SamePath(s.HooksDir, hooks)) {
		return fmt.Errorf("its hooks directory %q is neither %q nor %q", s.HooksDir, def, hooks)
	}
	w := watchList(repo, s.HooksDir, s.NoRefs)
	for _, d := range s.Dirs {
		if !slices.Contains(w.dirs, d) {
			return fmt.Errorf("it watches the directory %q, which git-ralph does not", d)
		}
	}
	for _, d := range s.DirStates {
		// (One recorded as a symlink to a directory outside the repository is read
		// there; a change found there is Outside, which a resume does not restore.)
		if !slices.Contains(s.Dirs, d.Path) {
			return fmt.Errorf("it records the directory %q, which git-ralph does not watch", d.Path)
		}
	}
	allowed := map[string]bool{}
	for _, p := range w.files {
		allowed[filepath.Clean(p)] = true
	}
	for _, p := range s.Config {
		if !allowed[p] {
			return fmt.Errorf("it names %q as config, which git-ralph does not watch", p)
		}
	}
	gitDirs := []string{filepath.Clean(repo.CommonDir), filepath.Clean(repo.GitDir)}
	for _, f := range s.Files {
		p := f.Path
		if !filepath.IsAbs(p) || filepath.Clean(p) != p {
			return fmt.Errorf("it names the file %q", p)
		}
		if slices.Contains(s.dirs(), filepath.Dir(p)) && filepath.Base(p) != ".." {
			continue // a file of a watched directory, maybe removed since
		}
		if !allowed[p] {
			return fmt.Errorf("it names the file %q, which git-ralph does not watch", p)
		}
		if !w.included[p] {
			continue
		}
		for _, d := range gitDirs {
			// An include the config names now, inside the git directory, among git's
			// own data (an object, a ref, the index, git-ralph's records) is no file to
			// restore from a record that may be forged.
			rel, err := filepath.Rel(d, p)
			if err != nil || !repofile.Inside(d, p) {
				continue
			}
			first, _, _ := strings.Cut(filepath.ToSlash(rel), "/")
			if gitData[first] {
				return fmt.Errorf("it names the file %q, which is git's own data", p)
			}
		}
	}
	return nil
}

// gitData are the names in a git directory that hold git's own data, never config.
var gitData = map[string]bool{
	"objects": true, "refs": true, "logs": true, "packed-refs": true, "index": true, "HEAD": true,
	"ORIG_HEAD": true, "FETCH_HEAD": true, "MERGE_HEAD": true, "shallow": true, "ralph": true,
	"worktrees": true, "modules": true, "lfs": true,
}

// Load reads a snapshot Save wrote beneath root; nil, nil when there is none.
func Load(root, path string) (*Snapshot, error) {
	b, err := readSaved(root, path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var s Snapshot
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	s.loaded = true
	return &s, nil
}

// Moved rewrites the paths s recorded beneath the git directory from (where it was
// when s was taken: an in-place run moves it out of the working tree while it works,
// internal/gitdir) to where it is now, to. Only a path in from changes.
func (s *Snapshot) Moved(from, to string) {
	if from == to {
		return
	}
	mv := func(p *string) {
		if rel, err := beneath.Rel(from, *p); err == nil {
			*p = filepath.Join(to, rel)
		} else if filepath.Clean(*p) == filepath.Clean(from) {
			*p = to
		}
	}
	file := func(f *File) {
		mv(&f.Path)
		if f.Target != "" {
			mv(&f.Target)
		}
		if f.Via != "" {
			mv(&f.Via)
		}
	}
	mv(&s.HooksDir)
	for i := range s.Dirs {
		mv(&s.Dirs[i])
	}
	for i := range s.Config {
		mv(&s.Config[i])
	}
	for i := range s.Files {
		file(&s.Files[i])
	}
	for i := range s.DirStates {
		file(&s.DirStates[i])
	}
}
