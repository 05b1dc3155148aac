// Package githubtest is a fake GitHub for tests: an HTTP server with an in-memory model
// of repositories, branches, pull requests, issues (issues.go) and Actions (actions.go),
// checked against GitHub's OpenAPI description (openapi.go), per-test status
// overrides, and a record of every request. It is linked only into test binaries.
//
// Point a client at it in one of two ways:
//   - in-process, with Server.Transport() as the client's transport;
//   - a child process (the real git-ralph binary): HTTP_PROXY=Server.URL() with
//     GH_HOST=github.localhost (go-gh then sends plain http://api.github.localhost/…,
//     which the proxy variable carries here). Enterprise hosts are served over HTTPS:
//     EnableTLS makes the server a CONNECT proxy that terminates TLS with certificates
//     of its own CA; give the child HTTPS_PROXY=Server.URL() and SSL_CERT_FILE=<the CA>.
//
// A repository may be backed by a bare git repository (Repo.GitDir), the one the test
// uses as a git remote: its branches are then read from it on every request, so a
// `git push` is seen at once.
//
// Other tests extend the fake with Handle (new routes) and State (the model, under the
// server's lock).
package githubtest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"path"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Server is the fake GitHub.
type Server struct {
	srv *httptest.Server
	mux *http.ServeMux

	mu        sync.Mutex
	state     State
	overrides []*Override
	requests  []Request
	seen      chan struct{} // closed and replaced on every request, for WaitFor
	tls       *tlsProxy
	// violations are what requests and answers did not conform to GitHub's OpenAPI
	// description (openapi.go).
	violations []string
	afters     []*after
}

// after is a change to the model made once a request has been answered (AfterRequest).
type after struct {
	method, path string
	skip         int // matching requests to let by first
	f            func(*State)
}

// AfterRequest runs f with the model (under the lock) once the (skip+1)-th request with
// method and path (a path.Match pattern; method "" for any) has been answered: someone
// on GitHub acting at a given point of a run, with no timing involved.
func (s *Server) AfterRequest(method, pattern string, skip int, f func(*State)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.afters = append(s.afters, &after{method: method, path: pattern, skip: skip, f: f})
}

// State is the fake's model. Read or change it only inside Server.State.
type State struct {
	Repos  map[string]*Repo // by "owner/name", lower case
	NextPR int              // the next pull request's number; issues share the numbers
	// NextComment numbers the comments the client writes.
	NextComment int64

	Actions Actions // workflows and their runs (actions.go)
}

// Repo is a repository of the fake.
type Repo struct {
	Owner, Name   string
	DefaultBranch string // "" means main
	// GitDir is a bare repository whose refs/heads are this repository's branches;
	// "" keeps them in Branches instead.
	GitDir   string
	Branches map[string]string // branch → commit id, when GitDir is ""
	Parent   string            // "owner/name" of the repository this is a fork of
	Private  bool
	Pulls    []*PullRequest
	Issues   []*Issue // issues.go
}

// PullRequest is a pull request of the fake.
type PullRequest struct {
	Number     int
	Title      string
	Body       string
	Head       string // branch name
	HeadOwner  string // owner of the repository the head branch is in
	Base       string
	Draft      bool
	State      string // open or closed
	Created    int    // how many times it was created: always 1 (tests assert "exactly one PR")
	UpdatedN   int    // how many times it was PATCHed
	HeadCommit string
}

// Request is one request the fake answered (or was told to fail).
type Request struct {
	Method string
	Host   string // the Host header: api.github.localhost, ghe.example.com, …
	Path   string // without the /api/v3 prefix of Enterprise hosts
	Query  string
	Body   string
	// Auth tells whether an Authorization header was sent; Token is its token.
	Auth  bool
	Token string
	// Status is the status the fake answered with.
	Status int
}

// Override makes matching requests fail (or hang) instead of being served.
type Override struct {
	Method string // "" matches any method
	Path   string // path.Match pattern over the request path, e.g. /repos/*/*/pulls
	Status int
	// Body is the JSON answered; "" means {"message": <status text>}.
	Body   string
	Header http.Header
	// Times is how many requests it applies to; 0 means all.
	Times int
	// After lets that many matching requests through first: "fail the third PATCH" is
	// After 2, Times 1.
	After  int
	passed int
	// HangAfter serves the request normally, then holds the answer until the server
	// closes: the client sees a request that was carried out but never answered.
	HangAfter bool
	used      int
}

