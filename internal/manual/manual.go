// Package manual holds git-ralph's manual: the sections of git-ralph(1) written in
// markdown, one file per section (NN-name.md, in page order, each starting with its
// "# TITLE"), embedded in the binary, and the small renderer that turns them into roff.
// The command reference is not here: internal/cli generates it from the command model.
// This package knows nothing of the commands and must not import any other package of
// git-ralph.
//
// The markdown is a subset, and anything outside it is an error (a test renders every
// section): "# TITLE" (once, first line), "## Subsection", paragraphs, "- " and "1. "
// lists (continuation lines indented, a blank line then an indented paragraph or fence
// continues the item), ``` fences, tables ("| a | b |", the second row the separator,
// "\|" for a literal bar), and inline `code`, **bold**, *italic* and [text](url).
package manual

import (
	"embed"
	"fmt"
	"io"
	"io/fs"
	"regexp"
	"sort"
	"strings"
	"sync"
	"unicode/utf8"
)

//go:embed *.md
var files embed.FS

// Section is one "# TITLE" section of the manual.
type Section struct {
	File  string // e.g. "10-stories.md"
	Title string // e.g. "STORIES"
	body  []string
}

// Sections are the manual's sections in page order (by file name).
func Sections() ([]Section, error) {
	names, err := fs.Glob(files, "*.md")
	if err != nil {
		return nil, err
	}
	sort.Strings(names)
	var out []Section
	for _, name := range names {
		data, err := files.ReadFile(name)
		if err != nil {
			return nil, err
		}
		s, err := parse(name, string(data))
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

// Markdown is the section's source, its "# TITLE" line included.
func (s Section) Markdown() string {
	return "# " + s.Title + "\n" + strings.Join(s.body, "\n") + "\n"
}

func parse(name, src string) (Section, error) {
	lines := strings.Split(strings.TrimRight(src, "\n"), "\n")
	title, ok := strings.CutPrefix(lines[0], "# ")
	if !ok || strings.TrimSpace(title) == "" {
		return Section{}, fmt.Errorf("manual/%s: the first line must be the section's \"# TITLE\"", name)
	}
	if title != strings.ToUpper(title) {
		return Section{}, fmt.Errorf("manual/%s: a section title is upper case, as man pages have them: %q", name, title)
	}
	s := Section{File: name, Title: title, body: lines[1:]}
	if err := s.WriteRoff(io.Discard); err != nil {
		return Section{}, err
	}
	return s, nil
}

var (
	fenceRE    = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile("^( *)```") })
	bulletRE   = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[-*] `) })
	numberedRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^([0-9]+)\. `) })
	tableSepRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^\|[ :|-]+\|$`) })
)

// WriteRoff writes the section as man(7) roff: ".SH TITLE" and its body.
func (s Section) WriteRoff(w io.Writer) error {
	r := renderer{file: s.File}
	r.printf(".SH %s\n", quoteArg(s.Title))
	lines := s.body
	for i := 0; i < len(lines); {
		line := lines[i]
		switch {
		case strings.TrimSpace(line) == "":
			// a blank line ends a list item unless an indented line follows it
			i++
			for i < len(lines) && strings.TrimSpace(lines[i]) == "" {
				i++
			}
			if i < len(lines) && !strings.HasPrefix(lines[i], " ") {
				r.inItem = false
			}
		case strings.HasPrefix(line, "#"):
			sub, ok := strings.CutPrefix(line, "## ")
			if !ok {
				return r.errorf(i, "only \"## \" subsections may follow the \"# \" title (man pages have two levels): %q", line)
			}
			r.inItem = false
			r.printf(".SS %s\n", quoteArg(plain(sub)))
			i++
		case fenceRE().MatchString(line):
			indent := len(fenceRE().FindStringSubmatch(line)[1])
			if indent > 0 && !r.inItem {
				return r.errorf(i, "an indented fence belongs to a list item: %q", line)
			}
			end := i + 1
			for end < len(lines) && !fenceRE().MatchString(lines[end]) {
				end++
			}
			if end == len(lines) {
				return r.errorf(i, "a fence is not closed")
			}
			r.code(lines[i+1:end], indent)
			i = end + 1
		case strings.HasPrefix(line, "|"):
			end := i
			for end < len(lines) && strings.HasPrefix(lines[end], "|") {
				end++
			}
			if err := r.table(i, lines[i:end]); err != nil {
				return err
			}
			r.inItem = false
			i = end
		case strings.HasPrefix(line, " "):
			if !r.inItem {
				return r.errorf(i, "an indented line outside a list item: %q", line)
			}
			// a further paragraph of the list item above
			end := i
			for end < len(lines) && strings.HasPrefix(lines[end], " ") && !fenceRE().MatchString(lines[end]) {
				end++
			}
			r.printf(".IP \"\" %d\n", r.itemIndent)
			r.text(lines[i:end])
			i = end
		case bulletRE().MatchString(line) || numberedRE().MatchString(line):
			tag, width := `\(bu`, 2
			text := line[2:]
			if m := numberedRE().FindStringSubmatch(line); m != nil {
				tag, width, text = m[1]+".", 4, line[len(m[0]):]
			}
			end := i + 1
			for end < len(lines) && strings.HasPrefix(lines[end], " ") && strings.TrimSpace(lines[end]) != "" && !fenceRE().MatchString(lines[end]) {
				end++
			}
			r.printf(".IP %s %d\n", tag, width)
			r.text(append([]string{text}, lines[i+1:end]...))
			r.inItem, r.itemIndent = true, width
			i = end
		default:
			end := i
			for end < len(lines) && isParagraphLine(lines[end]) {
				end++
			}
			r.printf(".PP\n")
			r.text(lines[i:end])
			r.inItem = false
			i = end
		}
	}
	if r.err != nil {
		return r.err
	}
	_, err := io.WriteString(w, r.b.String())
	return err
}

func isParagraphLine(l string) bool {
	return strings.TrimSpace(l) != "" && !strings.HasPrefix(l, "#") && !strings.HasPrefix(l, "|") &&
		!strings.HasPrefix(l, " ") && !fenceRE().MatchString(l) && !bulletRE().MatchString(l) && !numberedRE().MatchString(l)
}

type renderer struct {
	file       string
	b          strings.Builder
	inItem     bool // the last block was a list item (or a paragraph of one)
	itemIndent int
	err        error
}

func (r *renderer) printf(format string, args ...any) { fmt.Fprintf(&r.b, format, args...) }

func (r *renderer) errorf(i int, format string, args ...any) error {
	return fmt.Errorf("manual/%s:%d: %s", r.file, i+2, fmt.Sprintf(format, args...))
}

// text writes filled lines, each trimmed, rendered inline as one text (a span may
// cross a line's end).
func (r *renderer) text(lines []string) {
	trimmed := make([]string, len(lines))
	for i, l := range lines {
		trimmed[i] = strings.TrimSpace(l)
	}
	for _, l := range strings.Split(inline(strings.Join(trimmed, "\n")), "\n") {
		r.printf("%s\n", controlSafe(l))
	}
}

// code writes a fence's lines as they are (no fill), indented, its fence's own indent
// removed.
func (r *renderer) code(lines []string, indent int) {
	if r.inItem {
		r.printf(".IP \"\" %d\n.nf\n", r.itemIndent)
	} else {
		r.printf(".PP\n.RS 4\n.nf\n")
	}
	for _, l := range lines {
		if len(l) >= indent && strings.TrimSpace(l[:indent]) == "" {
			l = l[indent:]
		}
		r.printf("%s\n", controlSafe(Escape(l)))
	}
	if r.inItem {
		r.printf(".fi\n")
	} else {
		r.printf(".fi\n.RE\n")
	}
}

// table writes a markdown table as tagged paragraphs, which read well at any width: a
// row's first cell is the tag (a row whose first cells are empty takes its first
// non-empty one). With two columns the second is the text; with more, each other cell
// is a line of its own, named by its header ("default: 3").
func (r *renderer) table(at int, rows []string) error {
	if len(rows) < 2 || !tableSepRE().MatchString(strings.TrimSpace(rows[1])) {
		return r.errorf(at, "a table needs a header row and a separator row (| --- |)")
	}
	header := cells(rows[0])
	for n, row := range rows[2:] {
		c := cells(row)
		if len(c) != len(header) {
			return r.errorf(at+2+n, "%d cells where the header has %d", len(c), len(header))
		}
		k := 0
		for k < len(c)-1 && c[k] == "" {
			k++
		}
		r.printf(".TP\n%s\n", controlSafe(inline(c[k])))
		if len(c) == 2 {
			if k == 0 && c[1] != "" {
				r.printf("%s\n", controlSafe(inline(c[1])))
			}
			continue
		}
		var named []string
		for j := k + 1; j < len(c); j++ {
			if c[j] != "" {
				named = append(named, controlSafe(inline(header[j]+": "+c[j])))
			}
		}
		if len(named) > 0 {
			r.printf("%s\n", strings.Join(named, "\n.br\n"))
		}
	}
	return nil
}

// cells splits a table row on its bars ("\|" is a literal bar).
func cells(row string) []string {
	row = strings.TrimSpace(row)
	row = strings.TrimSuffix(strings.TrimPrefix(row, "|"), "|")
	var out []string
	var cur strings.Builder
	for i := 0; i < len(row); i++ {
		switch {
		case row[i] == '\\' && i+1 < len(row) && row[i+1] == '|':
			cur.WriteByte('|')
			i++
		case row[i] == '|':
			out = append(out, strings.TrimSpace(cur.String()))
			cur.Reset()
		default:
			cur.WriteByte(row[i])
		}
	}
	return append(out, strings.TrimSpace(cur.String()))
}

// Escape makes text safe for roff: a backslash is printed; "-" is \- (an option's dashes,
// which roff must not break after and which copy as ASCII); the manual's punctuation is
// written as the glyphs roff knows by name, which every device has or falls back from; any
// other non-ASCII character is \[uXXXX] (no preconv needed), with a stand-in (Fallbacks).
func Escape(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch g, ok := glyphs[r]; {
		case r == '\\':
			b.WriteString(`\e`)
		case r == '-':
			b.WriteString(`\-`)
		case ok:
			b.WriteString(g)
		case r > 127:
			fmt.Fprintf(&b, `\[u%04X]`, r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// Fallbacks are the .fchar requests that give each \[uXXXX] character of page a
// stand-in for a device that lacks it (man in a C locale renders with the ASCII device):
// "<U+241B>" unless a better one is known. A device that has the glyph uses it; mandoc
// ignores the request.
func Fallbacks(page string) string {
	var b strings.Builder
	seen := map[string]bool{}
	for _, m := range uniRE().FindAllStringSubmatch(page, -1) {
		if seen[m[1]] {
			continue
		}
		seen[m[1]] = true
		var r rune
		fmt.Sscanf(m[1], "%X", &r)
		stand := fallbacks[r]
		if stand == "" {
			stand = "<U+" + m[1] + ">"
		}
		fmt.Fprintf(&b, ".fchar \\[u%s] %s\n", m[1], stand)
	}
	return b.String()
}

var (
	uniRE     = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\\\[u([0-9A-F]{4,6})\]`) })
	fallbacks = map[rune]string{'µ': "u", '✓': "OK", '✗': "x", '·': "-", '↳': "->", '�': "?"}
)

