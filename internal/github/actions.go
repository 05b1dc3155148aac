package github

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/cli/go-gh/v2/pkg/api"
	"go.yaml.in/yaml/v3"
)

// The GitHub Actions pieces git-ralph uses to run a loop on a runner (docs/REMOTE.md, "The GitHub API used").

// Workflow is a workflow file of a repository.
type Workflow struct {
	ID    int64  `json:"id"`
	Name  string `json:"name"`
	Path  string `json:"path"`
	State string `json:"state"` // active, disabled_manually, disabled_inactivity, …
}

// WorkflowRun is one run of a workflow.
type WorkflowRun struct {
	ID           int64     `json:"id"`
	DisplayTitle string    `json:"display_title"`
	Status       string    `json:"status"`     // queued, in_progress, completed, …
	Conclusion   string    `json:"conclusion"` // success, failure, cancelled, … once completed
	Event        string    `json:"event"`
	HeadBranch   string    `json:"head_branch"`
	HTMLURL      string    `json:"html_url"`
	CreatedAt    time.Time `json:"created_at"`
}

func workflowPath(r Repo, file string) string {
	return r.path() + "/actions/workflows/" + url.PathEscape(file)
}

// Workflow returns a workflow by its file name (e.g. ralph.yml); an *Error with status
// 404 when the default branch has no such file.
func (c *Client) Workflow(ctx context.Context, r Repo, file string) (*Workflow, error) {
	var out Workflow
	if err := c.Do(ctx, http.MethodGet, workflowPath(r, file), nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Dispatch is the body of POST …/actions/workflows/{file}/dispatches.
type Dispatch struct {
	Ref    string            `json:"ref"`
	Inputs map[string]string `json:"inputs"`
	// ReturnRunDetails asks for the run's id in the answer (GitHub since 2026-02;
	// Enterprise Server 3.20 and older refuse the field).
	ReturnRunDetails bool `json:"return_run_details,omitempty"`
}

// DispatchResult is what GitHub says about a dispatched run: nothing (204), or its id
// and pages when asked for them (200).
type DispatchResult struct {
	RunID   int64  `json:"workflow_run_id"`
	RunURL  string `json:"run_url"`
	HTMLURL string `json:"html_url"`
}

// DispatchWorkflow starts a run of a workflow. With d.ReturnRunDetails it retries once
// without the field when GitHub refuses it (400 or 422 naming it), as Enterprise
// Server 3.20 does; the result is then empty and the run is found by its title.
func (c *Client) DispatchWorkflow(ctx context.Context, r Repo, file string, d Dispatch) (DispatchResult, error) {
	var out DispatchResult
	err := c.Do(ctx, http.MethodPost, workflowPath(r, file)+"/dispatches", d, &out)
	var e *Error
	if errors.As(err, &e) && d.ReturnRunDetails && (e.StatusCode == 400 || e.StatusCode == 422) &&
		strings.Contains(strings.ToLower(e.Error()+e.Text()), "return_run_details") {
		d.ReturnRunDetails = false
		out = DispatchResult{}
		err = c.Do(ctx, http.MethodPost, workflowPath(r, file)+"/dispatches", d, &out)
	}
	return out, err
}

// DispatchedRuns lists the newest runs of a workflow started by workflow_dispatch (one
// page of up to 100).
func (c *Client) DispatchedRuns(ctx context.Context, r Repo, file string) ([]WorkflowRun, error) {
	runs, _, err := c.DispatchedRunsIfChanged(ctx, r, file, "")
	return runs, err
}

// DispatchedRunsIfChanged is DispatchedRuns as a conditional request: with the ETag of
// an earlier answer, GitHub says 304 (Poll.NotModified, runs nil) when nothing changed,
// which does not count against the rate limit.
func (c *Client) DispatchedRunsIfChanged(ctx context.Context, r Repo, file, etag string) ([]WorkflowRun, Poll, error) {
	q := url.Values{"event": {"workflow_dispatch"}, "per_page": {"100"}}
	var out struct {
		Runs []WorkflowRun `json:"workflow_runs"`
	}
	p, err := c.GetIfChanged(ctx, workflowPath(r, file)+"/runs?"+q.Encode(), etag, &out)
	if err != nil || p.NotModified {
		return nil, p, err
	}
	return out.Runs, p, nil
}

// Run returns a workflow run by id.
func (c *Client) Run(ctx context.Context, r Repo, id int64) (*WorkflowRun, error) {
	var out WorkflowRun
	if err := c.Do(ctx, http.MethodGet, r.path()+"/actions/runs/"+strconv.FormatInt(id, 10), nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Job is a job of a workflow run, with its steps.
type Job struct {
	ID         int64     `json:"id"`
	Name       string    `json:"name"`
	Status     string    `json:"status"`     // queued, in_progress, completed, …
	Conclusion string    `json:"conclusion"` // once completed
	Steps      []JobStep `json:"steps"`
}

// JobStep is a step of a job.
type JobStep struct {
	Name       string `json:"name"`
	Number     int    `json:"number"`
	Status     string `json:"status"`
	Conclusion string `json:"conclusion"`
}

// RunJobs lists the jobs of a run's latest attempt (one page of up to 100).
func (c *Client) RunJobs(ctx context.Context, r Repo, id int64) ([]Job, error) {
	q := url.Values{"filter": {"latest"}, "per_page": {"100"}}
	var out struct {
		Jobs []Job `json:"jobs"`
	}
	if err := c.Do(ctx, http.MethodGet, r.path()+"/actions/runs/"+strconv.FormatInt(id, 10)+"/jobs?"+q.Encode(), nil, &out); err != nil {
		return nil, err
	}
	return out.Jobs, nil
}

// CurrentStep names the job and step a run is at: the first job in progress and its
// first step in progress (or, between steps, the job alone); "" when none is.
func CurrentStep(jobs []Job) (job, step string) {
	for _, j := range jobs {
		if j.Status != "in_progress" {
			continue
		}
		for _, s := range j.Steps {
			if s.Status == "in_progress" {
				return j.Name, s.Name
			}
		}
		return j.Name, ""
	}
	return "", ""
}

// CancelRun asks GitHub to cancel a run (202), or with force to force-cancel it,
// skipping its always() steps. A run that is already completed is an *Error with
// status 409.
func (c *Client) CancelRun(ctx context.Context, r Repo, id int64, force bool) error {
	what := "/cancel"
	if force {
		what = "/force-cancel"
	}
	return c.Do(ctx, http.MethodPost, r.path()+"/actions/runs/"+strconv.FormatInt(id, 10)+what, nil, nil)
}

// Artifact is a file set a run uploaded.
type Artifact struct {
	ID      int64  `json:"id"`
	Name    string `json:"name"`
	Size    int64  `json:"size_in_bytes"`
	Expired bool   `json:"expired"`
}

// RunArtifacts lists a run's artifacts called name, following GitHub's pages (at most
// MaxPages of 100).
func (c *Client) RunArtifacts(ctx context.Context, r Repo, runID int64, name string) ([]Artifact, error) {
	q := url.Values{"name": {name}, "per_page": {"100"}}
	var all []Artifact
	err := c.GetPages(ctx, r.path()+"/actions/runs/"+strconv.FormatInt(runID, 10)+"/artifacts?"+q.Encode(), func(dec func(any) error) error {
		var out struct {
			Artifacts []Artifact `json:"artifacts"`
		}
		err := dec(&out)
		all = append(all, out.Artifacts...)
		return err
	})
	if err != nil {
		return nil, err
	}
	return all, nil
}

// maxDownload bounds an artifact download.
const maxDownload = 512 << 20

// DownloadArtifact returns an artifact's zip. GitHub answers with a redirect to a
// short-lived URL on another host, which is followed without the token; an expired
// artifact is an *Error with status 410.
func (c *Client) DownloadArtifact(ctx context.Context, r Repo, id int64) ([]byte, error) {
	return c.download(ctx, r.path()+"/actions/artifacts/"+strconv.FormatInt(id, 10)+"/zip", fmt.Sprintf("artifact %d", id))
}

// RunLogs returns the zip of a run's own logs (one file per job, and a folder per job
// with one file per step when GitHub kept them). GitHub redirects to a short-lived URL
// on another host, which is followed without the token; expired logs are an *Error
// with status 410, a run without logs (not finished yet) one with 404.
func (c *Client) RunLogs(ctx context.Context, r Repo, runID int64) ([]byte, error) {
	return c.download(ctx, r.path()+"/actions/runs/"+strconv.FormatInt(runID, 10)+"/logs", fmt.Sprintf("the logs of run %d", runID))
}

// download GETs a zip GitHub answers with a redirect to a blob host. go-gh adds the
// token only to hosts of the API's domain, so the blob host never sees it.
func (c *Client) download(ctx context.Context, path, what string) ([]byte, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	resp, err := c.rest.RequestWithContext(ctx, http.MethodGet, path, nil)
	if err != nil {
		var he *api.HTTPError
		if errors.As(err, &he) {
			return nil, newError(http.MethodGet, path, he, time.Now())
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, &NetworkError{Host: c.host, Err: err}
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxDownload+1))
	if err != nil {
		return nil, &NetworkError{Host: c.host, Err: err}
	}
	if len(b) > maxDownload {
		return nil, fmt.Errorf("%s: larger than %d bytes", what, maxDownload)
	}
	return b, nil
}

// FileAt returns a file of a repository as it is at a ref (a branch or tag), through
// the contents API; an *Error with status 404 when the ref has no such file.
func (c *Client) FileAt(ctx context.Context, r Repo, path, ref string) ([]byte, error) {
	var out struct {
		Type     string `json:"type"`
		Encoding string `json:"encoding"`
		Content  string `json:"content"`
	}
	segs := strings.Split(path, "/")
	for i, s := range segs {
		segs[i] = url.PathEscape(s)
	}
	p := r.path() + "/contents/" + strings.Join(segs, "/") + "?ref=" + url.QueryEscape(ref)
	if err := c.Do(ctx, http.MethodGet, p, nil, &out); err != nil {
		return nil, err
	}
	if out.Type != "file" || out.Encoding != "base64" {
		return nil, fmt.Errorf("%s at %s in %s is not a file GitHub returns inline (type %q, encoding %q)", path, ref, r, out.Type, out.Encoding)
	}
	return base64.StdEncoding.DecodeString(strings.NewReplacer("\n", "", "\r", "").Replace(out.Content))
}

// Dispatchable tells whether a workflow file can be started by a workflow_dispatch
// event: its on: names workflow_dispatch, as a string, in a list or as a key. An error
// is a file that is not YAML, which GitHub would not run either.
func Dispatchable(src []byte) (bool, error) {
	var doc map[string]any
	if err := yaml.Unmarshal(src, &doc); err != nil {
		return false, err
	}
	switch v := doc["on"].(type) {
	case string:
		return v == "workflow_dispatch", nil
	case []any:
		for _, e := range v {
			if e == "workflow_dispatch" {
				return true, nil
			}
		}
	case map[string]any:
		_, ok := v["workflow_dispatch"]
		return ok, nil
	}
	return false, nil
}