// New starts a fake GitHub. Close it when the test ends.
func New() *Server {
	s := &Server{mux: http.NewServeMux(), seen: make(chan struct{})}
	s.state.Repos = map[string]*Repo{}
	s.state.NextPR = 1
	s.state.Actions = Actions{Workflows: map[string]*Workflow{}, NextRun: 1001}
	s.routes()
	s.actionsRoutes()
	s.issuesRoutes()
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	return s
}

// URL is the server's base URL (http://127.0.0.1:PORT), also usable as HTTP_PROXY.
func (s *Server) URL() string { return s.srv.URL }

// Close stops the server, releasing every hanging request.
func (s *Server) Close() {
	s.srv.CloseClientConnections()
	s.srv.Close()
	if s.tls != nil {
		s.tls.close()
	}
}

// Handle adds a route, with net/http's ServeMux patterns ("GET /repos/{owner}/{repo}/actions/runs").
// Paths are those of github.com's API root (Enterprise's /api/v3 is stripped first).
// Handlers use State for the model.
func (s *Server) Handle(pattern string, h http.HandlerFunc) { s.mux.HandleFunc(pattern, h) }

// State runs f with the model, under the server's lock.
func (s *Server) State(f func(*State)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f(&s.state)
}

// AddRepo adds (or replaces) a repository.
func (s *Server) AddRepo(r Repo) {
	if r.DefaultBranch == "" {
		r.DefaultBranch = "main"
	}
	s.State(func(st *State) { st.Repos[key(r.Owner, r.Name)] = &r })
}

// AddOverride makes matching requests fail; see Override.
func (s *Server) AddOverride(o Override) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.overrides = append(s.overrides, &o)
}

// Requests returns the requests seen so far, oldest first.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.requests)
}

// WaitFor blocks until a request with method and path (path.Match pattern) has been
// seen, or timeout passes; it reports whether one was.
func (s *Server) WaitFor(method, pattern string, timeout time.Duration) bool {
	deadline := time.After(timeout)
	for {
		s.mu.Lock()
		for _, r := range s.requests {
			if ok, _ := path.Match(pattern, r.Path); ok && (method == "" || method == r.Method) {
				s.mu.Unlock()
				return true
			}
		}
		ch := s.seen
		s.mu.Unlock()
		select {
		case <-ch:
		case <-deadline:
			return false
		}
	}
}

// Pulls returns copies of a repository's pull requests.
func (s *Server) Pulls(owner, name string) []PullRequest {
	var out []PullRequest
	s.State(func(st *State) {
		if r := st.Repos[key(owner, name)]; r != nil {
			for _, p := range r.Pulls {
				out = append(out, *p)
			}
		}
	})
	return out
}

func key(owner, name string) string { return strings.ToLower(owner + "/" + name) }

// recorder captures the status a handler answers with.
type recorder struct {
	http.ResponseWriter
	status int
	keep   bool         // keep a copy of the body, to check it
	body   bytes.Buffer // the body, when keep
}

func (r *recorder) WriteHeader(code int) {
	if r.status == 0 {
		r.status = code
	}
	r.ResponseWriter.WriteHeader(code)
}

func (r *recorder) Write(b []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	if r.keep {
		r.body.Write(b)
	}
	return r.ResponseWriter.Write(b)
}

