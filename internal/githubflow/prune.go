package githubflow

import (
	"context"
	"fmt"

	"github.com/git-ralph/git-ralph/internal/git"
	"github.com/git-ralph/git-ralph/internal/tell"
)

// PruneTarget is what finish --prune-remote deletes on the git remote once the finish
// has succeeded (docs/REMOTE.md, "Prune"): ralph/<change> and the run's
// refs/ralph/<change>/runs/<run-id>/…. It is taken before the finish, which forgets
// the record.
type PruneTarget struct {
	Change    string
	Branch    string
	GitRemote string
	RunID     int64
}

// RemotePruneTarget is the PruneTarget of a change's run, which must be a run on
// GitHub Actions, or one a finish has brought home from there (that finish was killed
// before it completed: the same command again completes it, and prunes). It changes
// nothing.
func (rem *Remote) RemotePruneTarget(change string) (*PruneTarget, error) {
	name, rec, err := rem.LoadRun(change)
	if err != nil {
		return nil, err
	}
	broughtHome := rec.Remote != nil && rec.Remote.RunID != 0 && rec.Remote.LastSeenStatus == "completed"
	if !(rec.IsRemote() || broughtHome) || rec.Remote.GitRemote == "" {
		return nil, tell.UserErr("it is for a run on GitHub Actions; 'git ralph finish "+name+" --squash' (or --keep) finishes this one",
			"the run of %q is not on GitHub Actions", name)
	}
	return &PruneTarget{Change: name, Branch: rec.Branch, GitRemote: rec.Remote.GitRemote, RunID: rec.Remote.RunID}, nil
}

// PruneResult says what PruneRemote deleted.
type PruneResult struct {
	Remote  string
	Deleted []string // full ref names on the remote
}

// PruneRemote deletes, in one atomic push, t's branch and run refs on the git remote,
// each with a lease on the tip finish brought home (the remote-tracking branch and the
// run's refs fetched here): a ref someone pushed to since is never deleted, and then
// neither is any other. The pre-push hooks run; git-ralph's lets this push through.
func (rem *Remote) PruneRemote(ctx context.Context, t *PruneTarget) (*PruneResult, error) {
	lease := map[string]string{}
	var specs []string
	add := func(ref, id string) {
		lease[ref] = id
		specs = append(specs, ":"+ref)
	}
	if tip, ok, err := rem.Repo.ResolveRef(ctx, "refs/remotes/"+t.GitRemote+"/"+t.Branch); err != nil {
		return nil, err
	} else if ok {
		add("refs/heads/"+t.Branch, tip)
	}
	if t.RunID != 0 {
		refs, err := rem.Repo.Refs(ctx, runsPrefix(t.Change, t.RunID))
		if err != nil {
			return nil, err
		}
		for _, r := range refs {
			add(r.Name, r.ID)
		}
	}
	res := &PruneResult{Remote: t.GitRemote}
	if len(specs) == 0 {
		return res, nil
	}
	err := rem.Repo.PushAtomic(ctx, git.AtomicPush{Remote: t.GitRemote, Lease: lease, Refspecs: specs,
		Hooks: true, Config: []string{"ralph.allowPush=true"}})
	if err != nil {
		return nil, &tell.Error{Msg: fmt.Sprintf("%s and the run's refs on %s were left as they are: the push deleting them was refused", t.Branch, t.GitRemote),
			Hint: errText(err) + "\nthe finish itself is done; someone may have pushed to them since the run published: look with 'git ls-remote " + t.GitRemote + " " + t.Branch + "'",
			Err:  err}
	}
	for _, s := range specs {
		res.Deleted = append(res.Deleted, s[1:])
	}
	return res, nil
}
