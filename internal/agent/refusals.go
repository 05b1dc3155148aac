package agent

import (
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/git-ralph/git-ralph/internal/sandbox"
)

// maxRefusalScan bounds how much of an attempt's log is read for refusals: its last
// 16 MiB (the refusal that ended an attempt is near its end).
const maxRefusalScan = 16 << 20

// Refusals are the paths the sandbox (p) refused d's agent, as its log names them and a
// probe confirms (sandbox.Refusals); nil when none is confirmed. Its state and its
// TMPDIR (Run's), which it may write, are no refusal. Moved here from internal/loop:
// what d's agent may write is this package's to know.
func Refusals(d Driver, p *sandbox.Policy, log *os.File) []sandbox.Refusal {
	if fi, err := log.Stat(); err == nil && fi.Size() > maxRefusalScan {
		_, _ = log.Seek(fi.Size()-maxRefusalScan, io.SeekStart)
	}
	also := StateOf(d, os.Environ()).Paths()
	var out []sandbox.Refusal
	tmp := filepath.Join(os.TempDir(), "git-ralph-"+d.Name()+"-")
	for _, r := range sandbox.Refusals(p, also, log) {
		if !strings.HasPrefix(r.Path, tmp) { // the attempt's TMPDIR, gone by now
			out = append(out, r)
		}
	}
	return out
}
