package main

import (
	"bytes"
	"os"
	"strconv"
	"strings"

	"github.com/rogpeppe/go-internal/testscript"
	"golang.org/x/net/html"
)

// cmdHTMLCheck parses a report with an HTML parser and checks it: the number of story
// sections and attempt rows, nothing that loads from outside the page (no http:, https:
// or // reference, no url() or @import, no element that loads by nature), and no
// script but the page's own.
//
//	htmlcheck FILE STORIES ATTEMPTS
func cmdHTMLCheck(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 3 {
		ts.Fatalf("usage: htmlcheck FILE STORIES ATTEMPTS")
	}
	data, err := os.ReadFile(ts.MkAbs(args[0]))
	ts.Check(err)
	doc, err := html.Parse(bytes.NewReader(data))
	ts.Check(err)
	stories, attempts, scripts := 0, 0, 0
	for n := range doc.Descendants() {
		if n.Type != html.ElementNode {
			continue
		}
		class := attrOf(n, "class")
		switch {
		case n.Data == "section" && class == "story":
			stories++
		case n.Data == "tr" && class == "attempt":
			attempts++
		case n.Data == "script":
			scripts++
			if attrOf(n, "src") != "" {
				ts.Fatalf("a script with src")
			}
		case n.Data == "style":
			css := strings.ToLower(n.FirstChild.Data)
			for _, bad := range []string{"url(", "@import", "http:", "https:", "//"} {
				if strings.Contains(css, bad) {
					ts.Fatalf("the style sheet holds %q", bad)
				}
			}
		}
		switch n.Data {
		case "link", "img", "iframe", "object", "embed", "audio", "video", "source", "base", "form":
			ts.Fatalf("a <%s> element", n.Data)
		}
		for _, a := range n.Attr {
			v := strings.ToLower(strings.TrimSpace(a.Val))
			if strings.Contains(v, "http:") || strings.Contains(v, "https:") || strings.HasPrefix(v, "//") || strings.Contains(v, "url(") || strings.HasPrefix(a.Key, "on") {
				ts.Fatalf("<%s %s=%q>: an outside reference or a handler", n.Data, a.Key, a.Val)
			}
		}
	}
	if scripts != 1 {
		ts.Fatalf("%d scripts, want the page's own only", scripts)
	}
	if strconv.Itoa(stories) != args[1] || strconv.Itoa(attempts) != args[2] {
		ts.Fatalf("%d stories and %d attempts, want %s and %s", stories, attempts, args[1], args[2])
	}
}

func attrOf(n *html.Node, key string) string {
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val
		}
	}
	return ""
}
