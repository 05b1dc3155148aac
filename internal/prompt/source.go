package prompt

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/git-ralph/git-ralph/internal/repofile"
	"github.com/git-ralph/git-ralph/internal/source"
	"github.com/git-ralph/git-ralph/internal/tasklist"
)

// ForSource is the Data of an attempt at story of s. learningsPath is the run's own
// learnings file, used unless the source has one of its own (progress.txt beside a
// prd.json); learnings is the content of whichever is used.
func ForSource(s *source.Source, story tasklist.Story, learningsPath, learnings string, attempt, maxAttempts int, reason string) Data {
	d := Data{
		Source: s.Kind.About().ID, Noun: s.Kind.About().Noun, Change: s.Name, ChangeDir: s.RelDir, TasksPath: s.TasksFile(),
		Story: story, Section: s.Section(story), Stories: s.Stories, Specs: s.Specs, Notes: s.Notes,
		LearningsPath: learningsPath, Learnings: learnings, StoryDescription: story.Description,
		Attempt: attempt, MaxAttempts: maxAttempts, Reason: reason, Why: s.Why, DoneMark: s.DoneMark,
	}
	if s.Learnings != "" {
		d.LearningsPath, d.LearningsInRepo = s.Learnings, true
	}
	for _, doc := range s.Docs {
		nd := NewDoc(doc.Path, doc.Content)
		nd.Title = doc.Title
		switch doc.Title { // an OpenSpec change's: the template has places of their own for them
		case "Proposal":
			d.Proposal = NewDoc(doc.Path, doc.Content)
		case "Design":
			d.Design = NewDoc(doc.Path, doc.Content)
		default:
			d.Docs = append(d.Docs, nd)
		}
	}
	return d
}

// MaxLearnings is how much of the end of a learnings file goes into a prompt: the agent
// appends to it, and a file of any size makes a prompt of bounded size.
const MaxLearnings = 64 << 10

// ReadLearnings is the content of the learnings file of a run of ch, "" when there is
// none: its last MaxLearnings bytes, from the start of a line, after a line saying what
// was left out. The source's own (progress.txt) goes into every prompt: it is read only
// when it is a regular file inside the repository; git-ralph's (runLearnings) is opened
// with open, the run store's, which follows no link on the way.
func ReadLearnings(root string, ch *source.Source, runLearnings string, open func(string) (*os.File, error)) string {
	path := learningsFile(root, ch, runLearnings)
	var b []byte
	var cut int64
	var err error
	if ch.Learnings != "" {
		b, cut, _, err = repofile.ReadEnd(root, path, MaxLearnings)
	} else {
		var f *os.File
		if f, err = open(path); err == nil {
			b, cut, err = repofile.Tail(f, MaxLearnings)
			f.Close()
		}
	}
	if err != nil {
		return ""
	}
	if cut > 0 {
		return fmt.Sprintf("[… its first %s are left out here: read the file for them]\n%s", repofile.Size(cut), b)
	}
	return string(b)
}

// learningsFile is the learnings file of a run of ch: the source's own (progress.txt
// beside a prd.json), else git-ralph's, outside the work tree (runLearnings).
func learningsFile(root string, ch *source.Source, runLearnings string) string {
	if ch.Learnings != "" {
		return filepath.Join(root, filepath.FromSlash(ch.Learnings))
	}
	return runLearnings
}
