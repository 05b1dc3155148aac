package agent

import (
	"strings"
	"unicode"
)

// PromiseKind says what the agent promised in its final answer.
type PromiseKind int

// The promises an agent can make (SPEC.md §4 step 3).
const (
	PromiseNone     PromiseKind = iota // no tag: no signal
	PromiseComplete                    // <promise>COMPLETE</promise>
	PromiseFailed                      // <promise>FAILED: reason</promise>
)

// String returns "COMPLETE", "FAILED" or "none".
func (k PromiseKind) String() string {
	switch k {
	case PromiseComplete:
		return "COMPLETE"
	case PromiseFailed:
		return "FAILED"
	}
	return "none"
}

// Promise is the outcome an agent signalled.
type Promise struct {
	Kind   PromiseKind
	Reason string // PromiseFailed only: the reason, trimmed; may be ""
}

const (
	openTag  = "<promise>"
	closeTag = "</promise>"
)

// ParsePromise finds the last promise tag in text that stands on a line of its
// own: "<promise>" first on its line and "</promise>" last on its line, white
// space around them allowed (so CRLF line ends are fine). Its content, trimmed,
// must be "COMPLETE", or "FAILED" optionally followed by ":" and a reason (which
// may span lines up to the closing tag). Tags inside a sentence, inline code or
// with any other content do not count, and the last valid tag wins
// (AGENTS-REFERENCE.md §1.7). Keywords are case-sensitive.
//
// ParsePromise only reads text; which text counts (the final answer only) is
// the caller's business: see Result.Promise.
func ParsePromise(text string) Promise {
	var found Promise
	eachTag(text, openTag, closeTag, func(inner string) {
		if p, ok := parseInner(inner); ok {
			found = p
		}
	})
	return found
}

// eachTag calls found with the content of every tag open…close in text that stands on
// a line of its own (ParsePromise's rules), in order.
func eachTag(text, open, close string, found func(inner string)) {
	nextClose := -1 // cached position of the first close tag at or after some offset
	for pos := 0; pos < len(text); {
		lineEnd := strings.IndexByte(text[pos:], '\n')
		if lineEnd < 0 {
			lineEnd = len(text)
		} else {
			lineEnd += pos
		}
		next := lineEnd + 1
		start := pos + len(text[pos:lineEnd]) - len(strings.TrimLeftFunc(text[pos:lineEnd], unicode.IsSpace))
		if strings.HasPrefix(text[start:], open) {
			from := start + len(open)
			if nextClose < from {
				nextClose = strings.Index(text[from:], close)
				if nextClose >= 0 {
					nextClose += from
				} else {
					nextClose = len(text) // none left: stop looking
				}
			}
			if nextClose < len(text) {
				end := nextClose + len(close)
				rest := text[end:]
				if i := strings.IndexByte(rest, '\n'); i >= 0 {
					rest = rest[:i]
				}
				inner := text[from:nextClose]
				if strings.TrimSpace(rest) == "" && !strings.Contains(inner, open) {
					found(inner)
					next = end + len(rest) + 1
				}
			}
		}
		pos = next
	}
}

// parseInner reads the content of a promise tag.
func parseInner(s string) (Promise, bool) {
	s = strings.TrimSpace(s)
	if s == "COMPLETE" {
		return Promise{Kind: PromiseComplete}, true
	}
	rest, ok := strings.CutPrefix(s, "FAILED")
	if !ok {
		return Promise{}, false
	}
	if rest == "" {
		return Promise{Kind: PromiseFailed}, true
	}
	reason, ok := strings.CutPrefix(rest, ":")
	if !ok {
		return Promise{}, false
	}
	return Promise{Kind: PromiseFailed, Reason: strings.TrimSpace(reason)}, true
}
