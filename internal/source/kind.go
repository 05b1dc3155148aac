package source

import (
	"fmt"

	"github.com/git-ralph/git-ralph/internal/run"
	"github.com/git-ralph/git-ralph/internal/tasklist"
)

// Kind is one kind of task source: the Builtin ones (OpenSpec, spec-kit, plans, prd.json),
// or one the CLI adds with what it needs from outside (a GitHub client). It claims the
// arguments of `git ralph start` naming its sources (Claim), opens one (Open), lists a
// repository's (List) and reads one as a commit has it (AtCommit). Everything else sees only
// *Source: a new kind is a new entry in the list. StillOpen, Current and Archiver are optional.
type Kind interface {
	// About names the kind and says how messages name its sources.
	About() About
	// Claim says whether arg names a source of this kind in r (Match.Rank), from names
	// and paths alone: it reads directories and, at most, the file arg names, and never
	// the network. explicit is set when the argument was "<ID>:arg": then a kind that
	// finds nothing returns a Match whose Err says why, in its own words.
	Claim(r Repo, arg string, explicit bool) (Match, error)
	// Open opens the source ref names, as Claim found it or a run recorded it. Its
	// errors are *Error where the user can do something about them.
	Open(r Repo, ref Ref) (*Source, error)
	// List returns the sources of this kind that r holds before any run has been made of
	// them (`git ralph list`, and what the error for an unknown name lists), read as
	// cheaply as a list of thousands allows: their stories and tasks at least. With only
	// not nil, just those whose Ref.Arg is in it (status's line per run).
	List(r Repo, only []string) ([]*Source, error)
	// AtCommit is the source ref names as a commit has it (its stories, title and why), from
	// the files read returns (nil for a file the commit lacks): doc asks for a document's start
	// only (repofile.MaxDoc), else the whole tracked file. A tracked file that no longer parses
	// gives no story. For a report from git alone and a pull request's words.
	AtCommit(r Repo, ref Ref, read func(rel string, doc bool) ([]byte, error)) (*Source, error)
}

// About is how a kind is named.
type About struct {
	// ID names the kind: what RALPH_SOURCE carries, the run record and the Ralph-Source
	// trailer keep, and the prefix "<ID>:" before an argument picks.
	ID string
	// Noun names one source in messages and the prompt: "change", "spec-kit feature".
	Noun string
	// One and Many name one source and several in lists of what exists: "an OpenSpec
	// change", "OpenSpec changes".
	One, Many string
	// Make says how to make one, for the error in a repository with nothing to run.
	Make string
}

// StillOpen is implemented by a kind whose stories are not done task by task (a prd.json
// story passes as a whole): it words why story is not done, for the reason of an
// attempt that said COMPLETE. Other kinds name the story's open tasks.
type StillOpen interface {
	StillOpen(s *Source, story tasklist.Story) string
}

// Current is implemented by a kind whose tool keeps a "current" source (spec-kit's
// feature: SPECIFY_FEATURE_DIRECTORY, .specify/feature.json, the branch): what a bare
// `git ralph start` runs when no run is current. A Match of Rank None without Err: none.
type Current interface {
	Current(r Repo) (Match, error)
}

// Archiver is implemented by a kind whose tracked file moves once its work is done, as
// ralphex moves a completed plan to completed/: Moved finds the file after the agent moved
// it (to: where git's rename detection saw it go, or ""), false when it is nowhere; Archive
// says where it goes when the last story completes unmoved, false to leave it.
type Archiver interface {
	Moved(r Repo, s *Source, to string) (Ref, bool)
	Archive(r Repo, s *Source) (to string, ok bool)
}

// Ref names a source once it is found: what Open takes, what a run records of its
// source and what the Ralph-Source trailers carry.
type Ref struct {
	Kind string // a kind's ID
	// Arg is the kind's own key: a change's or a feature's name, the tracked file's path
	// relative to the top level (slash-separated) for a plan or a prd.json.
	Arg string
	// StoryLevel is a plan's --story-level (ralph.storyLevel); 0 for the default and for
	// every kind that has no such choice.
	StoryLevel int
}

// Rank is how well an argument names a source of a kind.
type Rank int

// The ranks of a Match, weakest first.
const (
	// None: arg is not this kind's (a Match with an Err is a near miss).
	None Rank = iota
	// Loose: a path any file of the kind's type could have (".md" for a plan), or a
	// spec-kit feature's number: it yields to an Exact match of another kind.
	Loose
	// Exact: a name the kind lists, or a path into its own directories. Two kinds that
	// match an argument equally well are refused as ambiguous.
	Exact
)

// Match is what a kind's Claim found an argument to name.
type Match struct {
	Ref  Ref
	Rank Rank
	// Err is set for a match that cannot run, and says why: a spec-kit feature without
	// tasks.md (Rank Exact: it is one), a number two features share. Resolve says it when
	// this is the best match; with Rank None (a near miss) only when nothing matches.
	Err error
}

