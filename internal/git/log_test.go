package git

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestLog(t *testing.T) {
	dir, r := newRepo(t)
	ctx := t.Context()
	base := gitT(t, dir, "rev-parse", "HEAD")

	write(t, dir, "a.txt", "story 1\n")
	if err := r.AddAll(ctx); err != nil {
		t.Fatal(err)
	}
	one, err := r.Commit(ctx, "checkpoint: 1\n\nLogin form\n\nRalph-Change: login\nRalph-Story: 1\nRalph-Attempt: 2\nRalph-Note: folded\n  across lines\n", CommitOptions{})
	if err != nil {
		t.Fatal(err)
	}
	two, err := r.Commit(ctx, "checkpoint: 2\n\nRalph-Story: 2\nRalph-Cost-USD: 0.42\n", CommitOptions{AllowEmpty: true})
	if err != nil {
		t.Fatal(err)
	}

	got, err := r.Log(ctx, base+"..HEAD", 0)
	if err != nil {
		t.Fatal(err)
	}
	want := []Commit{
		{ID: two, Parents: []string{one}, Subject: "checkpoint: 2", Body: "Ralph-Story: 2\nRalph-Cost-USD: 0.42",
			Trailers: map[string]string{"Ralph-Story": "2", "Ralph-Cost-USD": "0.42"}},
		{ID: one, Parents: []string{base}, Subject: "checkpoint: 1", Body: "Login form\n\nRalph-Change: login\nRalph-Story: 1\nRalph-Attempt: 2\nRalph-Note: folded\n  across lines",
			Trailers: map[string]string{"Ralph-Change": "login", "Ralph-Story": "1", "Ralph-Attempt": "2", "Ralph-Note": "folded across lines"}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Log =\n%q\nwant\n%q", got, want)
	}

	got, err = r.Log(ctx, "", 1)
	if err != nil || len(got) != 1 || got[0].ID != two {
		t.Errorf("Log(HEAD, 1) = %v, %v", got, err)
	}
	if len(got[0].Trailers) != 2 {
		t.Errorf("trailers = %v", got[0].Trailers)
	}
	got, err = r.Log(ctx, "HEAD..HEAD", 0)
	if err != nil || len(got) != 0 {
		t.Errorf("Log(empty range) = %v, %v", got, err)
	}

	// log.showSignature would add gpg output to stdout; it is turned off.
	setConfig(t, "log.showSignature", "true")
	if got, err := r.Log(ctx, "", 0); err != nil || len(got) != 3 || got[2].Subject != "base" || len(got[2].Trailers) != 0 {
		t.Errorf("Log(all) = %q, %v", got, err)
	}
}

func TestParseLog(t *testing.T) {
	in := "id1\x00\x00subj\x00\x00\x00id2\x00p1 p2\x00s2\x00body\n\x00K: v\x1eK2: a: b\n\x00"
	got, err := parseLog([]byte(in))
	want := []Commit{
		{ID: "id1", Subject: "subj", Parents: []string{}, Trailers: map[string]string{}},
		{ID: "id2", Parents: []string{"p1", "p2"}, Subject: "s2", Body: "body", Trailers: map[string]string{"K": "v", "K2": "a: b"}},
	}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("parseLog = %q, %v; want %q", got, err, want)
	}
	if _, err := parseLog([]byte("id\x00subj\x00")); err == nil {
		t.Errorf("parseLog accepted a truncated record")
	}
}

// A commit message is text someone else may have written: Log reads at most
// MaxLogBytes of git's output, and refuses a range that prints more.
func TestLogBounded(t *testing.T) {
	dir, r := newRepo(t)
	msg := filepath.Join(t.TempDir(), "msg")
	if err := os.WriteFile(msg, []byte("subject\n\n"+strings.Repeat("b", MaxLogBytes)+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	gitT(t, dir, "commit", "-q", "--allow-empty", "-F", msg)
	if _, err := r.Log(t.Context(), "HEAD", 1); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("Log of a %d MiB message = %v, want ErrTooLarge", MaxLogBytes>>20, err)
	}
	if cs, err := r.Log(t.Context(), "HEAD~1", 1); err != nil || len(cs) != 1 || cs[0].Subject != "base" {
		t.Fatalf("Log of an ordinary commit = %v, %v", cs, err)
	}
}