// apiPrefixHeader carries the /api/v3 prefix serve strips from an Enterprise request to
// the handlers that build URLs (Link headers).
const apiPrefixHeader = "X-Githubtest-Api-Prefix"

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodConnect {
		s.connect(w, r)
		return
	}
	body, _ := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(body))
	p := r.URL.Path
	if rest, ok := strings.CutPrefix(p, "/api/v3"); ok {
		p = rest
		if p == "" {
			p = "/"
		}
		r.URL.Path = p
		r.URL.RawPath = ""
		r.Header.Set(apiPrefixHeader, "/api/v3")
	}
	auth := r.Header.Get("Authorization")
	req := Request{Method: r.Method, Host: r.Host, Path: p, Query: r.URL.RawQuery, Body: string(body),
		Auth: auth != ""}
	req.Token, _ = strings.CutPrefix(auth, "token ")
	if req.Token == auth {
		req.Token, _ = strings.CutPrefix(auth, "Bearer ")
	}

	s.mu.Lock()
	var ov *Override
	for _, o := range s.overrides {
		if o.Times > 0 && o.used >= o.Times {
			continue
		}
		if o.Method != "" && o.Method != r.Method {
			continue
		}
		if ok, _ := path.Match(o.Path, p); ok {
			if o.passed < o.After {
				o.passed++
				continue
			}
			o.used++
			ov = o
			break
		}
	}
	s.mu.Unlock()

	described := Described(p)
	var badBody bool
	if described {
		var v []string
		v, badBody = checkRequest(r.Method, r.URL.EscapedPath(), r.URL.RawQuery, body)
		s.violate(v)
	}
	rec := &recorder{ResponseWriter: w, keep: described}
	switch {
	case ov != nil && ov.HangAfter:
		// Carry the request out, then never answer it.
		s.mux.ServeHTTP(&discard{h: http.Header{}}, r)
		req.Status = -1
		s.record(req)
		<-r.Context().Done()
		return
	case ov != nil:
		for k, v := range ov.Header {
			w.Header()[k] = v
		}
		b := ov.Body
		if b == "" {
			b = fmt.Sprintf(`{"message":%q,"documentation_url":"https://docs.github.com/rest"}`, http.StatusText(ov.Status))
		}
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		rec.WriteHeader(ov.Status)
		_, _ = io.WriteString(rec, b)
	case badBody:
		Fail(rec, 422, "Invalid request.\n\nThe body does not conform to GitHub's OpenAPI description.")
	default:
		s.mux.ServeHTTP(rec, r)
		if described {
			s.violate(checkResponse(r.Method, r.URL.EscapedPath(), rec.status, rec.body.Bytes()))
		}
	}
	req.Status = rec.status
	s.record(req)
}

func (s *Server) violate(v []string) {
	if len(v) == 0 {
		return
	}
	s.mu.Lock()
	s.violations = append(s.violations, v...)
	s.mu.Unlock()
}

// Violations returns what the requests and the fake's answers so far did not conform
// to in GitHub's OpenAPI description (openapi.go), oldest first.
func (s *Server) Violations() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.violations)
}

func (s *Server) record(req Request) {
	s.mu.Lock()
	kept := s.afters[:0]
	for _, a := range s.afters {
		ok, _ := path.Match(a.path, req.Path)
		switch {
		case !ok || a.method != "" && a.method != req.Method:
			kept = append(kept, a)
		case a.skip > 0:
			a.skip--
			kept = append(kept, a)
		default:
			a.f(&s.state)
		}
	}
	s.afters = kept
	s.requests = append(s.requests, req)
	close(s.seen)
	s.seen = make(chan struct{})
	s.mu.Unlock()
}

// discard is a ResponseWriter that throws the answer away.
type discard struct{ h http.Header }

func (d *discard) Header() http.Header         { return d.h }
func (d *discard) Write(b []byte) (int, error) { return len(b), nil }
func (d *discard) WriteHeader(int)             {}

// JSON answers v with status.
func JSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// Fail answers a GitHub-shaped error: {"message": msg, "errors": [{"message": …}]}.
func Fail(w http.ResponseWriter, status int, msg string, details ...string) {
	body := map[string]any{"message": msg, "documentation_url": "https://docs.github.com/rest"}
	if len(details) > 0 {
		var errs []map[string]string
		for _, d := range details {
			errs = append(errs, map[string]string{"resource": "PullRequest", "code": "custom", "message": d})
		}
		body["errors"] = errs
	}
	JSON(w, status, body)
}

func (s *Server) routes() {
	s.mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) { Fail(w, 404, "Not Found") })
	s.Handle("GET /repos/{owner}/{repo}", s.getRepo)
	s.Handle("GET /repos/{owner}/{repo}/branches/{branch...}", s.getBranch)
	s.Handle("GET /repos/{owner}/{repo}/pulls", s.listPulls)
	s.Handle("POST /repos/{owner}/{repo}/pulls", s.createPull)
	s.Handle("GET /repos/{owner}/{repo}/pulls/{number}", s.getPull)
	s.Handle("PATCH /repos/{owner}/{repo}/pulls/{number}", s.updatePull)
}

