package source

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/git-ralph/git-ralph/internal/run"
	"github.com/git-ralph/git-ralph/internal/tasklist"
)

// ticketKind is a kind this package does not know, as the CLI would add one built with
// what it needs from outside (here a map standing for a tracker's client): "#N" names
// ticket N, whose tasks the kind writes to a file of its own.
type ticketKind struct {
	tickets map[string]string // number → tasks
	write   func(root, rel, content string)
}

func (ticketKind) About() About {
	return About{ID: "ticket", Noun: "ticket", One: "a ticket", Many: "tickets", Make: "a ticket (#N)"}
}

func (k ticketKind) Claim(r Repo, arg string, explicit bool) (Match, error) {
	n, ok := strings.CutPrefix(arg, "#")
	if !ok && !explicit {
		return Match{}, nil
	}
	if _, known := k.tickets[n]; !known {
		return Match{Err: &Error{Msg: "no ticket " + n}}, nil
	}
	return Match{Ref: Ref{Kind: "ticket", Arg: n}, Rank: Exact}, nil
}

func (k ticketKind) Open(r Repo, ref Ref) (*Source, error) {
	rel := "tickets/" + ref.Arg + ".md" // a real kind would keep it outside the work tree
	k.write(r.Root, rel, k.tickets[ref.Arg])
	s := New(k, ref, r.Root, rel, func(b []byte) (tasklist.Tasks, error) { return tasklist.ParseMarkdown(b, tasklist.Rules{}), nil })
	s.Name, s.RelDir, s.Where, s.DoneMark = "ticket-"+ref.Arg, "tickets", "ticket #"+ref.Arg, "[x]"
	return s, s.Reload()
}

func (ticketKind) List(Repo, []string) ([]*Source, error) { return nil, nil }

func (ticketKind) AtCommit(_ Repo, ref Ref, read func(string, bool) ([]byte, error)) (*Source, error) {
	return &Source{Kind: ticketKind{}, Ref: ref}, nil
}

// TestNewKindIsOneEntry: a kind added to the list is resolved, recorded and reopened from
// its record with no change anywhere else; the built-in kinds resolve as before beside it.
func TestNewKindIsOneEntry(t *testing.T) {
	root := repo(t)
	kinds := append(Builtin(), ticketKind{tickets: map[string]string{"10": "## 1. Do it\n- [ ] a\n"},
		write: func(root, rel, content string) { write(t, root, rel, content) }})
	s, err := kinds.Resolve(Repo{Root: root}, "#10")
	if err != nil {
		t.Fatal(err)
	}
	if s.Name != "ticket-10" || s.Ref != (Ref{Kind: "ticket", Arg: "10"}) || len(s.Stories) != 1 || s.Runnable() != nil {
		t.Fatalf("resolved %+v", s)
	}
	rec := &run.Record{Change: s.Name}
	Record(rec, s.Ref)
	if rec.Source != "ticket" || rec.SourceArg != "10" || !strings.Contains(Trailers(rec), "Ralph-Source: ticket\nRalph-Source-Arg: 10\n") {
		t.Errorf("recorded %+v, trailers %q", rec, Trailers(rec))
	}
	again, err := kinds.OpenRun(Repo{Root: root}, rec)
	if err != nil || again.TasksRel != filepath.ToSlash("tickets/10.md") {
		t.Errorf("reopened %+v, %v", again, err)
	}
	if _, err := kinds.Resolve(Repo{Root: root}, "ticket:11"); err == nil || err.Error() != "no ticket 11" {
		t.Errorf("an explicit unknown ticket: %v", err)
	}
	if s, err := kinds.Resolve(Repo{Root: root}, "add-login"); err != nil || s.Kind.About().ID != "openspec" {
		t.Errorf("a change beside the new kind: %v", err)
	}
	// Without the entry the argument names nothing, and a run of it cannot be reopened.
	if _, err := Builtin().Resolve(Repo{Root: root}, "#10"); err == nil {
		t.Error("#10 resolved without the ticket kind")
	}
	if _, err := Builtin().OpenRun(Repo{Root: root}, rec); err == nil || !strings.Contains(fmt.Sprint(err), `unknown task source "ticket"`) {
		t.Errorf("a run of an unknown kind: %v", err)
	}
}

// TestBare: `git ralph start` with no argument runs the run of the branch HEAD is on,
// else spec-kit's current feature, else the only run; several runs and nothing current
// is refused naming them.
func TestBare(t *testing.T) {
	root := repo(t)
	store := run.NewStore(t.TempDir())
	env := map[string]string{}
	r := Repo{Root: root, Runs: store, Getenv: func(k string) string { return env[k] }}
	now := time.Date(2026, 11, 27, 0, 0, 0, 0, time.UTC)
	if err := store.Save(&run.Record{Change: "add-login", Branch: "ralph/add-login", Status: run.Interrupted}, now); err != nil {
		t.Fatal(err)
	}
	name := func(r Repo) string {
		t.Helper()
		s, err := Builtin().Resolve(r, "")
		if err != nil {
			return "error: " + err.Error()
		}
		return s.Name
	}
	if got := name(r); got != "add-login" {
		t.Errorf("the only run: %s", got)
	}
	env["SPECIFY_FEATURE_DIRECTORY"] = "specs/001-photo-albums"
	if got := name(r); got != "001-photo-albums" {
		t.Errorf("spec-kit's current feature: %s", got)
	}
	r.Branch = "ralph/add-login"
	if got := name(r); got != "add-login" {
		t.Errorf("the run of the branch: %s", got)
	}
	r.Branch, env["SPECIFY_FEATURE_DIRECTORY"] = "003-anything", ""
	if got := name(r); got != "error: branch 003-anything could be any of the spec-kit features 003-a, 003-b" {
		t.Errorf("a branch two features match: %s", got)
	}
	r.Branch = "shared"
	if err := store.Save(&run.Record{Change: "shared", Branch: "ralph/shared", Status: run.Interrupted}, now); err != nil {
		t.Fatal(err)
	}
	// the branch names the feature "shared", while the run "shared" is the change's
	if got := name(r); got != "error: the run shared belongs to the change shared, not to the spec-kit feature shared" {
		t.Errorf("branch shared: %s", got)
	}
	r.Branch = "main"
	if got := name(r); got != "error: 2 runs exist: add-login, shared" {
		t.Errorf("two runs: %s", got)
	}
}
