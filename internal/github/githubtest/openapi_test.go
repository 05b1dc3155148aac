package githubtest

import (
	"encoding/json"
	"io"
	"strings"
	"testing"
)

// The checker finds what does not conform, in requests and in the fake's answers: a
// checker that passes everything would make every conformance test pass.
func TestOpenAPIFindsViolations(t *testing.T) {
	for _, tc := range []struct {
		method, path, query, body string
		want                      string // a part of the violation, "" for none
		badBody                   bool
	}{
		{"GET", "/repos/a/b/issues/10", "", "", "", false},
		{"GET", "/repos/a/b/issues/10/sub_issues", "per_page=100&page=2", "", "", false},
		{"GET", "/repos/a/b/issues", "state=open&labels=ralph&sort=created&direction=asc&per_page=100", "", "", false},
		{"POST", "/repos/a/b/issues/10/labels", "", `{"labels":["ralph:running"]}`, "", false},
		{"DELETE", "/repos/a/b/issues/10/labels/ralph%3Arunning", "", "", "", false},
		{"PATCH", "/repos/a/b/issues/comments/5", "", `{"body":"x"}`, "", false},
		{"GET", "/repos/a/b/issues/ten", "", "", "issue_number", false},
		{"GET", "/repos/a/b/issues", "state=opened", "", "state", false},
		{"GET", "/repos/a/b/issues", "label=ralph", "", "query parameter label is not in GitHub's description", false},
		{"GET", "/repos/a/b/issues/10/sub_issues", "per_page=lots", "", "per_page", false},
		{"POST", "/repos/a/b/issues/10/labels", "", `{"labels":"ralph"}`, "body", true},
		{"POST", "/repos/a/b/issues/10/labels", "", `{"labels":[]}`, "fewer than 1", true},
		{"POST", "/repos/a/b/issues/10/comments", "", `{}`, "property body is required", true},
		{"PATCH", "/repos/a/b/issues/10", "", `{"state":"done"}`, "state", true},
		{"PATCH", "/repos/a/b/issues/10", "", `{"body":null}`, "", false},
		{"DELETE", "/repos/a/b/issues/10/labels/x", "", `{"x":1}`, "a body", true},
		{"PUT", "/repos/a/b/issues/10", "", "", "no such operation", false},
	} {
		v, bad := checkRequest(tc.method, tc.path, tc.query, []byte(tc.body))
		got := strings.Join(v, "; ")
		if tc.want == "" && got != "" || tc.want != "" && !strings.Contains(got, tc.want) || bad != tc.badBody {
			t.Errorf("%s %s?%s %s: %q (bad body %v); want %q (bad body %v)", tc.method, tc.path, tc.query, tc.body, got, bad, tc.want, tc.badBody)
		}
	}
	if v, _ := checkRequest("GET", "/repos/a/b/actions/runs", "anything=1", nil); v != nil {
		t.Errorf("a path the file does not describe is not checked: %v", v)
	}

	s := New()
	defer s.Close()
	s.AddRepo(Repo{Owner: "a", Name: "b"})
	s.SetIssue("a", "b", Issue{Number: 10, Title: "T", Labels: []string{"x"}})
	var good map[string]any
	if err := json.Unmarshal(s.body(t, "GET", "/repos/a/b/issues/10"), &good); err != nil {
		t.Fatal(err)
	}
	if v := checkResponse("GET", "/repos/a/b/issues/10", 200, mustJSON(good)); v != nil {
		t.Fatalf("the fake's issue: %v", v)
	}
	for _, tc := range []struct {
		mutate func(m map[string]any)
		want   string
	}{
		{func(m map[string]any) { delete(m, "html_url") }, "property html_url is required"},
		{func(m map[string]any) { m["number"] = "10" }, "body.number: a string, where GitHub's description has integer"},
		{func(m map[string]any) { m["author_association"] = "FRIEND" }, "body.author_association: FRIEND is not one of"},
		{func(m map[string]any) { m["title"] = nil }, "body.title: null"},
		{func(m map[string]any) { m["user"].(map[string]any)["login"] = 1 }, "body.user.login"},
		{func(m map[string]any) { m["labels"] = []any{map[string]any{"name": 1}} }, "body.labels[0]"},
	} {
		m := map[string]any{}
		_ = json.Unmarshal(mustJSON(good), &m)
		tc.mutate(m)
		if v := strings.Join(checkResponse("GET", "/repos/a/b/issues/10", 200, mustJSON(m)), "; "); !strings.Contains(v, tc.want) {
			t.Errorf("violations %q; want %q", v, tc.want)
		}
	}
	if v := checkResponse("GET", "/repos/a/b/issues/10", 202, mustJSON(good)); len(v) == 0 {
		t.Error("an answer the operation does not list")
	}
}

