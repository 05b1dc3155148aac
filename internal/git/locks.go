package git

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/git-ralph/git-ralph/internal/beneath"
)

// LockCheck says which of git's lock files ClearStaleLocks looks for, and how long it
// waits for one that may still be in use.
type LockCheck struct {
	// Branches are short branch names (ralph/x, main) whose ref locks count.
	Branches []string
	// RefDirs are ref namespaces (refs/ralph/x) under which every lock counts.
	RefDirs []string
	// Also are other worktrees of the repository whose own locks (index.lock,
	// HEAD.lock, ORIG_HEAD.lock, temporary indexes) count too, judged together with
	// this one's: nothing is removed anywhere while any of them is in use.
	Also []*Repo

	// MinAge: a lock younger than this may belong to a git between two of its
	// writes (git closes a ref lock before it renames it), so it is never stale.
	// Zero means DefaultLockMinAge.
	MinAge time.Duration
	// Wait bounds how long a lock that is in use, or too young, is waited for.
	// Zero means DefaultLockWait.
	Wait time.Duration
	// Poll is the pause between two looks; zero means 100ms.
	Poll time.Duration
	// Proc is where the process table is read; "" means /proc. Tests point it at
	// a directory without one to get the behaviour of systems without /proc.
	Proc string
	// PartialMinAge: where the process table cannot show every process that may
	// use the repository (git-ralph in a PID namespace of its own, /proc mounted
	// with hidepid), a lock is removed only when it is older than this: a git
	// holding it may be invisible. Zero means DefaultPartialLockAge.
	PartialMinAge time.Duration
}

// The defaults of LockCheck: "a few seconds".
const (
	DefaultLockMinAge = 2 * time.Second
	DefaultLockWait   = 5 * time.Second
)

// DefaultPartialLockAge is how old a lock must be to be removed when the process table
// is partial. git holds a lock for milliseconds, except while it waits for a person:
// `git commit` keeps index.lock, `git config --edit` config.lock, for as long as the
// editor is open. An hour covers an editor left open over a meeting; a crash-resume
// sooner than that gets the rm command to run by hand, as where there is no /proc.
const DefaultPartialLockAge = time.Hour

// LockHeldError is returned by ClearStaleLocks when a lock file is in use: a live
// process has it open, or (Open false) a git process is running in this repository,
// which may hold a lock it has closed between writes (git commit while the editor is
// open holds index.lock that way). Nothing was removed.
type LockHeldError struct {
	Name    string // the lock as shown to the user, e.g. .git/index.lock
	Path    string // absolute
	PID     int    // the process; 0 when the lock was only ever too young
	Command string // its command line, shortened
	Open    bool   // the process has the file open
}

func (e *LockHeldError) Error() string {
	switch {
	case e.PID == 0:
		return fmt.Sprintf("%s keeps being created again", e.Name)
	case e.Open:
		return fmt.Sprintf("%s is held by a running process: pid %d (%s)", e.Name, e.PID, e.Command)
	}
	return fmt.Sprintf("%s may be in use: git is running in this repository as pid %d (%s)", e.Name, e.PID, e.Command)
}

// LockUnknownError is returned by ClearStaleLocks where the process table cannot be
// read (no /proc): whether a git still uses the locks cannot be told, so none is
// removed.
type LockUnknownError struct {
	Names []string // as shown to the user
	Paths []string // absolute
	// Why says why the process table could not tell, when there is one: it is
	// partial ("git-ralph runs in a PID namespace of its own …").
	Why string
}

func (e *LockUnknownError) Error() string {
	var s string
	if len(e.Names) == 1 {
		s = fmt.Sprintf("%s exists and git-ralph cannot tell whether a git command still uses it", e.Names[0])
	} else {
		s = fmt.Sprintf("%s exist and git-ralph cannot tell whether a git command still uses them", strings.Join(e.Names, ", "))
	}
	if e.Why != "" {
		s += ": " + e.Why
	}
	return s
}

