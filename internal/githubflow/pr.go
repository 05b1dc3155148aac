package githubflow

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/git-ralph/git-ralph/internal/git"
	"github.com/git-ralph/git-ralph/internal/github"
	"github.com/git-ralph/git-ralph/internal/loop"
	"github.com/git-ralph/git-ralph/internal/repofile"
	"github.com/git-ralph/git-ralph/internal/run"
	"github.com/git-ralph/git-ralph/internal/source"
	"github.com/git-ralph/git-ralph/internal/tell"
)

// PROptions says where finish --pr sends the branch.
type PROptions struct {
	Draft  bool
	Base   string // the branch the pull request merges into; "" picks one
	Remote string // the git remote to push to; "" picks one
	// Repo is [HOST/]OWNER/REPO from --repo or ralph.repo; EnvRepo is GH_REPO. Both ""
	// means the push remote's URL decides.
	Repo, EnvRepo string
	// Client returns a GitHub client for a host (required). The CLI builds it on go-gh's
	// own token lookup; a *github.NoTokenError says there is no token.
	Client func(host string) (*github.Client, error)
}

// PRResult says what finish --pr did.
type PRResult struct {
	Change, Branch string
	URL            string
	Number         int
	Updated        bool   // an open pull request existed: its body was updated
	Pushed         bool   // false when the remote branch already was at the tip
	Remote         string // the git remote pushed to
	Repo           string // the repository the pull request is in
	Base           string
	Back           string // the branch switched back to; "" when HEAD stayed
	Stopped        string // the run's status when it was not complete
	// For a worktree run: its path, and whether it was removed (it was clean).
	Worktree        string
	RemovedWorktree bool
}

// FinishPR pushes ralph/<change> and opens (or updates) its pull request, then switches
// back to the original branch, keeps the branch, and forgets the run. Every check runs
// before anything changes; after a successful push a failure leaves the push recorded,
// so that running it again only makes the pull request call.
func (fl *Flow) FinishPR(ctx context.Context, change string, o PROptions) (*PRResult, error) {
	res, err := fl.finishPR(ctx, change, o)
	if err != nil && ctx.Err() != nil {
		// Ctrl-C: a started git step finished; a request was abandoned. Whatever was done
		// is recorded, and a rerun picks up from there.
		if name, rerr := fl.Loop.ResolveRun(change); rerr == nil {
			change = name
		}
		return nil, &tell.Error{Msg: "interrupted", Code: 130, Hint: "run '" + prCommand(change) + "' again to go on", Err: err}
	}
	return res, err
}

// finishPR is the finish pipeline (loop.FinishWith) with pr as its last step.
func (fl *Flow) finishPR(ctx context.Context, change string, o PROptions) (res *PRResult, err error) {
	err = fl.Loop.FinishWith(ctx, change, loop.FinishStrategy{
		Command: prCommand,
		Act: func(ctx context.Context, f *loop.FinishRun) error {
			p := &prFinish{fl: fl, o: o, rec: f.Rec, change: f.Change, again: f.Again}
			if f.Loop != fl.Loop {
				// The same Flow over the checkout a worktree run started from: a copy, not
				// On(f.Loop), so that what the caller set on it (StopWait, KillWait, the
				// Remote's clock and waits) carries over.
				from := *fl
				from.Loop, from.Repo = f.Loop, f.Loop.Repo
				p.fl = &from
			}
			res, err = p.run(ctx)
			return err
		},
	})
	return res, err
}

// prFinish is the last step of one finish --pr: every check (preflight, target) runs
// before anything changes; then push, pullRequest and done. After a successful push a
// failure leaves the push recorded, so that running it again only makes the pull
// request call.
type prFinish struct {
	fl            *Flow
	o             PROptions
	rec           *run.Record
	change, again string

	tip       string // the branch's tip, which the pull request gets
	back      string // where HEAD goes at the end: the original branch, or its commit for a detached start; "" stays
	wtDirty   []git.StatusEntry
	wtPresent bool // a worktree run's worktree is there

	remote string // the git remote pushed to
	repo   github.Repo
	head   *github.Repo // the repository the head branch is in
	client *github.Client
	base   string
	res    *PRResult
}

func (p *prFinish) run(ctx context.Context) (*PRResult, error) {
	if err := p.preflight(ctx); err != nil {
		return nil, err
	}
	if err := p.target(ctx); err != nil {
		return nil, err
	}
	if err := p.push(ctx); err != nil {
		return nil, err
	}
	if err := p.pullRequest(ctx); err != nil {
		return nil, err
	}
	return p.done(ctx)
}

