package agent_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/git-ralph/git-ralph/internal/agent"
	"github.com/git-ralph/git-ralph/internal/agent/agenttest"
	"github.com/git-ralph/git-ralph/internal/agent/custom"
	"github.com/git-ralph/git-ralph/internal/sandbox"
)

// With a policy, Run starts the agent in the sandbox: it may write its working tree and its TMPDIR (the
// attempt's own directory, gone afterwards), not beside them; a launch that fails
// before the agent runs is an error, as a missing binary is.
func TestRunSandboxed(t *testing.T) {
	lvl, err := sandbox.Resolve(sandbox.On, sandbox.Probe(), false)
	if err != nil {
		t.Skipf("no sandbox on this system: %v", err)
	}
	root := t.TempDir()
	work, beside := filepath.Join(root, "work"), filepath.Join(root, "beside")
	if err := os.Mkdir(work, 0o755); err != nil {
		t.Fatal(err)
	}
	script := agenttest.WriteScript(t, `cat >/dev/null
echo in > in.txt && echo wrote-work
echo out > "$1" 2>/dev/null || echo beside-denied
echo tmp > "$TMPDIR/t" && echo "tmpdir=$TMPDIR"
`)
	d, err := custom.New([]string{script, beside}, custom.FormatText)
	if err != nil {
		t.Fatal(err)
	}
	req := agenttest.ScriptRequest(t)
	req.Dir = work
	req.Sandbox = &sandbox.Policy{ABI: lvl.ABI, Write: []string{work, "/dev/null"}}
	res, err := agent.Run(context.Background(), d, req)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"wrote-work", "beside-denied", "tmpdir="} {
		if !strings.Contains(res.Text, want) {
			t.Errorf("no %q in the agent's output %q (stderr %q)", want, res.Text, res.Stderr)
		}
	}
	if _, err := os.Stat(beside); err == nil {
		t.Error("the agent wrote beside its working tree")
	}
	if _, err := os.Stat(filepath.Join(work, "in.txt")); err != nil {
		t.Errorf("the agent could not write its working tree: %v", err)
	}
	_, tmp, _ := strings.Cut(res.Text, "tmpdir=")
	if tmp = strings.TrimSpace(tmp); !strings.Contains(filepath.Base(tmp), "git-ralph-custom-") {
		t.Errorf("TMPDIR %q is not the attempt's own directory", tmp)
	} else if _, err := os.Stat(tmp); err == nil {
		t.Errorf("the attempt's directory %s is still there", tmp)
	}

	req.Sandbox = &sandbox.Policy{ABI: lvl.ABI, Write: []string{filepath.Join(root, "missing")}}
	if _, err := agent.Run(context.Background(), d, req); err == nil || !strings.Contains(err.Error(), "sandbox: writable path") {
		t.Errorf("a launch that failed: %v", err)
	}
}
