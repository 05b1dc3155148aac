package git

import (
	"bytes"
	"context"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Nested repositories and git's add: add -A runs git status inside every gitlink that is
// a repository, with that repository's config, so AddAll first drops such gitlinks from the
// index and add puts each back at its HEAD, running nothing inside (docs/GIT.md,
// "Repositories nested in the work tree").

// indexEntry is one entry of an index file.
type indexEntry struct {
	name  []byte
	mode  uint32
	oid   []byte
	stage int
	// ext: the entry has extended flags (intent-to-add, skip-worktree), which
	// write-tree treats specially.
	ext bool
	// hidden: git add does not look at the entry's work-tree file (assume-valid, or
	// skip-worktree).
	hidden bool
}

// index is what readIndex reads of an index file: its entries in index order, and how
// long its object names are.
type index struct {
	entries []indexEntry
	hashLen int
}

// readIndex reads the index file at path (versions 2 to 4, SHA-1 or SHA-256) itself:
// the loop asks about it before and after every checkpoint, and a git process would
// cost more than the read. A missing file is an empty index. A split index
// (core.splitIndex) keeps entries elsewhere: errIndexFormat then, and the caller asks
// git.
func readIndex(path string) (*index, error) {
	data, err := readData(path)
	if errors.Is(err, fs.ErrNotExist) {
		return &index{hashLen: 20}, nil
	}
	if err != nil {
		return nil, err
	}
	for _, hashLen := range []int{20, 32} {
		if entries, err := parseIndex(data, hashLen); err == nil {
			return &index{entries: entries, hashLen: hashLen}, nil
		}
	}
	return nil, errIndexFormat
}

// readData reads the regular file at path whole (openData).
func readData(path string) ([]byte, error) {
	f, err := openData(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}

// gitlinks are the paths of the index's gitlinks (mode 160000), in index order.
func (x *index) gitlinks() []string {
	var links []string
	for _, e := range x.entries {
		if e.mode == gitlinkMode {
			links = append(links, string(e.name))
		}
	}
	return links
}

// errIndexFormat is an index readIndex cannot read alone, or whose tree it cannot
// compute as git would.
var errIndexFormat = errors.New("index format not read here")

const gitlinkMode = 0o160000

// parseIndex walks the entries of an index whose object names are hashLen bytes long;
// any inconsistency (a name length that does not fit, entries running into the
// checksum, a split index's "link" extension) is errIndexFormat.
func parseIndex(data []byte, hashLen int) ([]indexEntry, error) {
	if len(data) < 12+hashLen || string(data[:4]) != "DIRC" {
		return nil, errIndexFormat
	}
	version := binary.BigEndian.Uint32(data[4:8])
	if version < 2 || version > 4 {
		return nil, errIndexFormat
	}
	count := int(binary.BigEndian.Uint32(data[8:12]))
	end := len(data) - hashLen // the checksum
	entries := make([]indexEntry, 0, min(count, len(data)/62))
	var prev []byte
	off := 12
	for range count {
		start := off
		fixed := 40 + hashLen + 2
		if off+fixed > end {
			return nil, errIndexFormat
		}
		e := indexEntry{mode: binary.BigEndian.Uint32(data[off+24 : off+28]), oid: data[off+40 : off+40+hashLen]}
		flags := binary.BigEndian.Uint16(data[off+40+hashLen : off+fixed])
		e.stage = int(flags>>12) & 3
		e.hidden = flags&0x8000 != 0 // assume-valid
		off += fixed
		if flags&0x4000 != 0 { // extended flags
			if version < 3 || off+2 > end {
				return nil, errIndexFormat
			}
			e.ext = true
			e.hidden = e.hidden || binary.BigEndian.Uint16(data[off:off+2])&0x4000 != 0 // skip-worktree
			off += 2
		}
		if version == 4 {
			strip, n := gitVarint(data[off:end])
			if n <= 0 || strip > len(prev) {
				return nil, errIndexFormat
			}
			off += n
			nul := bytes.IndexByte(data[off:end], 0)
			if nul < 0 {
				return nil, errIndexFormat
			}
			e.name = append(append([]byte(nil), prev[:len(prev)-strip]...), data[off:off+nul]...)
			off += nul + 1
		} else {
			nul := bytes.IndexByte(data[off:end], 0)
			if nul < 0 {
				return nil, errIndexFormat
			}
			e.name = data[off : off+nul]
			// 1 to 8 NULs pad the entry to a multiple of 8 bytes.
			off = start + (off-start+nul+8)&^7
			if off > end {
				return nil, errIndexFormat
			}
		}
		if l := int(flags & 0xfff); (l < 0xfff && l != len(e.name)) || (l == 0xfff && len(e.name) < 0xfff) {
			return nil, errIndexFormat
		}
		prev = e.name
		entries = append(entries, e)
	}
	// Extensions: a 4-byte signature and a 4-byte size each, up to the checksum.
	for off+8 <= end {
		sig := string(data[off : off+4])
		size := int(binary.BigEndian.Uint32(data[off+4 : off+8]))
		if sig == "link" { // split index: the shared index holds entries too
			return nil, errIndexFormat
		}
		off += 8 + size
	}
	if off != end {
		return nil, errIndexFormat
	}
	return entries, nil
}

// tree computes the id of the tree git write-tree would write for the index, without
// writing it: a tree object per directory, its entries in git's order (a directory
// sorts as its name and a '/', which is the order the index keeps paths in), each
// "<mode in octal> <name>\0<id>", hashed as "tree <size>\0" and the entries. An index
// with unmerged entries, extended flags (intent-to-add, skip-worktree) or sparse
// directories is errIndexFormat: git is asked.
func (x *index) tree() (string, error) {
	for _, e := range x.entries {
		if e.stage != 0 || e.ext || e.mode&0o170000 == 0o040000 {
			return "", errIndexFormat
		}
	}
	newHash := sha1.New
	if x.hashLen == 32 {
		newHash = sha256.New
	}
	var build func(entries []indexEntry, prefix int) ([]byte, error)
	build = func(entries []indexEntry, prefix int) ([]byte, error) {
		var body bytes.Buffer
		for i := 0; i < len(entries); {
			rest := entries[i].name[prefix:]
			if slash := bytes.IndexByte(rest, '/'); slash >= 0 {
				dir := rest[:slash+1]
				j := i + 1
				for j < len(entries) && bytes.HasPrefix(entries[j].name[prefix:], dir) {
					j++
				}
				sub, err := build(entries[i:j], prefix+len(dir))
				if err != nil {
					return nil, err
				}
				body.WriteString("40000 ")
				body.Write(dir[:len(dir)-1])
				body.WriteByte(0)
				body.Write(sub)
				i = j
				continue
			}
			if len(rest) == 0 {
				return nil, errIndexFormat
			}
			body.WriteString(strconv.FormatUint(uint64(entries[i].mode), 8))
			body.WriteByte(' ')
			body.Write(rest)
			body.WriteByte(0)
			body.Write(entries[i].oid)
			i++
		}
		h := newHash()
		fmt.Fprintf(h, "tree %d\x00", body.Len())
		h.Write(body.Bytes())
		return h.Sum(nil), nil
	}
	id, err := build(x.entries, 0)
	if err != nil {
		return "", err
	}
	return hex.EncodeToString(id), nil
}

// gitVarint decodes git's varint (varint.c: big-endian groups of 7 bits, each
// continuation adding one), returning the value and the bytes read; n is 0 when b
// holds no whole value or it is too large.
func gitVarint(b []byte) (v, n int) {
	for i, c := range b {
		if i > 0 {
			v++
		}
		if v > 1<<24 {
			return 0, 0
		}
		v = v<<7 | int(c&127)
		if c&128 == 0 {
			return v, i + 1
		}
	}
	return 0, 0
}

// gitlinks lists the gitlinks of the index at indexPath (the repository's own when
// ""), from the file when it can, else from `git ls-files -s`.
func (r *Repo) gitlinks(ctx context.Context, indexPath string) ([]string, error) {
	file := indexPath
	if file == "" {
		file = filepath.Join(r.GitDir, "index")
	}
	x, err := readIndex(file)
	if err == nil {
		return x.gitlinks(), nil
	}
	if !errors.Is(err, errIndexFormat) {
		return nil, err
	}
	c := call{readOnly: true, args: []string{"ls-files", "-s", "-z"}}
	if indexPath != "" {
		c.env = []string{"GIT_INDEX_FILE=" + indexPath}
	}
	out, err := r.run(ctx, c)
	if err != nil {
		return nil, err
	}
	return gitlinkRecords(out), nil
}

// gitlinkRecords are the paths of the gitlinks among ls-files -s -z or ls-tree -z
// records ("<mode> <…>\t<path>\0").
func gitlinkRecords(out []byte) []string {
	var links []string
	for rec := range strings.SplitSeq(string(out), "\x00") {
		meta, path, ok := strings.Cut(rec, "\t")
		if ok && strings.HasPrefix(meta, "160000 ") {
			links = append(links, path)
		}
	}
	return links
}

// StagedTree returns the id of the tree the repository's index holds (what git
// write-tree would write, computed without a process when the index is plain, else
// asked of git) and its gitlinks: what a commit of the index now would hold.
func (r *Repo) StagedTree(ctx context.Context) (tree string, gitlinks []string, err error) {
	x, err := readIndex(filepath.Join(r.GitDir, "index"))
	if err == nil {
		if tree, err = x.tree(); err == nil {
			return tree, x.gitlinks(), nil
		}
	}
	if !errors.Is(err, errIndexFormat) {
		return "", nil, err
	}
	if tree, err = r.IndexTree(ctx); err != nil {
		return "", nil, err
	}
	gitlinks, err = r.gitlinks(ctx, "")
	return tree, gitlinks, err
}

// GitlinksIn returns those of paths that are gitlinks in commit's tree.
func (r *Repo) GitlinksIn(ctx context.Context, commit string, paths []string) ([]string, error) {
	if err := checkArg("commit", commit); err != nil {
		return nil, err
	}
	if len(paths) == 0 {
		return nil, nil
	}
	out, err := r.run(ctx, call{readOnly: true, env: []string{"GIT_LITERAL_PATHSPECS=1"},
		args: append([]string{"ls-tree", "-z", "--full-tree", commit, "--"}, paths...)})
	if err != nil {
		return nil, err
	}
	return gitlinkRecords(out), nil
}

// dropNestedGitlinks removes from the index at indexPath ("" for the repository's own)
// every gitlink whose path in the work tree holds a repository, so that the add -A that
// follows records each at its HEAD without running git inside it (see the comment at
// the top of this file). It costs a git call only when there is such a gitlink.
func (r *Repo) dropNestedGitlinks(ctx context.Context, indexPath string) error {
	links, err := r.gitlinks(ctx, indexPath)
	if err != nil || len(links) == 0 {
		return err
	}
	var drop bytes.Buffer
	for _, p := range links {
		if _, err := os.Lstat(filepath.Join(r.Root, filepath.FromSlash(p), ".git")); err == nil {
			drop.WriteString(p)
			drop.WriteByte(0)
		}
	}
	if drop.Len() == 0 {
		return nil
	}
	c := call{args: []string{"update-index", "--force-remove", "-z", "--stdin"}, stdin: drop.Bytes()}
	if indexPath != "" {
		c.env = []string{"GIT_INDEX_FILE=" + indexPath}
	}
	_, err = r.run(ctx, c)
	return err
}

// HiddenEntries are the paths of the index's entries whose work-tree file git add -A
// does not look at: assume-unchanged or skip-worktree. Read from the index file, or
// asked of git (ls-files -v) for one this package does not read.
func (r *Repo) HiddenEntries(ctx context.Context) ([]string, error) {
	x, err := readIndex(filepath.Join(r.GitDir, "index"))
	if err == nil {
		var out []string
		for _, e := range x.entries {
			if e.hidden {
				out = append(out, string(e.name))
			}
		}
		return out, nil
	}
	if !errors.Is(err, errIndexFormat) {
		return nil, err
	}
	b, err := r.run(ctx, call{readOnly: true, args: []string{"ls-files", "-v", "-z"}})
	if err != nil {
		return nil, err
	}
	var out []string
	for rec := range bytes.SplitSeq(b, []byte{0}) {
		if len(rec) > 2 && (rec[0] == 'S' || rec[0] >= 'a' && rec[0] <= 'z') {
			out = append(out, string(rec[2:]))
		}
	}
	return out, nil
}

// Unhide clears the assume-unchanged and skip-worktree bits of paths in the index, so
// that git add -A takes their work-tree files as they are.
func (r *Repo) Unhide(ctx context.Context, paths []string) error {
	if len(paths) == 0 {
		return nil
	}
	var in bytes.Buffer
	for _, p := range paths {
		in.WriteString(p)
		in.WriteByte(0)
	}
	// update-index takes one such option per call.
	for _, opt := range []string{"--no-assume-unchanged", "--no-skip-worktree"} {
		if _, err := r.run(ctx, call{args: []string{"update-index", opt, "-z", "--stdin"}, stdin: in.Bytes()}); err != nil {
			return err
		}
	}
	return nil
}
