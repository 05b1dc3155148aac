// Package agenttest holds what the tests of the agent drivers share: Recorder (an
// agent.Events that keeps every event), Decode (a transcript through a driver),
// Want and Check (what decoding a transcript must give), the promises of the
// reference transcripts (Complete, CompleteText, …) and WriteScript and
// ScriptRequest (a shell script as a stand-in agent for agent.Run). Only tests
// import it; it runs no agent of its own.
package agenttest

import (
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/git-ralph/git-ralph/internal/agent"
)

// Recorder is an Events that remembers everything.
type Recorder struct {
	Texts     []string
	Tools     []string // "name: summary"
	Terminals int
}

func (r *Recorder) Text(s string) { r.Texts = append(r.Texts, s) }

func (r *Recorder) Tool(name, summary string) { r.Tools = append(r.Tools, name+": "+summary) }

func (r *Recorder) Terminal() { r.Terminals++ }

// MatchText compares exactly, or by prefix when want ends in "…".
func MatchText(got, want string) bool {
	if p, ok := strings.CutSuffix(want, "…"); ok {
		return strings.HasPrefix(got, p)
	}
	return got == want
}

// Decode decodes the transcript at path with d, recording its events.
func Decode(t *testing.T, d agent.Driver, path string) (agent.Result, *Recorder) {
	t.Helper()
	name := filepath.Base(path)
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rec := &Recorder{}
	res, err := d.Decode(f, rec)
	if err != nil {
		t.Fatalf("Decode(%s): %v", name, err)
	}
	return res, rec
}

// Want is what decoding a transcript must give.
type Want struct {
	Saw, IsError bool
	Promise      agent.Promise
	Text         string   // exact, or a prefix when it ends in "…"
	Errors       []string // each exact or a prefix
	Class        agent.FailureClass
	RetryAfter   time.Duration
	Fatal        bool
	Turns        int
	In, Out      int64
	Cost         float64 // -1: nil
	Session      string
	Model        string
	Texts        int      // Text events
	Tools        []string // Tool events, "name: summary"
	Terminals    int
}

func Check(t *testing.T, res agent.Result, rec *Recorder, w Want) {
	t.Helper()
	if res.SawResult != w.Saw || res.IsError != w.IsError {
		t.Errorf("SawResult, IsError = %v, %v; want %v, %v", res.SawResult, res.IsError, w.Saw, w.IsError)
	}
	if got := res.Promise(); got != w.Promise {
		t.Errorf("Promise() = %+v, want %+v", got, w.Promise)
	}
	if !MatchText(res.Text, w.Text) {
		t.Errorf("Text = %q, want %q", res.Text, w.Text)
	}
	if len(res.Errors) != len(w.Errors) {
		t.Errorf("Errors = %q, want %q", res.Errors, w.Errors)
	} else {
		for i := range w.Errors {
			if !MatchText(res.Errors[i], w.Errors[i]) {
				t.Errorf("Errors[%d] = %q, want %q", i, res.Errors[i], w.Errors[i])
			}
		}
	}
	if res.Class != w.Class || res.RetryAfter != w.RetryAfter {
		t.Errorf("Class, RetryAfter = %v, %v; want %v, %v", res.Class, res.RetryAfter, w.Class, w.RetryAfter)
	}
	if (res.Fatal != "") != w.Fatal {
		t.Errorf("Fatal = %q, want set: %v", res.Fatal, w.Fatal)
	}
	if res.Turns != w.Turns || res.InputTokens != w.In || res.OutputTokens != w.Out {
		t.Errorf("Turns, InputTokens, OutputTokens = %d, %d, %d; want %d, %d, %d",
			res.Turns, res.InputTokens, res.OutputTokens, w.Turns, w.In, w.Out)
	}
	switch {
	case w.Cost < 0 && res.CostUSD != nil:
		t.Errorf("CostUSD = %v, want nil", *res.CostUSD)
	case w.Cost >= 0 && res.CostUSD == nil:
		t.Errorf("CostUSD = nil, want %v", w.Cost)
	case w.Cost >= 0 && math.Abs(*res.CostUSD-w.Cost) > 1e-9:
		t.Errorf("CostUSD = %v, want %v", *res.CostUSD, w.Cost)
	}
	if res.SessionID != w.Session || res.Model != w.Model {
		t.Errorf("SessionID, Model = %q, %q; want %q, %q", res.SessionID, res.Model, w.Session, w.Model)
	}
	if rec != nil {
		if len(rec.Texts) != w.Texts {
			t.Errorf("Text events = %q, want %d", rec.Texts, w.Texts)
		}
		if !slices.Equal(rec.Tools, w.Tools) {
			t.Errorf("Tool events = %q, want %q", rec.Tools, w.Tools)
		}
		if rec.Terminals != w.Terminals {
			t.Errorf("Terminal events = %d, want %d", rec.Terminals, w.Terminals)
		}
	}
}

var (
	Complete     = agent.Promise{Kind: agent.PromiseComplete}
	CompleteText = "Created hello.txt and committed it.\n\n<promise>COMPLETE</promise>"
	FailedTests  = agent.Promise{Kind: agent.PromiseFailed, Reason: "tests did not pass"}
	FailedText   = "I could not finish.\n\n<promise>FAILED: tests did not pass</promise>"
	EchoFailed   = agent.Promise{Kind: agent.PromiseFailed, Reason: "go test ./... fails in pkg/loop"}
	EchoText     = "Tests still fail.\n\n<promise>FAILED: go test ./... fails in pkg/loop</promise>"
)

// WriteScript writes an executable shell script and returns its path.
func WriteScript(t *testing.T, body string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "agent.sh")
	if err := os.WriteFile(path, []byte("#!/bin/sh\n"+body), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

func ScriptRequest(t *testing.T) agent.Request {
	return agent.Request{Dir: t.TempDir(), Grace: 2 * time.Second, KillGrace: 2 * time.Second}
}
