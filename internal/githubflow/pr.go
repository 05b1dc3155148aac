package githubflow

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/git-ralph/git-ralph/internal/git"
	"github.com/git-ralph/git-ralph/internal/github"
	"github.com/git-ralph/git-ralph/internal/loop"
	"github.com/git-ralph/git-ralph/internal/repofile"
	"github.com/git-ralph/git-ralph/internal/run"
	"github.com/git-ralph/git-ralph/internal/sandbox"
	"github.com/git-ralph/git-ralph/internal/source"
)

// PROptions says where finish --pr sends the branch.
type PROptions struct {
	Draft  bool
	Base   string // the branch the pull request merges into; "" picks one
	Remote string // the git remote to push to; "" picks one
	// Repo is [HOST/]OWNER/REPO from --repo or ralph.repo; EnvRepo is GH_REPO. Both ""
	// means the push remote's URL decides.
	Repo, EnvRepo string
	// Hooks is the sandbox the pre-push hook runs in (the verify gate's); its zero
	// value lets git run it, outside.
	Hooks sandbox.Settings
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
		return nil, &loop.Error{Msg: "interrupted", Code: 130, Hint: "run '" + prCommand(change) + "' again to go on", Err: err}
	}
	return res, err
}

func (fl *Flow) finishPR(ctx context.Context, change string, o PROptions) (*PRResult, error) {
	change, rec, lock, err := fl.Loop.LockRun(change)
	if err != nil {
		return nil, err
	}
	defer lock.Unlock()
	again := prCommand(change)
	if rec.Finishing != nil {
		return nil, loop.UserErr("run 'git ralph finish "+change+" --squash' to complete it",
			"an interrupted 'git ralph finish --squash' of %q is pending", change)
	}
	if rec.IsRemote() {
		// A run on GitHub Actions comes home first, as for --squash and --keep.
		if err := fl.importRemoteRun(context.WithoutCancel(ctx), rec); err != nil {
			return nil, err
		}
	}

	// A worktree run: its branch is checked out in its worktree, the user's checkout
	// never left the original branch. Work from that checkout, even when called from
	// inside the worktree (which goes away at the end when clean).
	var wtDirty []git.StatusEntry
	wtPresent := false
	wt := fl.Loop.Worktrees
	if rec.Worktree != nil {
		if wt == nil {
			return nil, fmt.Errorf("finish --pr of %q: its run is in a worktree, and there is no way to finish it here", rec.Change)
		}
		wlock, err := fl.Store.LockWorktrees()
		if err != nil {
			return nil, err
		}
		defer wlock.Unlock()
		ol, err := wt.FromOrigin(ctx, fl.Loop, rec)
		if err != nil {
			return nil, err
		}
		// The same Flow over the checkout the run started from: a copy, not On(ol), so
		// that what the caller set on it (StopWait, KillWait, the Remote's clock and
		// waits) carries over.
		from := *fl
		from.Loop, from.Repo = ol, ol.Repo
		fl = &from
		if crashResumePR(rec) {
			if err := wt.ClearCrashLocks(ctx, fl.Loop, rec, again); err != nil {
				return nil, err
			}
		}
		if wtDirty, wtPresent, err = wt.Dirty(ctx, fl.Loop, rec); err != nil {
			return nil, err
		}
		if len(wtDirty) > 0 {
			return nil, loop.UserErr(fmt.Sprintf("commit them on %s there (they go into the pull request) or discard them, then run '%s' again", rec.Branch, again),
				"the worktree %s has %d uncommitted change(s)", rec.Worktree.Path, len(wtDirty))
		}
	}

	if rec.Worktree == nil && crashResumePR(rec) {
		// A crash-resume: a loop or a finish --pr was killed, maybe with a git of its own.
		if err := fl.Loop.ClearCrashLocks(ctx, rec, again); err != nil {
			return nil, err
		}
	}
	// A loop killed during an attempt: the surface as it was before it, first (the
	// push remote and the repository come from the config).
	if err := fl.Loop.CheckCrashedSurface(ctx, rec, again); err != nil {
		return nil, err
	}

	// Preflight: nothing changes until every check has passed.
	tip, ok, err := fl.Repo.ResolveRef(ctx, "refs/heads/"+rec.Branch)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, loop.BranchGone(rec)
	}
	if err := fl.Loop.CheckOriginal(ctx, fl.Repo, rec, false, again); err != nil {
		return nil, err
	}
	// The change's files go into the pull request's title and body: one that may not
	// be read stops it here, before anything is pushed.
	if _, err := fl.Loop.Sources.OpenRun(source.Repo{Root: fl.Repo.Root}, rec); err != nil {
		var refused *repofile.RefusedError
		if errors.As(err, &refused) {
			return nil, changeFileErr(err)
		}
	}
	cur, err := fl.Repo.Branch(ctx)
	if err != nil {
		return nil, err
	}
	back := "" // where HEAD goes at the end: the original branch, or its commit for a detached start
	switch {
	case rec.Worktree != nil:
		// HEAD here was never moved by the run.
	case rec.Original != "" && cur != rec.Original:
		if ok, err := fl.Repo.BranchExists(ctx, rec.Original); err != nil {
			return nil, err
		} else if ok {
			back = rec.Original
		}
	case rec.Original == "" && cur != "":
		back = rec.OriginalCommit
	}
	if back != "" {
		st, err := fl.Repo.Status(ctx)
		if err != nil {
			return nil, err
		}
		if len(st) > 0 {
			what := "commit them on " + rec.Branch + " (they go into the pull request) or stash them"
			if cur != rec.Branch {
				what = "commit or stash them"
			}
			return nil, loop.UserErr(what+", then run '"+again+"' again",
				"you have uncommitted changes on %s", loop.BranchOrDetached(cur, ""))
		}
	}

	remote, repo, head, explicit, err := fl.prTarget(ctx, rec, change, o)
	if err != nil {
		return nil, err
	}

	client, err := githubClient(o.Client, repo.Host, again)
	if err != nil {
		return nil, err
	}
	info, err := client.Repository(ctx, repo)
	if err != nil {
		return nil, apiErr(err, repo, again)
	}
	if explicit == "" && info.Fork && info.Parent != nil {
		// As GitHub's own "Compare & pull request" does: a fork's pull request goes to
		// the repository it was forked from.
		repo = github.Repo{Host: repo.Host, Owner: info.Parent.Owner.Login, Name: info.Parent.Name}
		if info.Parent.Owner.Login == "" {
			if r, err := github.ParseRepo(info.Parent.FullName, repo.Host); err == nil {
				repo = r
			}
		}
		info = info.Parent
	}
	base := o.Base
	if base == "" {
		base = rec.Original
	}
	if base == "" {
		base = info.DefaultBranch
	}
	if _, err := client.Branch(ctx, repo, base); github.StatusOf(err) == 404 {
		hint := fmt.Sprintf("open it against another branch: %s --base %s", again, info.DefaultBranch)
		if o.Base == "" && rec.Original != "" {
			hint = fmt.Sprintf("push %s first (git push %s %s), or %s", base, remote, base, hint)
		}
		return nil, loop.UserErr(hint, "branch %s does not exist in %s", base, repo)
	} else if err != nil {
		return nil, apiErr(err, repo, again)
	}

	remoteTip, onRemote, err := fl.Repo.RemoteBranch(ctx, remote, rec.Branch)
	if err != nil {
		return nil, loop.UserErr("check the remote and your git credentials (git ls-remote "+remote+"), then run '"+again+"' again",
			"cannot read %s from remote %q: %s", rec.Branch, remote, err.Error()).WithCause(err)
	}
	pushed := rec.PullRequest
	if pushed == nil || pushed.Remote != remote {
		pushed = &run.PullRequest{Remote: remote}
	}
	pushed.Repo = repo.String()
	expect := ""
	needPush := !onRemote || remoteTip != tip
	if needPush && onRemote {
		expect = remoteTip
		ours := remoteTip == pushed.Pushed
		if f := fl.Store.LoadFinished(change); f != nil && f.Remote == remote && f.Pushed == remoteTip {
			ours = true // an earlier run's finish --pr pushed it: replace it, as its pull request's new head
		}
		if !ours {
			if anc, _ := fl.Repo.IsAncestor(ctx, remoteTip, tip); !anc {
				return nil, movedErr(rec.Branch, remote, remoteTip, tip, again)
			}
		}
	}

	// Push.
	res := &PRResult{Change: change, Branch: rec.Branch, Remote: remote, Repo: repo.String(), Base: base}
	if rec.Status != run.Complete {
		res.Stopped = string(rec.Status)
	}
	if needPush {
		fl.Loop.Report.Step(fmt.Sprintf("pushing %s to %s", rec.Branch, remote))
		err := fl.Loop.Busy(rec, "finish --pr", func() error {
			return fl.Repo.Push(ctx, git.PushRequest{Remote: remote, Branch: rec.Branch, Expect: expect,
				Config: []string{"ralph.allowPush=true"}, PrePush: fl.prePush(o.Hooks)})
		})
		if errors.Is(err, git.ErrPushRejected) {
			now, _, _ := fl.Repo.RemoteBranch(ctx, remote, rec.Branch)
			return nil, movedErr(rec.Branch, remote, now, tip, again)
		}
		if err != nil {
			hint := "nothing was pushed; fix what git says, then run '" + again + "' again"
			var gerr *git.Error
			if errors.As(err, &gerr) && gerr.Stderr != "" {
				hint = "git said:\n" + loop.Tail(gerr.Stderr, 5) + "\n" + hint
			}
			return nil, &loop.Error{Msg: fmt.Sprintf("cannot push %s to %s", rec.Branch, remote), Hint: hint, Err: err}
		}
		res.Pushed = true
	}
	pushed.Pushed = tip
	rec.PullRequest = pushed
	rec.Busy = "" // no git at work while GitHub is called: a failure there is no crash
	if err := fl.Loop.Save(rec); err != nil {
		return nil, err
	}

	// The pull request.
	ch, _ := fl.Loop.Sources.OpenRun(source.Repo{Root: fl.Repo.Root}, rec)
	if ch != nil {
		// The title and the "Why" are the user's words: the proposal as the run began,
		// never what the agent made of it in the work tree.
		from := fl.userText(ctx, rec)
		ch.FromInitial(func(rel string, doc bool) []byte { return userFile(ctx, fl.Repo, from, rel, doc) })
	}
	title, body := PRTitle(ch, change), withClosing(PRBody(rec, ch), rec, ch, repo.String())
	headRef := head.Owner + ":" + rec.Branch
	pr, err := client.OpenPullRequest(ctx, repo, headRef)
	if err != nil {
		return nil, prErr(err, repo, again, rec.Branch, remote)
	}
	if pr != nil {
		fl.Loop.Report.Step(fmt.Sprintf("updating the description of pull request #%d", pr.Number))
		if pr, err = client.UpdatePullRequest(ctx, repo, pr.Number, github.PullRequestUpdate{Body: body}); err != nil {
			return nil, prErr(err, repo, again, rec.Branch, remote)
		}
		res.Updated = true
	} else {
		req := github.NewPullRequest{Title: title, Head: rec.Branch, Base: base, Body: body, Draft: o.Draft}
		if !strings.EqualFold(head.FullName(), repo.FullName()) {
			req.Head = headRef
		}
		if pr, err = client.CreatePullRequest(ctx, repo, req); err != nil {
			return nil, prErr(err, repo, again, rec.Branch, remote)
		}
	}
	res.URL, res.Number = pr.HTMLURL, pr.Number
	pushed.URL = pr.HTMLURL
	if err := fl.Loop.Save(rec); err != nil {
		return nil, err
	}

	// Back to the original branch; the run's branch stays: it is the pull request's head.
	if back != "" {
		if err := fl.Loop.Busy(rec, "finish --pr", func() error { return fl.Repo.Checkout(ctx, back) }); err != nil {
			return nil, fmt.Errorf("switch back to %s: %w", back, err)
		}
		res.Back = loop.BranchOrDetached(rec.Original, back)
	}
	if rec.Worktree != nil {
		fr := &loop.FinishResult{}
		if err := fl.Loop.Busy(rec, "finish --pr", func() error { return wt.Remove(ctx, fl.Loop, rec, wtDirty, wtPresent, fr) }); err != nil {
			return nil, err
		}
		res.Worktree, res.RemovedWorktree = rec.Worktree.Path, fr.RemovedWorktree
	}
	fl.Loop.SaveFinished(run.Finished{Change: change, Branch: rec.Branch, How: "pr", URL: res.URL, Remote: remote, Pushed: tip, At: fl.Loop.Time()})
	return res, fl.Store.Remove(change)
}

