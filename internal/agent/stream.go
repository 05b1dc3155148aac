package agent

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Limits that keep decoding bounded whatever the agent prints.
const (
	// MaxLine is the longest event line that is decoded. Longer lines (a Write
	// of a huge file, its echoed tool result) still reach the log but are
	// skipped without being held in memory whole.
	MaxLine = 8 << 20
	// ReadBuf is the read buffer of the line reader.
	ReadBuf = 64 << 10
	// keepLineBuf is the largest line buffer kept between lines; a bigger one,
	// grown for a long line, is dropped so that it does not stay resident.
	keepLineBuf = 1 << 20
	// MaxText bounds Result.Text: the promise is at the end of the answer.
	MaxText = 64 << 10
	// MaxErrors and MaxErrorLen bound Result.Errors and Result.Denials.
	MaxErrors   = 16
	MaxErrorLen = 1 << 10
	// MaxSummary bounds a tool summary, in runes.
	MaxSummary = 120
)

// lineReader splits a stream into lines with bounded memory, for the NDJSON
// decoders of every driver. There is no limit on a line's length for
// correctness: a line longer than max is consumed and reported as long.
type lineReader struct {
	r   *bufio.Reader
	buf []byte
	max int
	err error // sticky read error, reported after the last line
}

// EachLine calls fn with every line of r (without its newline). Lines longer than
// MaxLine are skipped: Run has logged them, and decoding them would hold them whole.
// It returns nil at EOF, or the read error.
func EachLine(r io.Reader, fn func(line []byte)) error {
	lr := newLineReader(r, MaxLine)
	for {
		line, long, err := lr.next()
		if err != nil {
			if err == io.EOF {
				return nil
			}
			return err
		}
		if !long {
			fn(line)
		}
	}
}

func newLineReader(r io.Reader, max int) *lineReader {
	return &lineReader{r: bufio.NewReaderSize(r, ReadBuf), max: max}
}

// next returns the next line without its "\n" (a "\r" before it stays). A
// line longer than the limit comes back as nil with long set. A last line
// without a newline (a crash mid-write) is returned like any other. After the
// last line, err is io.EOF or the read error that ended the stream. The line
// is only valid until the next call.
func (l *lineReader) next() (line []byte, long bool, err error) {
	if l.err != nil {
		return nil, false, l.err
	}
	if cap(l.buf) > keepLineBuf {
		l.buf = nil
	}
	l.buf = l.buf[:0]
	read := false
	for {
		frag, err := l.r.ReadSlice('\n')
		read = read || len(frag) > 0
		if !long {
			if len(l.buf)+len(frag) > l.max+1 { // +1: the newline
				long = true
				l.buf = l.buf[:0]
			} else {
				l.buf = append(l.buf, frag...)
			}
		}
		switch err {
		case nil:
			if long {
				return nil, true, nil
			}
			return l.buf[:len(l.buf)-1], false, nil
		case bufio.ErrBufferFull:
			continue
		}
		l.err = err
		if !read {
			return nil, false, err
		}
		if long {
			return nil, true, nil
		}
		return l.buf, false, nil
	}
}

// Tail returns the last n bytes of s at most, starting on a rune boundary.
func Tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	s = s[len(s)-n:]
	for i := 0; i < len(s) && i < utf8.UTFMax; i++ {
		if utf8.RuneStart(s[i]) {
			return s[i:]
		}
	}
	return s
}

// Head returns the first n bytes of s at most, ending on a rune boundary, with
// "…" appended when it cut something.
func Head(s string, n int) string {
	if len(s) <= n {
		return s
	}
	i := n
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i] + "…"
}

// OneLine turns s into a single line of at most max runes: runs of white space
// and control characters become one space, and a longer result is cut with
// "…".
func OneLine(s string, max int) string {
	var b strings.Builder
	space := false
	for _, r := range s {
		if unicode.IsSpace(r) || unicode.IsControl(r) || r == utf8.RuneError {
			space = true
			continue
		}
		if space && b.Len() > 0 {
			b.WriteByte(' ')
		}
		space = false
		b.WriteRune(r)
		if b.Len() > utf8.UTFMax*max { // certainly more than max runes: stop reading
			break
		}
	}
	out := b.String()
	if utf8.RuneCountInString(out) <= max {
		return out
	}
	n := 0
	for i := range out {
		if n == max-1 {
			return out[:i] + "…"
		}
		n++
	}
	return out
}