// preflight checks the run against git: a worktree run's worktree clean, the branch
// there, the original branch where the run left it, the change's files readable, and
// a clean checkout to switch back from.
func (p *prFinish) preflight(ctx context.Context) error {
	fl, rec := p.fl, p.rec
	if rec.Worktree != nil {
		// Its branch is checked out in its worktree; the user's checkout never left the
		// original branch, and HEAD there stays.
		var err error
		if p.wtDirty, p.wtPresent, err = fl.Loop.Worktrees.Dirty(ctx, fl.Loop, rec); err != nil {
			return err
		}
		if len(p.wtDirty) > 0 {
			return tell.UserErr(fmt.Sprintf("commit them on %s there (they go into the pull request) or discard them, then run '%s' again", rec.Branch, p.again),
				"the worktree %s has %d uncommitted change(s)", rec.Worktree.Path, len(p.wtDirty))
		}
	}
	tip, ok, err := fl.Repo.ResolveRef(ctx, "refs/heads/"+rec.Branch)
	if err != nil {
		return err
	}
	if !ok {
		return loop.BranchGone(rec)
	}
	p.tip = tip
	if err := fl.Loop.CheckOriginal(ctx, fl.Repo, rec, false, p.again); err != nil {
		return err
	}
	// The change's files go into the pull request's title and body: one that may not
	// be read stops it here, before anything is pushed.
	if _, err := fl.Loop.Sources.OpenRun(source.Repo{Root: fl.Repo.Root}, rec); err != nil {
		var refused *repofile.RefusedError
		if errors.As(err, &refused) {
			return changeFileErr(err)
		}
	}
	if rec.Worktree != nil {
		return nil
	}
	return p.checkBack(ctx)
}

// checkBack settles where HEAD goes back to at the end, and checks the checkout is
// clean when it moves.
func (p *prFinish) checkBack(ctx context.Context) error {
	fl, rec := p.fl, p.rec
	cur, err := fl.Repo.Branch(ctx)
	if err != nil {
		return err
	}
	switch {
	case rec.Original != "" && cur != rec.Original:
		if ok, err := fl.Repo.BranchExists(ctx, rec.Original); err != nil {
			return err
		} else if ok {
			p.back = rec.Original
		}
	case rec.Original == "" && cur != "":
		p.back = rec.OriginalCommit
	}
	if p.back == "" {
		return nil
	}
	st, err := fl.Repo.Status(ctx)
	if err != nil || len(st) == 0 {
		return err
	}
	what := "commit them on " + rec.Branch + " (they go into the pull request) or stash them"
	if cur != rec.Branch {
		what = "commit or stash them"
	}
	return tell.UserErr(what+", then run '"+p.again+"' again",
		"you have uncommitted changes on %s", loop.BranchOrDetached(cur, ""))
}

// target settles where the pull request goes, asking GitHub: the push remote, the
// repository (a fork's parent, as GitHub's own "Compare & pull request" does) and its
// base branch, which must exist there.
func (p *prFinish) target(ctx context.Context) error {
	fl, rec, o := p.fl, p.rec, p.o
	remote, repo, head, explicit, err := fl.prTarget(ctx, rec, p.change, o)
	if err != nil {
		return err
	}
	p.remote, p.head = remote, head
	if p.client, err = githubClient(o.Client, repo.Host, p.again); err != nil {
		return err
	}
	info, err := p.client.Repository(ctx, repo)
	if err != nil {
		return apiErr(err, repo, p.again)
	}
	if explicit == "" && info.Fork && info.Parent != nil {
		repo = github.Repo{Host: repo.Host, Owner: info.Parent.Owner.Login, Name: info.Parent.Name}
		if info.Parent.Owner.Login == "" {
			if r, err := github.ParseRepo(info.Parent.FullName, repo.Host); err == nil {
				repo = r
			}
		}
		info = info.Parent
	}
	p.repo = repo
	p.base = cmp.Or(o.Base, rec.Original, info.DefaultBranch)
	if _, err := p.client.Branch(ctx, repo, p.base); github.StatusOf(err) == 404 {
		hint := fmt.Sprintf("open it against another branch: %s --base %s", p.again, info.DefaultBranch)
		if o.Base == "" && rec.Original != "" {
			hint = fmt.Sprintf("push %s first (git push %s %s), or %s", p.base, remote, p.base, hint)
		}
		return tell.UserErr(hint, "branch %s does not exist in %s", p.base, repo)
	} else if err != nil {
		return apiErr(err, repo, p.again)
	}
	return nil
}

