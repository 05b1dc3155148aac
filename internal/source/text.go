package source

import "strings"

// firstHeading is the text of a markdown document's first "# " heading (only the
// first: a document whose first one is empty has none), "".
func firstHeading(doc string) string {
	for line := range strings.SplitSeq(doc, "\n") {
		if t, ok := strings.CutPrefix(strings.TrimRight(line, " \t\r"), "# "); ok {
			return strings.TrimSpace(t)
		}
	}
	return ""
}

// firstParagraph is the first paragraph of prose of a markdown document (not a heading,
// a front matter, a list or a bold label line), for a PR body's opening.
func firstParagraph(doc string) string {
	var para []string
	front := false
	for i, line := range strings.Split(doc, "\n") {
		t := strings.TrimSpace(line)
		if i == 0 && t == "---" {
			front = true
			continue
		}
		if front {
			front = t != "---"
			continue
		}
		if t == "" || strings.HasPrefix(t, "#") || strings.HasPrefix(t, "**") || strings.HasPrefix(t, "- ") ||
			strings.HasPrefix(t, "* ") || strings.HasPrefix(t, ">") || strings.HasPrefix(t, "<!--") || strings.HasPrefix(t, "```") {
			if len(para) > 0 {
				break
			}
			continue
		}
		para = append(para, t)
	}
	return strings.Join(para, " ")
}
