package openspec

import "strings"

// Why returns the body of a proposal's "Why" section (OpenSpec's template has it as
// "## Why"; any heading level is taken), trimmed: its lines up to the next heading of
// the same level or higher, subsections included. "" when there is none.
func Why(proposal string) string {
	var out []string
	level := 0 // of the Why heading, once found
	for line := range strings.SplitSeq(proposal, "\n") {
		t := strings.TrimSpace(line)
		if n := headingLevel(t); n > 0 {
			if level > 0 && n <= level {
				break
			}
			if level == 0 {
				if strings.EqualFold(strings.TrimSpace(t[n:]), "Why") {
					level = n
				}
				continue
			}
		}
		if level > 0 {
			out = append(out, strings.TrimRight(line, " \t\r"))
		}
	}
	return strings.TrimSpace(strings.Join(out, "\n"))
}

// headingLevel is the level of an ATX heading ("## Title" is 2), 0 for any other line.
func headingLevel(s string) int {
	n := 0
	for n < len(s) && s[n] == '#' {
		n++
	}
	if n == 0 || n > 6 || n == len(s) || s[n] != ' ' && s[n] != '\t' {
		return 0
	}
	return n
}
