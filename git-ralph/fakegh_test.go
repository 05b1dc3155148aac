package main

import (
	"fmt"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/git-ralph/git-ralph/internal/github/githubtest"
)

// fakeKey holds a script's fake GitHub in testscript's per-script values.
type fakeKey struct{}

type fakeHolder struct {
	srv  *githubtest.Server
	auto *autoRunner // set by 'fakegh autorun'
	mark int         // requests seen at the last "fakegh mark"
}

// hermeticGitHub makes sure no script can reach a real GitHub or read the developer's
// gh setup: no token, gh's config in the work dir, no gh binary, and every proxy a dead
// loopback port (with a proxy set, Go does not even resolve the target host). `fakegh
// start` then points plain HTTP at the fake.
func hermeticGitHub(e *testscript.Env) {
	for k, v := range map[string]string{
		"GH_CONFIG_DIR":       filepath.Join(e.WorkDir, ".gh"),
		"GH_PATH":             "/nonexistent",
		"HTTPS_PROXY":         "http://127.0.0.1:1",
		"HTTP_PROXY":          "http://127.0.0.1:1",
		"GIT_TERMINAL_PROMPT": "0",
	} {
		e.Setenv(k, v)
	}
	drop := map[string]bool{"GH_TOKEN": true, "GITHUB_TOKEN": true, "GH_ENTERPRISE_TOKEN": true,
		"GITHUB_ENTERPRISE_TOKEN": true, "GH_HOST": true, "GH_REPO": true, "GH_DEBUG": true,
		"https_proxy": true, "http_proxy": true, "NO_PROXY": true, "no_proxy": true, "SSL_CERT_FILE": true, "SSL_CERT_DIR": true}
	vars := e.Vars[:0]
	for _, kv := range e.Vars {
		k, _, _ := strings.Cut(kv, "=")
		if !drop[k] {
			vars = append(vars, kv)
		}
	}
	e.Vars = vars
	h := &fakeHolder{}
	e.Values[fakeKey{}] = h
	e.Defer(func() {
		if h.auto != nil {
			h.auto.wait(5 * time.Minute) // no runner left working on a removed work dir
		}
		if h.srv != nil {
			h.srv.Close()
		}
	})
}