// RmCommand is the shell command that removes the locks, for the user to run.
func (e *LockUnknownError) RmCommand() string {
	q := make([]string, len(e.Paths))
	for i, p := range e.Paths {
		q[i] = shellQuote(p)
	}
	return "rm " + strings.Join(q, " ")
}

// lockFile is one lock file found.
type lockFile struct {
	name, path string // display name, absolute path
	real       string // path with symlinks resolved, as /proc shows it
	info       fs.FileInfo
	// root and rel: where it is reached, beneath a git directory with no symlink on
	// the way (internal/beneath): a link the agent put in place of refs/heads is not
	// followed to remove a *.lock of elsewhere.
	root, rel string
}

// ClearStaleLocks removes the lock files a killed git left here (commonLeftovers,
// worktreeLeftovers, the locks of c.Branches, c.RefDirs and git-ralph's temporary indexes)
// and returns their names. For a crash-resume only: a lock goes when no process has it open,
// no git runs here and it is older than c.MinAge; one in use is waited for up to c.Wait, then
// nothing goes (*LockHeldError); without a full process table, *LockUnknownError. Why:
// docs/GIT.md, "Locks a killed git leaves".
func (r *Repo) ClearStaleLocks(ctx context.Context, c LockCheck) ([]string, error) {
	minAge, wait, poll, proc := c.MinAge, c.Wait, c.Poll, c.Proc
	if minAge <= 0 {
		minAge = DefaultLockMinAge
	}
	if wait <= 0 {
		wait = DefaultLockWait
	}
	wait = max(wait, minAge+minAge/2) // a young lock must get the chance to grow old
	if poll <= 0 {
		poll = 100 * time.Millisecond
	}
	if proc == "" {
		proc = "/proc"
	}
	deadline := time.Now().Add(wait)
	for {
		locks, err := r.findLocks(c)
		if err != nil {
			return nil, err
		}
		if len(locks) == 0 {
			r.sweepAll(c)
			return nil, nil
		}
		pt, ok := readProcTable(proc)
		if !ok {
			e := &LockUnknownError{}
			for _, l := range locks {
				e.Names, e.Paths = append(e.Names, l.name), append(e.Paths, l.path)
			}
			return nil, e
		}
		if pt.partial != "" {
			// Invisible processes may hold any of them: only old locks go, and
			// only when every one is old.
			partialAge := c.PartialMinAge
			if partialAge <= 0 {
				partialAge = DefaultPartialLockAge
			}
			e := &LockUnknownError{Why: pt.partial + fmt.Sprintf("; locks older than %s are removed", partialAge)}
			for _, l := range locks {
				if time.Since(l.info.ModTime()) < partialAge {
					e.Names, e.Paths = append(e.Names, l.name), append(e.Paths, l.path)
				}
			}
			if len(e.Names) > 0 {
				return nil, e
			}
		}
		var held *LockHeldError
		young, youngPath := "", ""
		for _, l := range locks {
			if p, ok := pt.open[l.real]; ok {
				held = &LockHeldError{Name: l.name, Path: l.path, PID: p.pid, Command: p.cmd, Open: true}
				break
			}
			if time.Since(l.info.ModTime()) < minAge && young == "" {
				young, youngPath = l.name, l.path
			}
		}
		if held == nil {
			dirs := r.realDirs()
			for _, o := range c.Also {
				dirs = append(dirs, o.realDirs()...)
			}
			if p, ok := pt.gitIn(dirs); ok {
				held = &LockHeldError{Name: locks[0].name, Path: locks[0].path, PID: p.pid, Command: p.cmd}
			}
		}
		if held == nil && young == "" {
			removed, err := removeLocks(locks)
			if err == nil {
				r.sweepAll(c)
			}
			return removed, err
		}
		if !time.Now().Before(deadline) {
			if held == nil {
				held = &LockHeldError{Name: young, Path: youngPath}
			}
			return nil, held
		}
		t := time.NewTimer(poll)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, ctx.Err()
		case <-t.C:
		}
	}
}

