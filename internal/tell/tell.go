// Package tell is what git-ralph tells its user, apart from how it is printed: an
// Error the user can act on, with its hints and exit code, and a Reporter of progress
// (internal/term implements it). The loop and the workflows built on it return and
// report through these; internal/cli prints them.
package tell

import (
	"fmt"
	"strings"
)

// Reporter receives a loop's progress as it happens.
type Reporter interface {
	Step(msg string)                                           // something git-ralph did
	Warn(msg string)                                           // something to look at
	Attempt(index, total int, story, title string, n, max int) // an attempt begins
	AgentText(text string)                                     // the agent's words, live
	AgentTool(name, summary string)                            // a tool call of the agent
	Outcome(ok bool, msg string)                               // how an attempt ended
}

// Error is a failure the user can act on. The CLI prints it as git does:
// "error: <Msg>" then one "hint: <line>" per line of Hint.
type Error struct {
	Msg  string
	Hint string
	Code int // exit code; 0 means 1
	Err  error
}

func (e *Error) Error() string { return e.Msg }

// Unwrap returns the underlying error, if any.
func (e *Error) Unwrap() error { return e.Err }

// Hints returns the hint lines.
func (e *Error) Hints() []string {
	if e.Hint == "" {
		return nil
	}
	return strings.Split(e.Hint, "\n")
}

// ExitCode is the process exit code this error asks for.
func (e *Error) ExitCode() int {
	if e.Code == 0 {
		return 1
	}
	return e.Code
}

// UserErr is an error the user can act on: hint says how.
func UserErr(hint, format string, args ...any) *Error {
	return &Error{Msg: fmt.Sprintf(format, args...), Hint: hint}
}

// WithCause is e keeping err as its cause (Err), for -v and errors.As.
func (e *Error) WithCause(err error) *Error {
	e.Err = err
	return e
}

// ErrInterrupted is returned when Ctrl-C or SIGTERM stopped the loop.
var ErrInterrupted = &Error{
	Msg:  "interrupted",
	Code: 130,
}

// ExitDeadline is the exit code of a loop stopped by its --deadline: the run is saved
// and resumable, not failed.
const ExitDeadline = 75

// ErrDeadline is returned when the loop stopped at its deadline.
var ErrDeadline = &Error{
	Msg:  "stopped at the deadline",
	Code: ExitDeadline,
}