// cmdFakeGH drives the script's fake GitHub (internal/github/githubtest):
//
//	fakegh start                              start it; GH_HOST=github.localhost, GH_TOKEN, HTTP_PROXY=<fake>
//	fakegh tls                                serve HTTPS too (Enterprise hosts): HTTPS_PROXY=<fake>, SSL_CERT_FILE=<its CA>
//	fakegh repo OWNER/NAME GITDIR [fork-of OWNER/NAME] [default BRANCH]
//	fakegh pr OWNER/NAME HEAD-OWNER:BRANCH BASE TITLE   an already open pull request
//	fakegh fail METHOD PATH STATUS [after N] [times N] [header NAME VALUE]… [body JSON]
//	                                          METHOD may be *, PATH a path.Match pattern; after N: the first N such calls pass
//	fakegh hang METHOD PATH                   serve the next such request, then never answer it
//	fakegh wait METHOD PATH [N]               block until such a request (the N-th since the last mark) was seen
//	fakegh mark                               count wait's N from here
//	fakegh step RUNID JOB STEP                make STEP of JOB the one running (earlier ones succeeded)
//	fakegh requests [since-mark]              print the requests seen (since the last mark): METHOD host/path auth=yes|no status
//	fakegh tokens                             print the distinct tokens the requests carried
//	fakegh pulls OWNER/NAME                   print the pull requests
//	fakegh body OWNER/NAME NUMBER             print a pull request's body
//	fakegh workflow OWNER/NAME FILE [STATE]   a workflow file (STATE e.g. disabled_manually)
//	fakegh run ID STATUS [CONCLUSION]         move a run along: queued, in_progress, completed success…
//	fakegh artifact RUNID DIR                 DIR zipped as the run's artifact ralph-RUNID
//	fakegh expire RUNID [artifact]            the run's artifacts and its logs expire (410); artifact: only the artifacts
//	fakegh runlogs RUNID DIR                  DIR zipped as the run's own logs (GET …/runs/RUNID/logs)
//	fakegh no-run-details                     refuse return_run_details, as GHES 3.20 does
//	fakegh runs                               print the workflow runs dispatched: ID REPO FILE ref=… branch=… TITLE
//	fakegh autorun                            run each dispatch on the fake runner at once, as GitHub would (and cancel it on the cancel API)
//	fakegh await                              wait (up to 5 min) until every autorun run has completed
//	fakegh poll-interval N                    send x-poll-interval: N with the runs listing and a run
//	fakegh list-delay N|forever               a new run is left out of the runs listing N times (or always)
//	fakegh show-runs                          every run is in the runs listing from now on
//	fakegh issue OWNER/NAME N TITLE [body FILE] [author LOGIN] [assoc ASSOCIATION] [closed] [pull] [deleted] [label L]… [blocked-by M]…
//	                                          an issue (replacing issue N, keeping its comments); a pull request with pull
//	fakegh subissue OWNER/NAME PARENT CHILD…  CHILD… become the last sub-issues of PARENT, in that order
//	fakegh set-body OWNER/NAME N FILE         someone edits issue N's body on GitHub
//	fakegh close OWNER/NAME N                 someone closes issue N (as completed)
//	fakegh issues OWNER/NAME                  print the issues: #N state edits=… comments=… labels=… TITLE
//	fakegh issue-body OWNER/NAME N            print issue N's body
//	fakegh labels OWNER/NAME N                print issue N's labels, one a line
//	fakegh comments OWNER/NAME N              print issue N's comments: "--- #ID by LOGIN edits=N", then the body
//	fakegh after METHOD PATH [skip N] set-body|close OWNER/NAME N [FILE]
//	                                          once such a request (the N+1-th) is answered, someone edits or closes an issue
//	fakegh conform                            fail unless every request, and every answer, was as GitHub's OpenAPI description says
//
// Every fakegh command after start fails the script first if a request or an answer
// so far did not conform to GitHub's OpenAPI description (githubtest/openapi.go).
func cmdFakeGH(ts *testscript.TestScript, neg bool, args []string) {
	if neg {
		ts.Fatalf("fakegh cannot be negated")
	}
	if len(args) == 0 {
		ts.Fatalf("usage: fakegh start|tls|repo|pr|fail|hang|wait|requests|pulls|body …")
	}
	// Every fakegh sets stdout, empty or not: "fakegh requests" then "! stdout ." asserts
	// there were none, not whatever an earlier command printed.
	out := ts.Stdout()
	h := ts.Value(fakeKey{}).(*fakeHolder)
	if args[0] != "start" && h.srv == nil {
		ts.Fatalf("fakegh %s: run 'fakegh start' first", args[0])
	}
	s := h.srv
	if s != nil {
		if v := s.Violations(); len(v) > 0 {
			ts.Fatalf("fakegh: not as GitHub's OpenAPI description says:\n%s", strings.Join(v, "\n"))
		}
	}
	split := func(name string) (string, string) {
		owner, repo, ok := strings.Cut(name, "/")
		if !ok {
			ts.Fatalf("fakegh: %q is not OWNER/NAME", name)
		}
		return owner, repo
	}
	switch args[0] {
	case "start":
		h.srv = githubtest.New()
		ts.Setenv("FAKEGH_URL", h.srv.URL())
		ts.Setenv("HTTP_PROXY", h.srv.URL())
		ts.Setenv("GH_HOST", "github.localhost")
		ts.Setenv("GH_TOKEN", "test-token")
	case "tls":
		ca, err := s.EnableTLS()
		ts.Check(err)
		path := ts.MkAbs(filepath.Join(ts.Getenv("WORK"), ".fakegh-ca.pem"))
		ts.Check(os.WriteFile(path, ca, 0o644))
		ts.Setenv("SSL_CERT_FILE", path)
		ts.Setenv("HTTPS_PROXY", s.URL())
	case "repo":
		if len(args) < 3 {
			ts.Fatalf("usage: fakegh repo OWNER/NAME GITDIR [fork-of OWNER/NAME] [default BRANCH]")
		}
		owner, name := split(args[1])
		r := githubtest.Repo{Owner: owner, Name: name, GitDir: ts.MkAbs(args[2])}
		for i := 3; i+1 < len(args); i += 2 {
			switch args[i] {
			case "fork-of":
				r.Parent = args[i+1]
			case "default":
				r.DefaultBranch = args[i+1]
			default:
				ts.Fatalf("fakegh repo: unknown option %q", args[i])
			}
		}
		s.AddRepo(r)
	case "pr":
		if len(args) != 5 {
			ts.Fatalf("usage: fakegh pr OWNER/NAME HEAD-OWNER:BRANCH BASE TITLE")
		}
		owner, name := split(args[1])
		headOwner, head, _ := strings.Cut(args[2], ":")
		s.State(func(st *githubtest.State) {
			for _, r := range st.Repos {
				if strings.EqualFold(r.Owner, owner) && strings.EqualFold(r.Name, name) {
					r.Pulls = append(r.Pulls, &githubtest.PullRequest{Number: st.NextPR, Title: args[4], Body: "written by hand",
						Head: head, HeadOwner: headOwner, Base: args[3], State: "open", Created: 1})
					st.NextPR++
					return
				}
			}
			ts.Fatalf("fakegh pr: no repository %s", args[1])
		})
	case "fail":
		if len(args) < 4 {
			ts.Fatalf("usage: fakegh fail METHOD PATH STATUS [times N] [header NAME VALUE]…")
		}
		st, err := strconv.Atoi(args[3])
		ts.Check(err)
		o := githubtest.Override{Method: args[1], Path: args[2], Status: st, Header: http.Header{}}
		if o.Method == "*" {
			o.Method = ""
		}
		for i := 4; i < len(args); {
			switch {
			case args[i] == "times" && i+1 < len(args):
				o.Times, err = strconv.Atoi(args[i+1])
				ts.Check(err)
				i += 2
			case args[i] == "after" && i+1 < len(args):
				o.After, err = strconv.Atoi(args[i+1])
				ts.Check(err)
				i += 2
			case args[i] == "header" && i+2 < len(args):
				o.Header.Set(args[i+1], args[i+2])
				i += 3
			case args[i] == "body" && i+1 < len(args):
				o.Body = args[i+1]
				i += 2
			default:
				ts.Fatalf("fakegh fail: unknown option %q", args[i])
			}
		}
		s.AddOverride(o)
	case "hang":
		if len(args) != 3 {
			ts.Fatalf("usage: fakegh hang METHOD PATH")
		}
		s.AddOverride(githubtest.Override{Method: args[1], Path: args[2], HangAfter: true, Times: 1})
	case "wait":
		if len(args) != 3 && len(args) != 4 {
			ts.Fatalf("usage: fakegh wait METHOD PATH [N]")
		}
		if len(args) == 4 {
			n, err := strconv.Atoi(args[3])
			ts.Check(err)
			for deadline := time.Now().Add(harnessBound); ; time.Sleep(5 * time.Millisecond) {
				seen := 0
				for _, r := range s.Requests()[h.mark:] {
					if ok, _ := path.Match(args[2], r.Path); ok && r.Method == args[1] {
						seen++
					}
				}
				if seen >= n {
					break
				}
				if time.Now().After(deadline) {
					ts.Fatalf("fakegh wait: %d of %d %s %s within %s", seen, n, args[1], args[2], harnessBound)
				}
			}
			break
		}
		if !s.WaitFor(args[1], args[2], harnessBound) {
			ts.Fatalf("fakegh wait: no %s %s within %s", args[1], args[2], harnessBound)
		}
	case "requests":
		reqs := s.Requests()
		if len(args) > 1 && args[1] == "since-mark" {
			reqs = reqs[h.mark:]
		}
		fmt.Fprint(out, githubtest.Dump(reqs))
	case "tokens":
		seen := map[string]bool{}
		for _, r := range s.Requests() {
			if !seen[r.Token] {
				seen[r.Token] = true
				fmt.Fprintln(out, r.Token)
			}
		}
	case "pulls":
		owner, name := split(args[1])
		if len(s.Pulls(owner, name)) == 0 {
			fmt.Fprintln(out, "no pull requests")
		}
		for _, p := range s.Pulls(owner, name) {
			fmt.Fprintf(out, "#%d %s draft=%v head=%s:%s base=%s updates=%d title=%s\n",
				p.Number, p.State, p.Draft, p.HeadOwner, p.Head, p.Base, p.UpdatedN, p.Title)
		}
	case "body":
		owner, name := split(args[1])
		n, err := strconv.Atoi(args[2])
		ts.Check(err)
		for _, p := range s.Pulls(owner, name) {
			if p.Number == n {
				fmt.Fprint(out, p.Body)
				return
			}
		}
		ts.Fatalf("fakegh body: no pull request #%d in %s", n, args[1])
	case "workflow":
		if len(args) < 3 {
			ts.Fatalf("usage: fakegh workflow OWNER/NAME FILE [STATE]")
		}
		owner, name := split(args[1])
		state := ""
		if len(args) > 3 {
			state = args[3]
		}
		s.AddWorkflow(owner, name, args[2], state)
	case "run":
		if len(args) < 3 {
			ts.Fatalf("usage: fakegh run ID STATUS [CONCLUSION]")
		}
		id, err := strconv.ParseInt(args[1], 10, 64)
		ts.Check(err)
		conclusion := ""
		if len(args) > 3 {
			conclusion = args[3]
		}
		if !s.SetRun(id, args[2], conclusion) {
			ts.Fatalf("fakegh run: no run %d", id)
		}
	case "step":
		if len(args) != 4 {
			ts.Fatalf("usage: fakegh step RUNID JOB STEP")
		}
		id, err := strconv.ParseInt(args[1], 10, 64)
		ts.Check(err)
		if !s.SetStep(id, args[2], args[3]) {
			ts.Fatalf("fakegh step: no run %d", id)
		}
	case "artifact":
		if len(args) != 3 {
			ts.Fatalf("usage: fakegh artifact RUNID DIR")
		}
		id, err := strconv.ParseInt(args[1], 10, 64)
		ts.Check(err)
		z, err := zipDir(ts.MkAbs(args[2]))
		ts.Check(err)
		if !s.AddArtifact(id, "ralph-"+args[1], z) {
			ts.Fatalf("fakegh artifact: no run %d", id)
		}
	case "expire":
		id, err := strconv.ParseInt(args[1], 10, 64)
		ts.Check(err)
		s.ExpireArtifacts(id)
		if len(args) < 3 || args[2] != "artifact" {
			s.ExpireRunLogs(id)
		}
	case "runlogs":
		if len(args) != 3 {
			ts.Fatalf("usage: fakegh runlogs RUNID DIR")
		}
		id, err := strconv.ParseInt(args[1], 10, 64)
		ts.Check(err)
		z, err := zipDir(ts.MkAbs(args[2]))
		ts.Check(err)
		if !s.SetRunLogs(id, z) {
			ts.Fatalf("fakegh runlogs: no run %d", id)
		}
	case "poll-interval":
		n, err := strconv.Atoi(args[1])
		ts.Check(err)
		s.State(func(st *githubtest.State) { st.Actions.PollInterval = n })
	case "list-delay":
		n := -1
		if args[1] != "forever" {
			var err error
			n, err = strconv.Atoi(args[1])
			ts.Check(err)
		}
		s.State(func(st *githubtest.State) { st.Actions.ListDelay = n })
	case "mark":
		h.mark = len(s.Requests())
	case "show-runs":
		s.State(func(st *githubtest.State) {
			for _, r := range st.Actions.Runs {
				r.Hidden = 0
			}
		})
	case "no-run-details":
		s.State(func(st *githubtest.State) { st.Actions.NoRunDetails = true })
	case "runs":
		for _, r := range s.Runs() {
			fmt.Fprintf(out, "%d %s %s ref=%s branch=%s %s %s%s\n", r.ID, r.Repo, r.Workflow, r.Ref, r.Inputs["branch"], r.Title, r.Status, strings.TrimSuffix(" "+r.Conclusion, " "))
		}
	case "issue", "subissue", "set-body", "close", "issues", "issue-body", "labels", "comments":
		fakeIssues(ts, s, args)
	case "after":
		fakeAfter(ts, s, args[1:])
	case "conform": // the check above is all
	case "autorun":
		fakeAutorun(ts, h)
	case "await":
		if h.auto == nil {
			ts.Fatalf("fakegh await: run 'fakegh autorun' first")
		}
		errs, ok := h.auto.wait(5 * time.Minute)
		if !ok {
			ts.Fatalf("fakegh await: runs still going after 5 minutes")
		}
		if len(errs) > 0 {
			ts.Fatalf("fakegh await: the fake runner could not run: %s", strings.Join(errs, "; "))
		}
	default:
		ts.Fatalf("fakegh: unknown subcommand %q", args[0])
	}
}

