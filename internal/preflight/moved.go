package preflight

import (
	"context"
	"fmt"
	"strings"

	"github.com/git-ralph/git-ralph/internal/git"
	"github.com/git-ralph/git-ralph/internal/run"
	"github.com/git-ralph/git-ralph/internal/tell"
)

// maxMovedCommits bounds the commits a refusal lists.
const maxMovedCommits = 10

// Moved is finish's look at the original branch: where it reports, the store whose
// record path a refusal names, and whether --onto-moved lets a moved branch be.
type Moved struct {
	Report    tell.Reporter
	Store     *run.Store
	OntoMoved bool
}

// Check is finish's look at the original branch: when it no longer points where the run
// recorded it, someone moved it (the trust surface undoes what an agent in place does).
// finish --squash and --pr refuse, naming both commits and those between, unless
// OntoMoved; with warn (--keep) it only warns. repo holds the original branch. Nothing
// changes.
func (m Moved) Check(ctx context.Context, repo *git.Repo, rec *run.Record, warn bool, again string) error {
	if err := m.recordedStart(ctx, repo, rec, warn); err != nil {
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
		fmt.Fprintf(&b, "  %s %s\n", short(c.ID), c.Subject)
	}
	if more {
		fmt.Fprintf(&b, "  … ('git log %s..%s' shows them all)\n", short(rec.OriginalCommit), short(now))
	}
	if ff, err := repo.IsAncestor(ctx, rec.OriginalCommit, now); err == nil && !ff {
		fmt.Fprintf(&b, "  (and %s no longer contains %s: it was rewritten)\n", rec.Original, short(rec.OriginalCommit))
	}
	what := fmt.Sprintf("%s moved since the run started: it was at %s, it is at %s", rec.Original, short(rec.OriginalCommit), short(now))
	switch {
	case warn:
		m.Report.Warn(what + ":\n" + strings.TrimSuffix(b.String(), "\n"))
		return nil
	case m.OntoMoved:
		m.Report.Step(what + "; going on (--onto-moved)")
		return nil
	}
	return tell.UserErr("the commits on "+rec.Original+" since then:\n"+b.String()+
		"if they are yours, run '"+again+" --onto-moved'; if not, look at them first (git log -p "+short(rec.OriginalCommit)+".."+short(now)+"); nothing was changed", "%s", what)
}

// recordedStart checks the record's original commit against git: the run's "initial
// state" commit grew from it, and the run's branch still contains that commit. The record is
// a file the agent could write (with the original branch moved to a look-alike to match), so
// one that disagrees is corrected in memory (Check then names the branch as moved),
// and one whose branch lost its initial state is refused. Runs from GitHub Actions are not
// checked here.
func (m Moved) recordedStart(ctx context.Context, repo *git.Repo, rec *run.Record, warn bool) error {
	if rec.Remote != nil || rec.Status == run.Starting {
		return nil
	}
	again := "look at the branch and the record (" + m.Store.RecordPath(rec.Change) + "); 'git ralph finish " + rec.Change + " --keep' keeps the branch as it is"
	if rec.Initial == "" {
		if warn {
			return nil
		}
		return tell.UserErr(again, "the run record of %q names no \"initial state\" commit, so git-ralph cannot check where the run started; nothing was changed", rec.Change)
	}
	_, parents, err := repo.CommitShape(ctx, rec.Initial)
	if err != nil {
		return tell.UserErr(again, "the run record of %q names %s as its \"initial state\" commit, which git cannot read (%v); nothing was changed", rec.Change, short(rec.Initial), err).WithCause(err)
	}
	if tip, ok, err := repo.ResolveRef(ctx, "refs/heads/"+rec.Branch); err != nil {
		return err
	} else if ok {
		if in, err := repo.IsAncestor(ctx, rec.Initial, tip); err != nil {
			return err
		} else if !in && !warn {
			return tell.UserErr(again, "%s does not contain %s, the \"initial state\" commit its run record names: the branch or the record was rewritten after the run; nothing was changed",
				rec.Branch, short(rec.Initial))
		}
	}
	if len(parents) == 0 || parents[0] == rec.OriginalCommit {
		return nil
	}
	who := "a process the agent left running could have"
	if rec.Original != "" {
		who += ", with " + rec.Original + " moved to match"
	}
	m.Report.Warn(fmt.Sprintf("the run record says the run started from %s, but its \"initial state\" commit %s grew from %s: the record was changed after the run (%s); going by %s",
		short(rec.OriginalCommit), short(rec.Initial), short(parents[0]), who, short(parents[0])))
	rec.OriginalCommit = parents[0]
	return nil
}

// short is a commit id cut to 7 characters.
func short(id string) string {
	if len(id) > 7 {
		return id[:7]
	}
	return id
}