// push pushes the branch unless the remote has it at its tip already, with a lease on
// what was there: only a branch this or an earlier finish --pr pushed, or one the tip
// descends from, is replaced. The push is recorded.
func (p *prFinish) push(ctx context.Context) error {
	fl, rec, remote := p.fl, p.rec, p.remote
	remoteTip, onRemote, err := fl.Repo.RemoteBranch(ctx, remote, rec.Branch)
	if err != nil {
		return tell.UserErr("check the remote and your git credentials (git ls-remote "+remote+"), then run '"+p.again+"' again",
			"cannot read %s from remote %q: %s", rec.Branch, remote, err.Error()).WithCause(err)
	}
	pushed := rec.PullRequest
	if pushed == nil || pushed.Remote != remote {
		pushed = &run.PullRequest{Remote: remote}
	}
	pushed.Repo = p.repo.String()
	expect := ""
	needPush := !onRemote || remoteTip != p.tip
	if needPush && onRemote {
		expect = remoteTip
		ours := remoteTip == pushed.Pushed
		if f := fl.Store.LoadFinished(p.change); f != nil && f.Remote == remote && f.Pushed == remoteTip {
			ours = true // an earlier run's finish --pr pushed it: replace it, as its pull request's new head
		}
		if !ours {
			if anc, _ := fl.Repo.IsAncestor(ctx, remoteTip, p.tip); !anc {
				return movedErr(rec.Branch, remote, remoteTip, p.tip, p.again)
			}
		}
	}
	p.res = &PRResult{Change: p.change, Branch: rec.Branch, Remote: remote, Repo: p.repo.String(), Base: p.base}
	if rec.Status != run.Complete {
		p.res.Stopped = string(rec.Status)
	}
	if needPush {
		if err := p.pushBranch(ctx, expect); err != nil {
			return err
		}
		p.res.Pushed = true
	}
	pushed.Pushed = p.tip
	rec.PullRequest = pushed
	rec.Busy = "" // no git at work while GitHub is called: a failure there is no crash
	return fl.Loop.Save(rec)
}

// pushBranch runs the push, expecting the remote branch at expect ("": absent).
func (p *prFinish) pushBranch(ctx context.Context, expect string) error {
	fl, rec, remote := p.fl, p.rec, p.remote
	fl.Loop.Report.Step(fmt.Sprintf("pushing %s to %s", rec.Branch, remote))
	err := fl.Loop.Busy(rec, "finish --pr", func() error {
		return fl.Repo.Push(ctx, git.PushRequest{Remote: remote, Branch: rec.Branch, Expect: expect,
			Config: []string{"ralph.allowPush=true"}})
	})
	if errors.Is(err, git.ErrPushRejected) {
		now, _, _ := fl.Repo.RemoteBranch(ctx, remote, rec.Branch)
		return movedErr(rec.Branch, remote, now, p.tip, p.again)
	}
	if err != nil {
		hint := "nothing was pushed; fix what git says, then run '" + p.again + "' again"
		var gerr *git.Error
		if errors.As(err, &gerr) && gerr.Stderr != "" {
			hint = "git said:\n" + loop.Tail(gerr.Stderr, 5) + "\n" + hint
		}
		return &tell.Error{Msg: fmt.Sprintf("cannot push %s to %s", rec.Branch, remote), Hint: hint, Err: err}
	}
	return nil
}

