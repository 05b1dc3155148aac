package agent

import "strings"

// VerdictKind is what a judge answered (git ralph start --judge).
type VerdictKind int

// The verdicts a judge can give.
const (
	VerdictNone VerdictKind = iota // no verdict line
	VerdictPass                    // <verdict>PASS</verdict>
	VerdictFail                    // <verdict>FAIL: reason</verdict>
)

// Verdict is a judge's answer.
type Verdict struct {
	Kind   VerdictKind
	Reason string // VerdictFail only: the reason, trimmed; may be ""
}

const (
	verdictOpen  = "<verdict>"
	verdictClose = "</verdict>"
)

// ParseVerdict finds the last verdict tag in text by the promise's rules
// (ParsePromise), and one more: a tag inside a fenced code block does not count, for
// a judge quotes what it read. Its content is "PASS", or "FAIL" with an optional
// ": reason". Which text counts (the final answer only) is the caller's business.
func ParseVerdict(text string) Verdict {
	var found Verdict
	eachTag(outsideFences(text), verdictOpen, verdictClose, func(inner string) {
		s := strings.TrimSpace(inner)
		if s == "PASS" {
			found = Verdict{Kind: VerdictPass}
			return
		}
		rest, ok := strings.CutPrefix(s, "FAIL")
		if !ok {
			return
		}
		if rest == "" {
			found = Verdict{Kind: VerdictFail}
			return
		}
		if reason, ok := strings.CutPrefix(rest, ":"); ok {
			found = Verdict{Kind: VerdictFail, Reason: strings.TrimSpace(reason)}
		}
	})
	return found
}

// outsideFences is text with every line of a fenced code block, its fences included,
// emptied (a fence left open runs to the end).
func outsideFences(text string) string {
	if !strings.Contains(text, "```") && !strings.Contains(text, "~~~") {
		return text
	}
	lines := strings.Split(text, "\n")
	fence := "" // the open fence: its character, as many times as it had
	for i, l := range lines {
		t := strings.TrimSpace(l)
		switch {
		case fence == "":
			if f := fenceOf(t); f != "" {
				fence = f
				lines[i] = ""
			}
		default:
			// A closing fence is at least as long as the opening one, and alone.
			if strings.HasPrefix(t, fence) && strings.Trim(t, fence[:1]) == "" {
				fence = ""
			}
			lines[i] = ""
		}
	}
	return strings.Join(lines, "\n")
}

// fenceOf is the fence a line opens (its run of three or more ` or ~), or "".
func fenceOf(t string) string {
	for _, c := range []string{"`", "~"} {
		n := len(t) - len(strings.TrimLeft(t, c))
		if n >= 3 {
			return t[:n]
		}
	}
	return ""
}
