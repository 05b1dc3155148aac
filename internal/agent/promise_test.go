package agent

import (
	"strings"
	"testing"
)

func TestParsePromise(t *testing.T) {
	complete := Promise{Kind: PromiseComplete}
	failed := func(reason string) Promise { return Promise{Kind: PromiseFailed, Reason: reason} }
	for _, tc := range []struct {
		name, text string
		want       Promise
	}{
		{"empty", "", Promise{}},
		{"no tag", "All done.", Promise{}},
		{"complete alone", "<promise>COMPLETE</promise>", complete},
		{"complete after text", "Done.\n\n<promise>COMPLETE</promise>", complete},
		{"indented, trailing blanks", "Done.\n   \t<promise>COMPLETE</promise>  \t\n\n", complete},
		{"CRLF", "Done.\r\n<promise>COMPLETE</promise>\r\n", complete},
		{"CRLF failed", "x\r\n<promise>FAILED: tests fail\r\n</promise>\r\n", failed("tests fail")},
		{"inner blanks", "<promise> COMPLETE </promise>", complete},
		{"failed with reason", "<promise>FAILED: go test ./... fails in pkg/loop</promise>", failed("go test ./... fails in pkg/loop")},
		{"failed reason trimmed", "<promise>FAILED:    tests did not pass   </promise>", failed("tests did not pass")},
		{"failed no space", "<promise>FAILED:x</promise>", failed("x")},
		{"failed without reason", "<promise>FAILED</promise>", failed("")},
		{"failed empty reason", "<promise>FAILED: </promise>", failed("")},
		{"failed multi-line reason", "<promise>FAILED: tests fail:\n - pkg/a\n - pkg/b\n</promise>", failed("tests fail:\n - pkg/a\n - pkg/b")},
		{"inside a sentence", "I will print <promise>COMPLETE</promise> when done.", Promise{}},
		{"text before on the line", "Status: <promise>COMPLETE</promise>", Promise{}},
		{"text after on the line", "<promise>COMPLETE</promise> (finally)", Promise{}},
		{"inline code", "`<promise>COMPLETE</promise>`", Promise{}},
		{"bold", "**<promise>COMPLETE</promise>**", Promise{}},
		{"last wins complete", "<promise>FAILED: first</promise>\nthen fixed\n<promise>COMPLETE</promise>", complete},
		{"last wins failed", "<promise>COMPLETE</promise>\nbut then\n<promise>FAILED: broke it</promise>", failed("broke it")},
		{"echo in sentence then failed", "The instructions say to print <promise>COMPLETE</promise> when done.\n<promise>FAILED: blocked</promise>", failed("blocked")},
		{"own-line then sentence", "<promise>COMPLETE</promise>\nI printed <promise>FAILED: x</promise> above", complete},
		{"unknown keyword", "<promise>DONE</promise>", Promise{}},
		{"unknown keyword does not mask an earlier one", "<promise>COMPLETE</promise>\n<promise>DONE</promise>", complete},
		{"lowercase keyword", "<promise>complete</promise>", Promise{}},
		{"FAILEDX", "<promise>FAILEDX</promise>", Promise{}},
		{"COMPLETE with extra", "<promise>COMPLETE: yes</promise>", Promise{}},
		{"unclosed", "<promise>COMPLETE\nmore text", Promise{}},
		{"unclosed then valid", "<promise>FAILED: oops\n<promise>COMPLETE</promise>", complete},
		{"close mid-line", "<promise>FAILED: a\nb</promise> trailing\n", Promise{}},
		{"two on one line", "<promise>COMPLETE</promise><promise>COMPLETE</promise>", Promise{}},
		{"in a code fence line", "```\n<promise>COMPLETE</promise>\n```", complete},
		{"unicode spaces", "\u00a0<promise>COMPLETE</promise>\u2003", complete},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := ParsePromise(tc.text); got != tc.want {
				t.Errorf("ParsePromise(%q) = %+v, want %+v", tc.text, got, tc.want)
			}
		})
	}
}

func TestParsePromiseLinear(t *testing.T) {
	// Many opening tags and one closing tag at the very end must not take
	// quadratic time. (The last opening line and the closing one form a tag.)
	text := strings.Repeat("<promise>FAILED: x\n", 200000) + "</promise>"
	if got := ParsePromise(text); got != (Promise{Kind: PromiseFailed, Reason: "x"}) {
		t.Fatalf("got %+v", got)
	}
	text = strings.Repeat("<promise>\n", 200000) + "<promise>COMPLETE</promise>"
	if got := ParsePromise(text); got.Kind != PromiseComplete {
		t.Fatalf("got %+v", got)
	}
}

func TestResultPromise(t *testing.T) {
	text := "ok\n<promise>COMPLETE</promise>"
	for _, tc := range []struct {
		res  Result
		want PromiseKind
	}{
		{Result{SawResult: true, Text: text}, PromiseComplete},
		{Result{SawResult: false, Text: text}, PromiseNone},
		{Result{SawResult: true, IsError: true, Text: text}, PromiseNone},
	} {
		if got := tc.res.Promise().Kind; got != tc.want {
			t.Errorf("%+v: Promise() = %v, want %v", tc.res, got, tc.want)
		}
	}
}

func FuzzParsePromise(f *testing.F) {
	f.Add("Done.\n<promise>COMPLETE</promise>")
	f.Add("<promise>FAILED: x\r\n</promise>")
	f.Add("<promise><promise>COMPLETE</promise>\n")
	f.Fuzz(func(t *testing.T, s string) {
		p := ParsePromise(s)
		if p.Kind == PromiseNone && p.Reason != "" {
			t.Fatalf("reason without a promise: %+v", p)
		}
		if p.Kind != PromiseNone && !strings.Contains(s, "</promise>") {
			t.Fatalf("promise without a tag: %+v", p)
		}
	})
}
