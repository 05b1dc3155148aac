package githubtest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Issues: the fake's issues, their sub-issues, dependencies, labels and comments, with
// the routes git-ralph uses, shaped as GitHub's OpenAPI description says (openapi.go
// checks every request to them and every answer).

// Issue is an issue of a repository (a pull request too, when IsPull: GitHub's issues
// listing includes them).
type Issue struct {
	Number      int
	Title, Body string
	State       string // open or closed; "" means open
	StateReason string // completed, not_planned, … when closed
	Author      string // login; "" means octocat
	// AuthorAssociation is the author's association with the repository: OWNER, MEMBER,
	// COLLABORATOR, CONTRIBUTOR, FIRST_TIME_CONTRIBUTOR, FIRST_TIMER, MANNEQUIN or NONE;
	// "" means OWNER.
	AuthorAssociation string
	Labels            []string
	SubIssues         []int // numbers of its sub-issues, in GitHub's (priority) order
	BlockedBy         []int // numbers of the issues it is blocked by
	Comments          []*Comment
	IsPull            bool
	// Deleted answers 410 Gone for it, as GitHub does for a deleted issue.
	Deleted bool
	// Edits counts the PATCHes of its body; Patches all its PATCHes.
	Edits, Patches int
	Updated        time.Time
}

// Comment is a comment on an issue.
type Comment struct {
	ID     int64
	Body   string
	Author string
	Edits  int // how many times it was PATCHed
}

// TokenUser is the login the fake gives the comments the client writes.
const TokenUser = "ralph-user"

func (s *Server) issuesRoutes() {
	// GET …/issues/comments/{id} and GET …/issues/{number}/sub_issues overlap as
	// ServeMux patterns (…/issues/comments/sub_issues would match both): one route
	// tells them apart, as GitHub's router does (an issue number is digits).
	subIssues, comments := s.onIssue(s.related(func(is *Issue) []int { return is.SubIssues })), s.onIssue(s.listComments)
	s.Handle("GET /repos/{owner}/{repo}/issues/{number}/{what}", func(w http.ResponseWriter, r *http.Request) {
		switch n, what := r.PathValue("number"), r.PathValue("what"); {
		case n == "comments":
			r.SetPathValue("id", what)
			s.getComment(w, r)
		case what == "sub_issues":
			subIssues(w, r)
		case what == "comments":
			comments(w, r)
		default:
			Fail(w, 404, "Not Found")
		}
	})
	s.Handle("GET /repos/{owner}/{repo}/issues", s.listIssues)
	s.Handle("GET /repos/{owner}/{repo}/issues/{number}", s.onIssue(s.getIssue))
	s.Handle("PATCH /repos/{owner}/{repo}/issues/{number}", s.onIssue(s.updateIssue))
	s.Handle("GET /repos/{owner}/{repo}/issues/{number}/dependencies/blocked_by", s.onIssue(s.related(func(is *Issue) []int { return is.BlockedBy })))
	s.Handle("POST /repos/{owner}/{repo}/issues/{number}/labels", s.onIssue(s.addLabels))
	s.Handle("DELETE /repos/{owner}/{repo}/issues/{number}/labels/{name}", s.onIssue(s.removeLabel))
	s.Handle("POST /repos/{owner}/{repo}/issues/{number}/comments", s.onIssue(s.createComment))
	s.Handle("PATCH /repos/{owner}/{repo}/issues/comments/{id}", s.updateComment)
}

// SetIssue adds an issue to a repository, or replaces the one with its number (keeping
// its comments when it has none). It reports false when there is no such repository.
func (s *Server) SetIssue(owner, name string, is Issue) bool {
	ok := false
	s.State(func(st *State) {
		rp := st.Repos[key(owner, name)]
		if rp == nil {
			return
		}
		ok = true
		if is.State == "" {
			is.State = "open"
		}
		is.Updated = time.Now().UTC()
		st.NextPR = max(st.NextPR, is.Number+1)
		for i, old := range rp.Issues {
			if old.Number == is.Number {
				if is.Comments == nil {
					is.Comments = old.Comments
				}
				rp.Issues[i] = &is
				return
			}
		}
		rp.Issues = append(rp.Issues, &is)
	})
	return ok
}

