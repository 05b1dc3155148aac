package report

import (
	"crypto/sha256"
	_ "embed"
	"encoding/base64"
	"fmt"
	"html/template"
	"io"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/git-ralph/git-ralph/internal/run"
	"github.com/git-ralph/git-ralph/internal/term"
)

//go:embed report.html.tmpl
var pageTemplate string

// pageText is the template with its CSP allowing the page's one style sheet and one script
// by their hashes and nothing else inline (no 'unsafe-inline': what got into the page some
// other way would not apply). The hashes are computed from the template's own elements, so
// an edit cannot make the policy stale; made on first use, not at every start.
var pageText = sync.OnceValue(func() string {
	text := pageTemplate
	for _, el := range []struct{ tag, mark string }{{"script", "'sha256-SCRIPT_HASH'"}, {"style", "'sha256-STYLE_HASH'"}} {
		_, rest, ok1 := strings.Cut(text, "<"+el.tag+">")
		body, _, ok2 := strings.Cut(rest, "</"+el.tag+">")
		if !ok1 || !ok2 || strings.Contains(body, "{{") || strings.Count(text, "<"+el.tag) != 1 {
			panic("report.html.tmpl: one <" + el.tag + "> element of constant text expected")
		}
		sum := sha256.Sum256([]byte(body))
		text = strings.Replace(text, el.mark, "'sha256-"+base64.StdEncoding.EncodeToString(sum[:])+"'", 1)
	}
	return text
})

var page = sync.OnceValue(func() *template.Template {
	return template.Must(template.New("report").Funcs(template.FuncMap{
		"dur":     dur,
		"money":   money,
		"short":   short,
		"when":    func(t time.Time) string { return t.UTC().Format("2006-01-02 15:04:05 UTC") },
		"class":   outcomeClass,
		"patch":   patchHTML,
		"num":     func(n int64) string { return thousands(n) },
		"plural":  plural,
		"kib":     func(n int) string { return kib(n) },
		"hasCost": func(a Attempt) bool { return a.Cost != nil },
		"cost":    func(a Attempt) string { return money(*a.Cost) },
		"fileURL": fileURL,
	}).Parse(pageText()))
})

// fileURL is the file: URL of an absolute path on this machine (an attempt's log),
// every byte that needs it percent-encoded by net/url, so the URL cannot leave the
// attribute or name another scheme.
func fileURL(path string) template.URL {
	return template.URL((&url.URL{Scheme: "file", Path: filepath.ToSlash(path)}).String()) //nolint:gosec // built by net/url from a path
}

// Render writes the report as one self-contained HTML page. Every control character
// but tab and newline, every bidirectional override and every invalid byte in it is
// shown as the terminal shows it (term.Inert: ESC as ␛, U+202E as �): agent text can
// neither hide in the page nor reorder what a reader sees. The page is filtered whole,
// after escaping, so no field can be forgotten; the template itself holds none of them.
func Render(w io.Writer, rep *Report) error {
	var b strings.Builder
	b.Grow(pageSize(rep)) // once, not by doubling through a page of megabytes
	err := page().Execute(&b, struct {
		*Report
		Timeline timeline
	}{rep, layout(rep)})
	if err != nil {
		return err
	}
	_, err = io.WriteString(w, term.Inert(b.String()))
	return err
}

// pageSize is about the bytes of rep's page: its texts, a quarter more for HTML's
// escapes, and the page's own markup (about 3 KiB an attempt, 32 KiB besides).
func pageSize(rep *Report) int {
	n, attempts := len(rep.Why)+len(rep.Learnings), 0
	diff := func(d *Diff) {
		if d != nil {
			n += len(d.Stat) + len(d.Patch)
		}
	}
	for _, st := range rep.Stories {
		diff(st.Diff)
		n += 256 * len(st.Tasks)
		for _, a := range st.Attempts {
			n += len(a.Reason) + len(a.LogTail)
			diff(a.Diff)
		}
		attempts += len(st.Attempts)
	}
	size := n + n/4 + 3<<10*attempts + 32<<10
	return size + size/32 // slack: a page a little larger than guessed is not copied whole
}

// timeline is the inline SVG of every attempt on one time axis, laid out here so the
// template only prints numbers.
type timeline struct {
	Width, Height int
	Rows          []row
	Bars          []bar
	Ticks         []tick
	AxisY         int
	Empty         bool
}

type row struct {
	Y     int
	Label string
}

type bar struct {
	X, Y, W, H int
	Class      string
	Label      string // the story id, drawn when the bar is wide enough
	Title      string // hover text: story, attempt, outcome, reason, duration
}

type tick struct {
	X      int
	Label  string
	Anchor string // text-anchor: start, middle or end, so the outer labels stay inside
}

const (
	tlWidth  = 1000
	tlLeft   = 70 // room for the story labels
	tlRight  = 10
	tlRow    = 24
	tlBar    = 16
	tlTop    = 6
	tlBottom = 24
)

