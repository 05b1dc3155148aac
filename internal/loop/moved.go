package loop

import (
	"context"
	"fmt"
	"strings"

	"github.com/git-ralph/git-ralph/internal/git"
	"github.com/git-ralph/git-ralph/internal/run"
)

// maxMovedCommits bounds the commits a refusal lists.
const maxMovedCommits = 10

// CheckOriginal is finish's look at the original branch: when it no longer points where
// the run recorded it, someone moved it (the trust surface undoes what an agent in place
// does). finish --squash and --pr refuse, naming both commits and those between, unless
// OntoMoved; with warn (--keep) it only warns. repo holds the original branch. Nothing
// changes.
func (l *Loop) CheckOriginal(ctx context.Context, repo *git.Repo, rec *run.Record, warn bool, again string) error {
	if err := l.checkRecordedStart(ctx, repo, rec, warn); err != nil {
		return err
	}
	if rec.Original == "" || rec.OriginalCommit == "" {
		return nil
	}
	now, ok, err := repo.ResolveRef(ctx, "refs/heads/"+rec.Original)
	if err != nil || !ok || now == rec.OriginalCommit {
		return err // a branch that is gone is the callers' business
	}
	commits, err := repo.Log(ctx, rec.OriginalCommit+".."+now, maxMovedCommits+1)
	if err != nil {
		return err
	}
	var b strings.Builder
	more := len(commits) > maxMovedCommits
	if more {
		commits = commits[:maxMovedCommits]
	}
	for _, c := range commits {
		fmt.Fprintf(&b, "  %s %s\n", Short(c.ID), c.Subject)
	}
	if more {
		fmt.Fprintf(&b, "  … ('git log %s..%s' shows them all)\n", Short(rec.OriginalCommit), Short(now))
	}
	if ff, err := repo.IsAncestor(ctx, rec.OriginalCommit, now); err == nil && !ff {
		fmt.Fprintf(&b, "  (and %s no longer contains %s: it was rewritten)\n", rec.Original, Short(rec.OriginalCommit))
	}
	what := fmt.Sprintf("%s moved since the run started: it was at %s, it is at %s", rec.Original, Short(rec.OriginalCommit), Short(now))
	switch {
	case warn:
		l.Report.Warn(what + ":\n" + strings.TrimSuffix(b.String(), "\n"))
		return nil
	case l.OntoMoved:
		l.Report.Step(what + "; going on (--onto-moved)")
		return nil
	}
	return UserErr("the commits on "+rec.Original+" since then:\n"+b.String()+
		"if they are yours, run '"+again+" --onto-moved'; if not, look at them first (git log -p "+Short(rec.OriginalCommit)+".."+Short(now)+"); nothing was changed", "%s", what)
}

// checkRecordedStart checks the record's original commit against git: the run's "initial
// state" commit grew from it, and the run's branch still contains that commit. The record is
// a file the agent could write (with the original branch moved to a look-alike to match), so
// one that disagrees is corrected in memory (CheckOriginal then names the branch as moved),
// and one whose branch lost its initial state is refused. Runs from GitHub Actions are not
// checked here.
func (l *Loop) checkRecordedStart(ctx context.Context, repo *git.Repo, rec *run.Record, warn bool) error {
	if rec.Remote != nil || rec.Status == run.Starting {
		return nil
	}
	again := "look at the branch and the record (" + l.Store.RecordPath(rec.Change) + "); 'git ralph finish " + rec.Change + " --keep' keeps the branch as it is"
	if rec.Initial == "" {
		if warn {
			return nil
		}
		return UserErr(again, "the run record of %q names no \"initial state\" commit, so git-ralph cannot check where the run started; nothing was changed", rec.Change)
	}
	_, parents, err := repo.CommitShape(ctx, rec.Initial)
	if err != nil {
		return UserErr(again, "the run record of %q names %s as its \"initial state\" commit, which git cannot read (%v); nothing was changed", rec.Change, Short(rec.Initial), err).WithCause(err)
	}
	if tip, ok, err := repo.ResolveRef(ctx, "refs/heads/"+rec.Branch); err != nil {
		return err
	} else if ok {
		if in, err := repo.IsAncestor(ctx, rec.Initial, tip); err != nil {
			return err
		} else if !in && !warn {
			return UserErr(again, "%s does not contain %s, the \"initial state\" commit its run record names: the branch or the record was rewritten after the run; nothing was changed",
				rec.Branch, Short(rec.Initial))
		}
	}
	if len(parents) == 0 || parents[0] == rec.OriginalCommit {
		return nil
	}
	who := "a process the agent left running could have"
	if rec.Original != "" {
		who += ", with " + rec.Original + " moved to match"
	}
	l.Report.Warn(fmt.Sprintf("the run record says the run started from %s, but its \"initial state\" commit %s grew from %s: the record was changed after the run (%s); going by %s",
		Short(rec.OriginalCommit), Short(rec.Initial), Short(parents[0]), who, Short(parents[0])))
	rec.OriginalCommit = parents[0]
	return nil
}
