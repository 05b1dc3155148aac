package githubtest

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// Actions is the fake's model of GitHub Actions: workflows, and the runs dispatches
// made. A test moves runs along itself (Run.Status, Run.Conclusion), or runs the
// workflow with the fake runner and records the result.
type Actions struct {
	Workflows map[string]*Workflow // by "owner/name/file", lower case
	Runs      []*Run
	NextRun   int64
	// NoRunDetails answers a dispatch that asks for return_run_details with 400, as
	// GitHub Enterprise Server 3.20 and older do.
	NoRunDetails bool
	NextArtifact int64
	// OnDispatch, when set, is called (under the server's lock) with each new run.
	OnDispatch func(*Run)
	// OnCancel, when set, is called (under the server's lock) with a run asked to be
	// cancelled (force: force-cancel), instead of completing it at once: the runner
	// running it stops it as GitHub's would, runs what the cancel leaves to run, and
	// completes it.
	OnCancel func(run *Run, force bool)
	// ListDelay hides a new run from the runs listing for that many listings (-1:
	// for ever), as GitHub lists a dispatched run only a little later.
	ListDelay int
	// PollInterval, when set, is sent as x-poll-interval (seconds) with the runs
	// listing and a run.
	PollInterval int
}

// Workflow is a workflow file of a repository.
type Workflow struct {
	ID    int64
	File  string // e.g. ralph.yml
	State string // "" means active
}

// Run is a run of a workflow.
type Run struct {
	ID         int64
	Repo       string // owner/name
	Workflow   string // file
	Ref        string
	Inputs     map[string]string
	Title      string // run-name: ralph <change> [<nonce>]
	Status     string // queued, in_progress, completed
	Conclusion string
	Created    time.Time
	Artifacts  []*Artifact
	// Logs is the zip GET …/runs/{id}/logs redirects to (nil: 404, as for a run that
	// left no logs); LogsExpired answers 410, as GitHub does after the retention period.
	Logs        []byte
	LogsExpired bool
	// Hidden is how many more listings leave the run out (-1: all of them).
	Hidden int
	// Jobs are the run's jobs and their steps (GET …/runs/{id}/jobs); a test sets
	// them with SetStep.
	Jobs []*Job
}

// Job is a job of a run, with its steps.
type Job struct {
	ID         int64
	Name       string
	Status     string // queued, in_progress, completed
	Conclusion string
	Steps      []*Step
}

// Step is a step of a job.
type Step struct {
	Name       string
	Status     string
	Conclusion string
}

// SetStep makes step the one running in job of a run: the job (added if new) and the
// step (added if new) go in_progress, the steps before it and the jobs before it
// completed with success, the steps after it queued.
func (s *Server) SetStep(runID int64, job, step string) bool {
	found := false
	s.State(func(st *State) {
		for _, run := range st.Actions.Runs {
			if run.ID != runID {
				continue
			}
			found = true
			var j *Job
			for _, x := range run.Jobs {
				if x.Name == job {
					j = x
				}
			}
			if j == nil {
				j = &Job{ID: run.ID*10 + int64(len(run.Jobs)) + 1, Name: job}
				run.Jobs = append(run.Jobs, j)
			}
			for _, x := range run.Jobs {
				if x == j {
					break
				}
				x.Status, x.Conclusion = "completed", "success"
				for _, st := range x.Steps {
					st.Status, st.Conclusion = "completed", "success"
				}
			}
			j.Status, j.Conclusion = "in_progress", ""
			i := 0
			for i < len(j.Steps) && j.Steps[i].Name != step {
				i++
			}
			if i == len(j.Steps) {
				j.Steps = append(j.Steps, &Step{Name: step})
			}
			for k, x := range j.Steps {
				switch {
				case k < i:
					x.Status, x.Conclusion = "completed", "success"
				case k == i:
					x.Status, x.Conclusion = "in_progress", ""
				default:
					x.Status, x.Conclusion = "queued", ""
				}
			}
		}
	})
	return found
}

