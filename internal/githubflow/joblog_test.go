package githubflow

import (
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

// tailOf keeps the end of a log, from a line's start when one begins in it, and counts
// what it left out, whatever the reads' sizes.
func TestTailOf(t *testing.T) {
	var log strings.Builder
	for i := range 200000 {
		log.WriteString(strings.Repeat("x", i%37) + "\n")
	}
	src := log.String()
	for _, limit := range []int{1, 100, 4096, 1 << 20, len(src), len(src) + 1} {
		for _, one := range []bool{false, true} {
			var rd io.Reader = strings.NewReader(src)
			if one {
				if limit > 4096 {
					continue
				}
				rd = iotest.OneByteReader(rd)
			}
			got, cut, err := tailOf(rd, limit)
			if err != nil {
				t.Fatal(err)
			}
			if int(cut)+len(got) != len(src) || !strings.HasSuffix(src, string(got)) || len(got) > limit {
				t.Fatalf("limit %d: %d kept + %d cut != %d, or not the end, or too much", limit, len(got), cut, len(src))
			}
			if cut > 0 && src[cut-1] != '\n' && strings.Contains(string(got[:len(got)-1]), "\n") {
				t.Fatalf("limit %d: starts mid-line at %d though a line starts later", limit, cut)
			}
			if limit >= len(src) && cut != 0 {
				t.Fatalf("limit %d: cut %d of a log that fits", limit, cut)
			}
		}
	}
}
