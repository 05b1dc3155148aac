package githubflow

import (
	"archive/zip"
	"bytes"
	"context"
	"fmt"
	"io"
	"path"
	"regexp"
	"strings"
	"sync"

	"github.com/git-ralph/git-ralph/internal/github"
	"github.com/git-ralph/git-ralph/internal/tell"
)

// JobLog says where logs found the text it prints when a run has no artifact to read.
type JobLog struct {
	// ArtifactExpired: the run uploaded its artifact, which has expired since; otherwise
	// it never uploaded one (the job was killed, timed out, or never started the loop).
	ArtifactExpired bool
	// File is the entry of the run's logs zip printed: the "loop" step's own log, e.g.
	// "loop/6_loop.txt", or, when GitHub kept no step logs, the whole loop job's, e.g.
	// "0_loop.txt" (WholeJob).
	File     string
	WholeJob bool
	// Cut is how many bytes at the start were left out: only the end of the log is
	// printed, LogCap bytes, as the artifact's logs are cut.
	Cut int64
}

// The workflow ci init writes runs the loop in the step "loop" of the job "loop". In
// the logs zip GitHub names a job's log "<n>_<job>.txt" and a step's
// "<job>/<number>_<step>.txt".
var (
	loopStepLog = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^loop/[0-9]+_loop\.txt$`) })
	loopJobLog  = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[0-9]+_loop\.txt$`) })
)

// jobLog is Logs for a run without an artifact to read (none, or expired): the loop
// step's log, from the run's own logs zip. With attempt it is an error, as the job log
// does not tell attempts apart.
func (rem *Remote) jobLog(ctx context.Context, client *github.Client, repo github.Repo, res *LogsResult, attempt string, artifactExpired bool, expired error) (*LogsResult, error) {
	change, again := res.Change, "git ralph logs "+res.Change
	run, err := client.Run(ctx, repo, res.RunID)
	if err != nil {
		return nil, apiErr(err, repo, again)
	}
	if run.Status != "completed" {
		return nil, tell.UserErr("the run uploads them when its loop ends; 'git ralph status "+change+"' shows where it stands",
			"run %d has no logs yet", res.RunID)
	}
	if attempt != "" {
		if artifactExpired {
			return nil, expired
		}
		return nil, tell.UserErr("'"+again+"' prints the log of its loop step instead",
			"run %d uploaded no logs of its attempts (its loop job ended before the export step)", res.RunID)
	}
	data, err := client.RunLogs(ctx, repo, res.RunID)
	switch github.StatusOf(err) {
	case 0:
	case 410:
		return nil, expired
	case 404:
		return nil, tell.UserErr("'git ralph status "+change+"' shows how it ended, with its page on GitHub",
			"run %d left no logs", res.RunID)
	default:
		return nil, apiErr(err, repo, again)
	}
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		return nil, fmt.Errorf("read the logs of run %d: %w", res.RunID, err)
	}
	var step, job *zip.File
	for _, f := range zr.File {
		name := path.Clean(strings.ReplaceAll(f.Name, `\`, "/"))
		res.Files = append(res.Files, f.Name)
		switch {
		case step == nil && loopStepLog().MatchString(name):
			step = f
		case job == nil && loopJobLog().MatchString(name):
			job = f
		}
	}
	jl := &JobLog{ArtifactExpired: artifactExpired}
	f := step
	if f == nil {
		f, jl.WholeJob = job, true
	}
	if f == nil {
		return nil, tell.UserErr("'git ralph status "+change+"' shows how it ended, with its page on GitHub",
			"the logs of run %d hold no log of its loop job", res.RunID)
	}
	jl.File = f.Name
	rc, err := f.Open()
	if err != nil {
		return nil, fmt.Errorf("read the logs of run %d: %w", res.RunID, err)
	}
	defer rc.Close()
	res.Data, jl.Cut, err = tailOf(rc, LogCap)
	if err != nil {
		return nil, fmt.Errorf("read the logs of run %d: %w", res.RunID, err)
	}
	res.Name, res.JobLog = f.Name, jl
	return res, nil
}

// tailOf reads r to its end and keeps the last limit bytes, from the start of a line when
// one begins in them; cut is how many bytes were left out.
func tailOf(r io.Reader, limit int) (data []byte, cut int64, err error) {
	buf := make([]byte, 0, min(limit, 64<<10))
	chunk := make([]byte, 32<<10)
	for {
		n, rerr := r.Read(chunk)
		buf = append(buf, chunk[:n]...)
		if over := len(buf) - limit; over > limit { // compact now and then, not on every read
			cut += int64(over)
			buf = append(buf[:0], buf[over:]...)
		}
		if rerr == io.EOF {
			break
		}
		if rerr != nil {
			return nil, 0, rerr
		}
	}
	if over := len(buf) - limit; over > 0 {
		cut += int64(over)
		buf = buf[over:]
	}
	if cut > 0 {
		if i := bytes.IndexByte(buf, '\n'); i >= 0 && i+1 < len(buf) {
			cut += int64(i + 1)
			buf = buf[i+1:]
		}
	}
	return buf, cut, nil
}