// pullRequest opens the pull request, or updates the description of the open one, and
// records its address.
func (p *prFinish) pullRequest(ctx context.Context) error {
	fl, rec, repo := p.fl, p.rec, p.repo
	ch, _ := fl.Loop.Sources.OpenRun(source.Repo{Root: fl.Repo.Root}, rec)
	if ch != nil {
		// The title and the "Why" are the user's words: the proposal as the run began,
		// never what the agent made of it in the work tree.
		from := fl.userText(ctx, rec)
		ch.FromInitial(func(rel string, doc bool) []byte { return userFile(ctx, fl.Repo, from, rel, doc) })
	}
	title, body := PRTitle(ch, p.change), withClosing(PRBody(rec, ch), rec, ch, repo.String())
	headRef := p.head.Owner + ":" + rec.Branch
	pr, err := p.client.OpenPullRequest(ctx, repo, headRef)
	if err != nil {
		return prErr(err, repo, p.again, rec.Branch, p.remote)
	}
	if pr != nil {
		fl.Loop.Report.Step(fmt.Sprintf("updating the description of pull request #%d", pr.Number))
		if pr, err = p.client.UpdatePullRequest(ctx, repo, pr.Number, github.PullRequestUpdate{Body: body}); err != nil {
			return prErr(err, repo, p.again, rec.Branch, p.remote)
		}
		p.res.Updated = true
	} else {
		req := github.NewPullRequest{Title: title, Head: rec.Branch, Base: p.base, Body: body, Draft: p.o.Draft}
		if !strings.EqualFold(p.head.FullName(), repo.FullName()) {
			req.Head = headRef
		}
		if pr, err = p.client.CreatePullRequest(ctx, repo, req); err != nil {
			return prErr(err, repo, p.again, rec.Branch, p.remote)
		}
	}
	p.res.URL, p.res.Number = pr.HTMLURL, pr.Number
	rec.PullRequest.URL = pr.HTMLURL
	return fl.Loop.Save(rec)
}

// done goes back to the original branch (the run's branch stays: it is the pull
// request's head), removes a worktree run's clean worktree, and forgets the run.
func (p *prFinish) done(ctx context.Context) (*PRResult, error) {
	fl, rec, res := p.fl, p.rec, p.res
	if p.back != "" {
		if err := fl.Loop.Busy(rec, "finish --pr", func() error { return fl.Repo.Checkout(ctx, p.back) }); err != nil {
			return nil, fmt.Errorf("switch back to %s: %w", p.back, err)
		}
		res.Back = loop.BranchOrDetached(rec.Original, p.back)
	}
	if rec.Worktree != nil {
		fr := &run.FinishResult{}
		if err := fl.Loop.Busy(rec, "finish --pr", func() error {
			return fl.Loop.Worktrees.Remove(ctx, fl.Loop, rec, p.wtDirty, p.wtPresent, fr)
		}); err != nil {
			return nil, err
		}
		res.Worktree, res.RemovedWorktree = rec.Worktree.Path, fr.RemovedWorktree
	}
	fl.Loop.SaveFinished(run.Finished{Change: p.change, Branch: rec.Branch, How: "pr", URL: res.URL, Remote: p.remote, Pushed: p.tip, At: fl.Loop.Time()})
	return res, fl.Store.Remove(p.change)
}

// PRRepo says in which GitHub repository 'git ralph finish <change> --pr' would open
// the pull request, resolved as finish --pr resolves it before its first request (the
// push remote's URL, or o.Repo / o.EnvRepo), without a network call: so the fork's
// parent is not looked up. ok is false when there is none (the push remote is missing
// or not a GitHub URL, and no repository is named).
func (fl *Flow) PRRepo(ctx context.Context, change string, o PROptions) (repo github.Repo, ok bool, err error) {
	change, err = fl.Loop.ResolveRun(change)
	if err != nil {
		return github.Repo{}, false, err
	}
	rec, err := fl.Store.Load(change)
	if err != nil {
		return github.Repo{}, false, err
	}
	if _, repo, _, _, err = fl.prTarget(ctx, rec, change, o); err != nil {
		var ue *tell.Error
		if errors.As(err, &ue) {
			return github.Repo{}, false, nil // what finish --pr would refuse with
		}
		return github.Repo{}, false, err
	}
	return repo, true, nil
}

// IssueRepo is the GitHub repository an issue reference without one ('#10') names:
// the one finish --pr would open the pull request in from the current branch (o.Remote,
// the branch's push remote, remote.pushDefault or origin, and its URL; or o.Repo /
// o.EnvRepo), resolved the same way and without a network call. ok is false when there
// is none (no such remote, or not a GitHub URL, and no repository named).
func (fl *Flow) IssueRepo(ctx context.Context, o PROptions) (repo github.Repo, ok bool, err error) {
	branch, err := fl.Repo.Branch(ctx)
	if err != nil {
		return github.Repo{}, false, err
	}
	if _, repo, _, _, err = fl.prTarget(ctx, &run.Record{Original: branch, Branch: branch}, "", o); err != nil {
		var ue *tell.Error
		if errors.As(err, &ue) {
			return github.Repo{}, false, nil
		}
		return github.Repo{}, false, err
	}
	return repo, true, nil
}