// sweepAll sweeps the temporary indexes of dead git-ralph processes in every worktree c
// looks at.
func (r *Repo) sweepAll(c LockCheck) {
	sweepTempIndexes(r.GitDir)
	for _, o := range c.Also {
		sweepTempIndexes(o.GitDir)
	}
}

// removeLocks removes locks, each only if it is still the file that was judged stale.
func removeLocks(locks []lockFile) ([]string, error) {
	var names []string
	for _, l := range locks {
		now, err := beneath.Lstat(l.root, l.rel)
		if err != nil || !beneath.SameFile(now, l.info) || !now.ModTime().Equal(l.info.ModTime()) {
			continue // gone, or replaced by a new one since: not ours to remove
		}
		if err := beneath.Remove(l.root, l.rel); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return names, fmt.Errorf("remove stale lock %s: %w", l.name, err)
		}
		names = append(names, l.name)
	}
	return names, nil
}

// The files of fixed name a git killed in one of the commands git-ralph runs leaves
// behind, each of which makes every later git that needs it fail ("File exists"):
// those of a worktree's git directory and those of the common one. Locks of refs and
// of temporary indexes are found by findLocks on top. docs/DESIGN-LOG.md ("what a killed git
// leaves") lists what git 2.39 creates in those commands and why the rest is left.
var (
	worktreeLeftovers = []string{
		"index.lock",     // add, checkout, commit, merge, read-tree, reset, rm, write-tree
		"HEAD.lock",      // every ref update that moves HEAD (commit, checkout -B, reset)
		"ORIG_HEAD.lock", // reset, merge
		"MERGE_RR.lock",  // rerere, taken by every commit and merge where rerere is on
	}
	commonLeftovers = []string{
		// packed-refs.new before its lock: a git that takes the lock the moment it is
		// gone must not meet the old tempfile.
		"packed-refs.new",  // the rewrite of packed-refs under packed-refs.lock
		"packed-refs.lock", // every ref deletion (branch -D, update-ref -d)
		"config.lock",      // config --local, branch -D (its branch.<name> section)
		// The auto maintenance that commit, merge and fetch start (git maintenance run
		// --auto, a child git) takes objects/maintenance.lock every time, even with
		// gc.auto=0: left behind, no maintenance ever runs again, silently. When it
		// does run a gc: gc.pid.lock, gc.log.lock (held through a detached gc), the
		// commit-graph's lock, and pack-refs' packed-refs.lock and .new.
		"objects/maintenance.lock",
		"gc.pid.lock",
		"gc.log.lock",
		"objects/info/commit-graph.lock",
	}
)

// isLeftover reports whether an open file (a /proc fd target) may be one of the files
// findLocks looks for.
func isLeftover(path string) bool {
	return strings.HasSuffix(path, ".lock") || filepath.Base(path) == "packed-refs.new"
}

