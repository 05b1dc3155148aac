package run

import "strings"

// ReasonTailLines bounds the lines of output a failure line or status shows under a
// reason (ReasonTail); the whole reason is in the record, the report and the next prompt.
const ReasonTailLines = 6

// ReasonTail is the output a multi-line reason carries after its first line (a verify
// hook's or a commit hook's last lines): its last n non-empty lines, each cut to 200
// characters, nil when the reason is one line. The caller makes them inert.
func ReasonTail(reason string, n int) []string {
	_, rest, ok := strings.Cut(strings.TrimSpace(reason), "\n")
	if !ok {
		return nil
	}
	var lines []string
	for l := range strings.SplitSeq(rest, "\n") {
		if l = strings.TrimRight(l, " \t\r"); strings.TrimSpace(l) != "" {
			lines = append(lines, l)
		}
	}
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	for i, l := range lines {
		if r := []rune(l); len(r) > 200 {
			lines[i] = string(r[:199]) + "…"
		}
	}
	return lines
}
