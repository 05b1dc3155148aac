package fakeagent

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"strconv"
	"time"
	"unicode/utf8"
)

// kv is one member of an obj.
type kv struct {
	k string
	v any
}

// obj is a JSON object that keeps its key order, so the output reads like
// the real transcripts (and golden logs stay stable).
type obj []kv

// appendJSON appends v as compact JSON. Unlike encoding/json it does not
// escape <, > and &: the real CLIs print <promise> tags literally, and tests
// grep for them.
func appendJSON(b []byte, v any) []byte {
	switch x := v.(type) {
	case nil:
		return append(b, "null"...)
	case string:
		return appendString(b, x)
	case bool:
		return strconv.AppendBool(b, x)
	case int:
		return strconv.AppendInt(b, int64(x), 10)
	case int64:
		return strconv.AppendInt(b, x, 10)
	case obj:
		b = append(b, '{')
		for i, m := range x {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendString(b, m.k)
			b = append(b, ':')
			b = appendJSON(b, m.v)
		}
		return append(b, '}')
	case []any:
		b = append(b, '[')
		for i, e := range x {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendJSON(b, e)
		}
		return append(b, ']')
	case []string:
		b = append(b, '[')
		for i, e := range x {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendString(b, e)
		}
		return append(b, ']')
	case json.RawMessage:
		var buf bytes.Buffer
		if json.Compact(&buf, x) != nil {
			return append(b, "null"...)
		}
		return append(b, buf.Bytes()...)
	default:
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		if enc.Encode(x) != nil {
			return append(b, "null"...)
		}
		return append(b, bytes.TrimRight(buf.Bytes(), "\n")...)
	}
}

const hexDigits = "0123456789abcdef"

// appendString appends s as a JSON string; invalid UTF-8 becomes U+FFFD.
func appendString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' && c < utf8.RuneSelf {
			i++
			continue
		}
		if c >= utf8.RuneSelf {
			r, size := utf8.DecodeRuneInString(s[i:])
			if r != utf8.RuneError || size != 1 {
				i += size
				continue
			}
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i++
			start = i
			continue
		}
		b = append(b, s[start:i]...)
		switch c {
		case '"', '\\':
			b = append(b, '\\', c)
		case '\n':
			b = append(b, '\\', 'n')
		case '\r':
			b = append(b, '\\', 'r')
		case '\t':
			b = append(b, '\\', 't')
		default:
			b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
		}
		i++
		start = i
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// lineWriter writes stdout one line per Write call, so every line reaches the
// reader as soon as it is complete (no buffering to flush).
type lineWriter struct {
	w     io.Writer
	delay time.Duration
	lines int
	err   error
	buf   []byte
}

// write writes one line; line must end in '\n' unless it is a deliberately
// truncated raw line.
func (lw *lineWriter) write(line []byte) {
	if lw.err != nil {
		return
	}
	if lw.lines > 0 && lw.delay > 0 {
		time.Sleep(lw.delay)
	}
	lw.lines++
	if _, err := lw.w.Write(line); err != nil {
		lw.err = err
	}
}

// json writes v as one NDJSON line.
func (lw *lineWriter) json(v any) {
	lw.buf = appendJSON(lw.buf[:0], v)
	lw.buf = append(lw.buf, '\n')
	lw.write(lw.buf)
	if cap(lw.buf) > 1<<20 {
		lw.buf = nil // do not keep a huge line's buffer for the rest of the run
	}
}

// idGen derives deterministic UUIDs from a seed, so two runs of the same
// scenario print the same ids.
type idGen struct {
	seed string
	n    int
}

func (g *idGen) next() string {
	g.n++
	return uuidFrom(g.seed + "#" + strconv.Itoa(g.n))
}

// uuidFrom formats a hash of s as a version-4 UUID.
func uuidFrom(s string) string {
	sum := sha256.Sum256([]byte(s))
	sum[6] = sum[6]&0x0f | 0x40
	sum[8] = sum[8]&0x3f | 0x80
	h := hex.EncodeToString(sum[:16])
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32]
}
