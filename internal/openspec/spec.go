package openspec

import (
	"regexp"
	"strings"
	"sync"
)

// Scenario is a "#### Scenario: Name" block of a requirement.
type Scenario struct {
	Name  string   // header text without "####" and an optional "Scenario:" prefix
	Steps []string // "- **WHEN** x" lines as "WHEN x" (also THEN, AND, GIVEN, BUT), in order
	Text  string   // raw body, trimmed (the CLI's rawText)
}

// Requirement is one entry of a delta spec.
type Requirement struct {
	Op        string // ADDED, MODIFIED, REMOVED or RENAMED
	Name      string // for RENAMED: the new name
	From      string // for RENAMED: the old name; "" otherwise
	Text      string // the requirement's text (the CLI's text); "" for RENAMED and bullet-form REMOVED
	Scenarios []Scenario
}

// Spec is a delta spec, specs/<capability>/spec.md of a change.
type Spec struct {
	Capability   string // path under specs/, e.g. "auth" or "a/b"
	Path         string // relative to the repository root, slash-separated
	Purpose      string // body of "## Purpose", trimmed; "" if absent
	Requirements []Requirement
	Cut          bool // the file is longer than what was read (repofile.MaxDoc): these are its first requirements
}

// JavaScript's \s and '.', so that the patterns below read like the CLI's.
const (
	sp  = `[\t\n\v\f\r \x{a0}\x{1680}\x{2000}-\x{200a}\x{2028}\x{2029}\x{202f}\x{205f}\x{3000}\x{feff}]`
	dot = `[^\n\r\x{2028}\x{2029}]`
)

var (
	sectionRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^##` + sp + `+(` + dot + `+)$`) })
	headerRE  = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^(#{1,6})` + sp) })
	reqRE     = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^###` + sp + `*(?i:Requirement):` + sp + `*(` + dot + `+)$`)
	})
	bulletRE = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^` + sp + `*-` + sp + "*`?###" + sp + `*(?i:Requirement):` + sp + "*(" + dot + "+?)`?" + sp + `*$`)
	})
	renameRE = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^` + sp + `*[-*+]?` + sp + `*(FROM|TO):` + sp + "*`?###" + sp + `*(?i:Requirement):` + sp + "*(" + dot + "+?)`?" + sp + `*$`)
	})
	closingRE  = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`[ \t]+#+[ \t]*$`) })
	scenarioRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^(?i:Scenario:)` + sp + `*`) })
	stepRE     = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^` + sp + `*(?:[-*+]` + sp + `*)?\*\*(WHEN|THEN|AND|GIVEN|BUT)\*\*:?` + sp + `*(` + dot + `*)`)
	})
	metadataRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^\*\*[^*]+\*\*:`) })
	fenceRE    = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile("^" + sp + "*(`{3,}|~{3,})(.*)") })
)

// ParseSpec parses a delta spec: the requirements of its ADDED, MODIFIED, REMOVED and
// RENAMED sections (case-insensitive, repeated sections merged) in file order. Lines in
// ``` and ~~~ fences are not structure.
func ParseSpec(data []byte) []Requirement {
	_, reqs := parseSpec(data)
	return reqs
}

