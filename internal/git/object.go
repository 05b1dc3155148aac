package git

import (
	"bufio"
	"bytes"
	"compress/zlib"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// CommitShape returns the tree and the parents of commit id. A commit git has just
// written is a loose object, read here from its file (the loop asks after every
// checkpoint, and a git process would cost more); one already packed is asked of git.
func (r *Repo) CommitShape(ctx context.Context, id string) (tree string, parents []string, err error) {
	if err := checkArg("commit", id); err != nil {
		return "", nil, err
	}
	if tree, parents, ok := r.looseCommit(id); ok {
		return tree, parents, nil
	}
	out, err := r.run(ctx, call{readOnly: true, args: []string{"log", "-1", "--no-walk", "--format=%T%n%P", id, "--"}})
	if err != nil {
		return "", nil, err
	}
	lines := strings.Split(strings.TrimRight(string(out), "\n"), "\n")
	if len(lines) != 2 {
		return "", nil, fmt.Errorf("git log: unexpected output %q", out)
	}
	return lines[0], strings.Fields(lines[1]), nil
}

// looseCommit reads commit id from its loose object file: "commit <size>\0" and then
// "tree <id>\n", one "parent <id>\n" each, the rest. ok is false when there is no such
// file or it is not a commit whose content git would take.
func (r *Repo) looseCommit(id string) (tree string, parents []string, ok bool) {
	if len(id) != 40 && len(id) != 64 || strings.Trim(id, "0123456789abcdef") != "" {
		return "", nil, false
	}
	f, err := os.Open(filepath.Join(r.CommonDir, "objects", id[:2], id[2:]))
	if err != nil {
		return "", nil, false
	}
	defer f.Close()
	z, err := zlib.NewReader(f)
	if err != nil {
		return "", nil, false
	}
	defer z.Close()
	br := bufio.NewReader(io.LimitReader(z, 1<<20))
	header, err := br.ReadString(0)
	if err != nil || !strings.HasPrefix(header, "commit ") {
		return "", nil, false
	}
	for {
		line, err := br.ReadBytes('\n')
		if err != nil {
			return "", nil, false
		}
		line = bytes.TrimSuffix(line, []byte("\n"))
		key, val, _ := bytes.Cut(line, []byte(" "))
		switch string(key) {
		case "tree":
			if tree != "" {
				return "", nil, false
			}
			tree = string(val)
			continue
		case "parent":
			if tree == "" {
				return "", nil, false
			}
			parents = append(parents, string(val))
			continue
		}
		return tree, parents, tree != ""
	}
}

// VerifyPack checks the pack at path (its .pack file): every object in it hashes to
// its id and the pack to its checksum (git verify-pack). It reads the whole pack: its
// cost grows with the pack, and it is interrupted when ctx is cancelled.
func (r *Repo) VerifyPack(ctx context.Context, path string) error {
	if err := checkArg("pack", path); err != nil {
		return err
	}
	// Read-only and as long as the pack: stopped when ctx is (a second Ctrl-C).
	_, err := r.run(ctx, call{readOnly: true, interruptible: true, args: []string{"verify-pack", path}})
	return err
}
