package git

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// Head returns the commit HEAD points at, or ErrNoCommits when HEAD is
// unborn.
func (r *Repo) Head(ctx context.Context) (string, error) {
	if _, id, ok := r.readHead(); ok {
		return id, nil
	}
	id, ok, err := r.ResolveRef(ctx, "HEAD")
	if err != nil {
		return "", err
	}
	if !ok {
		return "", ErrNoCommits
	}
	return id, nil
}

// CurrentBranch returns the short name of the branch HEAD is on (which may
// be unborn), or ErrDetachedHead.
func (r *Repo) CurrentBranch(ctx context.Context) (string, error) {
	if branch, _, ok := r.readHead(); ok {
		if branch == "" {
			return "", ErrDetachedHead
		}
		return branch, nil
	}
	out, err := r.run(ctx, call{readOnly: true, args: []string{"symbolic-ref", "--quiet", "--short", "HEAD"}})
	if exitStatus(err) == 1 {
		return "", ErrDetachedHead
	}
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(out)), nil
}

// Branch is CurrentBranch with a detached HEAD as "" rather than an error: the
// branch a command comes back to, or none.
func (r *Repo) Branch(ctx context.Context) (string, error) {
	branch, err := r.CurrentBranch(ctx)
	if errors.Is(err, ErrDetachedHead) {
		return "", nil
	}
	return branch, err
}

// HeadState returns, in one git call, what CurrentBranch and Head return
// in two: the short name of the branch HEAD is on ("" when HEAD is
// detached) and the commit it points at. ErrNoCommits when HEAD is unborn.
func (r *Repo) HeadState(ctx context.Context) (branch, id string, err error) {
	if branch, id, ok := r.readHead(); ok {
		return branch, id, nil
	}
	// The trailing "--" keeps a file called HEAD from making "HEAD" ambiguous.
	out, err := r.run(ctx, call{readOnly: true, args: []string{"rev-parse", "HEAD^{commit}", "--symbolic-full-name", "HEAD", "--"}})
	if err != nil {
		if _, herr := r.Head(ctx); herr != nil {
			return "", "", herr // ErrNoCommits for an unborn HEAD
		}
		return "", "", err
	}
	lines := strings.Split(string(out), "\n")
	if len(lines) < 2 || lines[0] == "" || lines[1] == "" {
		return "", "", fmt.Errorf("git rev-parse HEAD: unexpected output %q", out)
	}
	id, ref := lines[0], lines[1]
	if name, ok := strings.CutPrefix(ref, "refs/heads/"); ok {
		branch = name
	} else if ref != "HEAD" {
		return "", "", fmt.Errorf("git rev-parse HEAD: unexpected symbolic name %q", ref)
	}
	return branch, id, nil
}

// BranchExists reports whether refs/heads/<name> exists.
func (r *Repo) BranchExists(ctx context.Context, name string) (bool, error) {
	if err := checkArg("branch name", name); err != nil {
		return false, err
	}
	// show-ref --verify looks at exactly this ref, with no DWIM and no
	// confusion with a file of the same name.
	_, err := r.run(ctx, call{readOnly: true, args: []string{"show-ref", "--verify", "--quiet", "refs/heads/" + name}})
	if exitStatus(err) == 1 {
		return false, nil
	}
	return err == nil, err
}

// ResolveRef resolves ref (a ref name, an id, any revision) to a commit
// id. ok is false when it names nothing, or something that is not a commit.
func (r *Repo) ResolveRef(ctx context.Context, ref string) (id string, ok bool, err error) {
	if err := checkArg("revision", ref); err != nil {
		return "", false, err
	}
	out, err := r.run(ctx, call{readOnly: true, args: []string{"rev-parse", "--verify", "--quiet", ref + "^{commit}"}})
	if exitStatus(err) == 1 {
		return "", false, nil
	}
	if err != nil {
		return "", false, err
	}
	return strings.TrimSpace(string(out)), true, nil
}

// TreeOf returns the id of the tree that rev (a commit, a ref, any
// revision) points at.
func (r *Repo) TreeOf(ctx context.Context, rev string) (string, error) {
	if err := checkArg("revision", rev); err != nil {
		return "", err
	}
	out, err := r.run(ctx, call{readOnly: true, args: []string{"rev-parse", "--verify", "--quiet", rev + "^{tree}"}})
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(out)), nil
}

// UpdateRef points ref (a full name such as refs/ralph/<change>/…) at id,
// creating it if needed; a symbolic ref is followed (UpdateRefNoDeref is not).
func (r *Repo) UpdateRef(ctx context.Context, ref, id string) error {
	if err := checkArg("ref", ref); err != nil {
		return err
	}
	if err := checkArg("commit", id); err != nil {
		return err
	}
	_, err := r.run(ctx, call{args: []string{"update-ref", ref, id}})
	return err
}

// DeleteRef deletes ref (a full name), following a symbolic ref (DeleteRefNoDeref
// does not). Deleting a missing ref is not an error, which keeps cleanup idempotent.
func (r *Repo) DeleteRef(ctx context.Context, ref string) error {
	if err := checkArg("ref", ref); err != nil {
		return err
	}
	_, err := r.run(ctx, call{args: []string{"update-ref", "-d", ref}})
	return err
}