// fakeIssues is fakegh's issue commands (see cmdFakeGH).
func fakeIssues(ts *testscript.TestScript, s *githubtest.Server, args []string) {
	out := ts.Stdout()
	if len(args) < 2 {
		ts.Fatalf("usage: fakegh %s OWNER/NAME …", args[0])
	}
	owner, name, ok := strings.Cut(args[1], "/")
	if !ok {
		ts.Fatalf("fakegh: %q is not OWNER/NAME", args[1])
	}
	num := func(s string) int {
		n, err := strconv.Atoi(strings.TrimPrefix(s, "#"))
		if err != nil {
			ts.Fatalf("fakegh %s: %q is not an issue number", args[0], s)
		}
		return n
	}
	get := func(n int) githubtest.Issue {
		is, ok := s.GetIssue(owner, name, n)
		if !ok {
			ts.Fatalf("fakegh %s: no issue #%d in %s", args[0], n, args[1])
		}
		return is
	}
	edit := func(n int, f func(*githubtest.Issue)) {
		if !s.EditIssue(owner, name, n, f) {
			ts.Fatalf("fakegh %s: no issue #%d in %s", args[0], n, args[1])
		}
	}
	switch args[0] {
	case "issue":
		if len(args) < 4 {
			ts.Fatalf("usage: fakegh issue OWNER/NAME N TITLE [body FILE] [author LOGIN] [assoc A] [closed] [pull] [deleted] [label L]… [blocked-by M]…")
		}
		is := githubtest.Issue{Number: num(args[2]), Title: args[3]}
		for i := 4; i < len(args); i++ {
			opt := args[i]
			val := func() string {
				if i+1 >= len(args) {
					ts.Fatalf("fakegh issue: %s needs a value", opt)
				}
				i++
				return args[i]
			}
			switch opt {
			case "body":
				is.Body = ts.ReadFile(val())
			case "author":
				is.Author = val()
			case "assoc":
				is.AuthorAssociation = val()
			case "label":
				is.Labels = append(is.Labels, val())
			case "blocked-by":
				is.BlockedBy = append(is.BlockedBy, num(val()))
			case "closed":
				is.State, is.StateReason = "closed", "completed"
			case "pull":
				is.IsPull = true
			case "deleted":
				is.Deleted = true
			default:
				ts.Fatalf("fakegh issue: unknown option %q", opt)
			}
		}
		if !s.SetIssue(owner, name, is) {
			ts.Fatalf("fakegh issue: no repository %s", args[1])
		}
	case "subissue":
		if len(args) < 4 {
			ts.Fatalf("usage: fakegh subissue OWNER/NAME PARENT CHILD…")
		}
		for _, c := range args[3:] {
			get(num(c))
		}
		edit(num(args[2]), func(is *githubtest.Issue) {
			for _, c := range args[3:] {
				is.SubIssues = append(is.SubIssues, num(c))
			}
		})
	case "set-body":
		if len(args) != 4 {
			ts.Fatalf("usage: fakegh set-body OWNER/NAME N FILE")
		}
		body := ts.ReadFile(args[3])
		edit(num(args[2]), func(is *githubtest.Issue) { is.Body = body })
	case "close":
		edit(num(args[2]), func(is *githubtest.Issue) { is.State, is.StateReason = "closed", "completed" })
	case "issues":
		var all []githubtest.Issue
		s.State(func(st *githubtest.State) {
			for _, r := range st.Repos {
				if strings.EqualFold(r.Owner, owner) && strings.EqualFold(r.Name, name) {
					for _, is := range r.Issues {
						all = append(all, *is)
					}
				}
			}
		})
		if len(all) == 0 {
			fmt.Fprintln(out, "no issues")
		}
		for _, is := range all {
			fmt.Fprintf(out, "#%d %s edits=%d comments=%d labels=%s %s\n", is.Number, is.State, is.Edits, len(is.Comments), strings.Join(is.Labels, ","), is.Title)
		}
	case "issue-body":
		fmt.Fprint(out, get(num(args[2])).Body)
	case "labels":
		for _, l := range get(num(args[2])).Labels {
			fmt.Fprintln(out, l)
		}
	case "comments":
		for _, c := range get(num(args[2])).Comments {
			fmt.Fprintf(out, "--- #%d by %s edits=%d\n%s\n", c.ID, c.Author, c.Edits, strings.TrimSuffix(c.Body, "\n"))
		}
	}
}