// EditIssue changes an issue under the server's lock; it reports false when there is
// no such issue.
func (s *Server) EditIssue(owner, name string, number int, f func(*Issue)) bool {
	ok := false
	s.State(func(st *State) {
		if rp := st.Repos[key(owner, name)]; rp != nil {
			if is := rp.issue(number); is != nil {
				f(is)
				is.Updated = time.Now().UTC()
				ok = true
			}
		}
	})
	return ok
}

// GetIssue returns a copy of an issue (its comments copied too), or false.
func (s *Server) GetIssue(owner, name string, number int) (Issue, bool) {
	var out Issue
	ok := false
	s.State(func(st *State) {
		if rp := st.Repos[key(owner, name)]; rp != nil {
			if is := rp.issue(number); is != nil {
				out, ok = *is, true
				out.Labels = slices.Clone(is.Labels)
				out.Comments = nil
				for _, c := range is.Comments {
					cc := *c
					out.Comments = append(out.Comments, &cc)
				}
			}
		}
	})
	return out, ok
}

func (rp *Repo) issue(n int) *Issue {
	for _, is := range rp.Issues {
		if is.Number == n {
			return is
		}
	}
	return nil
}

// issueOf finds the request's issue under the lock, or answers 404 (410 for a deleted
// one).
func (s *Server) issueOf(w http.ResponseWriter, r *http.Request) (*Repo, *Issue) {
	rp := s.repo(w, r)
	if rp == nil {
		return nil, nil
	}
	n, _ := strconv.Atoi(r.PathValue("number"))
	is := rp.issue(n)
	switch {
	case is == nil:
		Fail(w, 404, "Not Found")
		return nil, nil
	case is.Deleted:
		Fail(w, 410, "This issue was deleted")
		return nil, nil
	}
	return rp, is
}

const fakeTime = "2026-01-02T03:04:05Z"

func userJSON(login string) map[string]any {
	api := "https://api.github.localhost/users/" + login
	return map[string]any{
		"login": login, "id": 1000 + len(login), "node_id": "U_" + login, "type": "User", "site_admin": false,
		"avatar_url": "https://avatars.github.localhost/u/1", "gravatar_id": "",
		"url": api, "html_url": "https://github.localhost/" + login,
		"followers_url": api + "/followers", "following_url": api + "/following{/other_user}",
		"gists_url": api + "/gists{/gist_id}", "starred_url": api + "/starred{/owner}{/repo}",
		"subscriptions_url": api + "/subscriptions", "organizations_url": api + "/orgs",
		"repos_url": api + "/repos", "events_url": api + "/events{/privacy}",
		"received_events_url": api + "/received_events",
	}
}

func labelJSON(rp *Repo, name string) map[string]any {
	id := 7000
	for _, c := range name {
		id = id*31 + int(c)
		id %= 1 << 30
	}
	return map[string]any{
		"id": id, "node_id": "LA_" + strconv.Itoa(id), "name": name, "description": nil, "color": "ededed", "default": false,
		"url": fmt.Sprintf("https://api.github.localhost/repos/%s/%s/labels/%s", rp.Owner, rp.Name, url.PathEscape(name)),
	}
}