// Repo is where sources are found and read: a repository's top level, where the command
// runs, its run records, and what git says, which the caller asks (this package runs no
// git).
type Repo struct {
	Root string // the top level: every file is read under it
	Cwd  string // where a relative path in an argument starts; "" for Root
	// Runs are the run records: an argument that names a run means the source its run
	// recorded, read where the run works. nil: no run is looked at.
	Runs *run.Store
	Options
	// Branch is the branch HEAD is on ("" when detached or not asked): a bare start
	// resumes the run of ralph/<name>, and spec-kit names a feature after its branch.
	Branch string
	// Getenv reads the environment, for a kind's own variables (spec-kit's
	// SPECIFY_FEATURE_DIRECTORY); nil: os.Getenv.
	Getenv func(string) string
	// Config reads a git config value ("" when unset), for a kind's own settings
	// (ralph.plansDir, ralph.movePlan); nil: every value is unset.
	Config func(key string) string
	// Initial returns the trailers of the "initial state" commit of ralph/<name>, nil
	// when there is none: a runner's start --adopt has no record, and those trailers say
	// which source its run works through. nil: not asked.
	Initial func(name string) map[string]string
}

// Options are how a source is read.
type Options struct {
	// StoryLevel 3 makes every "###" section of a plan a story (--story-level,
	// ralph.storyLevel); 0 or 2: the default of docs/TASKS.md.
	StoryLevel int
}

// config is the git config value key, "" when it is unset or cannot be asked.
func (r Repo) config(key string) string {
	if r.Config == nil {
		return ""
	}
	return r.Config(key)
}

// at is r rooted at root (a run's worktree), relative paths starting there too.
func (r Repo) at(root string) Repo {
	r.Root, r.Cwd = root, ""
	return r
}

// Kinds is a list of task source kinds, in the order they are asked to claim an
// argument and listed. A nil Kinds is Builtin.
type Kinds []Kind

// Builtin is the list of the kinds git-ralph knows without help from outside: OpenSpec
// changes, spec-kit features, markdown plans, prd.json files. The CLI passes it, with
// any kind it adds, to what resolves and opens sources.
func Builtin() Kinds {
	return Kinds{openspecKind{}, speckitKind{}, planKind{}, prdKind{}}
}

func (ks Kinds) all() Kinds {
	if ks == nil {
		return Builtin()
	}
	return ks
}

// Lookup returns the kind whose ID is id.
func (ks Kinds) Lookup(id string) (Kind, bool) {
	for _, k := range ks.all() {
		if k.About().ID == id {
			return k, true
		}
	}
	return nil, false
}

// Open opens the source ref names in r.
func (ks Kinds) Open(r Repo, ref Ref) (*Source, error) {
	k, ok := ks.Lookup(ref.Kind)
	if !ok {
		return nil, &Error{Msg: fmt.Sprintf("unknown task source %q", ref.Kind), Hint: "this run was started by a newer git-ralph"}
	}
	return k.Open(r, ref)
}

// AtCommit is the source ref names as a commit has it (Kind.AtCommit).
func (ks Kinds) AtCommit(r Repo, ref Ref, read func(rel string, doc bool) ([]byte, error)) (*Source, error) {
	k, ok := ks.Lookup(ref.Kind)
	if !ok {
		return nil, &Error{Msg: fmt.Sprintf("unknown task source %q", ref.Kind), Hint: "this run was started by a newer git-ralph"}
	}
	return k.AtCommit(r, ref, read)
}

// List returns the sources of every kind that r holds, kind by kind (Kind.List).
func (ks Kinds) List(r Repo) ([]*Source, error) {
	var out []*Source
	for _, k := range ks.all() {
		srcs, err := k.List(r, nil)
		if err != nil {
			return nil, err
		}
		out = append(out, srcs...)
	}
	return out, nil
}

// Outside is implemented by a kind whose tracked file is outside the working tree (a
// GitHub issue's tasks, which the agent ticks in a local file): git's commits do not
// hold it, so the loop tells the kind when a story's checkpoint is made and when a
// failed attempt is undone, and the kind keeps the file to match.
type Outside interface {
	// Checkpointed is called once story's checkpoint is made: the kind keeps the file as
	// it is now, and may tell others (GitHub). What it could not do is a warning, "" when
	// none: the checkpoint stands either way.
	Checkpointed(s *Source, story tasklist.Story, p Progress) (warning string)
	// Undo puts the tracked file back as the last checkpoint left it, after a failed
	// attempt (as the working tree is reset to the checkpoint).
	Undo(s *Source) error
}

// Recorder is implemented by a kind that keeps records of its own beside the run's (a
// GitHub issue as read, in .git/ralph, which the agent can write in place): after every
// attempt the loop asks it, as it checks run.json, whether the agent rewrote them.
type Recorder interface {
	// Forged returns the kind's records of s that are not what this process last wrote
	// of them, with the agent's version, having written them again from memory.
	Forged(s *Source) ([]Forgery, error)
}

// Forgery is a record someone else rewrote: its path and their version (nil when it
// is not kept: a symlink, or larger than the record could be).
type Forgery struct {
	Path string
	Have []byte
}

// Progress is what the loop says of a story when its checkpoint is made.
type Progress struct {
	Run, Branch, Commit string
	Attempts            int    // attempts at the story, this one included
	LastFailure         string // the last failed attempt's reason, "" if none
}

// IsOutside reports whether s's tracked file is outside the working tree (its kind
// implements Outside): RALPH_TASKS_FILE and the prompt then name it by its absolute path.
func (s *Source) IsOutside() bool {
	_, ok := s.Kind.(Outside)
	return ok
}

// TasksFile is how the agent is told where the tracked file is: relative to the top
// level, or absolute when it is outside the working tree.
func (s *Source) TasksFile() string {
	if s.IsOutside() {
		return s.TasksPath
	}
	return s.TasksRel
}
