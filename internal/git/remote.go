package git

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// ErrNoRemote is returned for a remote name that is not configured.
var ErrNoRemote = errors.New("no such remote")

// RemoteURLs returns the URLs a remote is known by, most specific first: the push URL
// as git uses it (insteadOf and pushInsteadOf applied), the fetch URL as git uses it,
// then the URLs as written in the config (remote.<name>.pushurl, remote.<name>.url).
// Duplicates are dropped. ErrNoRemote when the remote is not configured.
func (r *Repo) RemoteURLs(ctx context.Context, name string) ([]string, error) {
	if err := checkArg("remote name", name); err != nil {
		return nil, err
	}
	var urls []string
	add := func(s string) {
		for u := range strings.SplitSeq(strings.TrimSpace(s), "\n") {
			if u != "" && !slices.Contains(urls, u) {
				urls = append(urls, u)
			}
		}
	}
	out, err := r.run(ctx, call{readOnly: true, args: []string{"remote", "get-url", "--push", name}})
	if exitStatus(err) == 2 {
		return nil, fmt.Errorf("%w: %q", ErrNoRemote, name)
	}
	if err != nil {
		return nil, err
	}
	add(string(out))
	if out, err := r.run(ctx, call{readOnly: true, args: []string{"remote", "get-url", name}}); err == nil {
		add(string(out))
	}
	for _, key := range []string{"pushurl", "url"} {
		out, err := r.run(ctx, call{readOnly: true, args: []string{"config", "--get-all", "remote." + name + "." + key}})
		if err == nil {
			add(string(out))
		}
	}
	return urls, nil
}

// RemoteBranch returns the commit id of branch where a push to remote goes (git
// ls-remote of its push URL, which differs from the fetch URL when remote.<name>.pushurl
// or pushInsteadOf is set), ok false when there is no such branch. It talks to the
// remote: it may be slow and may fail for want of network or credentials.
func (r *Repo) RemoteBranch(ctx context.Context, remote, branch string) (id string, ok bool, err error) {
	if err := checkArg("remote name", remote); err != nil {
		return "", false, err
	}
	if err := checkArg("branch name", branch); err != nil {
		return "", false, err
	}
	target := remote
	out, err := r.run(ctx, call{readOnly: true, args: []string{"remote", "get-url", "--push", remote}})
	if err != nil {
		return "", false, err
	}
	if urls := strings.Split(strings.TrimSpace(string(out)), "\n"); len(urls) == 1 && urls[0] != "" && !strings.HasPrefix(urls[0], "-") {
		target = urls[0]
	}
	ref := "refs/heads/" + branch
	out, err = r.run(ctx, call{readOnly: true, remote: true, env: []string{"GIT_TERMINAL_PROMPT=0"},
		args: []string{"ls-remote", "--refs", target, ref}})
	if err != nil {
		return "", false, err
	}
	for line := range strings.SplitSeq(string(out), "\n") {
		if id, name, found := strings.Cut(line, "\t"); found && name == ref {
			return id, true, nil
		}
	}
	return "", false, nil
}

// PushRequest is one branch pushed with a lease.
type PushRequest struct {
	Remote string // required
	Branch string // required: refs/heads/<Branch> is pushed to the same name
	// Expect is the id the remote branch must be at for the push to go through
	// (--force-with-lease); "" means the remote branch must not exist.
	Expect string
	// Config is passed as -c key=value to this push only (e.g. ralph.allowPush=true).
	Config []string
}

// ErrPushRejected is returned by Push when the remote branch is not where the lease
// expected it (or the push is not a fast-forward the remote accepts).
var ErrPushRejected = errors.New("push rejected")