func (s *Server) issueJSON(rp *Repo, is *Issue) map[string]any {
	api := fmt.Sprintf("https://api.github.localhost/repos/%s/%s", rp.Owner, rp.Name)
	web := fmt.Sprintf("https://github.localhost/%s/%s", rp.Owner, rp.Name)
	author, assoc := is.Author, is.AuthorAssociation
	if author == "" {
		author = "octocat"
	}
	if assoc == "" {
		assoc = "OWNER"
	}
	labels := []any{}
	for _, l := range is.Labels {
		labels = append(labels, labelJSON(rp, l))
	}
	var closedAt any
	if is.State == "closed" {
		closedAt = fakeTime
	}
	var reason any
	if is.StateReason != "" {
		reason = is.StateReason
	}
	done := 0
	for _, n := range is.SubIssues {
		if sub := rp.issue(n); sub != nil && sub.State == "closed" {
			done++
		}
	}
	pct := 0
	if len(is.SubIssues) > 0 {
		pct = done * 100 / len(is.SubIssues)
	}
	n := strconv.Itoa(is.Number)
	m := map[string]any{
		"id": 5_000_000 + is.Number, "node_id": "I_" + n, "number": is.Number,
		"title": is.Title, "body": is.Body, "state": is.State, "state_reason": reason,
		"url": api + "/issues/" + n, "repository_url": api, "labels_url": api + "/issues/" + n + "/labels{/name}",
		"comments_url": api + "/issues/" + n + "/comments", "events_url": api + "/issues/" + n + "/events",
		"html_url": web + "/issues/" + n, "user": userJSON(author), "author_association": assoc,
		"labels": labels, "assignee": nil, "assignees": []any{}, "milestone": nil, "locked": false,
		"comments": len(is.Comments), "closed_at": closedAt, "created_at": fakeTime,
		"updated_at":         is.Updated.Format(time.RFC3339),
		"sub_issues_summary": map[string]any{"total": len(is.SubIssues), "completed": done, "percent_completed": pct},
	}
	if is.IsPull {
		m["html_url"] = web + "/pull/" + n
		m["pull_request"] = map[string]any{"url": api + "/pulls/" + n, "html_url": web + "/pull/" + n,
			"diff_url": web + "/pull/" + n + ".diff", "patch_url": web + "/pull/" + n + ".patch", "merged_at": nil}
	}
	return m
}

func (s *Server) commentJSON(rp *Repo, is *Issue, c *Comment) map[string]any {
	api := fmt.Sprintf("https://api.github.localhost/repos/%s/%s", rp.Owner, rp.Name)
	id := strconv.FormatInt(c.ID, 10)
	return map[string]any{
		"id": c.ID, "node_id": "IC_" + id, "body": c.Body, "user": userJSON(c.Author),
		"url":        api + "/issues/comments/" + id,
		"html_url":   fmt.Sprintf("https://github.localhost/%s/%s/issues/%d#issuecomment-%s", rp.Owner, rp.Name, is.Number, id),
		"issue_url":  api + "/issues/" + strconv.Itoa(is.Number),
		"created_at": fakeTime, "updated_at": fakeTime, "author_association": "OWNER",
	}
}

func (s *Server) listIssues(w http.ResponseWriter, r *http.Request) {
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
	var want []string
	if l := q.Get("labels"); l != "" {
		want = strings.Split(l, ",")
	}
	out := []map[string]any{}
	for _, is := range rp.Issues {
		if is.Deleted || state != "all" && is.State != state {
			continue
		}
		if !containsAll(is.Labels, want) {
			continue
		}
		out = append(out, s.issueJSON(rp, is))
	}
	if q.Get("direction") != "asc" { // GitHub lists the newest first unless told
		slices.Reverse(out)
	}
	JSON(paginate(w, r, &out), 200, out)
}

func containsAll(have, want []string) bool {
	for _, w := range want {
		if !slices.ContainsFunc(have, func(h string) bool { return strings.EqualFold(h, strings.TrimSpace(w)) }) {
			return false
		}
	}
	return true
}

// issueHandler is a route about one issue: it runs under the server's lock with the
// issue found (onIssue answers 404 or 410 otherwise).
type issueHandler func(w http.ResponseWriter, r *http.Request, rp *Repo, is *Issue)

func (s *Server) onIssue(h issueHandler) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		defer s.mu.Unlock()
		if rp, is := s.issueOf(w, r); is != nil {
			h(w, r, rp, is)
		}
	}
}

// decode reads the request's JSON body into v, or answers 400 as GitHub does.
func decode(w http.ResponseWriter, r *http.Request, v any) bool {
	if err := json.NewDecoder(r.Body).Decode(v); err != nil {
		Fail(w, 400, "Problems parsing JSON")
		return false
	}
	return true
}

func (s *Server) getIssue(w http.ResponseWriter, r *http.Request, rp *Repo, is *Issue) {
	JSON(w, 200, s.issueJSON(rp, is))
}

func (s *Server) updateIssue(w http.ResponseWriter, r *http.Request, rp *Repo, is *Issue) {
	var in struct {
		Title, Body, State *string
		Labels             []string
	}
	if !decode(w, r, &in) {
		return
	}
	is.Patches++
	if in.Body != nil {
		is.Body = *in.Body
		is.Edits++
	}
	if in.Title != nil {
		is.Title = *in.Title
	}
	if in.State != nil {
		is.State = *in.State
	}
	if in.Labels != nil {
		is.Labels = in.Labels
	}
	is.Updated = time.Now().UTC()
	JSON(w, 200, s.issueJSON(rp, is))
}

