package source

import "testing"

// ralph.movePlan is a git boolean: each of git's spellings of false leaves a completed
// plan where it is ("no" moved it before); unset or true moves it.
func TestMovePlanGitBoolean(t *testing.T) {
	s := &Source{RelDir: plansDir, TasksRel: plansDir + "/x.md"}
	for v, moves := range map[string]bool{"": true, "true": true, "yes": true, "false": false, "no": false, "Off": false, "0": false} {
		r := Repo{Root: t.TempDir(), Config: func(key string) string {
			if key == "ralph.movePlan" {
				return v
			}
			return ""
		}}
		if _, ok := (planKind{}).Archive(r, s); ok != moves {
			t.Errorf("ralph.movePlan=%q: moved %v, want %v", v, ok, moves)
		}
	}
}
