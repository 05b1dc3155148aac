package term

import (
	"bytes"
	"testing"

	"github.com/fatih/color"
)

func TestInert(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"plain text\twith tab\nand newline", "plain text\twith tab\nand newline"},
		{"\x1b]0;title\x07", "␛]0;title␇"},
		{"\x1b[2J\x1b[H", "␛[2J␛[H"},
		{"over\rwrite", "over␍write"},
		{"del\x7f", "del␡"},
		{"c1 \u009b31m", "c1 \uFFFD31m"},
		{"bidi \u202eevil\u2066", "bidi \uFFFDevil\uFFFD"},
		{"bad \xff utf8", "bad \uFFFD utf8"},
		{"ünïcödé ✓", "ünïcödé ✓"},
	} {
		if got := Inert(tc.in); got != tc.want {
			t.Errorf("Inert(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// The terminal writer keeps the palette's colours and neutralises the rest, even
// when a sequence or a UTF-8 character is cut between two writes.
func TestInertWriter(t *testing.T) {
	c := color.New(color.FgGreen)
	c.EnableColor()
	green := c.Sprint("ok")
	for _, tc := range []struct {
		name   string
		writes []string
		want   string
	}{
		{"palette kept", []string{green + " done\n"}, green + " done\n"},
		{"bold and faint kept", []string{"\x1b[1mb\x1b[0m \x1b[2md\x1b[0m"}, "\x1b[1mb\x1b[0m \x1b[2md\x1b[0m"},
		{"title", []string{"\x1b]0;pwned\x07x"}, "␛]0;pwned␇x"},
		{"clear screen", []string{"\x1b[2J"}, "␛[2J"},
		{"conceal is not the palette's", []string{"\x1b[8mhidden"}, "␛[8mhidden"},
		{"cursor move", []string{"\x1b[10;10H"}, "␛[10;10H"},
		{"split palette sequence", []string{"\x1b[3", "2mok\x1b[0m"}, "\x1b[32mok\x1b[0m"},
		{"split hostile sequence", []string{"\x1b", "[2J"}, "␛[2J"},
		{"split utf-8", []string{"\xe2\x9c", "\x93"}, "✓"},
		{"c1 in utf-8", []string{"\u009b2J"}, "\uFFFD2J"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			w := NewInertWriter(&buf)
			for _, s := range tc.writes {
				n, err := w.Write([]byte(s))
				if err != nil || n != len(s) {
					t.Fatalf("Write = %d, %v", n, err)
				}
			}
			if got := buf.String(); got != tc.want {
				t.Errorf("wrote %q, want %q", got, tc.want)
			}
		})
	}
}