// related answers the issues whose numbers nums gives, paginated.
func (s *Server) related(nums func(*Issue) []int) issueHandler {
	return func(w http.ResponseWriter, r *http.Request, rp *Repo, is *Issue) {
		out := []map[string]any{}
		for _, n := range nums(is) {
			if o := rp.issue(n); o != nil && !o.Deleted {
				out = append(out, s.issueJSON(rp, o))
			}
		}
		JSON(paginate(w, r, &out), 200, out)
	}
}

func (s *Server) labelsJSON(rp *Repo, is *Issue) []map[string]any {
	out := []map[string]any{}
	for _, l := range is.Labels {
		out = append(out, labelJSON(rp, l))
	}
	return out
}

func (s *Server) addLabels(w http.ResponseWriter, r *http.Request, rp *Repo, is *Issue) {
	var in struct{ Labels []string }
	if !decode(w, r, &in) {
		return
	}
	for _, l := range in.Labels {
		if !slices.ContainsFunc(is.Labels, func(h string) bool { return strings.EqualFold(h, l) }) {
			is.Labels = append(is.Labels, l)
		}
	}
	is.Updated = time.Now().UTC()
	JSON(w, 200, s.labelsJSON(rp, is))
}

func (s *Server) removeLabel(w http.ResponseWriter, r *http.Request, rp *Repo, is *Issue) {
	name := r.PathValue("name")
	i := slices.IndexFunc(is.Labels, func(h string) bool { return strings.EqualFold(h, name) })
	if i < 0 {
		Fail(w, 404, "Label does not exist")
		return
	}
	is.Labels = slices.Delete(is.Labels, i, i+1)
	is.Updated = time.Now().UTC()
	JSON(w, 200, s.labelsJSON(rp, is))
}

func (s *Server) listComments(w http.ResponseWriter, r *http.Request, rp *Repo, is *Issue) {
	out := []map[string]any{}
	for _, c := range is.Comments {
		out = append(out, s.commentJSON(rp, is, c))
	}
	JSON(paginate(w, r, &out), 200, out)
}

func (s *Server) createComment(w http.ResponseWriter, r *http.Request, rp *Repo, is *Issue) {
	body, ok := commentBody(w, r)
	if !ok {
		return
	}
	s.state.NextComment++
	c := &Comment{ID: 900_000 + s.state.NextComment, Body: body, Author: TokenUser}
	is.Comments = append(is.Comments, c)
	JSON(w, 201, s.commentJSON(rp, is, c))
}

// commentBody is a comment request's body, which GitHub requires; false when it
// answered the request already.
func commentBody(w http.ResponseWriter, r *http.Request) (string, bool) {
	var in struct{ Body *string }
	if !decode(w, r, &in) {
		return "", false
	}
	if in.Body == nil {
		Fail(w, 422, "Validation Failed", "body is required")
		return "", false
	}
	return *in.Body, true
}

// comment finds the request's comment under the lock, or answers 404.
func (s *Server) comment(w http.ResponseWriter, r *http.Request) (*Repo, *Issue, *Comment) {
	rp := s.repo(w, r)
	if rp == nil {
		return nil, nil, nil
	}
	id, _ := strconv.ParseInt(r.PathValue("id"), 10, 64)
	for _, is := range rp.Issues {
		for _, c := range is.Comments {
			if c.ID == id {
				return rp, is, c
			}
		}
	}
	Fail(w, 404, "Not Found")
	return nil, nil, nil
}

func (s *Server) getComment(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if rp, is, c := s.comment(w, r); c != nil {
		JSON(w, 200, s.commentJSON(rp, is, c))
	}
}

func (s *Server) updateComment(w http.ResponseWriter, r *http.Request) {
	body, ok := commentBody(w, r)
	if !ok {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if rp, is, c := s.comment(w, r); c != nil {
		c.Body = body
		c.Edits++
		JSON(w, 200, s.commentJSON(rp, is, c))
	}
}
