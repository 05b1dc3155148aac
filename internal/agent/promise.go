package agent

import (
	"strings"
	"unicode"
)

// PromiseKind says what the agent promised in its final answer.
type PromiseKind int

// The promises an agent can make (docs/LOOP.md, "Each attempt" step 3).
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

// ParsePromise finds the last valid promise tag in text: "<promise>" first and
// "</promise>" last on their lines (white space around allowed), holding "COMPLETE" or
// "FAILED" with an optional ": reason" that may span lines; keywords are case-sensitive,
// and a tag inside a sentence or with other content does not count (docs/LOOP.md, "Each
// attempt"). Which text counts, the final answer only, is the caller's: Result.Promise.
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
