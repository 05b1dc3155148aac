package git

import (
	"context"
	"errors"
	"os/exec"
	"strings"
	"testing"
)

// hookCall is one call of a test's hook runner.
type hookCall struct {
	name  string
	args  []string
	stdin string
	env   []string
}

// recordHooks sets a hook runner on r that records its calls and answers code.
func recordHooks(r *Repo, code int) *[]hookCall {
	var calls []hookCall
	r.RunHooksWith(func(_ context.Context, _ *Repo, name, path string, args []string, stdin []byte, env []string) (string, int, error) {
		calls = append(calls, hookCall{name, args, string(stdin), env})
		return "said " + name, code, nil
	})
	return &calls
}

// With a hook runner, git runs no hook itself: checkout's post-checkout and the squash
// merge's post-merge go through the runner, with git's arguments.
func TestRunHooksWithCheckoutAndMerge(t *testing.T) {
	dir, r := newRepo(t)
	base := gitT(t, dir, "rev-parse", "HEAD")
	gitT(t, dir, "switch", "-q", "-c", "topic")
	topic := commitFile(t, dir, "b.txt", "b\n", "b")
	gitT(t, dir, "switch", "-q", "main")
	for _, h := range []string{"post-checkout", "post-merge", "reference-transaction"} {
		writeHook(t, dir, h, "touch "+h+".ran\n")
	}
	calls := recordHooks(r, 1)
	if err := r.Checkout(t.Context(), "topic"); err != nil {
		t.Fatal(err)
	}
	if err := r.Checkout(t.Context(), "main"); err != nil {
		t.Fatal(err)
	}
	if err := r.MergeSquash(t.Context(), "topic"); err != nil {
		t.Fatal(err)
	}
	for _, h := range []string{"post-checkout", "post-merge", "reference-transaction"} {
		if exists(dir, h+".ran") {
			t.Errorf("git ran the %s hook itself", h)
		}
	}
	want := []hookCall{
		{name: "post-checkout", args: []string{base, topic, "1"}},
		{name: "post-checkout", args: []string{topic, base, "1"}},
		{name: "post-merge", args: []string{"1"}},
	}
	if len(*calls) != len(want) {
		t.Fatalf("calls = %+v, want %+v", *calls, want)
	}
	for i, c := range *calls {
		if c.name != want[i].name || strings.Join(c.args, " ") != strings.Join(want[i].args, " ") {
			t.Errorf("call %d = %+v, want %+v", i, c, want[i])
		}
	}
}

// Push runs pre-push through the runner with git's arguments, input and -c config, and
// its refusal stops the push; a deletion in an atomic push is said as git says it.
func TestRunHooksWithPrePush(t *testing.T) {
	dir, r := newRepo(t)
	remote := t.TempDir()
	gitT(t, remote, "init", "-q", "--bare")
	gitT(t, remote, "config", "receive.denyDeleteCurrent", "ignore")
	gitT(t, dir, "remote", "add", "origin", remote)
	tip := gitT(t, dir, "rev-parse", "HEAD")
	branch := gitT(t, dir, "symbolic-ref", "--short", "HEAD")
	writeHook(t, dir, "pre-push", "touch pre-push.ran\n")

	calls := recordHooks(r, 1)
	err := r.Push(t.Context(), PushRequest{Remote: "origin", Branch: branch, Config: []string{"ralph.allowPush=true"}})
	var gerr *Error
	if !errors.As(err, &gerr) || !strings.Contains(gerr.Stderr, "said pre-push") {
		t.Fatalf("Push with a refusing hook = %v, want the hook's refusal", err)
	}
	if out, _ := exec.Command("git", "--git-dir", remote, "rev-parse", "--verify", "-q", "refs/heads/"+branch).Output(); len(out) > 0 {
		t.Fatal("a refused push pushed")
	}
	ref := "refs/heads/" + branch
	c := (*calls)[0]
	if c.name != "pre-push" || strings.Join(c.args, " ") != "origin "+remote ||
		c.stdin != ref+" "+tip+" "+ref+" "+strings.Repeat("0", len(tip))+"\n" ||
		strings.Join(c.env, " ") != "GIT_CONFIG_PARAMETERS='ralph.allowPush=true'" {
		t.Errorf("pre-push call = %+v", c)
	}

	*calls = nil
	recordHooks(r, 0)
	if err := r.Push(t.Context(), PushRequest{Remote: "origin", Branch: branch}); err != nil {
		t.Fatal(err)
	}
	if exists(dir, "pre-push.ran") {
		t.Error("git ran the pre-push hook itself")
	}
	calls = recordHooks(r, 0)
	err = r.PushAtomic(t.Context(), AtomicPush{Remote: "origin", Hooks: true, Lease: map[string]string{ref: tip}, Refspecs: []string{":" + ref}})
	if err != nil {
		t.Fatal(err)
	}
	zeros := strings.Repeat("0", len(tip))
	if len(*calls) != 1 || (*calls)[0].stdin != "(delete) "+zeros+" "+ref+" "+tip+"\n" {
		t.Errorf("atomic pre-push calls = %+v", *calls)
	}
}
