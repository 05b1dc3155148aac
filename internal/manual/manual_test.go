package manual

import (
	"regexp"
	"strings"
	"testing"
)

// TestSections: every file is NN-name.md, renders, and has a title of its own.
func TestSections(t *testing.T) {
	sections, err := Sections()
	if err != nil {
		t.Fatal(err)
	}
	name := regexp.MustCompile(`^[0-9]{2}-[a-z0-9-]+\.md$`)
	seen := map[string]string{}
	for _, s := range sections {
		if !name.MatchString(s.File) {
			t.Errorf("%s: name it NN-name.md (NN is its place in the page)", s.File)
		}
		if other, ok := seen[s.Title]; ok {
			t.Errorf("%s and %s are both %q", other, s.File, s.Title)
		}
		seen[s.Title] = s.File
		if strings.TrimSpace(strings.Join(s.body, "")) == "" {
			t.Errorf("%s is empty", s.File)
		}
	}
	if len(sections) < 20 {
		t.Errorf("%d sections", len(sections))
	}
}

func render(t *testing.T, md string) string {
	t.Helper()
	s, err := parse("x.md", md)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := s.WriteRoff(&b); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func TestRender(t *testing.T) {
	for _, c := range []struct{ name, md, want string }{
		{"paragraphs and inline", "# T\n\nA `--flag` and **bold**\nand *it* [gh](https://x.y/z).\n\n.dot starts a line\n",
			".SH \"T\"\n.PP\nA \\fB\\-\\-flag\\fR and \\fBbold\\fR\nand \\fIit\\fR gh <https://x.y/z>.\n.PP\n\\&.dot starts a line\n"},
		{"a span across lines", "# T\n\n**one\ntwo** `a\nb`\n", ".SH \"T\"\n.PP\n\\fBone\ntwo\\fR \\fBa\nb\\fR\n"},
		{"backslash, dash and unicode", "# T\n\na\\b → `c\\d` a-b ✓…\n", ".SH \"T\"\n.PP\na\\eb \\(-> \\fBc\\ed\\fR a\\-b \\[u2713]...\n"},
		{"a star that is not a mark", "# T\n\nrefs/ralph/* and 2 * 3\n", ".SH \"T\"\n.PP\nrefs/ralph/* and 2 * 3\n"},
		{"subsection", "# T\n\n## Sub `x`\n\ntext\n", ".SH \"T\"\n.SS \"Sub x\"\n.PP\ntext\n"},
		{"code", "# T\n\n```sh\n.x \\y\n  z\n```\n", ".SH \"T\"\n.PP\n.RS 4\n.nf\n\\&.x \\ey\n  z\n.fi\n.RE\n"},
		{"list with a continued item", "# T\n\n- one\n  more\n- two\n\n  again\n\n  ```\n  code\n  ```\n\nafter\n",
			".SH \"T\"\n.IP \\(bu 2\none\nmore\n.IP \\(bu 2\ntwo\n.IP \"\" 2\nagain\n.IP \"\" 2\n.nf\ncode\n.fi\n.PP\nafter\n"},
		{"numbered list", "# T\n\n1. **a**: b\n2. c\n", ".SH \"T\"\n.IP 1. 4\n\\fBa\\fR: b\n.IP 2. 4\nc\n"},
		{"two-column table", "# T\n\n| a | b |\n|---|---|\n| `x\\|y` | z |\n| w | |\n", ".SH \"T\"\n.TP\n\\fBx|y\\fR\nz\n.TP\nw\n"},
		{"wide table", "# T\n\n| flag | key | default | meaning |\n|---|---|---|---|\n| `-a` | `k` | 3 | m |\n| | `k2` | | n |\n",
			".SH \"T\"\n.TP\n\\fB\\-a\\fR\nkey: \\fBk\\fR\n.br\ndefault: 3\n.br\nmeaning: m\n.TP\n\\fBk2\\fR\nmeaning: n\n"},
	} {
		if got := render(t, c.md); got != c.want {
			t.Errorf("%s:\n got %q\nwant %q", c.name, got, c.want)
		}
	}
}

// TestRenderRefuses: what the renderer does not know is an error naming file and line,
// not a page that shows markdown.
func TestRenderRefuses(t *testing.T) {
	for _, c := range []struct{ md, want string }{
		{"no title\n", "first line"},
		{"# Title\n", "upper case"},
		{"# T\n\n### deep\n", "x.md:3: only"},
		{"# T\n\n```\nopen\n", "not closed"},
		{"# T\n\n| a | b |\n| c | d |\n", "separator"},
		{"# T\n\n| a | b |\n|---|---|\n| c |\n", "1 cells where the header has 2"},
		{"# T\n\ntext\n\n  indented\n", "indented line outside a list item"},
	} {
		if _, err := parse("x.md", c.md); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: error %v, want %q", c.md, err, c.want)
		}
	}
}

// TestFallbacks: each character written as \[uXXXX] gets one stand-in for a device
// without it, a known one where there is one.
func TestFallbacks(t *testing.T) {
	page := Escape("ESC as ␛, 90 µs, ␛ again, → and … are named")
	want := ".fchar \\[u241B] <U+241B>\n.fchar \\[u00B5] u\n"
	if got := Fallbacks(page); got != want {
		t.Errorf("Fallbacks(%q) = %q, want %q", page, got, want)
	}
}
