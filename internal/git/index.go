package git

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Nested repositories and git's add.
//
// `git add -A` checks every gitlink of the index whose work tree is a repository for
// changes inside it by running `git status` there (is_submodule_modified), and that git
// reads the nested repository's own config and .gitattributes: a clean filter or a
// core.fsmonitor the agent wrote in sub/.git/config runs in git-ralph's add. add sets
// override_submodule_config, so neither diff.ignoreSubmodules nor submodule.<name>.ignore
// stops it, and it has no --ignore-submodules. What it does with a repository that is
// *not* in the index is harmless: it records the repository's HEAD as a gitlink, reading
// HEAD and refs, running nothing. So git-ralph's add first drops from the index every
// gitlink whose path holds a repository (a .git, file or directory): add -A then puts
// each back at its HEAD, which is what a gitlink records anyway, and runs nothing inside.
// A gitlink without a repository behind it (a submodule not checked out) stays: git looks
// into nothing there.

// indexGitlinks returns the paths of the gitlinks (mode 160000) in the index file at
// path, in index order; none when there is no index. It reads the file itself (versions
// 2 to 4, SHA-1 or SHA-256): the loop asks before and after every checkpoint, and a
// git process would cost more than the read. A split index (core.splitIndex) keeps
// entries elsewhere: errIndexFormat then, and the caller asks git.
func indexGitlinks(path string) ([]string, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	for _, hashLen := range []int{20, 32} {
		if links, err := parseIndexGitlinks(data, hashLen); err == nil {
			return links, nil
		}
	}
	return nil, errIndexFormat
}

// errIndexFormat is an index indexGitlinks cannot read alone.
var errIndexFormat = errors.New("index format not read here")

const gitlinkMode = 0o160000

// parseIndexGitlinks walks the entries of an index whose object names are hashLen bytes
// long; any inconsistency (a name length that does not fit, entries running into the
// checksum, a split index's "link" extension) is errIndexFormat.
func parseIndexGitlinks(data []byte, hashLen int) ([]string, error) {
	if len(data) < 12+hashLen || string(data[:4]) != "DIRC" {
		return nil, errIndexFormat
	}
	version := binary.BigEndian.Uint32(data[4:8])
	if version < 2 || version > 4 {
		return nil, errIndexFormat
	}
	count := int(binary.BigEndian.Uint32(data[8:12]))
	end := len(data) - hashLen // the checksum
	var links []string
	var prev []byte
	off := 12
	for range count {
		start := off
		fixed := 40 + hashLen + 2
		if off+fixed > end {
			return nil, errIndexFormat
		}
		mode := binary.BigEndian.Uint32(data[off+24 : off+28])
		flags := binary.BigEndian.Uint16(data[off+40+hashLen : off+fixed])
		off += fixed
		if flags&0x4000 != 0 { // extended flags
			if version < 3 || off+2 > end {
				return nil, errIndexFormat
			}
			off += 2
		}
		var name []byte
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
			name = append(append([]byte(nil), prev[:len(prev)-strip]...), data[off:off+nul]...)
			off += nul + 1
		} else {
			nul := bytes.IndexByte(data[off:end], 0)
			if nul < 0 {
				return nil, errIndexFormat
			}
			name = data[off : off+nul]
			// 1 to 8 NULs pad the entry to a multiple of 8 bytes.
			off = start + (off-start+nul+8)&^7
			if off > end {
				return nil, errIndexFormat
			}
		}
		if l := int(flags & 0xfff); (l < 0xfff && l != len(name)) || (l == 0xfff && len(name) < 0xfff) {
			return nil, errIndexFormat
		}
		prev = name
		if mode == gitlinkMode {
			links = append(links, string(name))
		}
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
	return links, nil
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
	links, err := indexGitlinks(file)
	if !errors.Is(err, errIndexFormat) {
		return links, err
	}
	c := call{readOnly: true, args: []string{"ls-files", "-s", "-z"}}
	if indexPath != "" {
		c.env = []string{"GIT_INDEX_FILE=" + indexPath}
	}
	out, err := r.run(ctx, c)
	if err != nil {
		return nil, err
	}
	links = nil
	for rec := range strings.SplitSeq(string(out), "\x00") {
		meta, path, ok := strings.Cut(rec, "\t")
		if ok && strings.HasPrefix(meta, "160000 ") {
			links = append(links, path)
		}
	}
	return links, nil
}

// Gitlinks lists the gitlinks of the repository's index: submodules and repositories
// nested in the work tree that were staged.
func (r *Repo) Gitlinks(ctx context.Context) ([]string, error) { return r.gitlinks(ctx, "") }

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
