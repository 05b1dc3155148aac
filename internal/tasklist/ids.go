package tasklist

import (
	"regexp"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"
)

// storyWords may stand before a heading's number: "## Phase 2: Zsh" is story 2.
var storyWords = []string{"phase", "step", "stage", "part", "milestone", "story"}

// LegacyStoryName is StoryName with LegacySlug: the id a run started before
// 2026-11-26 gave the heading.
func LegacyStoryName(text string) (id, title string) {
	id, title = StoryName(text)
	if id == Slug(text) {
		id = LegacySlug(text)
	}
	return id, title
}

// StoryName returns a story's id and title from its heading text. The id is the
// heading's number (after an optional word such as Phase), else a slug of the text;
// the title is the text without that number and the separator after it.
func StoryName(text string) (id, title string) {
	rest := text
	for _, w := range storyWords {
		if len(rest) > len(w) && strings.EqualFold(rest[:len(w)], w) && !isAlnum(rest[len(w)]) {
			rest = Trim(rest[len(w):])
			break
		}
	}
	num := numberRE().FindString(rest)
	if num == "" || len(num) > MaxSlug || len(num) < len(rest) && isAlnum(rest[len(num)]) {
		return Slug(text), text
	}
	rest = Trim(rest[len(num):])
	if rest != "" && strings.ContainsRune(".):-–—", []rune(rest)[0]) {
		_, size := utf8.DecodeRuneInString(rest)
		rest = Trim(rest[size:])
	}
	if rest == "" {
		rest = text
	}
	return num, rest
}

var numberRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[0-9]+(?:\.[0-9]+)*`) })

func isAlnum(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80
}

// MaxSlug is the longest slug id, before a "_2" suffix.
const MaxSlug = 40

// Slug turns a heading into an id: lower-case ASCII letters, digits and single dashes,
// at most MaxSlug characters, cut at the end of a word when it is longer; accented Latin
// letters lose their accents. A heading with nothing to keep (only punctuation or another
// script) gives "story".
func Slug(text string) string {
	s := slugAll(text)
	if len(s) > MaxSlug {
		if i := strings.LastIndexByte(s[:MaxSlug+1], '-'); i > 0 {
			return s[:i]
		}
		return s[:MaxSlug] // one word longer than MaxSlug
	}
	return s
}

// LegacySlug is Slug as git-ralph cut it before 2026-11-26: at exactly MaxSlug bytes,
// mid-word ("phase-d-capability-resolver-storagepicke"). Runs started then recorded such
// ids; Tasks.KeepIDs lets them resume under the ids they began with.
func LegacySlug(text string) string {
	s := slugAll(text)
	if len(s) > MaxSlug {
		s = strings.TrimRight(s[:MaxSlug], "-")
	}
	return s
}

// slugAll is the whole slug of text, uncut; "story" when nothing is left.
func slugAll(text string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(text) {
		if f, ok := foldLatin[r]; ok {
			r = f
		}
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			if dash && b.Len() > 0 {
				b.WriteByte('-')
			}
			b.WriteRune(r)
			dash = false
		} else {
			dash = true
		}
	}
	if b.Len() == 0 {
		return "story"
	}
	return b.String()
}

// foldLatin maps the accented lower-case Latin letters of Latin-1 and Latin Extended-A
// that people write in headings to their base letter.
var foldLatin = func() map[rune]rune {
	m := map[rune]rune{}
	for base, letters := range map[rune]string{
		'a': "àáâãäåāăą", 'c': "çćĉċč", 'd': "ďđ", 'e': "èéêëēĕėęě", 'g': "ĝğġģ", 'h': "ĥħ",
		'i': "ìíîïĩīĭįı", 'j': "ĵ", 'k': "ķ", 'l': "ĺļľŀł", 'n': "ñńņňŉ", 'o': "òóôõöøōŏő",
		'r': "ŕŗř", 's': "śŝşšß", 't': "ţťŧ", 'u': "ùúûüũūŭůűų", 'w': "ŵ", 'y': "ýÿŷ", 'z': "źżž",
	} {
		for _, r := range letters {
			m[r] = base
		}
	}
	return m
}()

// UniqueID returns id, or id_2, id_3… when an earlier story (recorded in seen) has it.
func UniqueID(id string, seen map[string]bool) string {
	u := id
	for k := 2; seen[u]; k++ {
		u = id + "_" + strconv.Itoa(k)
	}
	seen[u] = true
	return u
}
