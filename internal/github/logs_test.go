package github_test

import (
	"crypto/x509"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/git-ralph/git-ralph/internal/github"
	"github.com/git-ralph/git-ralph/internal/github/githubtest"
)

func addRun(srv *githubtest.Server, id int64) {
	srv.State(func(st *githubtest.State) {
		st.Actions.Runs = append(st.Actions.Runs, &githubtest.Run{ID: id, Repo: "acme/widgets", Status: "completed", Conclusion: "failure"})
	})
}

// A run's own logs come through GitHub's 302 to a blob host, fetched without the
// token; expired logs are a 410, a run without any a 404.
func TestRunLogs(t *testing.T) {
	srv, c, repo := fixture(t)
	addRun(srv, 7)
	if _, err := c.RunLogs(t.Context(), repo, 7); github.StatusOf(err) != 404 {
		t.Fatalf("no logs: %v, want a 404", err)
	}
	srv.SetRunLogs(7, []byte("PK-zip"))
	got, err := c.RunLogs(t.Context(), repo, 7)
	if err != nil || string(got) != "PK-zip" {
		t.Fatalf("RunLogs = %q, %v", got, err)
	}
	var api, blob *githubtest.Request
	for _, r := range srv.Requests() {
		switch {
		case r.Path == "/repos/acme/widgets/actions/runs/7/logs" && r.Status == 302:
			api = &r
		case r.Path == "/_blob/runs/7/logs":
			blob = &r
		}
	}
	if api == nil || !api.Auth || api.Token != "T1" {
		t.Fatalf("the API request: %+v", api)
	}
	if blob == nil || blob.Auth || blob.Host != githubtest.BlobHost || blob.Status != 200 {
		t.Fatalf("the blob request (must carry no token): %+v", blob)
	}
	srv.ExpireRunLogs(7)
	if _, err := c.RunLogs(t.Context(), repo, 7); github.StatusOf(err) != 410 {
		t.Fatalf("expired: %v, want a 410", err)
	}
}

// The artifacts listing is paginated with Link headers, which the client follows; an
// artifact download sends no token to the blob host either.
func TestRunArtifactsPages(t *testing.T) {
	srv, c, repo := fixture(t)
	addRun(srv, 7)
	for i := range 250 {
		name := "other"
		if i%2 == 0 || i == 249 {
			name = "ralph-7"
		}
		srv.AddArtifact(7, name, []byte(fmt.Sprint(i)))
	}
	arts, err := c.RunArtifacts(t.Context(), repo, 7, "ralph-7")
	if err != nil {
		t.Fatal(err)
	}
	if len(arts) != 126 || arts[125].ID != 5250 {
		t.Fatalf("%d artifacts, last %+v; want 126, the last 5250", len(arts), arts[len(arts)-1])
	}
	var pages []string
	for _, r := range srv.Requests() {
		if strings.HasSuffix(r.Path, "/artifacts") {
			pages = append(pages, r.Query)
		}
	}
	if len(pages) != 2 || !strings.Contains(pages[1], "page=2") || !strings.Contains(pages[1], "name=ralph-7") {
		t.Fatalf("pages asked for: %q", pages)
	}
	data, err := c.DownloadArtifact(t.Context(), repo, arts[125].ID)
	if err != nil || string(data) != "249" {
		t.Fatalf("download = %q, %v", data, err)
	}
	reqs := srv.Requests()
	if last := reqs[len(reqs)-1]; last.Host != githubtest.BlobHost || last.Auth {
		t.Fatalf("the blob request (must carry no token): %+v", last)
	}
}

// A Link header that never ends, or that points off GitHub's host, is not followed for
// ever, nor with the token.
func TestPagesBounded(t *testing.T) {
	var hits int
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits++
		next := "https://api.github.com/repos/acme/widgets/actions/runs/7/artifacts?page=" + fmt.Sprint(hits+1)
		if r.URL.Query().Get("page") == "3" && r.URL.Query().Get("off") == "" {
			next = "https://evil.example/steal?page=4"
		}
		if r.URL.Query().Get("off") != "" {
			next += "&off=1"
		}
		w.Header().Set("Link", "<"+next+`>; rel="next", <https://api.github.com/x?page=99>; rel="last"`)
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"artifacts":[{"id":1,"name":"ralph-7"}]}`)
	}))
	defer ts.Close()
	c, err := github.New("github.com", github.Options{Token: "T1", Transport: rewriteTo(ts.URL)})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.RunArtifacts(t.Context(), github.Repo{Host: "github.com", Owner: "acme", Name: "widgets"}, 7, "ralph-7")
	if err == nil || !strings.Contains(err.Error(), "evil.example") || hits != 3 {
		t.Fatalf("off-host next page: %v after %d requests", err, hits)
	}
	hits = 0
	err = c.GetPages(t.Context(), "repos/acme/widgets/actions/runs/7/artifacts?off=1", func(func(any) error) error { return nil })
	if err == nil || !strings.Contains(err.Error(), "more than") || hits != github.MaxPages {
		t.Fatalf("endless pages: %v after %d requests", err, hits)
	}
}

type rewriteTo string

func (to rewriteTo) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.URL.Scheme, r.URL.Host = "http", strings.TrimPrefix(string(to), "http://")
	return http.DefaultTransport.RoundTrip(r)
}

// An Enterprise host's next page keeps /api/v3 and HTTPS, and its downloads go to the
// blob host over HTTPS without the token.
func TestEnterprisePagesAndLogs(t *testing.T) {
	srv, _, repo := fixture(t)
	ca, err := srv.EnableTLS()
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(ca)
	proxy, _ := url.Parse(srv.URL())
	c, err := github.New("ghe.example.com", github.Options{Token: "E1", Transport: &http.Transport{Proxy: http.ProxyURL(proxy),
		TLSClientConfig: newTLSConfig(pool)}})
	if err != nil {
		t.Fatal(err)
	}
	repo.Host = "ghe.example.com"
	addRun(srv, 7)
	for range 150 {
		srv.AddArtifact(7, "ralph-7", []byte("z"))
	}
	srv.SetRunLogs(7, []byte("PK-logs"))
	arts, err := c.RunArtifacts(t.Context(), repo, 7, "ralph-7")
	if err != nil || len(arts) != 150 {
		t.Fatalf("%d artifacts, %v", len(arts), err)
	}
	if got, err := c.RunLogs(t.Context(), repo, 7); err != nil || string(got) != "PK-logs" {
		t.Fatalf("RunLogs = %q, %v", got, err)
	}
	reqs := srv.Requests()
	if last := reqs[len(reqs)-1]; last.Host != githubtest.BlobHost || last.Auth || last.Status != 200 {
		t.Fatalf("the blob request: %+v", last)
	}
}
