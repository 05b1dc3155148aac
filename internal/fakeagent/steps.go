package fakeagent

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/git-ralph/git-ralph/internal/openspec"
)

// runSteps plays steps in order. stop is true when a step ended the run
// (exit, crash, hang, or stdout gone) with code.
func (f *fake) runSteps(steps []step) (code int, stop bool, err error) {
	for i := range steps {
		code, stop, err = f.step(&steps[i])
		if err != nil || stop {
			return code, true, err
		}
		if f.out.err != nil && !errors.Is(f.out.err, syscall.EPIPE) {
			return 0, true, fmt.Errorf("stdout: %w", f.out.err)
		}
	}
	return 0, false, nil
}

// A broken stdout (EPIPE: git-ralph, its reader, is gone) ends the fake's output but
// not its steps: an agent left behind by a killed git-ralph goes on, as real ones do,
// and the tests of what the next start does with it need it alive. Whether it wrote
// once more after the kill landed must not decide that.

func (f *fake) step(st *step) (code int, stop bool, err error) {
	switch {
	case st.Say != nil:
		f.lastSay = f.subst(*st.Say)
		f.ag.say(f.lastSay)
	case st.SayBytes != nil:
		f.ag.say(strings.Repeat("y", *st.SayBytes))
	case st.SpamLines != nil:
		text := firstNonEmpty(f.subst(st.SpamLines.Text), "progress")
		for range st.SpamLines.Count {
			f.ag.say(text)
			if f.out.err != nil {
				break
			}
		}
	case st.Flood != nil:
		f.ag.flood(st.Flood.Bytes, st.Flood.LineBytes)
	case st.Write != nil:
		f.write(f.subst(st.Write.Path), f.subst(st.Write.Content))
	case st.Bash != nil:
		f.bash(f.subst(*st.Bash), "fake")
	case st.Commit != nil:
		f.bash("git add -A && git commit -q -m "+shQuote(f.subst(*st.Commit)), "Commit the changes")
	case st.CheckStory != nil:
		story, ok, _ := st.checkStoryTarget()
		if ok {
			if story == "" {
				story = f.env("RALPH_STORY")
			}
			f.tick(story, "")
		}
	case st.CheckTask != nil:
		f.tick("", f.subst(*st.CheckTask))
	case st.EchoPrompt != nil:
		if *st.EchoPrompt {
			t := &toolCall{kind: toolBash, command: "cat prompt", description: "Show the prompt"}
			f.toolSteps++
			f.ag.toolBegin(t)
			t.stdout, t.combined = f.prompt, f.prompt
			f.ag.toolEnd(t)
		}
	case st.Event != nil:
		f.ag.event(st.Event)
	case st.Raw != nil:
		line := *st.Raw
		if st.Newline == nil || *st.Newline {
			line += "\n"
		}
		f.out.write([]byte(line))
	case st.Stderr != nil:
		text := f.subst(*st.Stderr)
		if !strings.HasSuffix(text, "\n") {
			text += "\n"
		}
		_, _ = io.WriteString(f.stderr, text)
	case st.Touch != nil:
		if err := f.touch(f.path(*st.Touch)); err != nil {
			return 0, true, usagef("touch: %v", err)
		}
	case st.SleepMS != nil:
		time.Sleep(time.Duration(*st.SleepMS) * time.Millisecond)
	case st.Advance != nil:
		if err := f.advanceClock(*st.Advance); err != nil {
			return 0, true, usagef("advance_clock: %v", err)
		}
	case st.WaitForFile != nil:
		path := f.path(*st.WaitForFile)
		for {
			if _, err := os.Stat(path); err == nil {
				break
			}
			if f.scriptGone() {
				return 0, true, nil
			}
			time.Sleep(10 * time.Millisecond)
		}
	case st.Hang != nil:
		code, err := f.hang(st.Hang)
		return code, true, err
	case st.Exit != nil:
		return *st.Exit, true, nil
	case st.Crash != nil:
		return f.crash(st.Crash.Signal), true, nil
	case st.Attack != nil:
		f.attack(*st.Attack)
	}
	return 0, false, nil
}

// subst fills the {{story}}, {{attempt}} and {{change}} placeholders.
func (f *fake) subst(s string) string {
	if !strings.Contains(s, "{{") {
		return s
	}
	return strings.NewReplacer(
		"{{story}}", f.env("RALPH_STORY"),
		"{{attempt}}", f.env("RALPH_ATTEMPT"),
		"{{change}}", f.env("RALPH_CHANGE"),
	).Replace(s)
}

// path expands placeholders and $VARS in p and makes it absolute.
func (f *fake) path(p string) string {
	return f.abs(f.cwd, os.Expand(f.subst(p), f.env))
}

func (f *fake) touch(path string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	// A new file has its times already: only one that was there is touched (in the
	// sandbox a utime goes to git-ralph's supervisor, which a test may have just killed,
	// having seen the file appear).
	file, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err == nil {
		return file.Close()
	}
	if !errors.Is(err, fs.ErrExist) {
		return err
	}
	now := time.Now()
	return os.Chtimes(path, now, now)
}