var glyphs = map[rune]string{
	'…': "...", '—': `\(em`, '–': `\(en`, '×': `\(mu`, '→': `\(->`, '←': `\(<-`,
	'≤': `\(<=`, '≥': `\(>=`, '“': `\(lq`, '”': `\(rq`, '‘': `\(oq`, '’': `\(cq`,
	'\u00a0': `\~`, '─': "-", '│': "|", '├': "|", '└': "`",
}

// controlSafe keeps a line that starts with "." or "'" from being a roff request.
func controlSafe(l string) string {
	if strings.HasPrefix(l, ".") || strings.HasPrefix(l, "'") {
		return `\&` + l
	}
	return l
}

func quoteArg(s string) string { return `"` + strings.ReplaceAll(Escape(s), `"`, `\(dq`) + `"` }

// plain is inline markdown with its marks dropped, for a subsection heading.
func plain(s string) string {
	for _, m := range []string{"**", "`"} {
		s = strings.ReplaceAll(s, m, "")
	}
	return s
}

// inline renders `code` and **bold** as bold, *text* as italic, [text](url) as
// "text <url>", and escapes the rest.
func inline(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		switch {
		case s[i] == '`':
			if j := strings.IndexByte(s[i+1:], '`'); j >= 0 {
				b.WriteString(`\fB` + codeSpan(s[i+1:i+1+j]) + `\fR`)
				i += j + 2
				continue
			}
		case strings.HasPrefix(s[i:], "**"):
			if j := strings.Index(s[i+2:], "**"); j > 0 {
				b.WriteString(`\fB` + inlineNoFont(s[i+2:i+2+j]) + `\fR`)
				i += j + 4
				continue
			}
		case s[i] == '*' && i+1 < len(s) && s[i+1] != ' ' && s[i+1] != '*':
			if j := strings.IndexByte(s[i+1:], '*'); j > 0 && s[i+j] != ' ' {
				b.WriteString(`\fI` + inlineNoFont(s[i+1:i+1+j]) + `\fR`)
				i += j + 2
				continue
			}
		case s[i] == '[':
			if m := linkRE().FindStringSubmatch(s[i:]); m != nil {
				b.WriteString(inline(m[1]) + " <" + Escape(m[2]) + ">")
				i += len(m[0])
				continue
			}
		}
		_, size := utf8.DecodeRuneInString(s[i:])
		b.WriteString(Escape(s[i : i+size]))
		i += size
	}
	return b.String()
}

// codeSpan is a code span's text, escaped; a short one's spaces do not break, so that
// "git ralph -h" stays on one line.
func codeSpan(s string) string {
	s = Escape(s)
	if len(s) <= 40 && !strings.Contains(s, "\n") {
		s = strings.ReplaceAll(s, " ", `\~`)
	}
	return s
}

var linkRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^\[([^\]]+)\]\(([^)\s]+)\)`) })

// inlineNoFont is the text of a bold or italic span: code marks dropped, escaped.
func inlineNoFont(s string) string { return Escape(strings.ReplaceAll(s, "`", "")) }
