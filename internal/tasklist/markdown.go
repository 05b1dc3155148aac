package tasklist

import "strings"

// ATXHeading reports whether line is an ATX heading opened by exactly marker ("##" for
// level 2: up to three spaces before it, then a space, a tab or the end) and returns its
// text, trimmed. One trailing \r is ignored.
func ATXHeading(line, marker string) (ok bool, text string) {
	line = strings.TrimSuffix(line, "\r")
	i := 0
	for i < 3 && i < len(line) && line[i] == ' ' {
		i++
	}
	rest, ok := strings.CutPrefix(line[i:], marker)
	if !ok || rest != "" && rest[0] != ' ' && rest[0] != '\t' {
		return false, ""
	}
	return true, Trim(rest)
}

// HeadingLevel returns the level (1–6) and text of an ATX heading line, 0 for any
// other line.
func HeadingLevel(line string) (level int, text string) {
	i := 0
	for i < 3 && i < len(line) && line[i] == ' ' {
		i++
	}
	n := 0
	for i+n < len(line) && line[i+n] == '#' {
		n++
	}
	if n == 0 || n > 6 {
		return 0, ""
	}
	if ok, t := ATXHeading(line, line[i:i+n]); ok {
		return n, stripClosing(t)
	}
	return 0, ""
}

// stripClosing removes an optional closing sequence of #s ("## Title ##"), which
// CommonMark allows only after a space.
func stripClosing(t string) string {
	s := strings.TrimRight(t, "#")
	if s == "" {
		return ""
	}
	if len(s) < len(t) && (strings.HasSuffix(s, " ") || strings.HasSuffix(s, "\t")) {
		return strings.TrimRight(s, " \t")
	}
	return t
}
