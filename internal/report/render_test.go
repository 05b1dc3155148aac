package report

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/html"
)

const hostile = `<script>alert("pwned")</script> "quoted" 'single' </title></svg><img src=x onerror=alert(1)>`

// fixture is a run of n stories with tries attempts each (the last one passing), with
// diffs and log tails, and hostile text in a title and a reason.
func fixture(n, tries int) *Report {
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	cost := 0.0123
	patch := strings.Repeat("diff --git a/f.go b/f.go\n--- a/f.go\n+++ b/f.go\n@@ -1,2 +1,2 @@\n-old line\n+new line\n context\n", 20)
	rep := &Report{Change: "add-login", Why: "People want to log in. " + hostile, Status: "complete",
		Source: "a test", Generated: t0.Add(time.Hour), Agent: "claude", Model: "claude-sonnet-4-5", Learnings: "- use the router\n" + hostile}
	at := t0
	for i := 1; i <= n; i++ {
		id := fmt.Sprint(i)
		s := Story{ID: id, Title: "Story " + id, Done: true, Checkpoint: fmt.Sprintf("%040d", i),
			Tasks: []Task{{ID: id + ".1", Text: "do it", Done: true}, {ID: id + ".2", Text: "test it", Done: true}}}
		if i == 1 {
			s.Title = hostile
		}
		for k := 1; k <= tries; k++ {
			a := Attempt{Story: id, N: k, Outcome: "failed", Reason: "tests fail:\n" + hostile, Agent: "claude", Model: "claude-sonnet-4-5",
				Turns: 12, Tokens: 34567, Cost: &cost, Started: at, Ended: at.Add(90 * time.Second),
				Ref: "refs/ralph/add-login/attempts/" + id + "-" + fmt.Sprint(k), Commit: fmt.Sprintf("%039d%d", i, k),
				LogTail: `{"type":"result","result":"` + hostile + `"}`}
			a.Diff = &Diff{Commit: a.Commit, Stat: " f.go | 2 +-", Patch: patch}
			if k == tries {
				a.Outcome, a.Reason, a.Ref, a.Verify, a.Diff = "complete", "", "", "passed", nil
				a.Commit = s.Checkpoint
			}
			s.Attempts = append(s.Attempts, a)
			at = at.Add(2 * time.Minute)
		}
		s.Diff = &Diff{Commit: s.Checkpoint, Stat: " f.go | 2 +-\n 1 file changed", Patch: patch, Cut: 100}
		rep.Stories = append(rep.Stories, s)
	}
	summarize(rep)
	return rep
}

func render(t testing.TB, rep *Report) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := Render(&b, rep); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestRenderStructure: the page parses as HTML; it has the summary, the timeline with
// a bar per attempt, a section per story and a row per attempt, and collapsed diffs.
func TestRenderStructure(t *testing.T) {
	rep := fixture(3, 2)
	doc, err := html.Parse(bytes.NewReader(render(t, rep)))
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string]*html.Node{}
	count := map[string]int{}
	for n := range doc.Descendants() {
		if n.Type != html.ElementNode {
			continue
		}
		count[n.Data]++
		if id := attr(n, "id"); id != "" {
			if ids[id] != nil {
				t.Errorf("id %q twice", id)
			}
			ids[id] = n
		}
		if n.Data == "details" && attr(n, "open") != "" {
			t.Errorf("a <details> is open by default")
		}
	}
	for _, id := range []string{"summary", "status", "timeline", "source", "story-1", "story-2", "story-3",
		"attempt-1-1", "attempt-1-2", "attempt-2-1", "attempt-2-2", "attempt-3-1", "attempt-3-2"} {
		if ids[id] == nil {
			t.Errorf("no element with id %q", id)
		}
	}
	if count["rect"] != 6 {
		t.Errorf("%d timeline bars, want one per attempt (6)", count["rect"])
	}
	// per story: a log tail per attempt, the failed attempt's diff, the checkpoint's diff
	if count["details"] != 3*(2+1+1) {
		t.Errorf("%d <details>, want %d", count["details"], 3*4)
	}
	if got := text(ids["status"]); got != "complete" {
		t.Errorf("status %q", got)
	}
}

// TestRenderInert: hostile story titles, reasons, logs and learnings come out as text:
// the only script is ours, no element or attribute comes from them.
func TestRenderInert(t *testing.T) {
	page := render(t, fixture(2, 2))
	doc, err := html.Parse(bytes.NewReader(page))
	if err != nil {
		t.Fatal(err)
	}
	scripts, found := 0, 0
	for n := range doc.Descendants() {
		switch {
		case n.Type == html.ElementNode && n.Data == "script":
			scripts++
			if strings.Contains(text(n), "pwned") {
				t.Errorf("hostile text inside a script")
			}
		case n.Type == html.ElementNode && n.Data == "img":
			t.Errorf("an <img> came out of hostile text")
		case n.Type == html.ElementNode:
			for _, a := range n.Attr {
				if strings.HasPrefix(a.Key, "on") {
					t.Errorf("<%s %s=%q>: an event handler", n.Data, a.Key, a.Val)
				}
			}
		case n.Type == html.TextNode && strings.Contains(n.Data, `<script>alert("pwned")</script> "quoted" 'single'`):
			found++
		}
	}
	if scripts != 1 {
		t.Errorf("%d scripts, want only ours", scripts)
	}
	if found < 5 {
		t.Errorf("hostile text shown as text %d times, want it in title, reasons, logs, learnings", found)
	}
}

// TestRenderNoRequests: nothing on the page refers to anything outside it.
func TestRenderNoRequests(t *testing.T) {
	checkNoRequests(t, render(t, fixture(2, 2)))
}

