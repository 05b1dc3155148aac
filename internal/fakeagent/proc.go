package fakeagent

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// signalState is the signal handling of a scenario with a hang step. It is
// installed before the first line is printed, so a test that waits for a
// line and then signals never races it.
type signalState struct {
	ch            chan os.Signal
	onSIGTERMExit *int
	onSIGINTExit  *int
	log           string // signal_log: each SIGINT or SIGTERM received is a line here
	ignore        map[os.Signal]bool
}

func setupSignals(h *hangSpec) *signalState {
	s := &signalState{ch: make(chan os.Signal, 4), log: h.SignalLog,
		ignore: map[os.Signal]bool{syscall.SIGTERM: h.IgnoreSIGTERM, syscall.SIGINT: h.IgnoreSIGINT}}
	var notify []os.Signal
	// With a signal log, an ignored signal is caught and logged, not left to the
	// kernel to drop, so that a test can wait until the agent has got it.
	if h.IgnoreSIGTERM && s.log == "" {
		signal.Ignore(syscall.SIGTERM)
	} else if h.IgnoreSIGTERM || h.OnSIGTERMExit != nil || s.log != "" {
		s.onSIGTERMExit = h.OnSIGTERMExit
		notify = append(notify, syscall.SIGTERM)
	}
	if h.IgnoreSIGINT && s.log == "" {
		signal.Ignore(syscall.SIGINT)
	} else if h.IgnoreSIGINT || h.OnSIGINTExit != nil || s.log != "" {
		s.onSIGINTExit = h.OnSIGINTExit
		notify = append(notify, syscall.SIGINT)
	}
	if len(notify) > 0 {
		signal.Notify(s.ch, notify...)
	}
	return s
}

// hang blocks until a trapped signal says how to exit; untrapped signals
// kill the process by their default action.
func (f *fake) hang(h *hangSpec) (int, error) {
	if !f.proc {
		return 0, usagef("a hang step needs a real process: run the fake through Main")
	}
	if f.sig == nil {
		f.sig = setupSignals(h)
	}
	pids := strconv.Itoa(os.Getpid()) + "\n"
	var child *exec.Cmd
	if h.SpawnChild {
		child = exec.Command("sleep", "1000")
		child.Dir = f.cwd
		// Holding the fake's stdout and stderr like a real agent's helper
		// does: the reader sees EOF only once the whole group is gone.
		if file, ok := f.stdout.(*os.File); ok {
			child.Stdout = file
		}
		if file, ok := f.stderr.(*os.File); ok {
			child.Stderr = file
		}
		if err := child.Start(); err != nil {
			return 0, fmt.Errorf("hang: spawn child: %w", err)
		}
		pids += strconv.Itoa(child.Process.Pid) + "\n"
	}
	if h.PIDFile != "" {
		if err := writeFileAtomic(f.path(h.PIDFile), []byte(pids)); err != nil {
			return 0, usagef("hang: pid_file: %v", err)
		}
	}
	if h.AdvanceClock != "" {
		// Now that all is in place, the time runs out (a timeout under test).
		if err := f.advanceClock(h.AdvanceClock); err != nil {
			return 0, usagef("hang: advance_clock: %v", err)
		}
	}
	for {
		select {
		case s := <-f.sig.ch:
			if f.sig.log != "" {
				if file, err := os.OpenFile(f.path(f.sig.log), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644); err == nil {
					fmt.Fprintln(file, s)
					file.Close()
				}
			}
			if s == syscall.SIGTERM && f.sig.onSIGTERMExit != nil {
				return *f.sig.onSIGTERMExit, nil
			}
			if s == syscall.SIGINT && f.sig.onSIGINTExit != nil {
				return *f.sig.onSIGINTExit, nil
			}
			if !f.sig.ignore[s] {
				// Caught only to be logged: die of it, as an untrapped signal kills.
				signal.Reset(s)
				_ = syscall.Kill(os.Getpid(), s.(syscall.Signal))
			}
		case <-time.After(100 * time.Millisecond):
			if h.AdvanceClock != "" {
				// The time keeps running out while the agent hangs: git-ralph may
				// have read its last output after the first advance, which an
				// idle timeout counts from.
				_ = f.advanceClock(h.AdvanceClock)
			}
			if f.scriptGone() {
				if child != nil {
					_ = child.Process.Kill()
				}
				return 0, nil
			}
		}
	}
}

// scriptGone reports whether the test that started the fake has ended: its work
// directory, the parent of FAKE_AGENT_STATE_DIR, is gone. A fake that waits (hang,
// wait_for_file) waits for its test's next step, however long that takes on a loaded
// machine, and never longer than the test: no timer bounds the wait, so no test
// depends on how fast the machine is, and a failed test leaves nothing running.
func (f *fake) scriptGone() bool {
	dir := f.env("FAKE_AGENT_STATE_DIR")
	if dir == "" {
		return false
	}
	_, err := os.Stat(filepath.Dir(dir))
	return errors.Is(err, fs.ErrNotExist)
}

// crash makes the process die by sig. The Go runtime turns a SIGSEGV sent
// to itself into a traceback and exit 2, so the fake execs a shell that
// signals itself: same pid, default dispositions, and the parent sees a
// death by that signal. Core dumps are switched off first.
func (f *fake) crash(name string) int {
	sig, _ := parseSignal(name)
	if !f.proc {
		fmt.Fprintf(f.stderr, "fake-agent: crash by signal %d (in-process: returning %d)\n", int(sig), 128+int(sig))
		return 128 + int(sig)
	}
	_ = syscall.Setrlimit(syscall.RLIMIT_CORE, &syscall.Rlimit{})
	signal.Reset()
	if sig != syscall.SIGKILL {
		script := "kill -" + strconv.Itoa(int(sig)) + " $$; exit " + strconv.Itoa(128+int(sig))
		err := syscall.Exec("/bin/sh", []string{"sh", "-c", script}, os.Environ())
		fmt.Fprintf(f.stderr, "fake-agent: crash: exec /bin/sh: %v; using SIGKILL\n", err)
	}
	_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
	time.Sleep(time.Minute)
	return 128 + int(sig)
}

var signalNames = map[string]syscall.Signal{
	"HUP": syscall.SIGHUP, "INT": syscall.SIGINT, "QUIT": syscall.SIGQUIT, "ILL": syscall.SIGILL,
	"TRAP": syscall.SIGTRAP, "ABRT": syscall.SIGABRT, "BUS": syscall.SIGBUS, "FPE": syscall.SIGFPE,
	"KILL": syscall.SIGKILL, "USR1": syscall.SIGUSR1, "SEGV": syscall.SIGSEGV, "USR2": syscall.SIGUSR2,
	"PIPE": syscall.SIGPIPE, "ALRM": syscall.SIGALRM, "TERM": syscall.SIGTERM,
}

// parseSignal accepts "SEGV", "SIGSEGV" (any case) or a number; empty means SEGV.
func parseSignal(name string) (syscall.Signal, error) {
	if name == "" {
		return syscall.SIGSEGV, nil
	}
	if n, err := strconv.Atoi(name); err == nil && n > 0 && n < 65 {
		return syscall.Signal(n), nil
	}
	if sig, ok := signalNames[strings.TrimPrefix(strings.ToUpper(name), "SIG")]; ok {
		return sig, nil
	}
	return 0, errors.New("crash: unknown signal " + strconv.Quote(name))
}

// signalNumber returns the signal that ended a command, or 0.
func signalNumber(err *exec.ExitError) int {
	if ws, ok := err.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return int(ws.Signal())
	}
	return 0
}
