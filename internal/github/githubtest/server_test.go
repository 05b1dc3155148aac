package githubtest

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

func do(t *testing.T, s *Server, method, path, body string, auth bool) *http.Response {
	t.Helper()
	req, err := http.NewRequest(method, "http://api.github.localhost"+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if auth {
		req.Header.Set("Authorization", "token T")
	}
	resp, err := (&http.Client{Transport: s.Transport(), Timeout: 5 * time.Second}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

// Overrides apply to the requests they match, as many times as told, and every
// request is recorded with its status and whether it was authenticated.
func TestOverridesAndRecord(t *testing.T) {
	s := New()
	defer s.Close()
	s.AddRepo(Repo{Owner: "acme", Name: "widgets", Branches: map[string]string{"main": "1111"}})
	s.AddOverride(Override{Method: "GET", Path: "/repos/*/*", Status: 503, Times: 1})
	if r := do(t, s, "GET", "/repos/acme/widgets", "", true); r.StatusCode != 503 {
		t.Fatalf("first: %d", r.StatusCode)
	}
	if r := do(t, s, "GET", "/repos/acme/widgets", "", false); r.StatusCode != 200 {
		t.Fatalf("second: %d", r.StatusCode)
	}
	if r := do(t, s, "GET", "/repos/acme/widgets/branches/nope", "", true); r.StatusCode != 404 {
		t.Fatalf("missing branch: %d", r.StatusCode)
	}
	want := "GET api.github.localhost/repos/acme/widgets auth=yes 503\n" +
		"GET api.github.localhost/repos/acme/widgets auth=no 200\n" +
		"GET api.github.localhost/repos/acme/widgets/branches/nope auth=yes 404\n"
	if got := Dump(s.Requests()); got != want {
		t.Fatalf("Dump:\n%s\nwant:\n%s", got, want)
	}
}

// Handle adds routes that other tests need (the Actions API, say), with the model
// under State.
func TestHandleExtends(t *testing.T) {
	s := New()
	defer s.Close()
	s.AddRepo(Repo{Owner: "acme", Name: "widgets"})
	s.Handle("GET /repos/{owner}/{repo}/actions/runs/{id}/timing", func(w http.ResponseWriter, r *http.Request) {
		var name string
		s.State(func(st *State) { name = st.Repos[key(r.PathValue("owner"), r.PathValue("repo"))].Name })
		JSON(w, 200, map[string]any{"run": r.PathValue("id"), "repo": name})
	})
	r := do(t, s, "GET", "/repos/acme/widgets/actions/runs/7/timing", "", true)
	b, _ := io.ReadAll(r.Body)
	if r.StatusCode != 200 || !strings.Contains(string(b), `"repo":"widgets"`) {
		t.Fatalf("%d %s", r.StatusCode, b)
	}
}

// HangAfter carries the request out and never answers; WaitFor sees it.
func TestHangAfter(t *testing.T) {
	s := New()
	s.AddRepo(Repo{Owner: "acme", Name: "widgets", Branches: map[string]string{"main": "1", "x": "2"}})
	s.AddOverride(Override{Method: "POST", Path: "/repos/acme/widgets/pulls", HangAfter: true, Times: 1})
	done := make(chan error, 1)
	go func() {
		req, _ := http.NewRequest("POST", "http://api.github.localhost/repos/acme/widgets/pulls",
			strings.NewReader(`{"title":"T","head":"x","base":"main"}`))
		_, err := (&http.Client{Transport: s.Transport()}).Do(req)
		done <- err
	}()
	if !s.WaitFor("POST", "/repos/*/*/pulls", 5*time.Second) {
		t.Fatal("no POST seen")
	}
	if p := s.Pulls("acme", "widgets"); len(p) != 1 || p[0].Head != "x" {
		t.Fatalf("pulls %+v", p)
	}
	select {
	case err := <-done:
		t.Fatalf("answered: %v", err)
	case <-time.After(100 * time.Millisecond):
	}
	s.Close()
	if err := <-done; err == nil {
		t.Fatal("a hanging request ended without error")
	}
}

// The Actions model: a workflow, a dispatch that returns the run's id (or 204 and a
// listing for GHES), a run listed by its title, 404 for an unknown workflow and 422 for
// an unknown ref.
func TestActions(t *testing.T) {
	s := New()
	defer s.Close()
	s.AddRepo(Repo{Owner: "acme", Name: "widgets", Branches: map[string]string{"main": "1"}})
	s.AddWorkflow("acme", "widgets", "ralph.yml", "")
	if r := do(t, s, "GET", "/repos/acme/widgets/actions/workflows/nope.yml", "", true); r.StatusCode != 404 {
		t.Errorf("unknown workflow: %d", r.StatusCode)
	}
	body := `{"ref":"main","inputs":{"change":"x","nonce":"n1"},"return_run_details":true}`
	r := do(t, s, "POST", "/repos/acme/widgets/actions/workflows/ralph.yml/dispatches", body, true)
	b, _ := io.ReadAll(r.Body)
	if r.StatusCode != 200 || !strings.Contains(string(b), `"workflow_run_id":1001`) {
		t.Fatalf("dispatch: %d %s", r.StatusCode, b)
	}
	if r := do(t, s, "POST", "/repos/acme/widgets/actions/workflows/ralph.yml/dispatches", `{"ref":"nope","inputs":{}}`, true); r.StatusCode != 422 {
		t.Errorf("unknown ref: %d", r.StatusCode)
	}
	s.State(func(st *State) { st.Actions.NoRunDetails = true })
	if r := do(t, s, "POST", "/repos/acme/widgets/actions/workflows/ralph.yml/dispatches", body, true); r.StatusCode != 400 {
		t.Errorf("GHES with return_run_details: %d", r.StatusCode)
	}
	if r := do(t, s, "POST", "/repos/acme/widgets/actions/workflows/ralph.yml/dispatches", `{"ref":"main","inputs":{"change":"y","nonce":"n2"}}`, true); r.StatusCode != 204 {
		t.Errorf("GHES without it: %d", r.StatusCode)
	}
	r = do(t, s, "GET", "/repos/acme/widgets/actions/workflows/ralph.yml/runs?event=workflow_dispatch", "", true)
	b, _ = io.ReadAll(r.Body)
	if !strings.Contains(string(b), `"display_title":"ralph y [n2]"`) || !strings.Contains(string(b), `"display_title":"ralph x [n1]"`) {
		t.Errorf("runs: %s", b)
	}
}

// AfterRequest changes the model once the request it waits for has been answered, and
// only then.
func TestAfterRequest(t *testing.T) {
	s := New()
	defer s.Close()
	s.AddRepo(Repo{Owner: "a", Name: "b"})
	s.SetIssue("a", "b", Issue{Number: 1, Title: "T", Body: "old"})
	s.AfterRequest("GET", "/repos/a/b/issues/1", 1, func(st *State) { st.Repos["a/b"].issue(1).Body = "new" })
	for i, want := range []string{"old", "old", "new"} {
		if got, _ := s.GetIssue("a", "b", 1); got.Body != want {
			t.Fatalf("before request %d: %q, want %q", i+1, got.Body, want)
		}
		do(t, s, "GET", "/repos/a/b/issues/1", "", true)
	}
}