// checkNoRequests fails on any attribute or style that would load something: an
// http:, https: or protocol-relative (//) reference, url(), @import, or an element
// that loads by nature.
func checkNoRequests(t *testing.T, page []byte) {
	t.Helper()
	doc, err := html.Parse(bytes.NewReader(page))
	if err != nil {
		t.Fatal(err)
	}
	for n := range doc.Descendants() {
		if n.Type != html.ElementNode {
			continue
		}
		switch n.Data {
		case "link", "img", "iframe", "object", "embed", "audio", "video", "source", "base", "form":
			t.Errorf("<%s> element", n.Data)
		case "style":
			css := strings.ToLower(text(n))
			for _, bad := range []string{"url(", "@import", "http:", "https:", "//"} {
				if strings.Contains(css, bad) {
					t.Errorf("the style sheet holds %q", bad)
				}
			}
		case "script":
			if attr(n, "src") != "" {
				t.Errorf("a script with src")
			}
			js := text(n)
			for _, bad := range []string{"http:", "https:", "fetch(", "XMLHttpRequest", "import(", ".src"} {
				if strings.Contains(js, bad) {
					t.Errorf("the script holds %q", bad)
				}
			}
		}
		for _, a := range n.Attr {
			v := strings.ToLower(strings.TrimSpace(a.Val))
			if strings.Contains(v, "http:") || strings.Contains(v, "https:") || strings.HasPrefix(v, "//") || strings.Contains(v, "url(") {
				t.Errorf("<%s %s=%q>: an outside reference", n.Data, a.Key, a.Val)
			}
		}
	}
}

func attr(n *html.Node, key string) string {
	for _, a := range n.Attr {
		if a.Key == key {
			if a.Val == "" {
				return key
			}
			return a.Val
		}
	}
	return ""
}

func text(n *html.Node) string {
	var b strings.Builder
	for c := range n.Descendants() {
		if c.Type == html.TextNode {
			b.WriteString(c.Data)
		}
	}
	return b.String()
}

// TestDur: durations as people say them.
func TestDur(t *testing.T) {
	for d, want := range map[time.Duration]string{
		0: "0s", 40 * time.Millisecond: "<0.1s", 1400 * time.Millisecond: "1.4s", 12400 * time.Millisecond: "12s", 61 * time.Second: "1m01s", 3*time.Hour + 2*time.Minute: "3h02m",
	} {
		if got := dur(d); got != want {
			t.Errorf("dur(%s) = %q, want %q", d, got, want)
		}
	}
}

// BenchmarkRender: a run of 100 stories with 4 attempts each (3 failed, with diffs).
func BenchmarkRender(b *testing.B) {
	rep := fixture(100, 4)
	var buf bytes.Buffer
	for b.Loop() {
		buf.Reset()
		if err := Render(&buf, rep); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(buf.Len())/1e6, "MB/page")
}

// TestRenderCSP: the page's policy allows its one style sheet and its one script by
// their hashes, and nothing inline besides (no 'unsafe-inline' anywhere).
func TestRenderCSP(t *testing.T) {
	doc, err := html.Parse(bytes.NewReader(render(t, fixture(2, 2))))
	if err != nil {
		t.Fatal(err)
	}
	var csp, script, style string
	for n := range doc.Descendants() {
		switch {
		case n.Type == html.ElementNode && n.Data == "meta" && attr(n, "http-equiv") == "Content-Security-Policy":
			csp = attr(n, "content")
		case n.Type == html.ElementNode && n.Data == "script":
			script = text(n)
		case n.Type == html.ElementNode && n.Data == "style":
			style = text(n)
		case n.Type == html.ElementNode && attr(n, "style") != "":
			t.Errorf("<%s style=%q>: a style attribute the policy would block", n.Data, attr(n, "style"))
		}
	}
	for _, el := range []struct{ directive, body string }{{"script-src", script}, {"style-src", style}} {
		sum := sha256.Sum256([]byte(el.body))
		want := el.directive + " 'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "';"
		if !strings.Contains(csp, want) {
			t.Errorf("CSP %q does not allow the page's %s by its hash (%s)", csp, el.directive, want)
		}
	}
	if strings.Contains(csp, "unsafe-inline") {
		t.Errorf("CSP allows inline code: %q", csp)
	}
	if !strings.Contains(script, "expand all") || !strings.Contains(style, "--bg") {
		t.Errorf("the script or the style is not the page's own: %q, %q", script, style)
	}
}

// TestRenderVisibleControls: ESC, other control characters, bidirectional overrides
// and invalid UTF-8 in agent text reach the page as visible stand-ins, as in the
// terminal, wherever they are (title, reason, log, learnings, diff).
func TestRenderVisibleControls(t *testing.T) {
	rep := fixture(1, 1)
	hostile := "a\x1b[2Jb \u202egnp.exe\u202c c\x07d\xffe\r\n"
	rep.Stories[0].Title += hostile
	rep.Stories[0].Attempts[0].Reason += hostile
	rep.Stories[0].Attempts[0].LogTail += hostile
	rep.Learnings += hostile
	page := string(render(t, rep))
	for _, bad := range []string{"\x1b", "\u202e", "\u202c", "\x07", "\xff", "\r"} {
		if strings.Contains(page, bad) {
			t.Errorf("the page holds %q", bad)
		}
	}
	if n := strings.Count(page, "a␛[2Jb �gnp.exe� c␇d�e␍"); n < 4 {
		t.Errorf("the hostile text is shown with its stand-ins %d times, want 4 (title, reason, log, learnings)", n)
	}
}