// Ref is a ref name and the object it points at (RefWithSymref also says where a
// symbolic ref points).
type Ref struct {
	Name string // full name, e.g. refs/ralph/login/attempts/1-2
	ID   string
}

// Refs lists the refs whose full name starts with prefix, sorted by name
// (bytewise). prefix is a plain string prefix: "refs/ralph/x/" lists that
// namespace, while "refs/ralph/x" would also match refs/ralph/xy/….
func (r *Repo) Refs(ctx context.Context, prefix string) ([]Ref, error) {
	args := []string{"for-each-ref", "--sort=refname", "--format=%(objectname) %(refname)"}
	// for-each-ref patterns match whole path components, so hand it the
	// prefix up to its last slash and filter the rest here.
	if i := strings.LastIndexByte(prefix, '/'); i >= 0 {
		args = append(args, prefix[:i+1])
	}
	out, err := r.run(ctx, call{readOnly: true, args: args})
	if err != nil {
		return nil, err
	}
	var refs []Ref
	for line := range strings.SplitSeq(string(out), "\n") {
		id, name, ok := strings.Cut(line, " ") // ref names cannot contain spaces
		if ok && strings.HasPrefix(name, prefix) {
			refs = append(refs, Ref{Name: name, ID: id})
		}
	}
	return refs, nil
}

// CheckBranchName returns nil when name is a valid branch name, and an
// error wrapping ErrInvalidBranchName otherwise. It asks git itself
// (check-ref-format --branch), so the rules are exactly git's.
func (r *Repo) CheckBranchName(ctx context.Context, name string) error {
	invalid := fmt.Errorf("%w: %q", ErrInvalidBranchName, name)
	if name == "" || strings.HasPrefix(name, "-") {
		return invalid
	}
	if plainBranchName(name) {
		return nil // valid by every rule of git's; no need to start a git to hear it
	}
	out, err := r.run(ctx, call{readOnly: true, args: []string{"check-ref-format", "--branch", name}})
	if code := exitStatus(err); code > 0 {
		return invalid
	}
	if err != nil {
		return err
	}
	// --branch expands @{-N} to the branch it stands for; a name that
	// does not come back unchanged is not a literal branch name.
	if strings.TrimSpace(string(out)) != name {
		return invalid
	}
	return nil
}

// plainBranchName reports whether name is made only of what every rule of
// check-ref-format --branch accepts: components of ASCII letters, digits, '-',
// '_' and '.', none empty, none starting with '.' or ending with '.' or
// ".lock", no "..", no '@' at all (so neither "@" nor "@{"), and not HEAD.
// Names such as ralph/<change> almost always are; anything else is git's to
// judge. (A leading '-' is refused before, as git would take it for an option.)
func plainBranchName(name string) bool {
	if strings.Contains(name, "..") || name == "HEAD" || strings.HasPrefix(name, "-") {
		return false
	}
	for comp := range strings.SplitSeq(name, "/") {
		if comp == "" || comp[0] == '.' || strings.HasSuffix(comp, ".") || strings.HasSuffix(comp, ".lock") {
			return false
		}
		for i := 0; i < len(comp); i++ {
			c := comp[i]
			if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_' || c == '.') {
				return false
			}
		}
	}
	return true
}

// DeleteBranch deletes a local branch whether or not it is merged
// (branch -D).
func (r *Repo) DeleteBranch(ctx context.Context, name string) error {
	if err := checkArg("branch name", name); err != nil {
		return err
	}
	_, err := r.run(ctx, call{args: []string{"branch", "-D", name}})
	return err
}

// IsAncestor reports whether commit a is an ancestor of (or equal to)
// commit b.
func (r *Repo) IsAncestor(ctx context.Context, a, b string) (bool, error) {
	if err := checkArg("commit", a); err != nil {
		return false, err
	}
	if err := checkArg("commit", b); err != nil {
		return false, err
	}
	_, err := r.run(ctx, call{readOnly: true, args: []string{"merge-base", "--is-ancestor", a, b}})
	if exitStatus(err) == 1 {
		return false, nil
	}
	return err == nil, err
}

// readHead reads HEAD from the files git keeps, without running git, when the answer is
// certain (a detached id, or a branch with a loose ref); ok is false otherwise and the
// caller asks git (docs/GIT.md, "Answers read from files").
func (r *Repo) readHead() (branch, id string, ok bool) {
	if r.GitDir == "" || r.CommonDir == "" {
		return "", "", false
	}
	head := filepath.Join(r.GitDir, "HEAD")
	if fi, err := os.Lstat(head); err != nil || !fi.Mode().IsRegular() {
		return "", "", false
	}
	data, err := readSmall(head)
	if err != nil {
		return "", "", false
	}
	content := strings.TrimSuffix(string(data), "\n")
	if IsObjectID(content) {
		return "", content, true
	}
	ref, isRef := strings.CutPrefix(content, "ref: refs/heads/")
	if !isRef || ref == "" || strings.Contains(ref, "..") || strings.ContainsAny(ref, "\\\n") {
		return "", "", false
	}
	path := filepath.Join(r.CommonDir, "refs", "heads", filepath.FromSlash(ref))
	if fi, err := os.Lstat(path); err != nil || !fi.Mode().IsRegular() {
		return "", "", false
	}
	data, err = readSmall(path)
	if err != nil {
		return "", "", false
	}
	id = strings.TrimSuffix(string(data), "\n")
	if !IsObjectID(id) {
		return "", "", false
	}
	return ref, id, true
}