// A request whose body does not conform is answered 422 and recorded as a violation;
// the fake's own answers conform.
func TestFakeChecksRequests(t *testing.T) {
	s := New()
	defer s.Close()
	s.AddRepo(Repo{Owner: "a", Name: "b"})
	s.SetIssue("a", "b", Issue{Number: 10, Title: "T"})
	if r := do(t, s, "POST", "/repos/a/b/issues/10/labels", `{"labels":"x"}`, true); r.StatusCode != 422 {
		t.Fatalf("bad body: %d", r.StatusCode)
	}
	if is, _ := s.GetIssue("a", "b", 10); len(is.Labels) != 0 {
		t.Fatal("a bad request was carried out")
	}
	if v := s.Violations(); len(v) != 1 || !strings.Contains(v[0], "POST /repos/{owner}/{repo}/issues/{issue_number}/labels") {
		t.Fatalf("violations %q", v)
	}
	for _, req := range [][3]string{
		{"POST", "/repos/a/b/issues/10/labels", `{"labels":["x"]}`},
		{"POST", "/repos/a/b/issues/10/comments", `{"body":"hi"}`},
		{"GET", "/repos/a/b/issues/10/comments", ""},
		{"PATCH", "/repos/a/b/issues/comments/900001", `{"body":"ho"}`},
		{"PATCH", "/repos/a/b/issues/10", `{"body":"new"}`},
		{"GET", "/repos/a/b/issues/10/sub_issues", ""},
		{"GET", "/repos/a/b/issues/10/dependencies/blocked_by", ""},
		{"GET", "/repos/a/b/issues", ""},
		{"DELETE", "/repos/a/b/issues/10/labels/x", ""},
	} {
		if r := do(t, s, req[0], req[1], req[2], true); r.StatusCode/100 != 2 {
			t.Errorf("%s %s: %d", req[0], req[1], r.StatusCode)
		}
	}
	if v := s.Violations(); len(v) != 1 {
		t.Fatalf("the fake's answers: %q", v[1:])
	}
}

func (s *Server) body(t *testing.T, method, path string) []byte {
	t.Helper()
	b, err := io.ReadAll(do(t, s, method, path, "", true).Body)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// Shaped keeps what the fake models and adds what GitHub's description says is always
// there, so that the answer conforms.
func TestShaped(t *testing.T) {
	m := Shaped("pull-request", map[string]any{"number": 7, "title": "T", "head": map[string]any{"ref": "ralph/x", "sha": "abc"},
		"html_url": "https://github.localhost/a/b/pull/7"})
	if m["number"] != 7 || m["title"] != "T" || m["html_url"] != "https://github.localhost/a/b/pull/7" || m["head"].(map[string]any)["ref"] != "ralph/x" {
		t.Fatalf("the model's fields: %v", m)
	}
	if _, ok := m["head"].(map[string]any)["user"]; !ok {
		t.Fatal("a nested object is completed")
	}
	if v := checkResponse("GET", "/repos/a/b/pulls/7", 200, mustJSON(m)); v != nil {
		t.Fatalf("Shaped does not conform: %v", v)
	}
}