// Push pushes a branch with --force-with-lease, running the user's pre-push hook as
// git does, or through the hook runner (RunHooksWith). A lease that does not hold is ErrPushRejected (wrapped in the *Error, whose
// Stderr holds git's and the hooks' output); anything else is the *Error.
func (r *Repo) Push(ctx context.Context, p PushRequest) error {
	if err := checkArg("remote name", p.Remote); err != nil {
		return err
	}
	if err := checkArg("branch name", p.Branch); err != nil {
		return err
	}
	ref := "refs/heads/" + p.Branch
	var args []string
	for _, kv := range p.Config {
		args = append(args, "-c", kv)
	}
	h := r.hookRunner()
	if h != nil {
		if err := r.prePush(ctx, h, p, ref); err != nil {
			return err
		}
	}
	args = append(args, "push", "--porcelain", "--force-with-lease="+ref+":"+p.Expect, p.Remote, ref+":"+ref)
	if h != nil {
		args = append(args, "--no-verify")
	}
	_, err := r.run(ctx, call{args: args, remote: true, env: []string{"GIT_TERMINAL_PROMPT=0"}, combined: true})
	if err == nil {
		return nil
	}
	var gerr *Error
	if errors.As(err, &gerr) {
		// --porcelain: "!\t<src>:<dst>\t[rejected] (stale info)" for a lease that does
		// not hold, "(fetch first)"/"(non-fast-forward)" without one.
		for line := range strings.SplitSeq(gerr.Stderr, "\n") {
			if f := strings.Split(line, "\t"); len(f) >= 3 && f[0] == "!" && strings.HasPrefix(f[2], "[rejected]") {
				gerr.Err = fmt.Errorf("%w: %w", ErrPushRejected, gerr.Err)
			}
		}
	}
	return err
}

// prePush runs the pre-push hook, if there is one, through h, with what git would give
// it for the push of ref; a refusal is an *Error as git's would be.
func (r *Repo) prePush(ctx context.Context, h HookRunner, p PushRequest, ref string) error {
	local, _, err := r.ResolveRef(ctx, ref)
	if err != nil {
		return err
	}
	return r.runPrePush(ctx, h, p.Remote, p.Config, []string{ref + " " + local + " " + ref + " " + orZeros(p.Expect, local)})
}

// prePushAtomic runs the pre-push hook for req as prePush does: a line for each of its
// refspecs, a deletion's as git writes it.
func (r *Repo) prePushAtomic(ctx context.Context, h HookRunner, req AtomicPush) error {
	var lines []string
	for _, spec := range req.Refspecs {
		src, dst, _ := strings.Cut(strings.TrimPrefix(spec, "+"), ":")
		remote := req.Lease[dst]
		if src == "" { // a deletion
			lines = append(lines, "(delete) "+orZeros("", remote)+" "+dst+" "+orZeros(remote, ""))
			continue
		}
		local, _, err := r.ResolveRef(ctx, src)
		if err != nil {
			return err
		}
		lines = append(lines, src+" "+local+" "+dst+" "+orZeros(remote, local))
	}
	return r.runPrePush(ctx, h, req.Remote, req.Config, lines)
}

// orZeros is id, or as many zeros as like has characters when id is "".
func orZeros(id, like string) string {
	if id != "" {
		return id
	}
	return strings.Repeat("0", max(len(like), 40))
}

// runPrePush runs the pre-push hook, if git would, through h with remote, its URL and
// the input lines; config (git's -c) reaches it as GIT_CONFIG_PARAMETERS.
func (r *Repo) runPrePush(ctx context.Context, h HookRunner, remote string, config, lines []string) error {
	path, ok, err := r.hookFile(ctx, "pre-push")
	if err != nil || !ok {
		return err
	}
	url := remote
	if out, err := r.run(ctx, call{readOnly: true, args: []string{"remote", "get-url", "--push", remote}}); err == nil {
		if urls := strings.Split(strings.TrimSpace(string(out)), "\n"); urls[0] != "" {
			url = urls[0]
		}
	}
	var env []string
	if len(config) > 0 {
		q := make([]string, len(config))
		for i, kv := range config {
			q[i] = "'" + strings.ReplaceAll(kv, "'", `'\''`) + "'"
		}
		env = []string{"GIT_CONFIG_PARAMETERS=" + strings.Join(q, " ")}
	}
	in := strings.Join(lines, "\n") + "\n"
	out, code, err := h(ctx, r, "pre-push", path, []string{remote, url}, []byte(in), env)
	if err != nil {
		return err
	}
	if code != 0 {
		return &Error{Args: []string{"push", remote}, ExitCode: code, Stderr: strings.TrimSpace(out),
			Err: fmt.Errorf("the pre-push hook refused the push (exit status %d)", code)}
	}
	return nil
}
