// Package parallel runs several git-ralph loops at once (start --worktree -j N), each
// as a child process of its own, and multiplexes their output: one compact line per
// loop in a terminal, or every line prefixed with its loop's name otherwise.
//
// Besides internal/git, internal/agent and internal/fakeagent, this is the only package
// that starts processes: git-ralph itself, never git or an agent. There is no scheduler
// state beyond the run records the children keep: a stopped -j run resumes by running
// the same command again.
package parallel

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/git-ralph/git-ralph/internal/term"
)

// Job is one loop to run: a name (the change) and the argv of its git-ralph.
type Job struct {
	Name string
	Argv []string // Argv[0] is the executable's path
}

// Result is how one job ended.
type Result struct {
	Name    string
	Started bool   // false when Ctrl-C came before its turn
	Code    int    // exit code; -1 when killed by a signal or never started
	Last    string // its last line of output
	Err     error  // it could not be started
}

// Options shape a Run.
type Options struct {
	Max   int       // at most this many at a time; < 1 means all at once
	Out   io.Writer // where the progress goes
	TTY   bool      // Out is a terminal: one line per job, redrawn in place
	Width int       // terminal width; 0 means 80
	Name  string    // argv[0] the children see (git-ralph), so they know what they are
	// Done, if not nil, is called as each job that started ends, with its index and
	// result, from the goroutine that ran it (so it may run beside other jobs' calls).
	Done func(i int, r Result)
}

// Run runs the jobs, at most o.Max at a time, and returns their results in the jobs'
// order. When ctx is cancelled (the first Ctrl-C), every running child gets SIGINT and
// no further job starts; when kill is closed (the second Ctrl-C), they get a second
// SIGINT, which makes a git-ralph kill its agent at once.
func Run(ctx context.Context, kill <-chan struct{}, jobs []Job, o Options) []Result {
	if o.Max < 1 || o.Max > len(jobs) {
		o.Max = len(jobs)
	}
	if o.Width <= 0 {
		o.Width = 80
	}
	d := &display{out: o.Out, tty: o.TTY, width: o.Width, lines: make([]string, len(jobs)), names: make([]string, len(jobs))}
	width := 0
	for i, j := range jobs {
		d.names[i] = j.Name
		d.lines[i] = "waiting"
		width = max(width, len(j.Name))
	}
	d.nameWidth = width
	if d.tty {
		d.mu.Lock()
		d.redraw()
		d.mu.Unlock()
	}

	results := make([]Result, len(jobs))
	sem := make(chan struct{}, o.Max)
	var wg sync.WaitGroup
	for i, j := range jobs {
		results[i] = Result{Name: j.Name, Code: -1}
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			d.set(i, "not started (interrupted)")
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			results[i] = runOne(ctx, kill, i, j, o.Name, d)
			if o.Done != nil && results[i].Started {
				o.Done(i, results[i])
			}
		}()
	}
	wg.Wait()
	return results
}

func runOne(ctx context.Context, kill <-chan struct{}, i int, j Job, name string, d *display) Result {
	res := Result{Name: j.Name, Code: -1}
	cmd := exec.Command(j.Argv[0], j.Argv[1:]...)
	if name != "" {
		cmd.Args[0] = name
	}
	// A process group of its own: the terminal's Ctrl-C reaches only us, and we pass
	// exactly one SIGINT on to each loop (a second would kill its agent at once).
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	pr, pw, err := os.Pipe()
	if err != nil {
		res.Err = err
		return res
	}
	cmd.Stdout, cmd.Stderr = pw, pw
	if err := cmd.Start(); err != nil {
		pw.Close()
		pr.Close()
		res.Err = err
		d.set(i, "cannot start: "+err.Error())
		return res
	}
	pw.Close()
	res.Started = true
	d.set(i, "started")
	done := make(chan struct{})
	go func() {
		select {
		case <-ctx.Done():
			_ = cmd.Process.Signal(os.Interrupt)
		case <-done:
			return
		}
		select {
		case <-kill:
			_ = cmd.Process.Signal(os.Interrupt)
		case <-done:
		}
	}()
	sc := bufio.NewScanner(pr)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := strings.TrimRight(sc.Text(), "\r")
		d.line(i, line)
		if strings.TrimSpace(line) != "" {
			res.Last = line
		}
	}
	pr.Close()
	_ = cmd.Wait()
	close(done)
	res.Code = cmd.ProcessState.ExitCode()
	if d.tty {
		d.mu.Lock()
		d.redraw()
		d.mu.Unlock()
	}
	return res
}

// display is the shared output of the jobs.
type display struct {
	mu        sync.Mutex
	out       io.Writer
	tty       bool
	width     int
	nameWidth int
	names     []string
	lines     []string
	drawn     bool
	last      time.Time // of the last redraw
}

// line takes one line of a job's output.
func (d *display) line(i int, line string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if !d.tty {
		fmt.Fprintf(d.out, "%-*s | %s\n", d.nameWidth, d.names[i], line)
		return
	}
	if strings.TrimSpace(line) == "" || closing(line) {
		return
	}
	d.lines[i] = line
	// An agent can print thousands of lines a second: redraw at most every 50 ms (every
	// job's end redraws, so the last state is always shown).
	if time.Since(d.last) >= 50*time.Millisecond {
		d.redraw()
	}
}

// closing reports whether line is one of the lines a loop ends with after its summary
// (the report's path, what to run next): the block keeps showing the summary ("done: 2
// of 2 stories completed…", "stopped: …") instead.
func closing(line string) bool {
	t := strings.TrimLeft(line, " ")
	return strings.HasPrefix(t, "next: ") || strings.HasPrefix(t, "or: ") || strings.HasPrefix(t, "report: ")
}

// set replaces a job's status line (in a terminal; plain output prints it once).
func (d *display) set(i int, status string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.lines[i] = status
	if !d.tty {
		fmt.Fprintf(d.out, "%-*s | %s\n", d.nameWidth, d.names[i], "("+status+")")
		return
	}
	d.redraw()
}

// redraw rewrites the block of one line per job, in place.
func (d *display) redraw() {
	var b strings.Builder
	if d.drawn {
		fmt.Fprintf(&b, "\x1b[%dA", len(d.lines))
	}
	for i, l := range d.lines {
		text := fmt.Sprintf("%-*s  %s", d.nameWidth, d.names[i], l)
		b.WriteString("\r\x1b[K")
		b.WriteString(truncate(text, d.width-1))
		b.WriteByte('\n')
	}
	d.drawn, d.last = true, time.Now()
	_, _ = io.WriteString(d.out, b.String())
}

// truncate cuts s to at most n runes, marking the cut with "…". Control characters
// (an agent's own escape sequences) become spaces so the block stays one line each,
// and whatever else a terminal would act on is made visible (term.Inert): the block
// is written to the terminal unfiltered, for its own cursor codes.
func truncate(s string, n int) string {
	s = term.Inert(strings.Map(func(r rune) rune {
		if r < ' ' || r == 0x7f {
			return ' '
		}
		return r
	}, s))
	if utf8.RuneCountInString(s) <= n || n < 2 {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}