// repo finds the request's repository under the lock, or answers 404.
func (s *Server) repo(w http.ResponseWriter, r *http.Request) *Repo {
	rp := s.state.Repos[key(r.PathValue("owner"), r.PathValue("repo"))]
	if rp == nil {
		Fail(w, 404, "Not Found")
	}
	return rp
}

// BranchesOf returns a repository's branches, from its bare repository when it has one.
func (rp *Repo) BranchesOf() map[string]string {
	if rp.GitDir == "" {
		return rp.Branches
	}
	out, err := exec.Command("git", "--git-dir="+rp.GitDir, "for-each-ref", "--format=%(refname:strip=2) %(objectname)", "refs/heads/").Output()
	if err != nil {
		return nil
	}
	m := map[string]string{}
	for line := range strings.SplitSeq(strings.TrimSpace(string(out)), "\n") {
		if name, id, ok := strings.Cut(line, " "); ok {
			m[name] = id
		}
	}
	return m
}

func (s *Server) repoJSON(rp *Repo, withParent bool) map[string]any {
	m := map[string]any{
		"name": rp.Name, "full_name": rp.Owner + "/" + rp.Name, "owner": map[string]any{"login": rp.Owner},
		"default_branch": rp.DefaultBranch, "private": rp.Private, "fork": rp.Parent != "",
		"html_url": "https://github.localhost/" + rp.Owner + "/" + rp.Name,
	}
	if withParent && rp.Parent != "" {
		if p := s.state.Repos[strings.ToLower(rp.Parent)]; p != nil {
			m["parent"] = s.repoJSON(p, false)
		}
	}
	return m
}

func (s *Server) getRepo(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if rp := s.repo(w, r); rp != nil {
		JSON(w, 200, Shaped("full-repository", s.repoJSON(rp, true)))
	}
}

func (s *Server) getBranch(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	rp := s.repo(w, r)
	if rp == nil {
		return
	}
	name := r.PathValue("branch")
	id, ok := rp.BranchesOf()[name]
	if !ok {
		Fail(w, 404, "Branch not found")
		return
	}
	JSON(w, 200, Shaped("branch-with-protection", map[string]any{"name": name, "commit": map[string]any{"sha": id}}))
}

func (s *Server) pullJSON(rp *Repo, p *PullRequest) map[string]any {
	return map[string]any{
		"number": p.Number, "state": p.State, "title": p.Title, "body": p.Body, "draft": p.Draft,
		"html_url": fmt.Sprintf("https://github.localhost/%s/%s/pull/%d", rp.Owner, rp.Name, p.Number),
		"head":     map[string]any{"ref": p.Head, "label": p.HeadOwner + ":" + p.Head, "sha": p.HeadCommit},
		"base":     map[string]any{"ref": p.Base},
	}
}

func (s *Server) listPulls(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	rp := s.repo(w, r)
	if rp == nil {
		return
	}
	q := r.URL.Query()
	state := q.Get("state")
	if state == "" {
		state = "open"
	}
	out := []map[string]any{}
	for _, p := range rp.Pulls {
		if state != "all" && p.State != state {
			continue
		}
		if h := q.Get("head"); h != "" {
			owner, branch, ok := strings.Cut(h, ":")
			if !ok || !strings.EqualFold(owner, p.HeadOwner) || branch != p.Head {
				continue
			}
		}
		if b := q.Get("base"); b != "" && b != p.Base {
			continue
		}
		out = append(out, Shaped("pull-request-simple", s.pullJSON(rp, p)))
	}
	JSON(w, 200, out)
}