// prTarget resolves where finish --pr goes: the git remote to push to, the GitHub
// repository of the pull request, the one its head branch is in, and the repository
// named by --repo, ralph.repo or GH_REPO ("" when the remote's URL decided).
func (fl *Flow) prTarget(ctx context.Context, rec *run.Record, change string, o PROptions) (remote string, repo github.Repo, head *github.Repo, explicit string, err error) {
	remote, err = fl.pushRemote(ctx, rec, o.Remote)
	if err != nil {
		return "", github.Repo{}, nil, "", err
	}
	urls, err := fl.Repo.RemoteURLs(ctx, remote)
	if errors.Is(err, git.ErrNoRemote) {
		hint := "push to another remote with '" + prCommand(change) + " --remote NAME', or add this one: git remote add " + remote + " <url>"
		return "", github.Repo{}, nil, "", tell.UserErr(hint, "no git remote %q to push %s to", remote, rec.Branch)
	}
	if err != nil {
		return "", github.Repo{}, nil, "", err
	}
	explicit = o.Repo
	if explicit == "" {
		explicit = o.EnvRepo
	}
	repo, pushRepo, found, err := githubRepoOf(urls, explicit)
	if err != nil {
		return "", github.Repo{}, nil, "", tell.UserErr("name it as OWNER/REPO or HOST/OWNER/REPO: "+prCommand(change)+" --repo OWNER/REPO", "%s", err.Error()).WithCause(err)
	}
	if !found {
		return "", github.Repo{}, nil, "", tell.UserErr("name it: git ralph finish "+change+" --pr --repo OWNER/REPO (or git config ralph.repo OWNER/REPO)",
			"cannot tell which GitHub repository remote %q is: %s is not a GitHub URL", remote, urls[0])
	}
	head = pushRepo
	if head == nil || !strings.EqualFold(head.Host, repo.Host) {
		head = &repo // a remote GitHub cannot name (a local mirror): the head is in the repository itself
	}
	return remote, repo, head, explicit, nil
}

// pushRemote is the remote finish --pr pushes to: the flag (or ralph.remote), the
// original branch's pushRemote, remote.pushDefault, then origin.
func (fl *Flow) pushRemote(ctx context.Context, rec *run.Record, flag string) (string, error) {
	if flag != "" {
		return flag, nil
	}
	keys := []string{"remote.pushDefault"}
	if rec.Original != "" {
		keys = append([]string{"branch." + rec.Original + ".pushRemote"}, keys...)
	}
	for _, k := range keys {
		v, ok, err := fl.Repo.Config(ctx, k)
		if err != nil {
			return "", err
		}
		if ok && v != "" {
			return v, nil
		}
	}
	return "origin", nil
}

func movedErr(branch, remote, theirs, ours, again string) error {
	if theirs == "" {
		theirs = "(gone)"
	}
	return tell.UserErr(fmt.Sprintf("nothing was pushed; look at what is there: git fetch %s %s && git log %s..FETCH_HEAD\n"+
		"to replace it with yours: git -c ralph.allowPush=true push --force-with-lease=%s:%s %s %s, then run '%s' again",
		remote, branch, loop.Short(ours), branch, theirs, remote, branch, again),
		"%s on %s has commits that are not yours: it is at %s, yours is at %s", branch, remote, loop.Short(theirs), loop.Short(ours))
}

// apiErr explains a failed GitHub call of the preflight, where nothing has changed.
func apiErr(err error, repo github.Repo, again string) error {
	return githubErr(err, repo, again, "nothing was changed; ")
}

// prErr explains a failed pull request call, made after the push.
func prErr(err error, repo github.Repo, again, branch, remote string) error {
	return githubErr(err, repo, again, fmt.Sprintf("%s is pushed to %s; ", branch, remote))
}

// finePermission names the fine-grained permission a GitHub API path needs.
func finePermission(path string) string {
	if strings.Contains(path, "/actions/") {
		return "Actions: read and write"
	}
	return "Pull requests: read and write"
}