// crashResumePR reports whether finish --pr meets a run a killed git-ralph left at
// work: a loop (the record says running; the run lock, which we hold, was free) or a
// git step of an earlier finish --pr (busy).
func crashResumePR(rec *run.Record) bool {
	return rec.Status == run.Running || rec.Busy != ""
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
		var ue *loop.Error
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
		var ue *loop.Error
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
		return "", github.Repo{}, nil, "", loop.UserErr(hint, "no git remote %q to push %s to", remote, rec.Branch)
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
		return "", github.Repo{}, nil, "", loop.UserErr("name it as OWNER/REPO or HOST/OWNER/REPO: "+prCommand(change)+" --repo OWNER/REPO", "%s", err.Error()).WithCause(err)
	}
	if !found {
		return "", github.Repo{}, nil, "", loop.UserErr("name it: git ralph finish "+change+" --pr --repo OWNER/REPO (or git config ralph.repo OWNER/REPO)",
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
	return loop.UserErr(fmt.Sprintf("nothing was pushed; look at what is there: git fetch %s %s && git log %s..FETCH_HEAD\n"+
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
	e := func(msg, hint string) error { return &loop.Error{Msg: msg, Hint: hint + "\n" + retry, Err: err} }
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
		return nil, loop.UserErr(hint, "no GitHub token for %s", nt.Host)
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
		return &loop.Error{Msg: refused.Error(), Hint: refused.Hint(), Err: err}
	}
	return err
}
