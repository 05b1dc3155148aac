// testsum reads `go test -json` on stdin and prints what plain `go test` prints (a line
// per package, the output of every failed test), then the slowest ten tests and
// scripts, so that a slowdown is seen in the CI log of the change that brought it. It
// exits 1 when a test or a package failed. Only the standard library: CI machines have
// Go and git and nothing else.
//
//	go test -json ./... | go run .ci/testsum.go
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strings"
)

type event struct {
	Action  string
	Package string
	Test    string
	Output  string
	Elapsed float64
}

type timing struct {
	name    string
	elapsed float64
}

func main() {
	out := map[string][]string{} // package + "\x00" + test -> its output lines
	var times []timing
	failed := false
	sc := bufio.NewScanner(os.Stdin)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		var e event
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			fmt.Println(sc.Text()) // build errors and the like are not JSON
			continue
		}
		key := e.Package + "\x00" + e.Test
		switch e.Action {
		case "output":
			if e.Test != "" {
				out[key] = append(out[key], e.Output)
			} else if !strings.HasPrefix(e.Output, "=== ") && !strings.HasPrefix(e.Output, "PASS") &&
				!strings.HasPrefix(e.Output, "ok ") && !strings.HasPrefix(e.Output, "FAIL\n") {
				out[key] = append(out[key], e.Output)
			}
		case "pass", "skip":
			if e.Test == "" {
				fmt.Printf("%-4s %s\t%.1fs\n", map[string]string{"pass": "ok", "skip": "?"}[e.Action], e.Package, e.Elapsed)
			} else {
				times = append(times, timing{short(e.Package) + " " + e.Test, e.Elapsed})
			}
			delete(out, key)
		case "fail":
			failed = true
			if e.Test == "" {
				for _, l := range out[key] {
					fmt.Print(l)
				}
				fmt.Printf("FAIL %s\t%.1fs\n", e.Package, e.Elapsed)
			} else {
				fmt.Printf("--- FAIL: %s %s (%.1fs)\n", short(e.Package), e.Test, e.Elapsed)
				for _, l := range out[key] {
					fmt.Print(l)
				}
				times = append(times, timing{short(e.Package) + " " + e.Test, e.Elapsed})
			}
			delete(out, key)
		}
	}
	if err := sc.Err(); err != nil {
		fmt.Fprintln(os.Stderr, "testsum:", err)
		os.Exit(2)
	}
	// A test is counted once: a parent that only groups subtests (TestScript) is
	// as long as its slowest child and would crowd the list.
	parents := map[string]bool{}
	for _, t := range times {
		if i := strings.LastIndexByte(t.name, '/'); i > strings.IndexByte(t.name, ' ') {
			parents[t.name[:i]] = true
		}
	}
	sort.SliceStable(times, func(i, j int) bool { return times[i].elapsed > times[j].elapsed })
	fmt.Println("slowest tests:")
	n := 0
	for _, t := range times {
		if parents[t.name] {
			continue
		}
		fmt.Printf("  %6.1fs  %s\n", t.elapsed, t.name)
		if n++; n == 10 {
			break
		}
	}
	if failed {
		os.Exit(1)
	}
}

// short is a package path without the module's: git-ralph/git-ralph/internal/loop -> internal/loop.
func short(pkg string) string {
	if _, rest, ok := strings.Cut(pkg, "github.com/git-ralph/git-ralph/"); ok {
		return rest
	}
	return pkg
}
