package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/git-ralph/git-ralph/internal/github"
	"github.com/git-ralph/git-ralph/internal/github/githubtest"
	"github.com/git-ralph/git-ralph/internal/term"
)

// fakePrompter answers Select with a fixed choice and remembers the question.
type fakePrompter struct {
	choice  int
	asked   string
	options []string
}

func (p *fakePrompter) Select(prompt, _ string, options []string) (int, error) {
	p.asked, p.options = prompt, options
	return p.choice, nil
}

// interactive returns streams that look like a terminal, with p answering questions.
func interactive(p term.Prompter) (*term.Streams, *strings.Builder) {
	s, _, _ := term.Test()
	var errOut strings.Builder
	s.Err = &errOut
	s.StdinTTY, s.StderrTTY, s.NeverPrompt, s.Prompter = true, true, false, p
	return s, &errOut
}

// completeRun makes a repository whose one story a shell-script agent completes,
// configured as the custom agent.
func completeRun(t *testing.T) string {
	t.Helper()
	hermetic(t)
	dir, _ := os.Getwd()
	run := func(args ...string) {
		cmd := exec.Command("git", args...)
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=T", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=T", "GIT_COMMITTER_EMAIL=t@example.com")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	run("init", "-q", "--initial-branch=main")
	run("config", "user.name", "T")
	run("config", "user.email", "t@example.com")
	if err := os.MkdirAll(filepath.Join(dir, "openspec/changes/c"), 0o755); err != nil {
		t.Fatal(err)
	}
	must(t, os.WriteFile(filepath.Join(dir, "openspec/changes/c/tasks.md"), []byte("## 1. One\n- [ ] 1.1 do it\n"), 0o644))
	agentPath := filepath.Join(t.TempDir(), "agent.sh")
	must(t, os.WriteFile(agentPath, []byte("#!/bin/sh\ncat >/dev/null\nsed -i 's/- \\[ \\]/- [x]/' openspec/changes/c/tasks.md\necho done > work.txt\necho '<promise>COMPLETE</promise>'\n"), 0o755))
	run("add", "-A")
	run("commit", "-q", "-m", "base")
	run("config", "ralph.agent", "custom")
	run("config", "ralph.agentCommand", agentPath)
	return dir
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func gitOut(t *testing.T, args ...string) string {
	t.Helper()
	out, err := exec.Command("git", args...).Output()
	if err != nil {
		t.Fatalf("git %v: %v", args, err)
	}
	return strings.TrimSpace(string(out))
}

// In an interactive terminal, a start that completes every story offers squash / keep /
// later; the answer is carried out.
func TestStartOffersToFinishInATerminal(t *testing.T) {
	for _, tc := range []struct {
		choice int
		branch string
		record bool
	}{
		{choice: 0, branch: "main", record: false},    // squash
		{choice: 1, branch: "ralph/c", record: false}, // keep
		{choice: 2, branch: "ralph/c", record: true},  // decide later
	} {
		t.Run(tc.branch+"-"+itoa(tc.choice), func(t *testing.T) {
			completeRun(t)
			p := &fakePrompter{choice: tc.choice}
			s, errOut := interactive(p)
			if code := Main([]string{"start", "c"}, s); code != 0 {
				t.Fatalf("start exited %d:\n%s", code, errOut)
			}
			if p.asked == "" || len(p.options) != 3 || !strings.HasPrefix(p.options[0], "squash") || !strings.HasPrefix(p.options[1], "keep") {
				t.Fatalf("asked %q %q", p.asked, p.options)
			}
			if got := gitOut(t, "symbolic-ref", "--short", "HEAD"); got != tc.branch {
				t.Errorf("on %s, want %s\n%s", got, tc.branch, errOut)
			}
			_, err := os.Stat(".git/ralph/c/run.json")
			if (err == nil) != tc.record {
				t.Errorf("run record present: %v, want %v", err == nil, tc.record)
			}
			if tc.choice == 0 {
				if st := gitOut(t, "status", "--porcelain"); !strings.Contains(st, "?? work.txt") {
					t.Errorf("squash left status %q, want work.txt uncommitted", st)
				}
			}
			if tc.choice == 2 && !strings.Contains(errOut.String(), "git ralph finish c --squash") {
				t.Errorf("decide later does not print the finish commands:\n%s", errOut)
			}
		})
	}
}

// Without a terminal nothing is asked: both finish commands are printed.
func TestStartPrintsFinishCommandsWithoutATerminal(t *testing.T) {
	completeRun(t)
	p := &fakePrompter{}
	s, errOut := interactive(p)
	s.NeverPrompt = true // CI is set
	if code := Main([]string{"start", "c"}, s); code != 0 {
		t.Fatalf("start exited %d:\n%s", code, errOut)
	}
	if p.asked != "" {
		t.Errorf("asked %q with prompts off", p.asked)
	}
	for _, want := range []string{"git ralph finish c --squash", "git ralph finish c --keep"} {
		if !strings.Contains(errOut.String(), want) {
			t.Errorf("missing %q in:\n%s", want, errOut)
		}
	}
}

func itoa(i int) string { return string(rune('0' + i)) }

// githubRemote gives the repository of completeRun an origin whose URL is a GitHub
// one (https://github.com/acme/widgets.git, rewritten by url.insteadOf to a local bare
// repository), with main pushed, and a fake GitHub that has the repository. The
// returned setup sends git-ralph's GitHub requests to the fake.
func githubRemote(t *testing.T) (*githubtest.Server, Setup) {
	t.Helper()
	bare := filepath.Join(t.TempDir(), "widgets.git")
	for _, args := range [][]string{
		{"init", "-q", "--bare", bare},
		{"remote", "add", "origin", "https://github.com/acme/widgets.git"},
		{"config", "url." + bare + ".insteadOf", "https://github.com/acme/widgets.git"},
		{"push", "-q", "origin", "main"},
	} {
		if out, err := exec.Command("git", args...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	t.Setenv("GH_CONFIG_DIR", t.TempDir())
	t.Setenv("GH_TOKEN", "test-token")
	for _, k := range []string{"GITHUB_TOKEN", "GH_HOST", "GH_REPO", "GH_ENTERPRISE_TOKEN", "GITHUB_ENTERPRISE_TOKEN"} {
		t.Setenv(k, "")
		os.Unsetenv(k)
	}
	srv := githubtest.New()
	t.Cleanup(srv.Close)
	srv.AddRepo(githubtest.Repo{Owner: "acme", Name: "widgets", GitDir: bare})
	return srv, Setup{GitHub: func(o *github.Options) { o.Transport = srv.Transport() }, InProcess: true}
}

// With a GitHub remote, the offer has a fourth answer, the pull request, placed
// before "decide later" (still the default); choosing it does what finish --pr does:
// pushes ralph/c, opens its pull request, and goes back to main keeping ralph/c.
func TestStartOffersPullRequestWithGitHubRemote(t *testing.T) {
	completeRun(t)
	srv, setup := githubRemote(t)
	p := &fakePrompter{choice: 2}
	s, errOut := interactive(p)
	if code := MainWith([]string{"start", "c"}, s, setup); code != 0 {
		t.Fatalf("start exited %d:\n%s", code, errOut)
	}
	if len(p.options) != 4 || !strings.HasPrefix(p.options[2], "pull request") || p.options[3] != "decide later" {
		t.Fatalf("options %q", p.options)
	}
	if !strings.Contains(p.options[2], "acme/widgets") {
		t.Errorf("the pull request answer does not name the repository: %q", p.options[2])
	}
	pulls := srv.Pulls("acme", "widgets")
	if len(pulls) != 1 || pulls[0].Head != "ralph/c" || pulls[0].Base != "main" {
		t.Fatalf("pull requests %+v, want one of ralph/c into main\n%s", pulls, errOut)
	}
	if got := gitOut(t, "symbolic-ref", "--short", "HEAD"); got != "main" {
		t.Errorf("on %s, want main\n%s", got, errOut)
	}
	if local, remote := gitOut(t, "rev-parse", "ralph/c"), gitOut(t, "ls-remote", "origin", "refs/heads/ralph/c"); !strings.HasPrefix(remote, local) {
		t.Errorf("origin has ralph/c at %q, want %s", remote, local)
	}
	if _, err := os.Stat(".git/ralph/c/run.json"); err == nil {
		t.Errorf("the run record is still there after the pull request")
	}
	if !strings.Contains(errOut.String(), "opened pull request #1") {
		t.Errorf("no word of the pull request:\n%s", errOut)
	}
}

// "decide later" with a GitHub remote still changes nothing, and nothing is asked of
// GitHub just to make the offer.
func TestStartOfferLaterWithGitHubRemoteAsksNothingOfGitHub(t *testing.T) {
	completeRun(t)
	srv, setup := githubRemote(t)
	p := &fakePrompter{choice: 3}
	s, errOut := interactive(p)
	if code := MainWith([]string{"start", "c"}, s, setup); code != 0 {
		t.Fatalf("start exited %d:\n%s", code, errOut)
	}
	if len(p.options) != 4 {
		t.Fatalf("options %q", p.options)
	}
	if n := len(srv.Requests()); n != 0 {
		t.Errorf("%d request(s) to GitHub for an offer declined", n)
	}
	if got := gitOut(t, "symbolic-ref", "--short", "HEAD"); got != "ralph/c" {
		t.Errorf("on %s, want ralph/c", got)
	}
	if _, err := os.Stat(".git/ralph/c/run.json"); err != nil {
		t.Errorf("decide later removed the run record: %v", err)
	}
}

// A remote that is not on GitHub (and no ralph.repo) gets no pull request answer.
func TestStartOfferNoPullRequestWithoutGitHubRemote(t *testing.T) {
	dir := completeRun(t)
	bare := filepath.Join(t.TempDir(), "plain.git")
	for _, args := range [][]string{{"init", "-q", "--bare", bare}, {"-C", dir, "remote", "add", "origin", bare}} {
		if out, err := exec.Command("git", args...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	p := &fakePrompter{choice: 2}
	s, errOut := interactive(p)
	if code := Main([]string{"start", "c"}, s); code != 0 {
		t.Fatalf("start exited %d:\n%s", code, errOut)
	}
	if len(p.options) != 3 || p.options[2] != "decide later" {
		t.Errorf("options %q, want squash, keep, decide later", p.options)
	}
}
