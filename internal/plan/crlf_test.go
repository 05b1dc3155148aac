package plan

import (
	"reflect"
	"strings"
	"testing"
)

// A plan saved with CRLF line ends gives the same stories and tasks as with LF.
func TestCRLFSameAsLF(t *testing.T) {
	lf := "# Plan\n\n### Task 1: One\n\nFiles: a.go\n\n- [ ] step one\n- [ ] step two\n\n### Task 2: Two\n\n- [x] step three\n"
	a, b := Parse([]byte(lf), 0), Parse([]byte(strings.ReplaceAll(lf, "\n", "\r\n")), 0)
	if !reflect.DeepEqual(a, b) {
		t.Errorf("CRLF parses differently:\n LF   %+v\n CRLF %+v", a, b)
	}
	if len(a.Stories) != 2 || a.Done != 1 || a.Total != 3 || a.Stories[0].Title != "One" {
		t.Errorf("parsed %+v", a)
	}
}