func (s *Server) listJobs(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	run := s.run(w, r)
	if run == nil {
		return
	}
	jobs := []any{}
	for _, j := range run.Jobs {
		steps := []any{}
		for n, st := range j.Steps {
			steps = append(steps, map[string]any{"name": st.Name, "number": n + 1, "status": st.Status, "conclusion": nullable(st.Conclusion)})
		}
		jobs = append(jobs, map[string]any{"id": j.ID, "run_id": run.ID, "name": j.Name, "status": j.Status,
			"conclusion": nullable(j.Conclusion), "steps": steps})
	}
	JSON(w, 200, map[string]any{"total_count": len(jobs), "jobs": jobs})
}

func nullable(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// Artifact is a zip a run uploaded; Expired answers 410 on download, as GitHub does
// after the retention period.
type Artifact struct {
	ID      int64
	Name    string
	Zip     []byte
	Expired bool
}

// AddArtifact attaches a zip to a run.
func (s *Server) AddArtifact(runID int64, name string, zip []byte) bool {
	found := false
	s.State(func(st *State) {
		for _, run := range st.Actions.Runs {
			if run.ID == runID {
				st.Actions.NextArtifact++
				run.Artifacts = append(run.Artifacts, &Artifact{ID: 5000 + st.Actions.NextArtifact, Name: name, Zip: zip})
				found = true
			}
		}
	})
	return found
}

// ExpireArtifacts marks a run's artifacts expired.
func (s *Server) ExpireArtifacts(runID int64) {
	s.State(func(st *State) {
		for _, run := range st.Actions.Runs {
			if run.ID == runID {
				for _, a := range run.Artifacts {
					a.Expired = true
				}
			}
		}
	})
}

// AddWorkflow adds a workflow file to a repository.
func (s *Server) AddWorkflow(owner, name, file, state string) {
	s.State(func(st *State) {
		st.Actions.Workflows[key(owner, name)+"/"+strings.ToLower(file)] = &Workflow{ID: int64(100 + len(st.Actions.Workflows)), File: file, State: state}
	})
}

// Runs returns a copy of the runs.
func (s *Server) Runs() []Run {
	var out []Run
	s.State(func(st *State) {
		for _, r := range st.Actions.Runs {
			out = append(out, *r)
		}
	})
	return out
}

func (s *Server) actionsRoutes() {
	s.Handle("GET /repos/{owner}/{repo}/actions/workflows/{file}", s.getWorkflow)
	s.Handle("POST /repos/{owner}/{repo}/actions/workflows/{file}/dispatches", s.dispatch)
	s.Handle("GET /repos/{owner}/{repo}/actions/workflows/{file}/runs", s.listRuns)
	s.Handle("GET /repos/{owner}/{repo}/actions/runs/{id}", s.getRun)
	s.Handle("GET /repos/{owner}/{repo}/actions/runs/{id}/jobs", s.listJobs)
	s.Handle("POST /repos/{owner}/{repo}/actions/runs/{id}/cancel", s.cancelRun)
	s.Handle("POST /repos/{owner}/{repo}/actions/runs/{id}/force-cancel", s.cancelRun)
	s.Handle("GET /repos/{owner}/{repo}/actions/runs/{id}/artifacts", s.listArtifacts)
	s.Handle("GET /repos/{owner}/{repo}/actions/artifacts/{id}/zip", s.artifactZip)
	s.Handle("GET /_blob/artifacts/{id}", s.artifactBlob)
	s.Handle("GET /repos/{owner}/{repo}/actions/runs/{id}/logs", s.runLogs)
	s.Handle("GET /_blob/runs/{id}/logs", s.runLogsBlob)
	s.Handle("GET /repos/{owner}/{repo}/contents/{path...}", s.getContents)
}

// FileAt reads a file of a repository's bare repository at a ref ("" is the default
// branch); ok is false when there is no such file (or no bare repository).
func (rp *Repo) FileAt(ref, path string) (data []byte, ok bool) {
	if rp.GitDir == "" {
		return nil, false
	}
	if ref == "" {
		ref = rp.DefaultBranch
	}
	out, err := exec.Command("git", "--git-dir="+rp.GitDir, "cat-file", "blob", ref+":"+path).Output()
	return out, err == nil
}

// getContents is the contents API for a file, from the repository's bare repository,
// base64 in JSON as GitHub answers by default.
func (s *Server) getContents(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	rp := s.repo(w, r)
	if rp == nil {
		return
	}
	data, ok := rp.FileAt(r.URL.Query().Get("ref"), r.PathValue("path"))
	if !ok {
		Fail(w, 404, "Not Found")
		return
	}
	JSON(w, 200, map[string]any{"type": "file", "encoding": "base64", "path": r.PathValue("path"),
		"size": len(data), "content": base64.StdEncoding.EncodeToString(data)})
}

func (s *Server) listArtifacts(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	run := s.run(w, r)
	if run == nil {
		return
	}
	name := r.URL.Query().Get("name")
	out := []map[string]any{}
	for _, a := range run.Artifacts {
		if name == "" || a.Name == name {
			out = append(out, map[string]any{"id": a.ID, "name": a.Name, "size_in_bytes": len(a.Zip), "expired": a.Expired})
		}
	}
	total := len(out)
	JSON(paginate(w, r, &out), 200, map[string]any{"total_count": total, "artifacts": out})
}

// paginate cuts items to the page the request asks for (page, per_page: 30 by
// default, at most 100, as GitHub does) and sets the Link header GitHub sends: next,
// last, first and prev, as absolute URLs on the host and scheme the request came in on.
func paginate[T any](w http.ResponseWriter, r *http.Request, items *[]T) http.ResponseWriter {
	q := r.URL.Query()
	per, err := strconv.Atoi(q.Get("per_page"))
	if err != nil || per <= 0 {
		per = 30
	}
	per = min(per, 100)
	page, err := strconv.Atoi(q.Get("page"))
	if err != nil || page <= 0 {
		page = 1
	}
	n := len(*items)
	last := max(1, (n+per-1)/per)
	lo, hi := min((page-1)*per, n), min(page*per, n)
	*items = (*items)[lo:hi]
	link := func(p int, rel string) string {
		q.Set("page", strconv.Itoa(p))
		u := url.URL{Scheme: "http", Host: r.Host, Path: r.Header.Get(apiPrefixHeader) + r.URL.Path, RawQuery: q.Encode()}
		if r.TLS != nil {
			u.Scheme = "https"
		}
		return fmt.Sprintf("<%s>; rel=%q", u.String(), rel)
	}
	var links []string
	if page < last {
		links = append(links, link(page+1, "next"), link(last, "last"))
	}
	if page > 1 {
		links = append(links, link(1, "first"), link(page-1, "prev"))
	}
	if len(links) > 0 {
		w.Header().Set("Link", strings.Join(links, ", "))
	}
	return w
}

func (s *Server) artifact(id string) *Artifact {
	for _, run := range s.state.Actions.Runs {
		for _, a := range run.Artifacts {
			if fmt.Sprint(a.ID) == id {
				return a
			}
		}
	}
	return nil
}

// artifactZip redirects to a blob URL, as GitHub does (to a short-lived URL elsewhere).
func (s *Server) artifactZip(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.repo(w, r) == nil {
		return
	}
	a := s.artifact(r.PathValue("id"))
	switch {
	case a == nil:
		Fail(w, 404, "Not Found")
	case a.Expired:
		Fail(w, 410, "Artifact has expired")
	default:
		redirectToBlob(w, r, "/_blob/artifacts/"+r.PathValue("id"))
	}
}

// BlobHost is the host the fake's downloads redirect to: outside the API's domain, as
// GitHub's are (a storage host with a signed URL), so a client that follows the
// redirect must not send the token there.
const BlobHost = "blob.localhost"

func redirectToBlob(w http.ResponseWriter, r *http.Request, path string) {
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	w.Header().Set("Location", scheme+"://"+BlobHost+path)
	w.WriteHeader(http.StatusFound)
}

// SetRunLogs gives a run the zip of its logs (see Run.Logs).
func (s *Server) SetRunLogs(runID int64, zip []byte) bool {
	found := false
	s.State(func(st *State) {
		for _, run := range st.Actions.Runs {
			if run.ID == runID {
				run.Logs, found = zip, true
			}
		}
	})
	return found
}

// ExpireRunLogs makes a run's logs answer 410.
func (s *Server) ExpireRunLogs(runID int64) {
	s.State(func(st *State) {
		for _, run := range st.Actions.Runs {
			if run.ID == runID {
				run.LogsExpired = true
			}
		}
	})
}

// runLogs is GET …/runs/{id}/logs: 302 to a blob URL, as GitHub answers, 410 once
// expired, 404 when the run has none.
func (s *Server) runLogs(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	run := s.run(w, r)
	switch {
	case run == nil:
	case run.LogsExpired:
		Fail(w, 410, "Gone")
	case run.Logs == nil:
		Fail(w, 404, "Not Found")
	default:
		redirectToBlob(w, r, fmt.Sprintf("/_blob/runs/%d/logs", run.ID))
	}
}

func (s *Server) runLogsBlob(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, run := range s.state.Actions.Runs {
		if fmt.Sprint(run.ID) == r.PathValue("id") && run.Logs != nil && !run.LogsExpired {
			w.Header().Set("Content-Type", "application/zip")
			_, _ = w.Write(run.Logs)
			return
		}
	}
	http.NotFound(w, r)
}

func (s *Server) artifactBlob(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	a := s.artifact(r.PathValue("id"))
	if a == nil {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", "application/zip")
	_, _ = w.Write(a.Zip)
}

func (s *Server) workflow(w http.ResponseWriter, r *http.Request) (*Repo, *Workflow) {
	rp := s.repo(w, r)
	if rp == nil {
		return nil, nil
	}
	wf := s.state.Actions.Workflows[key(rp.Owner, rp.Name)+"/"+strings.ToLower(r.PathValue("file"))]
	if wf == nil {
		Fail(w, 404, "Not Found")
	}
	return rp, wf
}

func workflowJSON(wf *Workflow) map[string]any {
	state := wf.State
	if state == "" {
		state = "active"
	}
	return map[string]any{"id": wf.ID, "name": "ralph", "path": ".github/workflows/" + wf.File, "state": state}
}

func (s *Server) getWorkflow(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, wf := s.workflow(w, r); wf != nil {
		JSON(w, 200, workflowJSON(wf))
	}
}

func (s *Server) dispatch(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	rp, wf := s.workflow(w, r)
	if wf == nil {
		return
	}
	var body struct {
		Ref              string            `json:"ref"`
		Inputs           map[string]string `json:"inputs"`
		ReturnRunDetails *bool             `json:"return_run_details"`
	}
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		Fail(w, 400, "Problems parsing JSON")
		return
	}
	a := &s.state.Actions
	if body.ReturnRunDetails != nil && a.NoRunDetails {
		Fail(w, 400, `Invalid request.\n\n"return_run_details" is not a permitted key.`)
		return
	}
	if _, ok := rp.BranchesOf()[body.Ref]; !ok {
		Fail(w, 422, "No ref found for: "+body.Ref)
		return
	}
	if wf.State != "" && wf.State != "active" {
		Fail(w, 422, "Workflow is disabled")
		return
	}
	// The copy of the file at the ref is the one that runs (when the bare repository has it).
	if src, ok := rp.FileAt(body.Ref, ".github/workflows/"+wf.File); ok && !hasDispatchTrigger(src) {
		Fail(w, 422, "Workflow does not have 'workflow_dispatch' trigger")
		return
	}
	run := &Run{ID: a.NextRun, Repo: rp.Owner + "/" + rp.Name, Workflow: wf.File, Ref: body.Ref, Inputs: body.Inputs,
		Title: fmt.Sprintf("ralph %s [%s]", body.Inputs["change"], body.Inputs["nonce"]), Status: "queued", Created: time.Now(),
		Hidden: a.ListDelay}
	a.NextRun++
	a.Runs = append(a.Runs, run)
	if a.OnDispatch != nil {
		a.OnDispatch(run)
	}
	if body.ReturnRunDetails != nil && *body.ReturnRunDetails {
		JSON(w, 200, map[string]any{"workflow_run_id": run.ID,
			"run_url":  fmt.Sprintf("https://api.github.com/repos/%s/actions/runs/%d", run.Repo, run.ID),
			"html_url": runHTML(run)})
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// hasDispatchTrigger is GitHub's view of a workflow file: on: names workflow_dispatch
// (a string, a list item or a key). Written apart from the client's check on purpose.
func hasDispatchTrigger(src []byte) bool {
	var doc struct {
		On yaml.Node `yaml:"on"`
	}
	if yaml.Unmarshal(src, &doc) != nil {
		return false
	}
	on := doc.On
	switch on.Kind {
	case yaml.ScalarNode:
		return on.Value == "workflow_dispatch"
	case yaml.SequenceNode:
		for _, n := range on.Content {
			if n.Value == "workflow_dispatch" {
				return true
			}
		}
	case yaml.MappingNode:
		for i := 0; i < len(on.Content); i += 2 {
			if on.Content[i].Value == "workflow_dispatch" {
				return true
			}
		}
	}
	return false
}

func runHTML(run *Run) string {
	return fmt.Sprintf("https://github.com/%s/actions/runs/%d", run.Repo, run.ID)
}

func (s *Server) listRuns(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	rp, wf := s.workflow(w, r)
	if wf == nil {
		return
	}
	event := r.URL.Query().Get("event")
	runs := []map[string]any{}
	for i := len(s.state.Actions.Runs) - 1; i >= 0; i-- { // newest first
		run := s.state.Actions.Runs[i]
		if !strings.EqualFold(run.Repo, rp.Owner+"/"+rp.Name) || run.Workflow != wf.File || (event != "" && event != "workflow_dispatch") {
			continue
		}
		if run.Hidden != 0 {
			if run.Hidden > 0 {
				run.Hidden--
			}
			continue
		}
		runs = append(runs, runJSON(run))
	}
	s.conditional(w, r, map[string]any{"total_count": len(runs), "workflow_runs": runs})
}

// conditional answers v with an ETag, or 304 when the request's If-None-Match is that
// ETag (GitHub's conditional requests), and x-poll-interval when the test set one.
func (s *Server) conditional(w http.ResponseWriter, r *http.Request, v any) {
	b, _ := json.Marshal(v)
	tag := fmt.Sprintf(`W/"%x"`, sha256.Sum256(b))
	w.Header().Set("ETag", tag)
	if n := s.state.Actions.PollInterval; n > 0 {
		w.Header().Set("X-Poll-Interval", fmt.Sprint(n))
	}
	if r.Header.Get("If-None-Match") == tag {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	JSON(w, 200, v)
}

func (s *Server) run(w http.ResponseWriter, r *http.Request) *Run {
	rp := s.repo(w, r)
	if rp == nil {
		return nil
	}
	for _, run := range s.state.Actions.Runs {
		if strings.EqualFold(run.Repo, rp.Owner+"/"+rp.Name) && fmt.Sprint(run.ID) == r.PathValue("id") {
			return run
		}
	}
	Fail(w, 404, "Not Found")
	return nil
}

func runJSON(run *Run) map[string]any {
	var conclusion any
	if run.Conclusion != "" {
		conclusion = run.Conclusion
	}
	return map[string]any{"id": run.ID, "display_title": run.Title, "status": run.Status,
		"conclusion": conclusion, "event": "workflow_dispatch", "head_branch": run.Ref,
		"html_url": runHTML(run), "created_at": run.Created.UTC().Format(time.RFC3339)}
}

func (s *Server) getRun(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if run := s.run(w, r); run != nil {
		s.conditional(w, r, runJSON(run))
	}
}

// cancelRun answers 409 for a completed run, as GitHub does; otherwise the run is
// cancelled at once (a test that wants the always() steps runs them itself), or handed
// to OnCancel.
func (s *Server) cancelRun(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	run := s.run(w, r)
	if run == nil {
		return
	}
	if run.Status == "completed" {
		Fail(w, 409, "Cannot cancel a workflow run that is completed.")
		return
	}
	if s.state.Actions.OnCancel != nil {
		s.state.Actions.OnCancel(run, strings.HasSuffix(r.URL.Path, "/force-cancel"))
		JSON(w, 202, map[string]any{})
		return
	}
	run.Status, run.Conclusion = "completed", "cancelled"
	JSON(w, 202, map[string]any{})
}

// SetRun moves a run along: status, and conclusion once completed.
func (s *Server) SetRun(id int64, status, conclusion string) bool {
	found := false
	s.State(func(st *State) {
		for _, run := range st.Actions.Runs {
			if run.ID == id {
				run.Status, run.Conclusion, found = status, conclusion, true
			}
		}
	})
	return found
}
