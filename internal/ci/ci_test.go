package ci

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/rhysd/actionlint"
)

func render(t *testing.T, o Options) []byte {
	t.Helper()
	b, err := Render(o)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestGolden pins the whole workflow for the default agent: any change to it shows up
// as a diff to review. UPDATE_GOLDEN=1 rewrites the golden file.
func TestGolden(t *testing.T) {
	got := render(t, Options{Agent: "claude", RalphVersion: "v1.2.3"})
	golden := filepath.Join("testdata", "ralph.yml")
	if os.Getenv("UPDATE_GOLDEN") != "" {
		if err := os.WriteFile(golden, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("workflow differs from %s (UPDATE_GOLDEN=1 go test ./internal/ci rewrites it):\n%s", golden, got)
	}
}

func parse(t *testing.T, b []byte) *actionlint.Workflow {
	t.Helper()
	w, errs := actionlint.Parse(b)
	if len(errs) > 0 {
		t.Fatalf("parse: %v", errs)
	}
	return w
}

// TestNoExpressionInRun: no ${{ … }} appears inside any run: body, for every agent, so
// no input (change name, branch, nonce, version) can ever be spliced into a shell
// command; inputs reach scripts only as environment variables.
func TestNoExpressionInRun(t *testing.T) {
	for _, a := range AgentNames() {
		w := parse(t, render(t, Options{Agent: a, Secret: "MY_KEY"}))
		runs := 0
		for id, job := range w.Jobs {
			for _, st := range job.Steps {
				r, ok := st.Exec.(*actionlint.ExecRun)
				if !ok {
					continue
				}
				runs++
				if strings.Contains(r.Run.Value, "${{") {
					t.Errorf("%s: job %s: run body has an expression: %q", a, id, r.Run.Value)
				}
			}
		}
		if runs < 5 {
			t.Fatalf("%s: found %d run steps; the walk over the workflow is broken", a, runs)
		}
	}
}

// TestHardening checks the security properties the design relies on.
func TestHardening(t *testing.T) {
	b := render(t, Options{Agent: "codex"})
	w := parse(t, b)
	if w.Permissions == nil || len(w.Permissions.Scopes) != 0 || w.Permissions.All != nil {
		t.Errorf("workflow permissions are not {}: %+v", w.Permissions)
	}
	pinned := regexp.MustCompile(`^actions/[a-z-]+@[0-9a-f]{40}$`)
	loop, publish := w.Jobs["loop"], w.Jobs["publish"]
	if loop == nil || publish == nil {
		t.Fatalf("jobs: %v", w.Jobs)
	}
	scope := func(j *actionlint.Job, s string) string {
		if j.Permissions == nil || j.Permissions.Scopes[s] == nil {
			return ""
		}
		return j.Permissions.Scopes[s].Value.Value
	}
	if got := scope(loop, "contents"); got != "read" || len(loop.Permissions.Scopes) != 1 {
		t.Errorf("loop job: contents %q, scopes %v; want only contents: read", got, loop.Permissions.Scopes)
	}
	if got := scope(publish, "contents"); got != "write" || len(publish.Permissions.Scopes) != 1 {
		t.Errorf("publish job: contents %q; want only contents: write", got)
	}
	for id, job := range w.Jobs {
		for _, st := range job.Steps {
			if a, ok := st.Exec.(*actionlint.ExecAction); ok && !pinned.MatchString(a.Uses.Value) {
				t.Errorf("job %s: %s is not pinned to a commit", id, a.Uses.Value)
			}
		}
	}
	// The agent's job never keeps the token in .git/config.
	for _, st := range loop.Steps {
		if a, ok := st.Exec.(*actionlint.ExecAction); ok && strings.HasPrefix(a.Uses.Value, "actions/checkout@") {
			if pc := a.Inputs["persist-credentials"]; pc == nil || pc.Value.Value != "false" {
				t.Errorf("loop job checks out with the token persisted")
			}
		}
	}
	// The loop step: exec of the binary (git-ralph is the step's process, which a cancel
	// signals), the key only there.
	var loopRun string
	keyed := 0
	for id, job := range w.Jobs {
		for _, st := range job.Steps {
			if st.Env != nil && st.Env.Vars["openai_api_key"] != nil {
				keyed++
				if id != "loop" || st.Name == nil || st.Name.Value != "loop" {
					t.Errorf("the API key reaches job %s step %v", id, st.Name)
				}
			}
			if st.Name != nil && st.Name.Value == "loop" {
				loopRun = st.Exec.(*actionlint.ExecRun).Run.Value
			}
		}
	}
	if keyed != 1 {
		t.Errorf("the API key is in %d steps, want exactly the loop step", keyed)
	}
	if !strings.HasPrefix(loopRun, "exec git-ralph start ") {
		t.Errorf("loop step does not exec git-ralph: %q", loopRun)
	}
	if w.Concurrency == nil || w.Concurrency.Group.Value != "ralph-${{ inputs.change }}" || w.Concurrency.CancelInProgress.Value != false {
		t.Errorf("concurrency is not one run per change without cancelling: %+v", w.Concurrency)
	}
}

// TestActionlint runs actionlint (as a library, without shellcheck) over the workflow
// of every agent: GitHub would reject, or misread, what it reports.
func TestActionlint(t *testing.T) {
	for _, a := range AgentNames() {
		var out bytes.Buffer
		l, err := actionlint.NewLinter(&out, &actionlint.LinterOptions{Color: actionlint.ColorOptionKindNever})
		if err != nil {
			t.Fatal(err)
		}
		errs, err := l.Lint(Path, render(t, Options{Agent: a}), nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range errs {
			t.Errorf("%s: actionlint: %s", a, e.Error())
		}
	}
}

func TestRenderRefusesBadValues(t *testing.T) {
	for _, o := range []Options{
		{Agent: "cursor"},
		{Agent: "custom"},
		{Agent: "claude", Secret: "X }}\n  evil: ${{ github.token"},
		{Agent: "claude", Secret: "9KEY"},
		{Agent: "claude", Secret: "GITHUB_TOKEN"},
		{Agent: "claude", RalphVersion: "v1\nrun: evil"},
	} {
		if _, err := Render(o); err == nil {
			t.Errorf("Render(%+v) accepted it", o)
		}
	}
}

func TestWrite(t *testing.T) {
	root := t.TempDir()
	v1 := render(t, Options{Agent: "claude"})
	v2 := render(t, Options{Agent: "codex"})
	for i, step := range []struct {
		content []byte
		want    Action
	}{{v1, Created}, {v1, Unchanged}, {v2, Updated}} {
		got, err := Write(root, step.content)
		if err != nil || got != step.want {
			t.Fatalf("write %d: %v, %v; want %v", i, got, err, step.want)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(root, Path)); !bytes.Equal(b, v2) {
		t.Errorf("file is not the last content written")
	}
}

// TestWriteUpdatesOlderWorkflow: the workflow an older git-ralph wrote (its loop step
// ran 'exec git ralph start', so a cancel's kill reached git and not the loop) is
// Outdated, and ci init replaces it with one that is not.
func TestWriteUpdatesOlderWorkflow(t *testing.T) {
	old, err := os.ReadFile(filepath.Join("testdata", "older", "exec-git-ralph.yml"))
	if err != nil {
		t.Fatal(err)
	}
	if !Outdated(old) {
		t.Errorf("the older workflow is not Outdated")
	}
	root := t.TempDir()
	p := filepath.Join(root, Path)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, old, 0o644); err != nil {
		t.Fatal(err)
	}
	content := render(t, Options{Agent: "claude", RalphVersion: "v1.2.3"})
	if got, err := Write(root, content); err != nil || got != Updated {
		t.Fatalf("Write: %v, %v; want Updated", got, err)
	}
	if b, _ := os.ReadFile(p); !bytes.Equal(b, content) || Outdated(b) {
		t.Errorf("the file is not the new workflow, or still Outdated")
	}
	if Outdated([]byte("name: mine\non: push\njobs:\n  a:\n    steps:\n      - run: exec git ralph start x\n")) {
		t.Errorf("a workflow git-ralph did not write is Outdated")
	}
}

// TestWriteLeavesForeignFiles: a workflow of the same name that git-ralph did not
// write (no marker on its first line, a symlink, a directory) is never touched.
func TestWriteLeavesForeignFiles(t *testing.T) {
	content := render(t, Options{Agent: "claude"})
	mine := []byte("name: ralph\n" + Marker + " (not on the first line)\non: push\n")
	for name, setup := range map[string]func(p string) error{
		"file":    func(p string) error { return os.WriteFile(p, mine, 0o644) },
		"symlink": func(p string) error { return os.Symlink("elsewhere.yml", p) },
		"dir":     func(p string) error { return os.Mkdir(p, 0o755) },
	} {
		t.Run(name, func(t *testing.T) {
			root := t.TempDir()
			p := filepath.Join(root, Path)
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := setup(p); err != nil {
				t.Fatal(err)
			}
			before, _ := os.Lstat(p)
			if _, err := Write(root, content); !errors.Is(err, ErrForeign) {
				t.Fatalf("Write: %v, want ErrForeign", err)
			}
			after, _ := os.Lstat(p)
			if before.Mode() != after.Mode() || before.Size() != after.Size() || !before.ModTime().Equal(after.ModTime()) {
				t.Errorf("the file changed")
			}
			if name == "file" {
				if b, _ := os.ReadFile(p); !bytes.Equal(b, mine) {
					t.Errorf("content changed")
				}
			}
			entries, _ := os.ReadDir(filepath.Dir(p))
			if len(entries) != 1 {
				t.Errorf("left files behind: %v", entries)
			}
		})
	}
}

// TestInstallsOutsideTheCheckout: every step that installs something (go install, npm
// install) runs in ${{ runner.temp }} with GOTOOLCHAIN=local, so the branch's go.mod,
// go.work or .npmrc (which the agent may have written) choose nothing: no toolchain
// download, no registry.
func TestInstallsOutsideTheCheckout(t *testing.T) {
	for _, a := range AgentNames() {
		w := parse(t, render(t, Options{Agent: a}))
		installs := 0
		for id, job := range w.Jobs {
			for _, st := range job.Steps {
				r, ok := st.Exec.(*actionlint.ExecRun)
				if !ok || !strings.Contains(r.Run.Value, " install ") && !strings.HasPrefix(r.Run.Value, "go install") {
					continue
				}
				installs++
				if r.WorkingDirectory == nil || r.WorkingDirectory.Value != "${{ runner.temp }}" {
					t.Errorf("%s: job %s step %v installs in the checkout: working-directory %v", a, id, st.Name, r.WorkingDirectory)
				}
				if st.Env == nil || st.Env.Vars["gotoolchain"] == nil || st.Env.Vars["gotoolchain"].Value.Value != "local" {
					t.Errorf("%s: job %s step %v installs without GOTOOLCHAIN=local", a, id, st.Name)
				}
			}
		}
		if installs != 2 {
			t.Errorf("%s: %d install steps, want 2 (loop and publish)", a, installs)
		}
	}
}
