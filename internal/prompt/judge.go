package prompt

import (
	_ "embed"
	"fmt"
	"strings"
	"text/template"
)

//go:embed judge.tmpl
var judgeTemplate string

// JudgeData is what the judge's prompt holds (git ralph start --judge): the story as
// the agent got it, the tasks it ticked, the verify gate's output and the diff the
// checkpoint would record; never the agent's transcript.
type JudgeData struct {
	Change, Story, Title string
	Attempt              int      // the attempt's number
	AgentPrompt          string   // the prompt the attempt's agent got, whole
	Tasks                []string // the story's tasks as the attempt left them ticked
	Verify               string   // passed | skipped
	VerifyOutput         string   // the gate's last lines
	Checkpoint, Tree     string   // the diff's ends: the last checkpoint, the tree staged
	Diff                 string   // the diff (stat and patch), or its beginning
	DiffBytes            int      // the whole diff's size
	// DiffFile, when set, is where the whole diff is (Diff holding its beginning);
	// DiffCut, when set, is where that file was cut.
	DiffFile string
	DiffCut  int
}

// MaxJudgeDiff is how much of the diff the judge's prompt holds; a longer one is
// named by its file.
const MaxJudgeDiff = 64 << 10

// RenderJudge is the judge's prompt.
func RenderJudge(d JudgeData) (string, error) {
	t, err := template.New("judge.tmpl").Option("missingkey=error").Funcs(template.FuncMap{
		"kib": func(n int) int { return (n + 1023) / 1024 },
	}).Parse(judgeTemplate)
	if err != nil {
		return "", fmt.Errorf("parse judge template: %w", err)
	}
	var b strings.Builder
	if err := t.Execute(&b, d); err != nil {
		return "", fmt.Errorf("render judge template: %w", err)
	}
	return b.String(), nil
}