// write is the Write tool: it creates or replaces a file under the work dir.
func (f *fake) write(path, content string) {
	t := &toolCall{kind: toolWrite, path: f.abs(f.cwd, path), content: content}
	if old, err := os.ReadFile(t.path); err == nil {
		t.existed, t.orig = true, string(old)
	}
	f.toolSteps++
	f.ag.toolBegin(t)
	if t.refused != "" {
		f.ag.toolEnd(t)
		return
	}
	perm := fs.FileMode(0o644)
	if fi, err := os.Stat(t.path); err == nil {
		perm = fi.Mode().Perm()
	}
	if err := os.MkdirAll(filepath.Dir(t.path), 0o755); err != nil {
		t.err = err
	} else if err := os.WriteFile(t.path, []byte(content), perm); err != nil {
		t.err = err
	}
	f.ag.toolEnd(t)
}

// bash is the Bash tool: /bin/sh -c command in the work dir.
func (f *fake) bash(command, description string) {
	t := &toolCall{kind: toolBash, command: command, description: description}
	f.toolSteps++
	f.ag.toolBegin(t)
	if t.refused != "" {
		f.ag.toolEnd(t)
		return
	}
	var mu sync.Mutex
	var stdout, stderr, combined bytes.Buffer
	cmd := exec.Command("/bin/sh", "-c", command)
	cmd.Dir = f.cwd
	cmd.Env = f.childEnv()
	cmd.Stdout = &teeBuffer{mu: &mu, own: &stdout, all: &combined}
	cmd.Stderr = &teeBuffer{mu: &mu, own: &stderr, all: &combined}
	err := cmd.Run()
	t.stdout, t.stderr, t.combined = stdout.String(), stderr.String(), combined.String()
	var exitErr *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &exitErr):
		t.exitCode = exitErr.ExitCode()
		if t.exitCode < 0 {
			t.exitCode = 128 + signalNumber(exitErr)
		}
	default:
		t.exitCode = 127
		t.stderr += err.Error()
		t.combined += err.Error()
	}
	f.ag.toolEnd(t)
}

// teeBuffer collects one stream of a command and, in order, both streams.
type teeBuffer struct {
	mu  *sync.Mutex
	own *bytes.Buffer
	all *bytes.Buffer
}

func (t *teeBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.own.Write(p)
	return t.all.Write(p)
}

// tick is the Edit tool on tasks.md: it ticks story's open tasks, or the
// task with id taskID.
func (f *fake) tick(story, taskID string) {
	change := f.env("RALPH_CHANGE")
	t := &toolCall{kind: toolEdit, path: filepath.Join(f.cwd, "openspec", "changes", change, "tasks.md")}
	kind, tracked := f.env("RALPH_SOURCE"), f.env("RALPH_TASKS_FILE")
	if tracked != "" && taskID == "" { // another source's file, or the one the change's schema tracks
		t.path = filepath.Join(f.cwd, filepath.FromSlash(tracked))
		if filepath.IsAbs(tracked) { // a file outside the working tree (a GitHub issue's tasks)
			t.path = tracked
		}
	} else if ch, err := openspec.Load(f.cwd, change); err == nil { // the file the change's schema tracks
		t.path = ch.TasksPath
	}
	f.toolSteps++
	var content []byte
	var perm fs.FileMode
	var err error
	switch {
	case change == "":
		err = errors.New("RALPH_CHANGE is not set")
	case story == "" && taskID == "":
		err = errors.New("RALPH_STORY is not set")
	default:
		content, err = os.ReadFile(t.path)
		if fi, serr := os.Stat(t.path); serr == nil {
			perm = fi.Mode().Perm()
		}
	}
	var edit *taskEdit
	if err == nil {
		switch {
		case taskID != "":
			edit, err = tickTask(content, taskID)
		case kind != "" && kind != "openspec":
			edit, err = tickSource(kind, content, story)
		default:
			edit, err = tickStory(content, story)
		}
	}
	if err == nil {
		t.orig, t.old, t.new = string(content), edit.old, edit.new
	}
	f.ag.toolBegin(t)
	if t.refused != "" {
		f.ag.toolEnd(t)
		return
	}
	if err == nil {
		err = os.WriteFile(t.path, edit.content, perm)
	}
	if err != nil {
		what := "check_story " + story
		if taskID != "" {
			what = "check_task " + taskID
		}
		t.err = fmt.Errorf("%s: %w", what, err)
		fmt.Fprintf(f.stderr, "fake-agent: %v\n", t.err)
	}
	f.ag.toolEnd(t)
}

// advanceClock moves the clock of the test binary's git-ralph, which measures the
// user's limits (--timeout, --idle-timeout, --deadline), forward by d: it appends d to
// the file GIT_RALPH_TEST_TIME names (git-ralph/main_test.go's testTimeClock). So a
// scenario says when a limit is reached ("printed its part, then the time ran out")
// instead of sleeping for a time a loaded machine may overrun.
func (f *fake) advanceClock(d string) error {
	path := f.env("GIT_RALPH_TEST_TIME")
	if path == "" {
		return errors.New("GIT_RALPH_TEST_TIME is not set")
	}
	file, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	if _, err := file.WriteString(d + "\n"); err != nil {
		file.Close()
		return err
	}
	return file.Close()
}