func githubErr(err error, repo github.Repo, again, done string) error {
	var ge *github.Error
	var ne *github.NetworkError
	retry := done + "run '" + again + "' again"
	e := func(msg, hint string) error { return &tell.Error{Msg: msg, Hint: hint + "\n" + retry, Err: err} }
	switch {
	case errors.As(err, &ne):
		return e(fmt.Sprintf("cannot reach GitHub at %s: %s", ne.Host, ne.Err.Error()), "check your network connection (and HTTPS_PROXY)")
	case !errors.As(err, &ge):
		return err
	case ge.RateLimited():
		when := ""
		if ge.RetryAfter > 0 {
			when = fmt.Sprintf(" for %s", ge.RetryAfter.Round(1e9))
		}
		return e(fmt.Sprintf("GitHub's rate limit for %s is used up%s", repo.Host, when), "wait that long")
	case ge.StatusCode == 401:
		return e(fmt.Sprintf("GitHub rejected the token for %s (401 %s)", repo.Host, ge.Text()),
			fmt.Sprintf("log in again with 'gh auth login --hostname %s', or set a valid token", repo.Host))
	case ge.StatusCode == 403:
		return e(fmt.Sprintf("the token for %s may not do this in %s (403 %s)", repo.Host, repo, ge.Text()),
			"a classic token needs the repo scope (public_repo for a public repository), a fine-grained one "+finePermission(ge.Path)+"\n"+
				"add it with 'gh auth refresh --hostname "+repo.Host+" --scopes repo', or use another token")
	case ge.StatusCode == 404:
		return e(fmt.Sprintf("repository %s not found, or the token for %s cannot see it (404)", repo, repo.Host),
			"check the name (--repo, git config ralph.repo, GH_REPO, the remote's URL) and the token's access")
	case ge.StatusCode == 422:
		return e(fmt.Sprintf("GitHub refused the pull request: %s", ge.Text()), "fix that first")
	case ge.StatusCode >= 500:
		return e(fmt.Sprintf("GitHub answered %d %s", ge.StatusCode, ge.Text()), "it is likely passing; try again in a moment")
	}
	return e("GitHub answered "+ge.Error(), "see GitHub's message")
}

// prCommand is the finish --pr command line for a hint.
func prCommand(change string) string {
	if change == "" {
		return "git ralph finish --pr"
	}
	return "git ralph finish " + change + " --pr"
}

// githubClient makes the client for host, turning "no token" into the error that says
// how to log in; again, when not "", is the command to run afterwards.
func githubClient(clientFor func(host string) (*github.Client, error), host, again string) (*github.Client, error) {
	client, err := clientFor(host)
	var nt *github.NoTokenError
	if errors.As(err, &nt) {
		hint := fmt.Sprintf("log in with 'gh auth login --hostname %s', or set %s", nt.Host, github.TokenEnv(nt.Host))
		if again != "" {
			hint += fmt.Sprintf(", then run '%s' again", again)
		}
		return nil, tell.UserErr(hint, "no GitHub token for %s", nt.Host)
	}
	return client, err
}

// githubRepoOf resolves the GitHub repository for a push remote whose URLs are urls:
// explicit ([HOST/]OWNER/REPO from --repo, ralph.repo or GH_REPO; its host defaults to
// the remote's) wins, then the first URL that names a GitHub repository. pushRepo is the
// repository the remote's URL names, nil when none does; found is false when neither
// decides; err is an explicit name that does not parse.
func githubRepoOf(urls []string, explicit string) (repo github.Repo, pushRepo *github.Repo, found bool, err error) {
	for _, u := range urls {
		if r, ok := github.RepoFromURL(u); ok {
			pushRepo = &r
			break
		}
	}
	switch {
	case explicit != "":
		host := ""
		if pushRepo != nil {
			host = pushRepo.Host
		}
		repo, err = github.ParseRepo(explicit, host)
		return repo, pushRepo, err == nil, err
	case pushRepo != nil:
		return *pushRepo, pushRepo, true, nil
	}
	return github.Repo{}, nil, false, nil
}

// userFile is a file of the source (rel) at rev, the commit userText chose, read
// through git; nil when it was not there.
func userFile(ctx context.Context, repo *git.Repo, rev, rel string, doc bool) []byte {
	if rev == "" || rel == "" || strings.HasPrefix(rel, "/") {
		return nil
	}
	limit := repofile.MaxDoc // a proposal's or a spec's start: the title and the Why are there
	if !doc {
		limit = repofile.MaxFile // a tracked file (a prd.json, a plan) is parsed whole
	}
	data, size, ok, err := repo.ReadFile(ctx, rev, rel, limit)
	if err != nil || !ok || limit == repofile.MaxFile && size > int64(limit) {
		return nil
	}
	return data
}

// changeFileErr turns a change file that repofile refused to read (a symlink out of
// the repository, a FIFO, a device) into an error naming it, with what to do.
func changeFileErr(err error) error {
	var refused *repofile.RefusedError
	if errors.As(err, &refused) {
		return &tell.Error{Msg: refused.Error(), Hint: refused.Hint(), Err: err}
	}
	return err
}
