package term

import (
	"io"
	"strings"
	"unicode/utf8"
)

// Inert returns s with nothing a terminal would act on: every control
// character but tab and newline is replaced by a visible stand-in (ESC by ␛,
// CR by ␍, BEL by ␇: the Unicode control pictures; DEL by ␡; C1 controls,
// bidirectional overrides and invalid UTF-8 by �). Text that came from an
// agent or a remote record goes through it before it reaches a terminal or
// the report's page; --json and the logs keep the exact text.
func Inert(s string) string {
	if inert(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		i += n
		if rep := replacement(r); rep != 0 {
			b.WriteRune(rep)
			continue
		}
		b.WriteRune(r) // RuneError (invalid UTF-8) is written as �
	}
	return b.String()
}

// inert reports whether s has nothing Inert would replace. ASCII, most of any text, is
// judged a byte at a time; a rune is decoded only from a byte above it.
func inert(s string) bool {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if (c < 0x20 && c != '\t' && c != '\n') || c == 0x7f {
				return false
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError || replacement(r) != 0 {
			return false
		}
		i += n
	}
	return true
}

// replacement is the visible stand-in for r, or 0 when r is harmless.
func replacement(r rune) rune {
	switch {
	case r == '\t' || r == '\n':
		return 0
	case r < 0x20:
		return 0x2400 + r // ␀ … ␟
	case r == 0x7f:
		return '␡'
	case r >= 0x80 && r <= 0x9f:
		return '\uFFFD'
	case r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
		// Bidirectional embeddings, overrides and isolates reorder what
		// follows them on the line.
		return '\uFFFD'
	}
	return 0
}

// inertWriter passes text to a terminal with every control character made
// visible as Inert does, except the colour sequences git-ralph's own palette
// writes (SGR: ESC [ params m, with the palette's parameters). It is the net
// under the explicit Inert calls: whatever text reaches a terminal stream by
// a path that forgot them still cannot retitle the window, clear the screen,
// move the cursor or write the clipboard.
type inertWriter struct {
	w       io.Writer
	pending []byte // an escape sequence or UTF-8 character cut by the end of a Write
}

// NewInertWriter returns w behind the terminal filter.
func NewInertWriter(w io.Writer) io.Writer { return &inertWriter{w: w} }

// maxPending bounds what is held back waiting for the rest of a sequence.
const maxPending = 32

func (iw *inertWriter) Write(p []byte) (int, error) {
	n := len(p)
	buf := p
	if len(iw.pending) > 0 {
		buf = append(iw.pending, p...)
		iw.pending = nil
	}
	var out []byte
	for i := 0; i < len(buf); {
		c := buf[i]
		if c == 0x1b {
			l, complete := paletteSGR(buf[i:])
			if l > 0 {
				out = append(out, buf[i:i+l]...)
				i += l
				continue
			}
			if !complete && len(buf)-i < maxPending {
				iw.pending = append([]byte(nil), buf[i:]...)
				break
			}
		}
		if c < utf8.RuneSelf {
			if rep := replacement(rune(c)); rep != 0 {
				out = utf8.AppendRune(out, rep)
			} else {
				out = append(out, c)
			}
			i++
			continue
		}
		if !utf8.FullRune(buf[i:]) {
			iw.pending = append([]byte(nil), buf[i:]...)
			break
		}
		r, l := utf8.DecodeRune(buf[i:])
		if rep := replacement(r); rep != 0 {
			out = utf8.AppendRune(out, rep)
		} else {
			out = utf8.AppendRune(out, r) // invalid UTF-8 becomes �
		}
		i += l
	}
	if _, err := iw.w.Write(out); err != nil {
		return 0, err
	}
	return n, nil
}

// paletteSGR returns the length of the colour sequence at the start of b
// when it is one the palette writes (ESC [ n;n… m with n among the
// palette's attributes and their resets), else 0; complete is false when b
// ends before the sequence could be told apart.
func paletteSGR(b []byte) (length int, complete bool) {
	if len(b) < 2 {
		return 0, false
	}
	if b[1] != '[' {
		return 0, true
	}
	num, digits := 0, 0
	for i := 2; i < len(b); i++ {
		c := b[i]
		switch {
		case c >= '0' && c <= '9' && digits < 3:
			num = num*10 + int(c-'0')
			digits++
		case (c == ';' || c == 'm') && digits > 0:
			if !paletteParam[num] {
				return 0, true
			}
			if c == 'm' {
				return i + 1, true
			}
			num, digits = 0, 0
		default:
			return 0, true
		}
	}
	return 0, false
}

// paletteParam holds the SGR parameters Palette uses (fatih/color): reset,
// bold, faint, their reset, red, green, yellow, cyan and the default colour.
var paletteParam = map[int]bool{0: true, 1: true, 2: true, 22: true, 31: true, 32: true, 33: true, 36: true, 39: true}
