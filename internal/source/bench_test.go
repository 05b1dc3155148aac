package source

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// BenchmarkReload is what the loop pays per attempt to re-read a tracked file the agent
// changed (one that did not change is not parsed again): spec-kit's template grown to
// 100 phases (about 300 KiB), a ralphex plan, a prd.json of 200 stories.
func BenchmarkReload(b *testing.B) {
	tmpl, err := os.ReadFile(filepath.Join("..", "speckit", "testdata", "template.md"))
	if err != nil {
		b.Fatal(err)
	}
	plan, err := os.ReadFile(filepath.Join("..", "plan", "testdata", "ralphex-e2e.md"))
	if err != nil {
		b.Fatal(err)
	}
	var stories []string
	for i := range 200 {
		stories = append(stories, `{"id": "US-`+strings.Repeat("0", 3)+string(rune('a'+i%26))+`-`+itoa(i)+`", "title": "story", "acceptanceCriteria": ["a", "b", "Typecheck passes"], "priority": `+itoa(i)+`, "passes": false}`)
	}
	for _, tc := range []struct {
		name, arg, path string
		data            []byte
	}{
		{"speckit-300KiB", "001-big", "specs/001-big/tasks.md", []byte(strings.Repeat(string(tmpl), 32))},
		{"ralphex-plan", "docs/plans/p.md", "docs/plans/p.md", plan},
		{"prd-200-stories", "prd.json", "prd.json", []byte(`{"branchName": "ralph/big", "userStories": [` + strings.Join(stories, ",\n") + `]}`)},
	} {
		b.Run(tc.name, func(b *testing.B) {
			root := b.TempDir()
			p := filepath.Join(root, filepath.FromSlash(tc.path))
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				b.Fatal(err)
			}
			if err := os.WriteFile(p, tc.data, 0o644); err != nil {
				b.Fatal(err)
			}
			s, err := Builtin().Resolve(Repo{Root: root, Cwd: root}, tc.arg)
			if err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(len(tc.data)))
			b.ResetTimer()
			for b.Loop() {
				s.data = nil // read as changed: parsed again, as after an attempt
				if err := s.Reload(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func itoa(i int) string {
	const digits = "0123456789"
	if i < 10 {
		return digits[i : i+1]
	}
	return itoa(i/10) + digits[i%10:i%10+1]
}
