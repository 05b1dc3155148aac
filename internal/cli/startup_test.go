package cli_test

import (
	"bufio"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// Every start of git-ralph pays for the initialisation of each package it links, the
// sandbox's launcher (one per attempt) included: none of git-ralph's own packages does
// work before main that it could do when needed (a regexp compiled at init costs
// 40–100 allocations; sync.OnceValue defers it). Counted with the runtime's inittrace
// in this test binary, which links what git-ralph links: allocations, not time, so
// the check holds at any speed.
func TestInitIsCheap(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	debug := "inittrace=1"
	if old := os.Getenv("GODEBUG"); old != "" {
		debug += "," + old
	}
	cmd.Env = append(slices.DeleteFunc(os.Environ(), func(kv string) bool { return strings.HasPrefix(kv, "GODEBUG=") }), "GODEBUG="+debug)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	const module = "github.com/git-ralph/git-ralph/"
	const maxAllocs, maxBytes = 32, 4096
	seen := 0
	sc := bufio.NewScanner(strings.NewReader(string(out)))
	for sc.Scan() {
		// init github.com/…/internal/x @1.2 ms, 0.01 ms clock, 440 bytes, 4 allocs
		f := strings.Fields(sc.Text())
		if len(f) != 11 || f[0] != "init" || !strings.HasPrefix(f[1], module) || f[8] != "bytes," || f[10] != "allocs" {
			continue
		}
		seen++
		bytes, _ := strconv.Atoi(f[7])
		allocs, _ := strconv.Atoi(f[9])
		if allocs > maxAllocs || bytes > maxBytes {
			t.Errorf("%s allocates %d times (%d bytes) before main; at most %d (%d bytes): make the work lazy", f[1], allocs, bytes, maxAllocs, maxBytes)
		}
	}
	if seen < 5 {
		t.Fatalf("only %d of git-ralph's packages in the init trace:\n%s", seen, out)
	}
}
