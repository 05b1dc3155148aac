package sandbox

import (
	"bufio"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"

	"golang.org/x/sys/unix"
)

// Refusal is a path the sandbox refused the agent: one it wrote outside what it may
// write, or read where it is hidden.
type Refusal struct {
	Path string
	Read bool // the path is hidden (a read refused); else a write outside Write
}

// maxRefusals bounds the refusals Refusals returns.
const maxRefusals = 3

// deniedLine matches what a refusal looks like in a tool's words: Landlock answers
// EACCES ("Permission denied", Node's "EACCES: permission denied, open '…'", Go's
// "…: permission denied") and, for a few operations, EPERM ("Operation not permitted").
var deniedLine = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?i)permission denied|EACCES|operation not permitted|EPERM`)
})

// absPath finds the absolute paths on a line: a '/' after a start, a space or a quote,
// up to a space, a quote, a colon, a comma, a bracket or a backslash (a JSON escape).
var absPath = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile("(?:^|[\\s'\"`‘’“”(\\[=])(/[^\\s'\"`‘’“”:,()\\[\\]\\\\]+)")
})

// Refusals reads the agent's log for the paths a denial names (deniedPaths) and keeps
// those only the sandbox can have refused: hidden by p, or outside every path the agent
// may write (p.Write, also) while git-ralph itself may write it (writableOutside). The
// agent's words alone never count. /proc, /sys and /dev (but /dev/shm) are left out; at
// most maxRefusals, in the order first seen.
func Refusals(p *Policy, also []string, log io.Reader) []Refusal {
	if p == nil {
		return nil
	}
	var out []Refusal
	seen := map[string]bool{}
	sc := bufio.NewScanner(log)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	for sc.Scan() && len(out) < maxRefusals {
		line := sc.Text()
		for _, path := range deniedPaths(line) {
			if seen[path] || len(out) >= maxRefusals {
				continue
			}
			seen[path] = true
			if r, ok := refused(p, also, path); ok {
				out = append(out, r)
			}
		}
	}
	return out
}

// deniedPaths are the paths a line says were denied: for each "permission denied" (or
// EACCES, EPERM) on it, the path right before it ("/x: Permission denied", "cannot
// touch '/x': Permission denied", Go's "open /x: permission denied"), else the one
// right after it (Node's "EACCES: permission denied, open '/x'", Python's
// "Permission denied: '/x'"). Other paths on the line (the shell's own "/bin/sh: 1:")
// are not it.
func deniedPaths(line string) []string {
	denials := deniedLine().FindAllStringIndex(line, -1)
	if denials == nil {
		return nil
	}
	paths := absPath().FindAllStringSubmatchIndex(line, -1)
	var out []string
	for _, d := range denials {
		pick := -1
		for i, m := range paths {
			if m[3] <= d[0] {
				pick = i // the last one before the denial
			}
		}
		if pick < 0 || !adjacent(line[paths[pick][3]:d[0]]) {
			pick = -1
			for i, m := range paths {
				if m[2] >= d[1] && adjacent(line[d[1]:m[2]]) {
					pick = i // the first one after it
					break
				}
			}
		}
		if pick >= 0 {
			out = append(out, filepath.Clean(strings.TrimRight(line[paths[pick][2]:paths[pick][3]], ".")))
		}
	}
	return out
}

// adjacent reports whether what lies between a path and a denial is only what the
// tools put there: quotes, colons, commas, brackets, spaces, and a short word or two
// ("open", "[Errno 13]").
func adjacent(between string) bool {
	return len(between) <= 24
}

// refused says whether the sandbox under p is what refused path.
func refused(p *Policy, also []string, path string) (Refusal, bool) {
	if Covers([]string{"/proc", "/sys", "/dev"}, path) && !Covers([]string{"/dev/shm"}, path) {
		return Refusal{}, false
	}
	if Covers(p.Hide, path) {
		return Refusal{Path: path, Read: true}, true
	}
	if Covers(p.Write, path) || Covers(also, path) {
		return Refusal{}, false
	}
	if !writableOutside(path) {
		return Refusal{}, false
	}
	return Refusal{Path: path}, true
}

// writableOutside probes, from outside the sandbox, whether path could be written: the
// path itself when it exists, else the nearest directory above it that does.
func writableOutside(path string) bool {
	for p := path; ; p = filepath.Dir(p) {
		_, err := os.Lstat(p)
		if err == nil {
			return unix.Access(p, unix.W_OK) == nil
		}
		if !errors.Is(err, fs.ErrNotExist) || p == filepath.Dir(p) {
			return false
		}
	}
}

// Allow is the directory to name in ralph.sandboxWritable so the agent may write
// r.Path: the path when it is a directory, else the nearest directory above it that
// exists (ralph.sandboxWritable takes paths that exist).
func (r Refusal) Allow() string {
	for p := r.Path; ; p = filepath.Dir(p) {
		if fi, err := os.Stat(p); err == nil && fi.IsDir() {
			return p
		}
		if p == filepath.Dir(p) {
			return p
		}
	}
}

// Describe is a refusal in a sentence, with the way to allow it.
func (r Refusal) Describe() string {
	if r.Read {
		return "the sandbox hid " + r.Path + " from the agent (a secret's place; ralph.sandboxHide and SECURITY MODEL say which)"
	}
	return "the sandbox refused the agent writing " + r.Path + " (outside what it may write; to allow it: git config --add ralph.sandboxWritable " + r.Allow() + ")"
}

// DescribeAll is the refusals in one sentence each, joined by "; ".
func DescribeAll(rs []Refusal) string {
	return strings.Join(slices.Collect(func(yield func(string) bool) {
		for _, r := range rs {
			if !yield(r.Describe()) {
				return
			}
		}
	}), "; ")
}
