// Package cli is the command line of git-ralph: the kong root, one file per command,
// and Main, the only place that prints errors and picks the exit code. Commands are thin:
// flags in, a call into internal/loop (the local loop) or internal/githubflow (the GitHub
// workflows), output rendered.
package cli

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"reflect"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/alecthomas/kong"

	"github.com/git-ralph/git-ralph/internal/git"
	"github.com/git-ralph/git-ralph/internal/gitdir"
	"github.com/git-ralph/git-ralph/internal/github"
	"github.com/git-ralph/git-ralph/internal/githubflow"
	"github.com/git-ralph/git-ralph/internal/loop"
	"github.com/git-ralph/git-ralph/internal/repofile"
	"github.com/git-ralph/git-ralph/internal/run"
	"github.com/git-ralph/git-ralph/internal/sandbox"
	"github.com/git-ralph/git-ralph/internal/source"
	"github.com/git-ralph/git-ralph/internal/start"
	"github.com/git-ralph/git-ralph/internal/tell"
	"github.com/git-ralph/git-ralph/internal/term"
	"github.com/git-ralph/git-ralph/internal/wtrun"
)

// Version is set at build time with -ldflags "-X …/internal/cli.Version=v1.2.3".
var Version = ""

func version() string {
	if Version != "" {
		return Version
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "dev"
}

type root struct {
	Verbose bool             `short:"v" env:"GIT_RALPH_VERBOSE" help:"Print every git command that runs, and under an error what caused it."`
	Version kong.VersionFlag `help:"Print the version and exit."`

	Start      startCmd      `cmd:"" help:"Start, or resume, the loop over a change's stories."`
	Status     statusCmd     `cmd:"" help:"Show where a run stands."`
	Finish     finishCmd     `cmd:"" help:"End a run: --squash the work back onto the original branch, --keep the branch, or open a --pr."`
	List       listCmd       `cmd:"" help:"List the repository's changes, their progress and runs."`
	Hooks      hooksCmd      `cmd:"" help:"Install, remove or list the optional git hooks (pre-commit, pre-push, ralph-verify)."`
	Hook       hookCmd       `cmd:"" hidden:"" passthrough:"" help:"Run a hook's logic (what the installed hooks call)."`
	Demo       demoCmd       `cmd:"" help:"Watch the whole loop run offline on a throwaway repository."`
	Report     reportCmd     `cmd:"" help:"Write the run's morning report: one self-contained HTML page."`
	Completion completionCmd `cmd:"" help:"Print the shell completion script for bash, zsh or fish."`
	Help       helpCmd       `cmd:"" help:"Show help for a command."`
	CI         ciCmd         `cmd:"" name:"ci" help:"Set up GitHub Actions to run loops: 'ci init' writes the workflow."`
	Dispatch   dispatchCmd   `cmd:"" help:"Run changes' loops on GitHub Actions (the workflow of 'ci init')."`
	Cancel     cancelCmd     `cmd:"" help:"Cancel a change's run on GitHub Actions."`
	Logs       logsCmd       `cmd:"" help:"List, print or follow (-f) the attempt logs of a change's run, here or on GitHub Actions."`

	Export  exportCmd  `cmd:"" hidden:"" help:"Runner side: write a run's bundle, state and logs for the workflow's artifact."`
	Publish publishCmd `cmd:"" hidden:"" help:"Runner side: check a run's bundle and push it, all or nothing."`

	Man       manCmd       `cmd:"" hidden:"" help:"Print the man page (roff)."`
	Complete  completeCmd  `cmd:"" name:"__complete" hidden:"" help:"Print completion candidates (what the completion scripts call)."`
	DemoAgent demoAgentCmd `cmd:"" name:"demo-agent" hidden:"" passthrough:"all" help:"The scripted agent of the demo."`
}

// exitRequest carries an exit code out of kong through a panic, so that tests can call
// Main in-process: os.Exit belongs to main alone.
type exitRequest int

// usageError is a bad argument that kong's own checks do not catch; exit code 2.
type usageError struct{ msg, hint string }

func (e *usageError) Error() string { return e.msg }

// Main runs git-ralph with args and returns the exit code.
func Main(args []string, s *term.Streams) (code int) {
	return MainWith(args, s, Setup{})
}

// Setup is how a test reaches into the commands: each function, when set, changes
// what a command made before the command uses it (git-ralph/main_test.go shortens the
// waits and fixes the clocks with them; the in-process tests send GitHub requests to a
// fake). The product sets none, so no test-only switch ships in the binary.
type Setup struct {
	Loop   func(*loop.Loop)         // every loop: its clock and loop.Waits
	Flow   func(*githubflow.Flow)   // every GitHub workflow over a loop
	Remote func(*githubflow.Remote) // the workflows that look at runs on GitHub Actions
	GitHub func(*github.Options)    // every GitHub client's transport, waits and clock
	// Landlock replaces the kernel's answer to "which Landlock ABI is there"
	// (sandbox.Probe).
	Landlock func() sandbox.Support
	// InProcess: git-ralph runs inside a test binary beside other tests' processes. It
	// then never becomes the reaper of what its agents leave, which kills every
	// descendant of the process (sandbox.KillLeftovers).
	InProcess bool
}

// tune calls hook, a Setup's, on v when it is set.
func tune[T any](hook func(T), v T) {
	if hook != nil {
		hook(v)
	}
}

// MainWith is Main with what setup changes.
func MainWith(args []string, s *term.Streams, setup Setup) (code int) {
	if len(args) > 0 && args[0] == sandbox.Command {
		return sandbox.Main(args[1:]) // the agent's launcher: returns only if it failed
	}
	sandbox.Harden()
	ctx, kill, stop := signals()
	defer stop()
	return runMain(ctx, kill, args, s, setup)
}

// signals returns a context cancelled by the first SIGINT, SIGTERM or SIGHUP (a closed
// terminal: the run is saved and stopped as for Ctrl-C), and a channel
// closed by the second, which kills the agent at once.
func signals() (context.Context, <-chan struct{}, func()) {
	ctx, cancel := context.WithCancel(context.Background())
	kill := make(chan struct{})
	ch := make(chan os.Signal, 2)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	go func() {
		n := 0
		for range ch {
			n++
			if n == 1 {
				cancel()
			} else if n == 2 {
				close(kill)
			}
		}
	}()
	return ctx, kill, func() { signal.Stop(ch); cancel() }
}

func newParser(r *root, s *term.Streams, exit func(int), repo func() (*git.Repo, error)) (*kong.Kong, error) {
	return kong.New(r,
		kong.Name("git ralph"),
		kong.Description("Run a coding agent over an OpenSpec change, story by story, with a checkpoint commit per story."),
		kong.Writers(s.Out, s.Err),
		kong.Exit(exit),
		kong.Vars{"version": "git-ralph " + version()},
		kong.ConfigureHelp(kong.HelpOptions{Compact: true}),
		kong.Help(helpPrinter),
		kong.Resolvers(configResolver(repo)),
		kong.TypeMapper(reflect.TypeOf(start.WorktreeOption{}), worktreeMapper{}),
	)
}

// helpPrinter is kong's help with one change: a command's usage line shows flags of
// which exactly one is required as "(--squash | --keep)", not "--squash --keep" as
// if both were needed.
func helpPrinter(o kong.HelpOptions, ctx *kong.Context) error {
	var buf bytes.Buffer
	out := ctx.Stdout
	ctx.Stdout = &buf
	err := kong.DefaultHelpPrinter(o, ctx)
	ctx.Stdout = out
	text := buf.String()
	if n := ctx.Selected(); n != nil {
		text = strings.Replace(text, "Usage: "+ctx.Model.Name+" "+n.Summary(), "Usage: "+ctx.Model.Name+" "+xorSummary(n), 1)
	}
	_, werr := io.WriteString(out, text)
	return cmp.Or(err, werr)
}

// xorSummary is n.Summary() with each group of required, mutually exclusive flags
// written as "(--a | --b)".
func xorSummary(n *kong.Node) string {
	s := n.Summary()
	groups := map[string][]string{}
	var order []string
	for _, f := range n.Flags {
		if !f.Required || len(f.Xor) == 0 {
			continue
		}
		g := f.Xor[0]
		if groups[g] == nil {
			order = append(order, g)
		}
		groups[g] = append(groups[g], f.Summary())
	}
	for _, g := range order {
		if fs := groups[g]; len(fs) > 1 {
			s = strings.Replace(s, strings.Join(fs, " "), "("+strings.Join(fs, " | ")+")", 1)
		}
	}
	return s
}

func runMain(ctx context.Context, kill <-chan struct{}, args []string, s *term.Streams, setup Setup) (code int) {
	defer func() {
		if r := recover(); r != nil {
			if e, ok := r.(exitRequest); ok {
				code = int(e)
				return
			}
			panic(r)
		}
	}()
	var r root
	env := &env{ctx: ctx, kill: kill, s: s, setup: setup}
	// A change file reached through a symlink is read only when git tracks its target:
	// repofile runs no git, so it asks through this.
	repofile.SetTracked(env.tracked)
	parser, err := newParser(&r, s, func(c int) { panic(exitRequest(c)) }, env.findRepo)
	if err != nil {
		panic(err) // a broken command model is a bug
	}
	kctx, err := parser.Parse(args)
	if err != nil {
		return printErr(s, err, false)
	}
	env.verbose, env.parser = r.Verbose, parser
	if env.repo != nil && env.verbose {
		env.repo.Trace = s.Err
	}
	return printErr(s, kctx.Run(env), env.verbose)
}

// env is what every command's Run receives.
type env struct {
	ctx     context.Context
	kill    <-chan struct{}
	s       *term.Streams
	verbose bool
	parser  *kong.Kong
	setup   Setup

	repo    *git.Repo // found once, by findRepo
	repoErr error
	looked  bool

	clients map[string]*github.Client // by host: one per host, so that its spacing holds across commands' requests
	issues  *githubflow.IssueKind     // the issue task source, once a loop is made

	trackedMu sync.Mutex
	trackedIn map[string]*git.Repo // the work trees repofile asked about, by their real path
}

// tracked is repofile's question: does git track the file at rel in the work tree at
// root (a real path)? The repository of the working directory answers for its own work
// tree; another (a worktree run's) is opened once. Loops side by side (-j) ask at once.
func (e *env) tracked(root, rel string) (bool, error) {
	e.trackedMu.Lock()
	repo, ok := e.trackedIn[root]
	if !ok {
		if r, err := e.findRepo(); err == nil && sameDir(r.Root, root) {
			repo = r
		} else if repo, err = git.Open(e.ctx, root); err != nil {
			e.trackedMu.Unlock()
			return false, err
		}
		if e.trackedIn == nil {
			e.trackedIn = map[string]*git.Repo{}
		}
		e.trackedIn[root] = repo
	}
	e.trackedMu.Unlock()
	return repo.Tracked(e.ctx, rel)
}

// sameDir reports whether a and b are the same directory.
func sameDir(a, b string) bool {
	x, err1 := os.Stat(a)
	y, err2 := os.Stat(b)
	return err1 == nil && err2 == nil && os.SameFile(x, y)
}

// flow is the GitHub workflows over l.
func (e *env) flow(l *loop.Loop) *githubflow.Flow {
	fl := githubflow.On(l)
	tune(e.setup.Flow, fl)
	return fl
}

// githubOptions are the options of every GitHub client: the user agent, and what the
// setup changes.
func (e *env) githubOptions() github.Options {
	o := github.Options{UserAgent: "git-ralph/" + version()}
	tune(e.setup.GitHub, &o)
	return o
}

// github returns the GitHub client for host (made once), with gh's token.
func (e *env) github(host string) (*github.Client, error) {
	if c, ok := e.clients[host]; ok {
		return c, nil
	}
	c, err := github.New(host, e.githubOptions())
	if err != nil {
		return nil, err
	}
	if e.clients == nil {
		e.clients = map[string]*github.Client{}
	}
	e.clients[host] = c
	return c, nil
}

// findRepo locates the repository of the working directory, once: the config resolver
// and the command share it.
func (e *env) findRepo() (*git.Repo, error) {
	if !e.looked {
		e.looked = true
		if e.repoErr = e.recoverGitDir(); e.repoErr != nil {
			return nil, e.repoErr
		}
		e.repo, e.repoErr = git.Open(e.ctx, ".")
	}
	return e.repo, e.repoErr
}

// recoverGitDir puts back, before any git runs, the git directory a killed in-place run
// left moved out of its working tree (internal/gitdir): the link in the tree may be
// gone, or the agent's. Not from a hook that git-ralph's own git runs (GIT_RALPH set):
// the run at work there holds its git directory.
func (e *env) recoverGitDir() error {
	if os.Getenv("GIT_RALPH") != "" {
		return nil
	}
	notes, err := gitdir.Recover(".")
	for _, n := range notes {
		fmt.Fprintf(e.s.Err, "warning: %s\n", n)
	}
	if err != nil {
		return &tell.Error{Msg: err.Error(), Hint: "move it back by hand: remove the .git link in the working tree, then move the directory it names to the working tree's .git", Err: err}
	}
	return nil
}

// openRepo returns the repository of the working directory, or an error for the user.
func (e *env) openRepo() (*git.Repo, error) {
	repo, err := e.findRepo()
	switch {
	case errors.Is(err, git.ErrNotRepo):
		return nil, &tell.Error{Msg: "not a git repository", Hint: "run git ralph inside the work tree of a git repository", Err: err}
	case errors.Is(err, git.ErrForeignCommonDir):
		return nil, &tell.Error{Msg: err.Error(), Hint: "git writes a commondir only in a linked worktree's git directory (.git/worktrees/<name>): if you did not write this one\n(the agent of a run may have), look at it and remove it; 'git worktree repair' mends a linked worktree", Err: err}
	case errors.Is(err, git.ErrBare):
		return nil, &tell.Error{Msg: "this is a bare repository", Hint: "git ralph needs a work tree: run it in a clone or a worktree", Err: err}
	case err != nil:
		return nil, err
	}
	if e.verbose {
		repo.Trace = e.s.Err
	}
	return repo, nil
}

// remote returns the workflows that look at runs on GitHub Actions without running the
// loop (githubflow.Remote): the repository, its run records, the clock and the waits of
// the polls.
func (e *env) remote() (*githubflow.Remote, error) {
	repo, err := e.openRepo()
	if err != nil {
		return nil, err
	}
	r := &githubflow.Remote{Repo: repo, Store: run.NewStore(repo.CommonDir), Now: time.Now}
	tune(e.setup.Remote, r)
	return r, nil
}

// sources is the list of task source kinds an argument may name: the built-in ones, and
// any that needs something only the CLI has (a GitHub client) goes here, built with it.
func sources() source.Kinds { return source.Builtin() }

// issueKind is GitHub issues as a task source, built with the GitHub client; start
// lets it read GitHub (Fetch), every other command reads what a run recorded.
func (e *env) issueKind(l *loop.Loop) *githubflow.IssueKind {
	if e.issues == nil {
		e.issues = &githubflow.IssueKind{Store: l.Store, Client: e.github, Ctx: e.ctx,
			Checkpoint: func(commit, change, story string) bool { return l.IsCheckpoint(e.ctx, commit, change, story) },
			Default: func() *github.Repo {
				explicit, _, _ := l.Repo.Config(e.ctx, "ralph.repo")
				r, ok, err := e.flow(l).IssueRepo(e.ctx, githubflow.PROptions{Repo: explicit, EnvRepo: os.Getenv("GH_REPO")})
				if err != nil || !ok {
					return nil
				}
				return &r
			}}
	}
	return e.issues
}

func (e *env) loop() (*loop.Loop, error) {
	repo, err := e.openRepo()
	if err != nil {
		return nil, err
	}
	l := loop.New(repo, newReporter(e.s))
	l.Remote = githubflow.Runs
	l.Worktrees = wtrun.Runs
	l.Sources = append(sources(), e.issueKind(l))
	tune(e.setup.Loop, l)
	return l, nil
}

// printErr prints err the way git does ("error: …", then "hint: …" lines) and returns
// the exit code: 0 ok, 1 failure, 2 usage, 130 interrupted. With verbose (-v) it also
// prints what caused it ("cause: …" lines: the error it wraps, and what git printed
// when git failed), which every error keeps.
func printErr(s *term.Streams, err error, verbose bool) int {
	if err == nil {
		return 0
	}
	var le *tell.Error
	var se *source.Error
	var ue *usageError
	var pe *kong.ParseError
	var unreadable *run.UnreadableError
	code := 1
	var hints []string
	msg := term.Inert(err.Error()) // may quote an agent's reason or a remote record
	switch {
	case errors.As(err, &le):
		code = le.ExitCode()
		hints = le.Hints()
		if le == tell.ErrInterrupted {
			code = 130
		}
	case errors.As(err, &se): // from a reader of the sources that is not the loop (internal/status)
		if se.Hint != "" { // as tell.Error.Hints splits the hint the loop wrapped it with
			hints = strings.Split(se.Hint, "\n")
		}
	case errors.As(err, &unreadable):
		hints = []string{"git-ralph changes nothing while it cannot read it: look at it, then mend it, or move it away to forget the run", "(its branch and refs/ralph/ are kept either way)"}
	case errors.As(err, &ue):
		code = 2
		if ue.hint != "" {
			hints = []string{ue.hint}
		}
	case errors.As(err, &pe):
		code = 2
		hints = []string{"see '" + strings.Join(strings.Fields("git ralph "+commandPath(pe.Context)+" -h"), " ") + "'"}
	}
	switch code {
	case tell.ExitDeadline: // not a failure: the run is saved and resumable
	case 130:
		msg = "interrupted"
	default:
		msg = "error: " + msg
	}
	fmt.Fprintln(s.Err, msg)
	for _, h := range hints {
		fmt.Fprintln(s.Err, "hint: "+term.Inert(h))
	}
	if verbose {
		for _, c := range causes(err) {
			fmt.Fprintln(s.Err, "cause: "+term.Inert(c))
		}
	}
	return code
}

// causes are the lines -v prints under an error: the error a *tell.Error wraps, when
// its message does not say it already, and everything git printed when a git command
// failed (its error gives the first line only).
func causes(err error) []string {
	var out []string
	var le *tell.Error
	if errors.As(err, &le) && le.Err != nil && !strings.Contains(le.Msg, le.Err.Error()) {
		out = append(out, le.Err.Error())
	}
	var ge *git.Error
	if errors.As(err, &ge) && strings.Contains(ge.Stderr, "\n") {
		out = append(out, fmt.Sprintf("git %s exited %d:", strings.Join(ge.Args, " "), ge.ExitCode))
		for _, line := range strings.Split(loop.Tail(ge.Stderr, 20), "\n") {
			out = append(out, "  "+line)
		}
	}
	return out
}

func commandPath(k *kong.Context) string {
	if k == nil {
		return ""
	}
	return strings.TrimSpace(strings.TrimPrefix(k.Command(), "<command>"))
}

// configResolver reads a flag's default from the git config key in its `config` tag
// (e.g. ralph.maxRetries), with git's own precedence: flag > config > built-in default.
// The whole ralph section is read once, in one git call.
func configResolver(repo func() (*git.Repo, error)) kong.Resolver {
	var section map[string]string
	return kong.ResolverFunc(func(kctx *kong.Context, _ *kong.Path, flag *kong.Flag) (any, error) {
		key := flag.Tag.Get("config")
		if key == "" {
			return nil, nil
		}
		if section == nil {
			r, _ := repo() // outside a repository: the global and system config
			var err error
			if section, err = git.ConfigSection(context.Background(), r, "ralph"); err != nil {
				section = map[string]string{} // an unreadable config is the same as an unset key here
			}
		}
		v, ok := section[strings.ToLower(key)]
		if !ok {
			return nil, nil
		}
		if err := checkConfigValue(flag.Target.Interface(), v); err != nil {
			return nil, fmt.Errorf("git config %s: %q is not %s", key, v, err.Error())
		}
		return v, nil
	})
}

// checkConfigValue tells whether v parses as the type of the flag it defaults, so that a
// bad value names the config key it came from rather than only the flag.
func checkConfigValue(target any, v string) error {
	var err error
	switch target.(type) {
	case int:
		_, err = strconv.Atoi(v)
		if err != nil {
			return errors.New("a whole number")
		}
	case int64:
		_, err = strconv.ParseInt(v, 10, 64)
		if err != nil {
			return errors.New("a whole number")
		}
	case float64:
		_, err = strconv.ParseFloat(v, 64)
		if err != nil {
			return errors.New("a number")
		}
	case time.Duration:
		_, err = time.ParseDuration(v)
		if err != nil {
			return errors.New("a Go duration such as 30m or 1h30m")
		}
	}
	return nil
}

func newReporter(s *term.Streams) tell.Reporter { return term.NewReporter(s) }
