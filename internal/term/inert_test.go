package term

import (
	"bytes"
	"testing"
	"unicode/utf8"

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

// inert, Inert's quick look, tells a text clean exactly when no rune of it would be
// replaced: every byte alone, and each rune of note inside ASCII text.
func TestInertQuickLook(t *testing.T) {
	slow := func(s string) bool {
		for _, r := range s {
			if r == utf8.RuneError || replacement(r) != 0 {
				return false
			}
		}
		return true
	}
	var texts []string
	for b := 0; b < 256; b++ {
		texts = append(texts, string([]byte{byte(b)}), "diff --git a/x b/x\n+"+string([]byte{byte(b)})+"ok\t")
	}
	for _, r := range []rune{0x85, 0x9f, 0xa0, 0x202a, 0x202e, 0x202f, 0x2066, 0x2069, 0x206a, 'é', '␛', utf8.MaxRune} {
		texts = append(texts, "text "+string(r)+" text")
	}
	texts = append(texts, "\xe2\x80", "ok\xffok", "")
	for _, s := range texts {
		if got, want := inert(s), slow(s); got != want {
			t.Errorf("inert(%q) = %v, want %v", s, got, want)
		}
		if inert(s) != (Inert(s) == s) {
			t.Errorf("Inert(%q) = %q, though inert says %v", s, Inert(s), inert(s))
		}
	}
}
