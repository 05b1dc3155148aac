package agent

import (
	"strings"
	"testing"
)

func TestParseVerdict(t *testing.T) {
	pass := Verdict{Kind: VerdictPass}
	for _, c := range []struct {
		name, text string
		want       Verdict
	}{
		{"pass", "All tasks are done.\n<verdict>PASS</verdict>", pass},
		{"fail with reason", "<verdict>FAIL: task 1.2 has no test</verdict>\n", Verdict{VerdictFail, "task 1.2 has no test"}},
		{"fail bare", "<verdict>FAIL</verdict>", Verdict{Kind: VerdictFail}},
		{"reason over lines", "<verdict>FAIL: one\ntwo</verdict>", Verdict{VerdictFail, "one\ntwo"}},
		{"none", "looks fine to me", Verdict{}},
		{"inline code", "I must answer `<verdict>PASS</verdict>` or FAIL", Verdict{}},
		{"in a sentence", "so <verdict>PASS</verdict> it is", Verdict{}},
		{"in a code fence", "The prompt says:\n```\n<verdict>PASS</verdict>\n```\nI have not checked yet.", Verdict{}},
		{"in a tilde fence", "~~~text\n<verdict>PASS</verdict>\n~~~", Verdict{}},
		{"in an open fence", "```\n<verdict>PASS</verdict>", Verdict{}},
		{"after a fence", "```\n<verdict>PASS</verdict>\n```\n<verdict>FAIL: no test</verdict>", Verdict{VerdictFail, "no test"}},
		{"fence of four", "````\n```\n<verdict>PASS</verdict>\n````", Verdict{}},
		{"last wins", "<verdict>FAIL: x</verdict>\n<verdict>PASS</verdict>", pass},
		{"lower case", "<verdict>pass</verdict>", Verdict{}},
		{"other word", "<verdict>PASSED</verdict>", Verdict{}},
		{"a promise is no verdict", "<promise>COMPLETE</promise>", Verdict{}},
		{"crlf", "<verdict>PASS</verdict>\r\n", pass},
	} {
		if got := ParseVerdict(c.text); got != c.want {
			t.Errorf("%s: ParseVerdict(%q) = %+v, want %+v", c.name, c.text, got, c.want)
		}
	}
}

// FuzzParseVerdict: any text parses without a panic, a PASS has no reason, a reason is
// trimmed, and the text behind a fence that opens before it and never closes gives none.
func FuzzParseVerdict(f *testing.F) {
	for _, s := range []string{"<verdict>PASS</verdict>", "<verdict>FAIL: x\ny</verdict>", "```\n<verdict>PASS</verdict>\n```\n", "~~~~\n```\n~~~~\n<verdict>FAIL</verdict>"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v := ParseVerdict(s)
		if v.Kind == VerdictPass && v.Reason != "" || strings.TrimSpace(v.Reason) != v.Reason {
			t.Errorf("ParseVerdict(%q) = %+v", s, v)
		}
		if !strings.Contains(s, "~") {
			if got := ParseVerdict("~~~\n" + s); got != (Verdict{}) {
				t.Errorf("behind an open fence, ParseVerdict(%q) = %+v", s, got)
			}
		}
	})
}