// findLocks lists the lock files and leftovers of c that exist now.
func (r *Repo) findLocks(c LockCheck) ([]lockFile, error) {
	var paths []string
	gitDirs := []string{r.GitDir}
	for _, o := range c.Also {
		gitDirs = append(gitDirs, o.GitDir)
	}
	for _, d := range gitDirs {
		for _, n := range worktreeLeftovers {
			paths = append(paths, filepath.Join(d, n))
		}
	}
	for _, n := range commonLeftovers {
		paths = append(paths, filepath.Join(r.CommonDir, filepath.FromSlash(n)))
	}
	for _, b := range c.Branches {
		if b != "" && checkArg("branch name", b) == nil && !strings.Contains(b, "..") {
			paths = append(paths, filepath.Join(r.CommonDir, "refs", "heads", filepath.FromSlash(b)+".lock"))
		}
	}
	for _, d := range gitDirs {
		if entries, err := os.ReadDir(d); err == nil {
			for _, e := range entries {
				if strings.HasPrefix(e.Name(), tempIndexPrefix) && strings.HasSuffix(e.Name(), ".lock") {
					paths = append(paths, filepath.Join(d, e.Name()))
				}
			}
		}
	}
	for _, d := range c.RefDirs {
		if !strings.HasPrefix(d, "refs/") || strings.Contains(d, "..") {
			continue
		}
		root := filepath.Join(r.CommonDir, filepath.FromSlash(d))
		_ = filepath.WalkDir(root, func(p string, e fs.DirEntry, err error) error {
			if err == nil && !e.IsDir() && strings.HasSuffix(p, ".lock") {
				paths = append(paths, p)
			}
			return nil
		})
	}
	var locks []lockFile
	seen := map[string]bool{}
	for _, p := range paths {
		if seen[p] {
			continue
		}
		seen[p] = true
		root, rel, ok := lockPlace(p, append([]string{r.CommonDir}, gitDirs...))
		if !ok {
			continue
		}
		info, err := beneath.Lstat(root, rel)
		if errors.Is(err, fs.ErrNotExist) {
			continue // or a symlink on its way
		}
		if err != nil {
			return nil, fmt.Errorf("look for git lock files: %w", err)
		}
		if !info.Mode().IsRegular() {
			continue
		}
		real := p
		if dir, err := filepath.EvalSymlinks(filepath.Dir(p)); err == nil {
			real = filepath.Join(dir, filepath.Base(p))
		}
		locks = append(locks, lockFile{name: r.displayPath(p), path: p, real: real, info: info, root: root, rel: rel})
	}
	return locks, nil
}

// lockPlace is p beneath the first of dirs it is in.
func lockPlace(p string, dirs []string) (root, rel string, ok bool) {
	for _, d := range dirs {
		if rel, err := beneath.Rel(d, p); err == nil {
			return d, rel, true
		}
	}
	return "", "", false
}

// displayPath shows p relative to the worktree root when it is inside it
// (.git/index.lock), else in full.
func (r *Repo) displayPath(p string) string {
	p = r.Shown(p)
	if rel, err := filepath.Rel(r.Root, p); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return filepath.ToSlash(rel)
	}
	return p
}

// realDirs are the directories a git working on this repository has as its working
// directory: the worktree root (git moves there from a subdirectory) and the git
// directories, with symlinks resolved.
func (r *Repo) realDirs() []string {
	var dirs []string
	for _, d := range []string{r.Root, r.GitDir, r.CommonDir} {
		if real, err := filepath.EvalSymlinks(d); err == nil {
			d = real
		}
		dirs = append(dirs, d)
	}
	return dirs
}

// procInfo is a live process.
type procInfo struct {
	pid int
	cmd string
}

// procTable is what the process table says about files and git processes.
type procTable struct {
	open map[string]procInfo // lock or leftover path → a process that has it open
	gits []gitProc           // git processes, other than this one's ancestors
	// partial says why the table may not show every process that can use the
	// repository; "" when it shows them all.
	partial string
}

// initPIDNamespace is the inode of the kernel's initial PID namespace
// (PROC_PID_INIT_INO): /proc/self/ns/pid reads "pid:[4026531836]" there.
const initPIDNamespace = "pid:[4026531836]"

// partialProc says why the proc directory cannot show every process: git-ralph runs in
// a PID namespace other than the initial one (a container: the host's processes, and
// those of other containers sharing the repository, are invisible), or /proc is mounted
// with hidepid (other users' processes, root's included, are invisible). "" when neither.
func partialProc(proc string) string {
	if ns, err := os.Readlink(filepath.Join(proc, "self", "ns", "pid")); err != nil || ns != initPIDNamespace {
		return "git-ralph runs in a PID namespace of its own (a container?), where a git outside it cannot be seen"
	}
	if mi, err := os.ReadFile(filepath.Join(proc, "self", "mountinfo")); err == nil {
		for line := range strings.SplitSeq(string(mi), "\n") {
			// "id parent maj:min root mountpoint opts … - fstype source superopts"
			f := strings.Fields(line)
			if len(f) < 5 || f[4] != proc {
				continue
			}
			_, post, ok := strings.Cut(line, " - ")
			if pf := strings.Fields(post); ok && len(pf) >= 3 && pf[0] == "proc" {
				for opt := range strings.SplitSeq(pf[2], ",") {
					if v, ok := strings.CutPrefix(opt, "hidepid="); ok && v != "0" && v != "off" {
						return "/proc is mounted with hidepid, which hides other users' processes"
					}
				}
			}
		}
	}
	return ""
}

