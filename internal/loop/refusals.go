package loop

import (
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/git-ralph/git-ralph/internal/agent"
	"github.com/git-ralph/git-ralph/internal/run"
	"github.com/git-ralph/git-ralph/internal/sandbox"
)

// maxRefusalScan bounds how much of an attempt's log is read for refusals: its last
// 16 MiB (the refusal that ended an attempt is near its end).
const maxRefusalScan = 16 << 20

// sandboxRefusals are the paths the sandbox refused att's agent, as its log names them
// and a probe confirms (sandbox.Refusals): nil when the run is not sandboxed, or
// when none is confirmed. Its state and its TMPDIR, which it may write, are no
// refusal.
func (s *session) sandboxRefusals(att *run.Attempt) []sandbox.Refusal {
	if s.policy == nil || att.Log == "" {
		return nil
	}
	f, err := s.Store.Open(att.Log)
	if err != nil {
		return nil
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil && fi.Size() > maxRefusalScan {
		_, _ = f.Seek(fi.Size()-maxRefusalScan, io.SeekStart)
	}
	also := agent.StateOf(s.r.Driver, os.Environ()).Paths()
	var out []sandbox.Refusal
	tmp := filepath.Join(os.TempDir(), "git-ralph-"+s.r.Driver.Name()+"-")
	for _, r := range sandbox.Refusals(s.policy, also, f) {
		if !strings.HasPrefix(r.Path, tmp) { // the attempt's TMPDIR, gone by now
			out = append(out, r)
		}
	}
	return out
}