// TailBuffer keeps the last Max bytes written to it, and counts them all.
type TailBuffer struct {
	b     []byte
	Max   int // how many bytes to keep
	total int64
}

// Write keeps the tail of p; it never fails.
func (t *TailBuffer) Write(p []byte) (int, error) {
	t.total += int64(len(p))
	if len(p) >= t.Max {
		t.b = append(t.b[:0], p[len(p)-t.Max:]...)
		return len(p), nil
	}
	t.b = append(t.b, p...)
	if len(t.b) > 2*t.Max {
		n := copy(t.b, t.b[len(t.b)-t.Max:])
		t.b = t.b[:n]
	}
	return len(p), nil
}

// Bytes returns the kept tail.
func (t *TailBuffer) Bytes() []byte {
	if len(t.b) > t.Max {
		return t.b[len(t.b)-t.Max:]
	}
	return t.b
}

// TextTail accumulates text and keeps its last Max bytes.
type TextTail struct {
	b   strings.Builder
	Max int // how many bytes to keep
}

// Reset forgets the text so far.
func (t *TextTail) Reset() { t.b.Reset() }

// Add adds s on a line of its own.
func (t *TextTail) Add(s string) {
	if t.b.Len() > 0 {
		t.b.WriteByte('\n')
	}
	if t.b.Len()+len(s) > 2*t.Max {
		kept := Tail(t.b.String()+s, t.Max)
		t.b.Reset()
		t.b.WriteString(kept)
		return
	}
	t.b.WriteString(s)
}

// Append adds s right after the text so far when direct (a streamed chunk),
// else on a line of its own, as Add does.
func (t *TextTail) Append(s string, direct bool) {
	if !direct || t.b.Len() == 0 {
		t.Add(s)
		return
	}
	if t.b.Len()+len(s) > 2*t.Max {
		kept := Tail(t.b.String()+s, t.Max)
		t.b.Reset()
		t.b.WriteString(kept)
		return
	}
	t.b.WriteString(s)
}

// String returns the kept text: its last Max bytes.
func (t *TextTail) String() string { return Tail(t.b.String(), t.Max) }

// NopEvents discards events; Decode uses it when given none.
type NopEvents struct{}

// Text discards the text.
func (NopEvents) Text(string) {}

// Tool discards the tool call.
func (NopEvents) Tool(string, string) {}

// Terminal discards the terminal event.
func (NopEvents) Terminal() {}

// FirstErrorLine returns the first line of s that mentions an error, or "".
func FirstErrorLine(s string) string {
	for line := range strings.Lines(s) {
		if strings.Contains(strings.ToLower(line), "error") {
			return strings.TrimSpace(line)
		}
	}
	return ""
}

// OptFloat is a JSON number that may be absent, null or of the wrong type.
type OptFloat struct {
	Value float64
	Valid bool // a number was there
}

// UnmarshalJSON keeps numbers and ignores anything else; it never fails.
func (f *OptFloat) UnmarshalJSON(b []byte) error {
	var v float64
	if json.Unmarshal(b, &v) == nil && !bytes.Equal(b, []byte("null")) {
		f.Value, f.Valid = v, true
	}
	return nil
}

// AddError appends a bounded message to a bounded list.
func AddError(list *[]string, s string) {
	s = strings.TrimSpace(s)
	if s == "" || len(*list) >= MaxErrors {
		return
	}
	*list = append(*list, Head(s, MaxErrorLen))
}

// RawString returns the JSON string in raw, or "" when raw is not a string.
func RawString(raw json.RawMessage) string {
	if len(raw) == 0 || raw[0] != '"' {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return ""
	}
	return s
}

func FirstNonEmpty(ss ...string) string {
	for _, s := range ss {
		if s != "" {
			return s
		}
	}
	return ""
}

// ValidTail returns b as valid UTF-8, starting on a rune boundary.
func ValidTail(b []byte) string {
	for i := 0; i < len(b) && i < utf8.UTFMax; i++ {
		if utf8.RuneStart(b[i]) {
			b = b[i:]
			break
		}
	}
	return strings.ToValidUTF8(string(b), "\uFFFD")
}
