package main

import (
	"archive/zip"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/git-ralph/git-ralph/internal/github/githubtest"
)

// autoRunner runs every dispatched run on the fake runner as soon as the fake GitHub
// accepts the dispatch (its OnDispatch hook): what GitHub does on its own. It lives in
// the test harness only; the git-ralph binary has no switch for it.
type autoRunner struct {
	wg       sync.WaitGroup
	mu       sync.Mutex
	errs     []string
	controls map[int64]*runControl // by run id
}

// fakeAutorun is `fakegh autorun`: from now on each dispatch goes queued, in_progress,
// then completed with the conclusion of the workflow run by the fake runner, as it is
// at the dispatched ref of the repository's bare repository, with its artifact attached
// (so `git ralph logs` finds it). The runner's environment is the script's at this
// point (FAKE_AGENT_SCENARIO and the like). Runs go in parallel, as on GitHub. A cancel
// of a run (cancel, finish --cancel) goes to its runner, which stops it as GitHub's
// does, with GitHub's timing (fakerunner's defaults): see runControl.
func fakeAutorun(ts *testscript.TestScript, h *fakeHolder) {
	env := map[string]string{}
	for _, k := range []string{"PATH", "HOME", "XDG_CONFIG_HOME", "GIT_CONFIG_NOSYSTEM", "GIT_CONFIG_GLOBAL", "GIT_ALLOW_PROTOCOL",
		"GIT_AUTHOR_DATE", "GIT_COMMITTER_DATE", "NO_COLOR", "IS_SANDBOX", "TMPDIR", "WORK",
		"FAKE_AGENT_STATE_DIR", "FAKE_AGENT_RECORD", "FAKE_AGENT_FIXED_TIME", "FAKE_AGENT_SCENARIO", "GIT_RALPH_TEST_TIME"} {
		env[k] = ts.Getenv(k)
	}
	getenv := func(k string) string { return env[k] }
	a := &autoRunner{controls: map[int64]*runControl{}}
	h.auto = a
	s := h.srv
	s.State(func(st *githubtest.State) {
		st.Actions.OnDispatch = func(run *githubtest.Run) {
			// Called under the server's lock: the run starts once the dispatch is answered.
			id, repo, file, ref, change := run.ID, run.Repo, run.Workflow, run.Ref, run.Inputs["change"]
			control := &runControl{}
			a.mu.Lock()
			a.controls[id] = control
			a.mu.Unlock()
			a.wg.Add(1)
			go func() {
				defer a.wg.Done()
				if err := a.run(s, getenv, id, repo, file, ref, change, control); err != nil {
					a.mu.Lock()
					a.errs = append(a.errs, fmt.Sprintf("run %d: %v", id, err))
					a.mu.Unlock()
					s.SetRun(id, "completed", "failure")
				}
			}()
		}
		// A cancel (cancel, finish --cancel) reaches the run's runner, which stops the
		// step under way as GitHub's does, runs the if: always() steps and jobs, and
		// completes the run (a force-cancel: nothing more runs).
		st.Actions.OnCancel = func(run *githubtest.Run, force bool) {
			a.mu.Lock()
			control := a.controls[run.ID]
			a.mu.Unlock()
			if control != nil {
				control.Cancel(force)
			}
		}
	})
}

func (a *autoRunner) run(s *githubtest.Server, getenv func(string) string, id int64, repo, file, ref, change string, control *runControl) error {
	var gitDir string
	var src []byte
	var ok bool
	s.State(func(st *githubtest.State) {
		if rp := st.Repos[strings.ToLower(repo)]; rp != nil {
			gitDir = rp.GitDir
			src, ok = rp.FileAt(ref, ".github/workflows/"+file)
		}
	})
	if !ok {
		return fmt.Errorf("no .github/workflows/%s at %s in %s's bare repository", file, ref, repo)
	}
	s.SetRun(id, "in_progress", "")
	spec := fakeRunSpec{Workflow: src, Remote: gitDir, RunID: fmt.Sprint(id), Change: change,
		Dir: filepath.Join(getenv("WORK"), "runs", fmt.Sprint(id)), Getenv: getenv, Control: control}
	conclusion, log, err := runWorkflow(spec)
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(spec.Dir, "steps.txt"), []byte(strings.Join(append(log, "conclusion "+conclusion), "\n")+"\n"), 0o644); err != nil {
		return err
	}
	name := fmt.Sprintf("ralph-%d", id)
	if dir := filepath.Join(spec.Dir, "artifacts", name); dirExists(dir) {
		z, err := zipDir(dir)
		if err != nil {
			return err
		}
		s.AddArtifact(id, name, z)
	}
	s.SetRun(id, "completed", conclusion)
	return nil
}

// wait waits until every run started has ended, and returns the harness's own failures.
func (a *autoRunner) wait(timeout time.Duration) ([]string, bool) {
	done := make(chan struct{})
	go func() { a.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(timeout):
		return nil, false
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]string(nil), a.errs...), true
}

func dirExists(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}

// zipDir zips the files under root, with paths relative to it.
func zipDir(root string) ([]byte, error) {
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		f, err := zw.Create(filepath.ToSlash(rel))
		if err != nil {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		_, err = f.Write(b)
		return err
	})
	if err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
