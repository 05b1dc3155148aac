package cli

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/scanner"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
)

// citedDoc finds what a comment cites as a document: a path under docs/ (but a plans
// directory, docs/plans, which holds task sources), a name in capitals ending in .md
// (with its directories, if any), or a name in capitals before a section sign.
var citedDoc = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`\bdocs/[\w./-]+\.md\b|(?:[\w.-]+/)*\b[A-Z][A-Z0-9_-]+\.md\b|\b[A-Z][A-Z0-9_-]{2,}\s*§`)
})

// notCited are what citedDoc matches that are no document the code follows: a
// working tree's files named in examples.
var notCited = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^docs/plans/|^NOTES\.md$`) })

// TestCitedDocsExist: every document a Go comment cites is a file of the repository, so
// that someone who clones it can read what the code says it follows. A name is looked
// for beside the file citing it, in each directory above it up to the root, and in docs/.
func TestCitedDocsExist(t *testing.T) {
	root := filepath.Join("..", "..")
	checked := 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); n == "testdata" || n == ".git" || strings.HasPrefix(n, ".") && path != root {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		fset := token.NewFileSet()
		file := fset.AddFile(path, -1, len(src))
		var s scanner.Scanner
		s.Init(file, src, nil, scanner.ScanComments)
		var text strings.Builder // the file's comments, run together
		for {
			pos, tok, lit := s.Scan()
			if tok == token.EOF {
				break
			}
			if tok != token.COMMENT {
				continue
			}
			text.WriteString(strings.TrimPrefix(strings.TrimPrefix(lit, "//"), "/*") + " ")
			for _, cite := range citedDoc().FindAllString(lit, -1) {
				if notCited().MatchString(cite) {
					continue
				}
				checked++
				if !docExists(root, filepath.Dir(path), cite) {
					rel, _ := filepath.Rel(root, path)
					t.Errorf("%s:%d cites %q, which is not a file of the repository (write it under docs/, or cite one that is)",
						rel, fset.Position(pos).Line, cite)
				}
			}
		}
		rel, _ := filepath.Rel(root, path)
		for _, m := range citedSection().FindAllStringSubmatch(strings.Join(strings.Fields(text.String()), " "), -1) {
			if !hasSection(filepath.Join(root, "docs", m[1]), m[2]) {
				t.Errorf("%s cites the section %q of docs/%s, which has none of that name", rel, m[2], m[1])
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked < 50 {
		t.Errorf("only %d citations found in the comments: the scan is broken", checked)
	}
}

// citedSection is a section of a document of docs/ cited by its heading:
// docs/LOOP.md, "New run" or docs/LOOP.md ("Each attempt", …).
var citedSection = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`\bdocs/([\w./-]+\.md)(?:,\s*|\s*\()"([^"]+)"`)
})

// hasSection reports whether the markdown file at path has a heading that is title, or
// holds it (the dated headings of the design log), backquotes left out.
func hasSection(path, title string) bool {
	data, err := os.ReadFile(path)
	if err != nil {
		return false
	}
	for _, l := range strings.Split(string(data), "\n") {
		if h, ok := strings.CutPrefix(strings.TrimLeft(l, "#"), " "); ok && strings.HasPrefix(l, "#") &&
			strings.Contains(strings.ToLower(strings.ReplaceAll(h, "`", "")), strings.ToLower(title)) {
			return true
		}
	}
	return false
}

// docExists reports whether the document cite names exists, looked for from dir (the
// citing file's) up to root, and under root's docs/.
func docExists(root, dir, cite string) bool {
	name := strings.TrimSpace(strings.TrimSuffix(cite, "§"))
	if !strings.HasSuffix(name, ".md") {
		name += ".md"
	}
	name = filepath.FromSlash(name)
	exists := func(p string) bool {
		fi, err := os.Stat(p)
		return err == nil && fi.Mode().IsRegular()
	}
	if exists(filepath.Join(root, "docs", name)) {
		return true
	}
	for d := dir; ; d = filepath.Dir(d) {
		if exists(filepath.Join(d, name)) {
			return true
		}
		if rel, err := filepath.Rel(root, d); err != nil || rel == "." || strings.HasPrefix(rel, "..") {
			return false
		}
	}
}

// TestCommentsFit: at most 20 comment blocks of the program's Go files (tests left out,
// package comments too) run over 80 words. A comment says what and why in a few lines;
// the long reasoning lives in ARCHITECTURE.md or docs/, cited.
func TestCommentsFit(t *testing.T) {
	const maxWords, maxLong = 80, 20
	root := filepath.Join("..", "..")
	var long []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); n == "testdata" || strings.HasPrefix(n, ".") && path != root {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, path, nil, parser.ParseComments)
		if err != nil {
			return err
		}
		for _, g := range f.Comments {
			if g == f.Doc {
				continue
			}
			if n := len(strings.Fields(g.Text())); n > maxWords {
				rel, _ := filepath.Rel(root, path)
				long = append(long, fmt.Sprintf("%s:%d (%d words)", rel, fset.Position(g.Pos()).Line, n))
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(long) > maxLong {
		t.Errorf("%d comment blocks run over %d words, at most %d may: shorten them, and move the reasoning to ARCHITECTURE.md or docs/\n%s",
			len(long), maxWords, maxLong, strings.Join(long, "\n"))
	}
}

// TestFunctionsFit holds every function of the product (not the tests, not the fakes:
// fakeagent, githubtest) to 100 lines: a longer one is split where its parts have names.
func TestFunctionsFit(t *testing.T) {
	const maxLines = 100
	root := filepath.Join("..", "..")
	fakes := []string{filepath.Join("internal", "fakeagent"), filepath.Join("internal", "github", "githubtest")}
	var long []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		if d.IsDir() {
			if n := d.Name(); n == "testdata" || strings.HasPrefix(n, ".") && path != root || slices.Contains(fakes, rel) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			var body *ast.BlockStmt
			switch x := n.(type) {
			case *ast.FuncDecl:
				body = x.Body
			case *ast.FuncLit:
				body = x.Body
			}
			if body != nil {
				if lines := fset.Position(body.End()).Line - fset.Position(n.Pos()).Line + 1; lines > maxLines {
					long = append(long, fmt.Sprintf("%s:%d (%d lines)", rel, fset.Position(n.Pos()).Line, lines))
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(long) > 0 {
		t.Errorf("functions over %d lines: split them where their parts have names\n%s", maxLines, strings.Join(long, "\n"))
	}
}