// fakeAfter is "fakegh after": an edit on GitHub at a given point of a run.
func fakeAfter(ts *testscript.TestScript, s *githubtest.Server, args []string) {
	usage := "usage: fakegh after METHOD PATH [skip N] set-body|close OWNER/NAME N [FILE]"
	if len(args) < 5 {
		ts.Fatalf("%s", usage)
	}
	method, pattern, rest := args[0], args[1], args[2:]
	skip := 0
	if rest[0] == "skip" {
		n, err := strconv.Atoi(rest[1])
		ts.Check(err)
		skip, rest = n, rest[2:]
	}
	if len(rest) < 3 {
		ts.Fatalf("%s", usage)
	}
	owner, name, _ := strings.Cut(rest[1], "/")
	n, err := strconv.Atoi(rest[2])
	ts.Check(err)
	var edit func(*githubtest.Issue)
	switch {
	case rest[0] == "set-body" && len(rest) == 4:
		body := ts.ReadFile(rest[3])
		edit = func(is *githubtest.Issue) { is.Body = body }
	case rest[0] == "close" && len(rest) == 3:
		edit = func(is *githubtest.Issue) { is.State, is.StateReason = "closed", "completed" }
	default:
		ts.Fatalf("%s", usage)
	}
	if method == "*" {
		method = ""
	}
	s.AfterRequest(method, pattern, skip, func(st *githubtest.State) {
		for _, r := range st.Repos {
			if strings.EqualFold(r.Owner, owner) && strings.EqualFold(r.Name, name) {
				for _, is := range r.Issues {
					if is.Number == n {
						edit(is)
					}
				}
			}
		}
	})
}