func (s *Server) createPull(w http.ResponseWriter, r *http.Request) {
	var in struct {
		Title, Head, Base, Body string
		Draft                   bool
	}
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
		Fail(w, 400, "Problems parsing JSON")
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	rp := s.repo(w, r)
	if rp == nil {
		return
	}
	headOwner, headBranch, cross := strings.Cut(in.Head, ":")
	if !cross {
		headOwner, headBranch = rp.Owner, in.Head
	}
	if in.Title == "" || in.Base == "" || headBranch == "" {
		Fail(w, 422, "Validation Failed", "title, head and base are required")
		return
	}
	headRepo := rp
	if !strings.EqualFold(headOwner, rp.Owner) {
		headRepo = nil
		for _, cand := range s.state.Repos {
			if strings.EqualFold(cand.Owner, headOwner) && strings.EqualFold(cand.Parent, rp.Owner+"/"+rp.Name) {
				headRepo = cand
			}
		}
	}
	baseID, okBase := rp.BranchesOf()[in.Base]
	var headID string
	okHead := false
	if headRepo != nil {
		headID, okHead = headRepo.BranchesOf()[headBranch]
	}
	if !okBase {
		Fail(w, 422, "Validation Failed", "base: does not exist")
		return
	}
	if !okHead {
		Fail(w, 422, "Validation Failed", "head: does not exist")
		return
	}
	for _, p := range rp.Pulls {
		if p.State == "open" && strings.EqualFold(p.HeadOwner, headOwner) && p.Head == headBranch && p.Base == in.Base {
			Fail(w, 422, "Validation Failed", "A pull request already exists for "+headOwner+":"+headBranch+".")
			return
		}
	}
	if headID == baseID || (headRepo.GitDir != "" && isAncestor(headRepo.GitDir, headID, baseID)) {
		Fail(w, 422, "Validation Failed", "No commits between "+in.Base+" and "+headBranch)
		return
	}
	p := &PullRequest{Number: s.state.NextPR, Title: in.Title, Body: in.Body, Head: headBranch, HeadOwner: headOwner,
		Base: in.Base, Draft: in.Draft, State: "open", Created: 1, HeadCommit: headID}
	s.state.NextPR++
	rp.Pulls = append(rp.Pulls, p)
	JSON(w, 201, Shaped("pull-request", s.pullJSON(rp, p)))
}

// isAncestor reports whether head is an ancestor of base in gitDir (base may be absent
// from it: then it is not).
func isAncestor(gitDir, head, base string) bool {
	return exec.Command("git", "--git-dir="+gitDir, "merge-base", "--is-ancestor", head, base).Run() == nil
}

func (s *Server) pull(w http.ResponseWriter, r *http.Request) (*Repo, *PullRequest) {
	rp := s.repo(w, r)
	if rp == nil {
		return nil, nil
	}
	n, _ := strconv.Atoi(r.PathValue("number"))
	for _, p := range rp.Pulls {
		if p.Number == n {
			return rp, p
		}
	}
	Fail(w, 404, "Not Found")
	return nil, nil
}

func (s *Server) getPull(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if rp, p := s.pull(w, r); p != nil {
		JSON(w, 200, Shaped("pull-request", s.pullJSON(rp, p)))
	}
}

func (s *Server) updatePull(w http.ResponseWriter, r *http.Request) {
	var in struct {
		Title, Body, Base, State *string
	}
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
		Fail(w, 400, "Problems parsing JSON")
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	rp, p := s.pull(w, r)
	if p == nil {
		return
	}
	for dst, src := range map[*string]*string{&p.Title: in.Title, &p.Body: in.Body, &p.Base: in.Base, &p.State: in.State} {
		if src != nil {
			*dst = *src
		}
	}
	p.UpdatedN++
	JSON(w, 200, Shaped("pull-request", s.pullJSON(rp, p)))
}

// Dump describes the requests for a golden file: one line per request,
// "METHOD host/path?query auth=yes|no status" (status -1: never answered).
func Dump(reqs []Request) string {
	var b strings.Builder
	for _, r := range reqs {
		q := ""
		if r.Query != "" {
			q = "?" + r.Query
		}
		auth := "no"
		if r.Auth {
			auth = "yes"
		}
		fmt.Fprintf(&b, "%s %s%s%s auth=%s %d\n", r.Method, r.Host, r.Path, q, auth, r.Status)
	}
	return b.String()
}

// SortedRepos lists the repositories' keys, sorted.
func (st *State) SortedRepos() []string {
	keys := make([]string, 0, len(st.Repos))
	for k := range st.Repos {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// Transport returns a RoundTripper that sends every request to this server, keeping its
// Host (api.github.com, ghe.example.com, …): for clients built in the test's own process.
func (s *Server) Transport() http.RoundTripper {
	return rewrite{to: s.srv.URL, rt: s.srv.Client().Transport}
}

type rewrite struct {
	to string
	rt http.RoundTripper
}

func (t rewrite) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Host = r.URL.Host
	r.URL.Scheme, r.URL.Host = "http", strings.TrimPrefix(t.to, "http://")
	return t.rt.RoundTrip(r)
}