func parseSpec(data []byte) (purpose string, reqs []Requirement) {
	text := strings.TrimPrefix(wellFormed(data), "\ufeff")
	lines := strings.Split(strings.NewReplacer("\r\n", "\n", "\r", "\n").Replace(text), "\n")
	fenced := fenceMask(lines)
	op, from := "", ""
	for i := 0; i < len(lines); i++ {
		line := lines[i]
		if fenced[i] {
			continue
		}
		if m := sectionRE().FindStringSubmatch(line); m != nil {
			title := asciiLower(jsTrim(m[1]))
			op, from = "", ""
			for _, o := range []string{"ADDED", "MODIFIED", "REMOVED", "RENAMED"} {
				if title == asciiLower(o)+" requirements" {
					op = o
				}
			}
			if title == "purpose" {
				end := nextHeader(lines, fenced, i+1, 2)
				purpose = jsTrim(strings.Join(lines[i+1:end], "\n"))
			}
			continue
		}
		switch m := reqRE().FindStringSubmatch(line); {
		case op == "":
		case op == "RENAMED":
			if m := renameRE().FindStringSubmatch(line); m != nil && m[1] == "FROM" {
				from = jsTrim(m[2])
			} else if m != nil && from != "" {
				reqs = append(reqs, Requirement{Op: op, Name: jsTrim(m[2]), From: from})
				from = ""
			}
		case m != nil:
			end := i + 1
			for end < len(lines) && (fenced[end] || !reqRE().MatchString(lines[end]) && headerLevel(lines[end]) != 2) {
				end++
			}
			reqs = append(reqs, parseRequirement(op, headerName(m[1]), lines[i+1:end]))
			i = end - 1
		case op == "REMOVED":
			if m := bulletRE().FindStringSubmatch(line); m != nil {
				reqs = append(reqs, Requirement{Op: op, Name: jsTrim(m[1])})
			}
		}
	}
	return purpose, reqs
}

// parseRequirement reads a requirement's text and scenarios from the lines after its header.
func parseRequirement(op, name string, body []string) Requirement {
	r := Requirement{Op: op, Name: name}
	fenced := fenceMask(body)
	var text, meta []string
	for i, line := range body {
		if fenced[i] {
			continue
		}
		if headerLevel(line) > 0 {
			break
		}
		switch t := jsTrim(line); {
		case t == "":
		case metadataRE().MatchString(t):
			meta = append(meta, t)
		default:
			text = append(text, t)
		}
	}
	if len(text) == 0 {
		text = meta
	}
	r.Text = strings.Join(text, "\n")
	if r.Text == "" {
		r.Text = name
	}
	for i, line := range body {
		if fenced[i] || headerLevel(line) != 4 {
			continue
		}
		end := nextHeader(body, fenced, i+1, 4)
		s := Scenario{Name: jsTrim(scenarioRE().ReplaceAllString(headerName(line[4:]), "")),
			Text: jsTrim(strings.Join(body[i+1:end], "\n"))}
		if s.Text == "" {
			continue
		}
		for _, l := range body[i+1 : end] {
			if m := stepRE().FindStringSubmatch(l); m != nil {
				s.Steps = append(s.Steps, m[1]+" "+jsTrim(m[2]))
			}
		}
		r.Scenarios = append(r.Scenarios, s)
	}
	return r
}

// headerName trims a header's text and drops a closing run of '#'.
func headerName(s string) string { return jsTrim(closingRE().ReplaceAllString(jsTrim(s), "")) }

// nextHeader returns the index of the first unfenced header of level <= level at or after i.
func nextHeader(lines []string, fenced []bool, i, level int) int {
	for ; i < len(lines); i++ {
		if l := headerLevel(lines[i]); l > 0 && l <= level && !fenced[i] {
			break
		}
	}
	return i
}

// headerLevel returns the level of an ATX header line (/^#{1,6}\s/), 0 for other lines.
func headerLevel(line string) int {
	if m := headerRE().FindStringSubmatch(line); m != nil {
		return len(m[1])
	}
	return 0
}

// fenceMask marks the lines of ``` and ~~~ fences, fence lines included, as the CLI does:
// a fence closes on a run of the same character, at least as long, alone on its line.
func fenceMask(lines []string) []bool {
	mask := make([]bool, len(lines))
	open := ""
	for i, line := range lines {
		m := fenceRE().FindStringSubmatch(line)
		switch {
		case open == "" && m != nil:
			open, mask[i] = m[1], true
		case open != "":
			mask[i] = true
			if m != nil && m[1][0] == open[0] && len(m[1]) >= len(open) && jsTrim(m[2]) == "" {
				open = ""
			}
		}
	}
	return mask
}

// asciiLower lowers A-Z only: JavaScript's toLowerCase maps no other character to a-z
// that could spell a section title.
func asciiLower(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'A' && r <= 'Z' {
			return r + 'a' - 'A'
		}
		return r
	}, s)
}
