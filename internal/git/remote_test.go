package git

import (
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestRemoteURLs(t *testing.T) {
	dir, r := newRepo(t)
	ctx := t.Context()
	bare := filepath.Join(t.TempDir(), "acme.git")
	gitT(t, dir, "init", "-q", "--bare", bare)
	gitT(t, dir, "remote", "add", "origin", "https://github.com/acme/widgets.git")
	gitT(t, dir, "config", "url."+bare+".insteadOf", "https://github.com/acme/widgets.git")
	got, err := r.RemoteURLs(ctx, "origin")
	if err != nil {
		t.Fatal(err)
	}
	// git's own view first (rewritten to the path), then the URL as written
	if want := []string{bare, "https://github.com/acme/widgets.git"}; !slices.Equal(got, want) {
		t.Fatalf("RemoteURLs = %q, want %q", got, want)
	}
	if _, err := r.RemoteURLs(ctx, "nope"); !errors.Is(err, ErrNoRemote) {
		t.Fatalf("missing remote: %v", err)
	}
}

func TestPushWithLease(t *testing.T) {
	dir, r := newRepo(t)
	ctx := t.Context()
	bare := filepath.Join(t.TempDir(), "acme.git")
	gitT(t, dir, "init", "-q", "--bare", bare)
	gitT(t, dir, "remote", "add", "origin", bare)
	gitT(t, dir, "branch", "ralph/x")
	base := gitT(t, dir, "rev-parse", "HEAD")

	if _, ok, err := r.RemoteBranch(ctx, "origin", "ralph/x"); ok || err != nil {
		t.Fatalf("absent branch: %v %v", ok, err)
	}
	// expected absent: goes through once, is rejected when the branch exists
	if err := r.Push(ctx, PushRequest{Remote: "origin", Branch: "ralph/x"}); err != nil {
		t.Fatal(err)
	}
	if id, ok, err := r.RemoteBranch(ctx, "origin", "ralph/x"); !ok || err != nil || id != base {
		t.Fatalf("RemoteBranch = %q %v %v, want %s", id, ok, err, base)
	}
	commitFile(t, dir, "b.txt", "b\n", "b")
	gitT(t, dir, "branch", "-f", "ralph/x", "HEAD")
	err := r.Push(ctx, PushRequest{Remote: "origin", Branch: "ralph/x"})
	if !errors.Is(err, ErrPushRejected) {
		t.Fatalf("lease 'absent' over an existing branch: %v", err)
	}
	// a wrong lease is rejected, the right one goes through
	if err := r.Push(ctx, PushRequest{Remote: "origin", Branch: "ralph/x", Expect: gitT(t, dir, "rev-parse", "HEAD")}); !errors.Is(err, ErrPushRejected) {
		t.Fatalf("wrong lease: %v", err)
	}
	if err := r.Push(ctx, PushRequest{Remote: "origin", Branch: "ralph/x", Expect: base, Config: []string{"ralph.allowPush=true"}}); err != nil {
		t.Fatal(err)
	}
	// a push URL elsewhere: the branch is read where pushes go
	other := filepath.Join(t.TempDir(), "other.git")
	gitT(t, dir, "init", "-q", "--bare", other)
	gitT(t, dir, "remote", "set-url", "--push", "origin", other)
	if _, ok, err := r.RemoteBranch(ctx, "origin", "ralph/x"); ok || err != nil {
		t.Fatalf("push URL has no ralph/x: %v %v", ok, err)
	}
	gitT(t, dir, "config", "--unset", "remote.origin.pushurl")
	// a refusing pre-push hook is an *Error with its words, not a rejected lease
	writeHook(t, dir, "pre-push", "echo no pushing today >&2\nexit 1\n")
	commitFile(t, dir, "c.txt", "c\n", "c")
	gitT(t, dir, "branch", "-f", "ralph/x", "HEAD")
	err = r.Push(ctx, PushRequest{Remote: "origin", Branch: "ralph/x", Expect: gitT(t, dir, "rev-parse", "HEAD~1")})
	var gerr *Error
	if errors.Is(err, ErrPushRejected) || !errors.As(err, &gerr) {
		t.Fatalf("hook refusal: %v", err)
	}
	if want := "no pushing today"; !strings.Contains(gerr.Stderr, want) {
		t.Fatalf("stderr %q lacks %q", gerr.Stderr, want)
	}
}
