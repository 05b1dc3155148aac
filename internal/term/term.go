// Package term owns the process's streams: which of them are terminals, whether to use
// colour, and how progress and the agent's live output look. Only this package looks at
// os.Stdin, os.Stdout and os.Stderr; everything else takes *Streams.
package term

import (
	"bytes"
	"io"
	"os"
	"sync"

	"github.com/cli/go-gh/v2/pkg/prompter"
	ghterm "github.com/cli/go-gh/v2/pkg/term"
	"github.com/fatih/color"
	xterm "golang.org/x/term"
)

// Streams are the standard streams and what is known about them.
type Streams struct {
	In  io.Reader
	Out io.Writer // what the user asked for: results, tables, JSON
	Err io.Writer // progress, the agent's live output, warnings, errors
	// ErrDisplay is stderr itself, unfiltered, when it is a terminal (else nil):
	// only for a display that moves the cursor and makes every text it draws
	// inert itself (internal/parallel's -j block). Everything else writes Err.
	ErrDisplay io.Writer

	StdinTTY, StdoutTTY, StderrTTY bool
	Color                          bool // colour on stderr (and on stdout when it is a TTY)
	NeverPrompt                    bool // CI is set, or prompting was turned off
	ErrWidth                       int  // stderr's width in columns when it is a terminal; 0 if unknown

	// Prompter asks the user; nil means "cannot prompt".
	Prompter Prompter
}

// Prompter is the part of go-gh's prompter that git-ralph uses.
type Prompter interface {
	Select(prompt, defaultValue string, options []string) (int, error)
}

// System returns the real streams. Colour is decided once, here: forced by
// CLICOLOR_FORCE, off with NO_COLOR or CLICOLOR=0, otherwise on when stderr is a terminal.
func System() *Streams {
	s := &Streams{
		In:        os.Stdin,
		Out:       os.Stdout,
		Err:       os.Stderr,
		StdinTTY:  ghterm.IsTerminal(os.Stdin),
		StdoutTTY: ghterm.IsTerminal(os.Stdout),
		StderrTTY: ghterm.IsTerminal(os.Stderr),
	}
	if s.StderrTTY {
		if w, _, err := xterm.GetSize(int(os.Stderr.Fd())); err == nil {
			s.ErrWidth = w
		}
	}
	// A terminal gets nothing it would act on but the palette's colours,
	// whatever path a text took (see inertWriter).
	if s.StdoutTTY {
		s.Out = NewInertWriter(os.Stdout)
	}
	if s.StderrTTY {
		s.Err = NewInertWriter(os.Stderr)
		s.ErrDisplay = os.Stderr
	}
	s.Color = ghterm.IsColorForced() || (!ghterm.IsColorDisabled() && s.StderrTTY)
	s.NeverPrompt = os.Getenv("CI") != ""
	if s.StdinTTY && s.StderrTTY && !s.NeverPrompt {
		s.Prompter = prompter.New(os.Stdin, os.Stderr, os.Stderr)
	}
	return s
}

// Test returns streams backed by buffers: no terminal, no colour, no prompts.
func Test() (s *Streams, out, errOut *bytes.Buffer) {
	out, errOut = &bytes.Buffer{}, &bytes.Buffer{}
	return &Streams{In: bytes.NewReader(nil), Out: out, Err: errOut, NeverPrompt: true}, out, errOut
}

// CanPrompt reports whether a question may be asked.
func (s *Streams) CanPrompt() bool {
	return s.Prompter != nil && !s.NeverPrompt && s.StdinTTY && s.StderrTTY
}

// Palette is the closed set of styles git-ralph uses.
type Palette struct {
	Success, Warn, Fail, Dim, Branch, Bold func(a ...any) string
}

var paletteMu sync.Mutex

// Palette returns the styles, coloured or plain as decided for these streams.
func (s *Streams) Palette() Palette {
	paletteMu.Lock()
	defer paletteMu.Unlock()
	mk := func(attrs ...color.Attribute) func(a ...any) string {
		c := color.New(attrs...)
		if s.Color {
			c.EnableColor()
		} else {
			c.DisableColor()
		}
		return c.SprintFunc()
	}
	return Palette{
		Success: mk(color.FgGreen),
		Warn:    mk(color.FgYellow),
		Fail:    mk(color.FgRed),
		Dim:     mk(color.Faint),
		Branch:  mk(color.FgCyan),
		Bold:    mk(color.Bold),
	}
}
