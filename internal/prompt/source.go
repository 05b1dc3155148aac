package prompt

import (
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
		Source: s.Kind.About().ID, Noun: s.Kind.About().Noun, Change: s.Name, ChangeDir: s.RelDir, TasksPath: s.TasksRel,
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

// ReadLearnings is the content of the learnings file of a run of ch, "" when there is
// none. The source's own (progress.txt) goes into every prompt: it is read only when it is
// a regular file inside the repository.
func ReadLearnings(root string, ch *source.Source, runLearnings string) string {
	path := learningsFile(root, ch, runLearnings)
	var b []byte
	var err error
	if ch.Learnings != "" {
		b, _, err = repofile.Read(root, path)
	} else {
		b, err = os.ReadFile(path)
	}
	if err != nil {
		return ""
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
