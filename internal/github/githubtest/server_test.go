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
	s.Handle("GET /repos/{owner}/{repo}/actions/workflows/{file}", func(w http.ResponseWriter, r *http.Request) {
		var name string
		s.State(func(st *State) { name = st.Repos[key(r.PathValue("owner"), r.PathValue("repo"))].Name })
		JSON(w, 200, map[string]any{"path": ".github/workflows/" + r.PathValue("file"), "repo": name})
	})
	r := do(t, s, "GET", "/repos/acme/widgets/actions/workflows/ralph.yml", "", true)
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
