package openspec

import "testing"

func TestWhy(t *testing.T) {
	for _, tc := range []struct{ name, proposal, want string }{
		{"template", "# Change: X\n\n## Why\n\nBecause.\nReally.\n\n## What Changes\n\n- a\n", "Because.\nReally."},
		{"subsection kept", "## Why\nTop.\n### Detail\nMore.\n## Impact\nno\n", "Top.\n### Detail\nMore."},
		{"level one", "# Why\nOne.\n# Next\n", "One."},
		{"crlf and trailing blanks", "## Why\r\nA  \r\nB\r\n## Next\r\n", "A\nB"},
		{"case and spaces", "##   why  \nyes\n", "yes"},
		{"not a heading", "## Why\n#hashtag stays\n", "#hashtag stays"},
		{"none", "# Proposal\n\n## What\n", ""},
		{"at the end", "## Why\nlast", "last"},
	} {
		if got := Why(tc.proposal); got != tc.want {
			t.Errorf("%s: Why = %q, want %q", tc.name, got, tc.want)
		}
	}
}