// IsObjectID reports whether s is a full SHA-1 or SHA-256 object id in git's
// lower-case hex.
func IsObjectID(s string) bool {
	if len(s) != 40 && len(s) != 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// RefWithSymref is a ref as AllRefs lists it: a Ref, and the ref it points to when it
// is a symbolic one.
type RefWithSymref struct {
	Name   string `json:"name"`             // full name
	ID     string `json:"id"`               // the object it points at (through Symref when set)
	Symref string `json:"symref,omitempty"` // the ref a symbolic ref points to
}

// AllRefs lists every ref of the repository (this worktree's per-worktree refs
// included), sorted by name, with where symbolic refs point: one for-each-ref.
func (r *Repo) AllRefs(ctx context.Context) ([]RefWithSymref, error) {
	out, err := r.run(ctx, call{readOnly: true, args: []string{"for-each-ref", "--sort=refname", "--format=%(objectname) %(refname) %(symref)"}})
	if err != nil {
		return nil, err
	}
	var refs []RefWithSymref
	for line := range strings.SplitSeq(string(out), "\n") {
		f := strings.Split(line, " ") // ref names cannot contain spaces
		if len(f) == 3 && f[1] != "" {
			refs = append(refs, RefWithSymref{ID: f[0], Name: f[1], Symref: f[2]})
		}
	}
	return refs, nil
}

// UpdateRefNoDeref is UpdateRef with --no-deref: it points ref itself at id, never
// what ref points to when it is a symbolic ref, creating it if needed.
func (r *Repo) UpdateRefNoDeref(ctx context.Context, ref, id string) error {
	if err := checkArg("ref", ref); err != nil {
		return err
	}
	if err := checkArg("object id", id); err != nil {
		return err
	}
	_, err := r.run(ctx, call{args: []string{"update-ref", "--no-deref", ref, id}})
	return err
}

// DeleteRefNoDeref is DeleteRef with --no-deref: it deletes ref itself, a symbolic ref
// included (plain -d would delete the ref it points to). A missing ref is not an error.
func (r *Repo) DeleteRefNoDeref(ctx context.Context, ref string) error {
	if err := checkArg("ref", ref); err != nil {
		return err
	}
	_, err := r.run(ctx, call{args: []string{"update-ref", "--no-deref", "-d", ref}})
	return err
}

// SetSymbolicRef makes ref a symbolic ref pointing to target (both full names).
func (r *Repo) SetSymbolicRef(ctx context.Context, ref, target string) error {
	if err := checkArg("ref", ref); err != nil {
		return err
	}
	if err := checkArg("ref", target); err != nil {
		return err
	}
	_, err := r.run(ctx, call{args: []string{"symbolic-ref", ref, target}})
	return err
}

// maxSmall bounds what readSmall reads: HEAD, a loose ref and a sequencer's todo hold
// a line or a few; anything larger is not git's, and git is asked instead.
const maxSmall = 64 << 10

// readSmall reads one of git's small files of the git directory (the agent can write
// there): at most maxSmall bytes, else an error.
func readSmall(path string) ([]byte, error) {
	f, err := openData(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxSmall+1))
	if err == nil && len(data) > maxSmall {
		err = fmt.Errorf("%s: more than %d bytes", path, maxSmall)
	}
	return data, err
}

// openData opens path to read it as data: a regular file, never waiting for a writer
// (a FIFO planted where the agent could write the git directory is no file: it would
// block the read for good).
func openData(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		f.Close()
		return nil, &os.PathError{Op: "read", Path: path, Err: errors.New("not a regular file")}
	}
	return f, nil
}

// RefUpdate is one change of a ref in UpdateRefs: pointed at ID, or deleted when ID is
// "". Never through a symbolic ref (no-deref).
type RefUpdate struct{ Name, ID string }

// UpdateRefs makes every change of ups in one transaction (update-ref --stdin): all of
// them or none, in one git however many there are.
func (r *Repo) UpdateRefs(ctx context.Context, ups []RefUpdate) error {
	if len(ups) == 0 {
		return nil
	}
	var in bytes.Buffer
	for _, u := range ups {
		if err := checkArg("ref", u.Name); err != nil {
			return err
		}
		in.WriteString("option no-deref\x00")
		if u.ID == "" {
			in.WriteString("delete " + u.Name + "\x00\x00")
			continue
		}
		if err := checkArg("object id", u.ID); err != nil {
			return err
		}
		in.WriteString("update " + u.Name + "\x00" + u.ID + "\x00\x00")
	}
	_, err := r.run(ctx, call{args: []string{"update-ref", "-z", "--stdin"}, stdin: in.Bytes()})
	return err
}