func layout(rep *Report) timeline {
	var rows []Story
	for _, s := range rep.Stories {
		if len(s.Attempts) > 0 {
			rows = append(rows, s)
		}
	}
	tl := timeline{Width: tlWidth, Height: tlTop + len(rows)*tlRow + tlBottom}
	tl.AxisY = tlTop + len(rows)*tlRow
	if len(rows) == 0 || rep.Start.IsZero() {
		tl.Empty = true
		return tl
	}
	span := rep.End.Sub(rep.Start)
	if span <= 0 {
		span = time.Second
	}
	plot := float64(tlWidth - tlLeft - tlRight)
	x := func(t time.Time) int {
		if t.IsZero() {
			t = rep.End
		}
		return tlLeft + int(plot*float64(t.Sub(rep.Start))/float64(span)+0.5)
	}
	for i, s := range rows {
		y := tlTop + i*tlRow
		tl.Rows = append(tl.Rows, row{Y: y + tlBar - 3, Label: s.ID})
		for _, a := range s.Attempts {
			if a.Started.IsZero() {
				continue
			}
			x0, x1 := x(a.Started), x(a.Ended)
			w := max(x1-x0, 3)
			title := fmt.Sprintf("story %s attempt %d: %s", a.Story, a.N, a.Outcome)
			if a.Reason != "" {
				title += " — " + firstLine(a.Reason)
			}
			if d := a.Duration(); d > 0 {
				title += " (" + dur(d) + ")"
			} else if a.Outcome == run.OutcomeRunning {
				title += " (running)"
			}
			label := ""
			if w >= 8*len(a.Story)+6 {
				label = a.Story
			}
			tl.Bars = append(tl.Bars, bar{X: x0, Y: y + 2, W: w, H: tlBar, Class: outcomeClass(a.Outcome), Label: label, Title: title})
		}
	}
	for i := 0; i <= 4; i++ {
		d := span * time.Duration(i) / 4
		tk := tick{X: tlLeft + int(plot*float64(i)/4+0.5), Label: "+" + dur(d.Round(span/100+1)), Anchor: "middle"}
		switch i {
		case 0:
			tk.Label, tk.Anchor = rep.Start.UTC().Format("15:04:05 UTC"), "start"
		case 4:
			tk.Anchor = "end"
		}
		tl.Ticks = append(tl.Ticks, tk)
	}
	return tl
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return s
}

// outcomeClass is the colour of an outcome: ok, fail, warn (stopped from outside) or run.
func outcomeClass(outcome string) string {
	switch outcome {
	case run.OutcomeComplete:
		return "ok"
	case run.OutcomeRunning:
		return "run"
	case run.OutcomeInterrupted, run.OutcomeTimeout:
		return "warn"
	}
	return "fail"
}

// dur prints a duration to the second, the way people say it: 45s, 3m07s, 1h02m.
func dur(d time.Duration) string {
	if d > 0 && d < 100*time.Millisecond {
		return "<0.1s"
	}
	if d > 0 && d < 10*time.Second && d%time.Second != 0 {
		return strconv.FormatFloat(d.Seconds(), 'f', 1, 64) + "s" // a demo's attempts
	}
	d = d.Round(time.Second)
	switch {
	case d < time.Minute:
		return strconv.Itoa(int(d.Seconds())) + "s"
	case d < time.Hour:
		return fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
	}
	return fmt.Sprintf("%dh%02dm", int(d.Hours()), int(d.Minutes())%60)
}

func money(v float64) string { return fmt.Sprintf("$%.4f", v) }

func short(id string) string {
	if len(id) > 7 {
		return id[:7]
	}
	return id
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return strconv.Itoa(n) + " " + word + "s"
}

func thousands(n int64) string {
	s := strconv.FormatInt(n, 10)
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// patchHTML is a patch with each line escaped and marked as added, deleted or a hunk
// header, for colour. Every byte of the patch goes through template.HTMLEscapeString.
func patchHTML(p string) template.HTML {
	var b strings.Builder
	b.Grow(len(p) + len(p)/4)
	for line := range strings.SplitSeq(strings.TrimSuffix(p, "\n"), "\n") {
		class := ""
		switch {
		case strings.HasPrefix(line, "diff --git "):
			class = "f"
		case strings.HasPrefix(line, "+++ "), strings.HasPrefix(line, "--- "):
			class = "m"
		case strings.HasPrefix(line, "+"):
			class = "a"
		case strings.HasPrefix(line, "-"):
			class = "d"
		case strings.HasPrefix(line, "@@"):
			class = "h"
		}
		if class != "" {
			b.WriteString(`<span class="` + class + `">`)
			b.WriteString(template.HTMLEscapeString(line))
			b.WriteString("</span>\n")
		} else {
			b.WriteString(template.HTMLEscapeString(line))
			b.WriteByte('\n')
		}
	}
	return template.HTML(b.String()) //nolint:gosec // every line is escaped above
}
