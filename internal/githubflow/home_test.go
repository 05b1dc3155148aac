package githubflow

import (
	"testing"

	"github.com/git-ralph/git-ralph/internal/run"
)

// TestAddRemoteRunSumsOldRecordsTokens: a record written before git-ralph summed the
// tokens (TokensKnown unset, its attempts carrying their own) counts them when a run
// is brought home, whether it is the record here or the one from GitHub.
func TestAddRemoteRunSumsOldRecordsTokens(t *testing.T) {
	old := func() *run.Record {
		return &run.Record{Change: "c", Attempts: []run.Attempt{{Story: "1", InputTokens: 100, OutputTokens: 20}, {Story: "2", InputTokens: 5}}}
	}
	summed := func() *run.Record {
		return &run.Record{Change: "c", Tokens: 1000, TokensKnown: true, Attempts: []run.Attempt{{Story: "3", InputTokens: 900, OutputTokens: 100}}}
	}
	for _, tt := range []struct {
		name        string
		here, there *run.Record
	}{
		{"old here, summed there", old(), summed()},
		{"summed here, old there", summed(), old()},
		{"old both", old(), old()},
	} {
		want := int64(0)
		for _, r := range []*run.Record{tt.here, tt.there} {
			for _, a := range r.Attempts {
				want += a.InputTokens + a.OutputTokens
			}
		}
		addRemoteRun(tt.here, tt.there, "refs/ralph/c/runs/7/")
		if tt.here.Tokens != want || !tt.here.TokensKnown {
			t.Errorf("%s: tokens %d (known %v), want %d", tt.name, tt.here.Tokens, tt.here.TokensKnown, want)
		}
	}
}
