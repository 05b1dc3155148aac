package hooks

import (
	"reflect"
	"strings"
	"testing"
)

const (
	zero = "0000000000000000000000000000000000000000"
	a    = "1111111111111111111111111111111111111111"
	b    = "2222222222222222222222222222222222222222"
)

func TestParsePrePush(t *testing.T) {
	in := "refs/heads/main " + a + " refs/heads/main " + b + "\n" +
		"refs/heads/ralph/x " + a + " refs/heads/ralph/x " + zero + "\n" +
		"(delete) " + zero + " refs/heads/ralph/old " + b + "\n" +
		"refs/tags/v1 " + a + " refs/tags/v1 " + zero + "\r\n"
	got, err := ParsePrePush([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	want := []PushUpdate{
		{"refs/heads/main", a, "refs/heads/main", b},
		{"refs/heads/ralph/x", a, "refs/heads/ralph/x", zero},
		{"(delete)", zero, "refs/heads/ralph/old", b},
		{"refs/tags/v1", a, "refs/tags/v1", zero},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v", got)
	}
	if !got[2].Deletes() || got[1].Deletes() {
		t.Error("Deletes")
	}

	if got, err := ParsePrePush(nil); err != nil || len(got) != 0 {
		t.Errorf("empty input: %v %v", got, err)
	}
	if _, err := ParsePrePush([]byte("refs/heads/main " + a + "\n")); err == nil {
		t.Error("a short line is not an error")
	}
}

func TestRalphUpdates(t *testing.T) {
	tests := []struct {
		line    string
		refused bool
		shown   string
	}{
		{"refs/heads/main " + a + " refs/heads/main " + b, false, "main"},
		{"refs/heads/ralph/x " + a + " refs/heads/ralph/x " + zero, true, "ralph/x"},
		{"refs/heads/ralph/x " + a + " refs/heads/feature " + zero, true, "ralph/x:feature"},
		{"refs/heads/main " + a + " refs/heads/ralph/x " + zero, true, "main:ralph/x"},
		{"refs/ralph/x/attempts/1-1 " + a + " refs/ralph/x/attempts/1-1 " + zero, true, "refs/ralph/x/attempts/1-1"},
		{"(delete) " + zero + " refs/heads/ralph/x " + b, false, "(delete):ralph/x"},
		{"refs/heads/ralphy " + a + " refs/heads/ralphy " + zero, false, "ralphy"},
		{"refs/tags/ralph/v1 " + a + " refs/tags/ralph/v1 " + zero, false, "refs/tags/ralph/v1"},
	}
	for _, tt := range tests {
		us, err := ParsePrePush([]byte(tt.line + "\n"))
		if err != nil {
			t.Fatal(err)
		}
		got := RalphUpdates(us)
		if (len(got) == 1) != tt.refused {
			t.Errorf("%s: refused=%v, want %v", tt.line, len(got) == 1, tt.refused)
		}
		if s := us[0].String(); s != tt.shown {
			t.Errorf("%s: String() = %q, want %q", tt.line, s, tt.shown)
		}
	}
	// Several refs in one push: only the ralph ones are returned.
	us, _ := ParsePrePush([]byte(strings.Join([]string{
		"refs/heads/main " + a + " refs/heads/main " + b,
		"refs/heads/ralph/x " + a + " refs/heads/ralph/x " + zero,
		"refs/heads/ralph/y " + b + " refs/heads/ralph/y " + zero,
	}, "\n")))
	got := RalphUpdates(us)
	if len(got) != 2 || got[0].String() != "ralph/x" || got[1].String() != "ralph/y" {
		t.Errorf("got %+v", got)
	}
}