type gitProc struct {
	procInfo
	cwd string
}

// gitIn returns a git process whose working directory is one of dirs or below.
func (pt procTable) gitIn(dirs []string) (procInfo, bool) {
	for _, g := range pt.gits {
		for _, d := range dirs {
			if g.cwd == d || strings.HasPrefix(g.cwd, d+string(filepath.Separator)) {
				return g.procInfo, true
			}
		}
	}
	return procInfo{}, false
}

// readProcTable reads every process's open files and the git processes from a
// Linux-style proc directory. It reports false when there is none. Processes of other
// users, which cannot be read, are skipped: they cannot write to this repository's
// locks either, unless they are root, whose git would have to be waited for by hand.
// This process and its ancestors (the `git ralph` that started it) are left out.
func readProcTable(proc string) (procTable, bool) {
	pt := procTable{open: map[string]procInfo{}}
	selfLink, err := os.Readlink(filepath.Join(proc, "self"))
	if err != nil {
		return pt, false
	}
	if _, err := os.Stat(filepath.Join(proc, "self", "fd")); err != nil {
		return pt, false
	}
	pt.partial = partialProc(proc)
	self, _ := strconv.Atoi(selfLink)
	skip := map[int]bool{}
	for pid := self; pid > 1 && !skip[pid]; pid = parentPID(proc, pid) {
		skip[pid] = true
	}
	entries, err := os.ReadDir(proc)
	if err != nil {
		return pt, false
	}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || skip[pid] {
			continue
		}
		dir := filepath.Join(proc, e.Name())
		fds, err := os.ReadDir(filepath.Join(dir, "fd"))
		if err != nil {
			continue
		}
		var p *procInfo
		info := func() procInfo {
			if p == nil {
				p = &procInfo{pid: pid, cmd: cmdline(dir)}
			}
			return *p
		}
		for _, fd := range fds {
			target, err := os.Readlink(filepath.Join(dir, "fd", fd.Name()))
			if err == nil && isLeftover(target) {
				pt.open[target] = info()
			}
		}
		if comm, err := os.ReadFile(filepath.Join(dir, "comm")); err == nil && strings.TrimSpace(string(comm)) == "git" {
			if cwd, err := os.Readlink(filepath.Join(dir, "cwd")); err == nil {
				pt.gits = append(pt.gits, gitProc{procInfo: info(), cwd: cwd})
			}
		}
	}
	return pt, true
}

// parentPID reads a process's parent from its stat line; 0 when it cannot.
func parentPID(proc string, pid int) int {
	stat, err := os.ReadFile(filepath.Join(proc, strconv.Itoa(pid), "stat"))
	if err != nil {
		return 0
	}
	// "pid (comm) state ppid …"; comm may hold spaces and parentheses.
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(string(stat[i+1:]))
	if len(f) < 2 {
		return 0
	}
	ppid, _ := strconv.Atoi(f[1])
	return ppid
}

// cmdline is a process's command line, NULs as spaces, shortened for a message.
func cmdline(dir string) string {
	data, err := os.ReadFile(filepath.Join(dir, "cmdline"))
	if err != nil || len(data) == 0 {
		if comm, err := os.ReadFile(filepath.Join(dir, "comm")); err == nil {
			return strings.TrimSpace(string(comm))
		}
		return "?"
	}
	s := strings.TrimSpace(string(bytes.ReplaceAll(bytes.TrimRight(data, "\x00"), []byte{0}, []byte{' '})))
	if r := []rune(s); len(r) > 120 {
		s = string(r[:117]) + "..."
	}
	return s
}
