package agents

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/git-ralph/git-ralph/internal/agent"
)

// FuzzDecode feeds every driver's decoder the same bytes, seeded with every transcript
// of testdata (all dialects, real and synthetic): none may panic, fail on its input or
// keep more of it than its bounds allow, whatever the stream holds.
func FuzzDecode(f *testing.F) {
	files, _ := filepath.Glob("../agent/testdata/*.*json")
	for _, name := range files {
		data, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		if len(data) < 64<<10 {
			f.Add(data)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, name := range Names() {
			d, err := Lookup(name)
			if err != nil {
				t.Fatal(err)
			}
			res, err := d.Decode(bytes.NewReader(data), nil)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if len(res.Text) > agent.MaxText || len(res.Errors) > agent.MaxErrors || len(res.Denials) > agent.MaxErrors {
				t.Fatalf("%s: unbounded result: text %d, errors %d, denials %d", name, len(res.Text), len(res.Errors), len(res.Denials))
			}
			_ = agent.ParsePromise(res.Text)
		}
	})
}
