package fakeagent

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"
)

// scenario is the whole JSON document; its embedded script is the default run.
type scenario struct {
	script
	Dialect          string              `json:"dialect"`
	EmulateRootCheck bool                `json:"emulate_root_check"`
	Runs             []script            `json:"runs"`
	ByStory          map[string][]script `json:"by_story"`
	// Judge are the runs of the fake as git-ralph's judge (RALPH_JUDGE set), indexed
	// by RALPH_ATTEMPT-1, the last one repeating.
	Judge []script `json:"judge"`
}

// script is what one invocation does: a run, or the top level of a scenario.
type script struct {
	Steps      []step      `json:"steps"`
	After      []step      `json:"after"`
	Result     *resultSpec `json:"result"`
	TurnFailed *string     `json:"turn_failed"`
	Fail       *failSpec   `json:"fail"`
	ExpectArgs []string    `json:"expect_args"`
	Model      string      `json:"model"`
	SessionID  string      `json:"session_id"`
	Note       any         `json:"note"`
	Comment    any         `json:"comment"`
}

// failSpec ends the turn with a failure of the provider or the account,
// rendered in each dialect's own shape (see the package doc, "Failures").
type failSpec struct {
	Kind        string  `json:"kind"`          // api_error | overloaded | rate_limit | usage_limit | auth
	Message     *string `json:"message"`       // replaces the dialect's default error text
	Status      int     `json:"status"`        // the HTTP status shown where the dialect shows one
	RetryAfterS int     `json:"retry_after_s"` // said in the error when > 0
	ExitCode    *int    `json:"exit_code"`     // replaces the dialect's exit code
	Note        any     `json:"note"`
	Comment     any     `json:"comment"`
}

// The failure kinds.
const (
	failAPIError   = "api_error"
	failOverloaded = "overloaded"
	failRateLimit  = "rate_limit"
	failUsageLimit = "usage_limit"
	failAuth       = "auth"
)

type resultSpec struct {
	Subtype                  string          `json:"subtype"`
	IsError                  bool            `json:"is_error"`
	Text                     *string         `json:"text"`
	OmitResultText           bool            `json:"omit_result_text"`
	Errors                   []string        `json:"errors"`
	APIErrorStatus           json.RawMessage `json:"api_error_status"`
	ExitCode                 *int            `json:"exit_code"`
	NumTurns                 *int            `json:"num_turns"`
	StopReason               *string         `json:"stop_reason"`
	TerminalReason           *string         `json:"terminal_reason"`
	CostUSD                  float64         `json:"cost_usd"`
	InputTokens              int64           `json:"input_tokens"`
	OutputTokens             int64           `json:"output_tokens"`
	CacheReadInputTokens     int64           `json:"cache_read_input_tokens"`
	CacheCreationInputTokens int64           `json:"cache_creation_input_tokens"`
	CachedInputTokens        int64           `json:"cached_input_tokens"`
	CacheWriteInputTokens    int64           `json:"cache_write_input_tokens"`
	ReasoningOutputTokens    int64           `json:"reasoning_output_tokens"`
	PremiumRequests          float64         `json:"premium_requests"`
	Note                     any             `json:"note"`
	Comment                  any             `json:"comment"`
}

// step holds exactly one action (validated by check).
type step struct {
	Say         *string         `json:"say"`
	SayBytes    *int            `json:"say_bytes"`
	SpamLines   *spamSpec       `json:"spam_lines"`
	Flood       *floodSpec      `json:"flood"`
	Write       *writeSpec      `json:"write"`
	Bash        *string         `json:"bash"`
	Commit      *string         `json:"commit"`
	CheckStory  json.RawMessage `json:"check_story"`
	CheckTask   *string         `json:"check_task"`
	EchoPrompt  *bool           `json:"echo_prompt"`
	Event       json.RawMessage `json:"event"`
	Raw         *string         `json:"raw"`
	Newline     *bool           `json:"newline"`
	Stderr      *string         `json:"stderr"`
	Touch       *string         `json:"touch"`
	SleepMS     *int            `json:"sleep_ms"`
	Advance     *string         `json:"advance_clock"`
	WaitForFile *string         `json:"wait_for_file"`
	Hang        *hangSpec       `json:"hang"`
	Exit        *int            `json:"exit"`
	Crash       *crashSpec      `json:"crash"`
	Attack      *string         `json:"attack"`
	Note        any             `json:"note"`
	Comment     any             `json:"comment"`
}

type spamSpec struct {
	Count int    `json:"count"`
	Text  string `json:"text"`
}

type floodSpec struct {
	Bytes     int64 `json:"bytes"`
	LineBytes int64 `json:"line_bytes"`
}

type writeSpec struct {
	Path    string `json:"path"`
	Content string `json:"content"`
}

type hangSpec struct {
	IgnoreSIGTERM bool   `json:"ignore_sigterm"`
	IgnoreSIGINT  bool   `json:"ignore_sigint"`
	OnSIGTERMExit *int   `json:"on_sigterm_exit"`
	OnSIGINTExit  *int   `json:"on_sigint_exit"`
	SpawnChild    bool   `json:"spawn_child"`
	PIDFile       string `json:"pid_file"`
	SignalLog     string `json:"signal_log"`
	AdvanceClock  string `json:"advance_clock"`
}

type crashSpec struct {
	Signal string `json:"signal"`
}

// parseScenario decodes strictly: an unknown key is a typo that would
// otherwise silently do nothing.
func parseScenario(data []byte) (*scenario, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var sc scenario
	if err := dec.Decode(&sc); err != nil {
		return nil, fmt.Errorf("scenario: %w", err)
	}
	if dec.More() {
		return nil, errors.New("scenario: trailing data after the JSON object")
	}
	if sc.Dialect != "" && !slices.Contains(dialects, sc.Dialect) {
		return nil, fmt.Errorf("scenario: unknown dialect %q (want one of %q)", sc.Dialect, dialects)
	}
	if err := sc.script.check("scenario"); err != nil {
		return nil, err
	}
	for i, r := range sc.Runs {
		if err := r.check(fmt.Sprintf("runs[%d]", i)); err != nil {
			return nil, err
		}
	}
	for story, runs := range sc.ByStory {
		if len(runs) == 0 {
			return nil, fmt.Errorf("by_story[%q]: empty list of runs", story)
		}
		for i, r := range runs {
			if err := r.check(fmt.Sprintf("by_story[%q][%d]", story, i)); err != nil {
				return nil, err
			}
		}
	}
	for i, r := range sc.Judge {
		if err := r.check(fmt.Sprintf("judge[%d]", i)); err != nil {
			return nil, err
		}
	}
	return &sc, nil
}

func (s *script) check(where string) error {
	for i, st := range s.Steps {
		if err := st.check(); err != nil {
			return fmt.Errorf("%s.steps[%d]: %w", where, i, err)
		}
	}
	for i, st := range s.After {
		if err := st.check(); err != nil {
			return fmt.Errorf("%s.after[%d]: %w", where, i, err)
		}
	}
	if r := s.Result; r != nil && len(r.APIErrorStatus) > 0 && !json.Valid(r.APIErrorStatus) {
		return fmt.Errorf("%s.result.api_error_status: invalid JSON", where)
	}
	if fs := s.Fail; fs != nil {
		switch fs.Kind {
		case failAPIError, failOverloaded, failRateLimit, failUsageLimit, failAuth:
		default:
			return fmt.Errorf("%s.fail.kind: %q is not one of %s, %s, %s, %s, %s", where, fs.Kind,
				failAPIError, failOverloaded, failRateLimit, failUsageLimit, failAuth)
		}
		if fs.RetryAfterS < 0 {
			return fmt.Errorf("%s.fail.retry_after_s must not be negative", where)
		}
		if s.TurnFailed != nil {
			return fmt.Errorf("%s: fail and turn_failed exclude each other", where)
		}
	}
	return nil
}

func (st *step) check() error {
	var n int
	count := func(set bool) {
		if set {
			n++
		}
	}
	count(st.Say != nil)
	count(st.SayBytes != nil)
	count(st.SpamLines != nil)
	count(st.Flood != nil)
	count(st.Write != nil)
	count(st.Bash != nil)
	count(st.Commit != nil)
	count(st.CheckStory != nil)
	count(st.CheckTask != nil)
	count(st.EchoPrompt != nil)
	count(st.Event != nil)
	count(st.Raw != nil)
	count(st.Stderr != nil)
	count(st.Touch != nil)
	count(st.SleepMS != nil)
	count(st.Advance != nil)
	count(st.WaitForFile != nil)
	count(st.Hang != nil)
	count(st.Exit != nil)
	count(st.Crash != nil)
	count(st.Attack != nil)
	switch {
	case n == 0:
		return errors.New("step has no action")
	case n > 1:
		return errors.New("step has more than one action")
	case st.Newline != nil && st.Raw == nil:
		return errors.New(`"newline" belongs to a "raw" step`)
	case st.SayBytes != nil && *st.SayBytes < 0:
		return errors.New("say_bytes must not be negative")
	case st.SpamLines != nil && st.SpamLines.Count < 0:
		return errors.New("spam_lines.count must not be negative")
	case st.Flood != nil && (st.Flood.Bytes < 0 || st.Flood.LineBytes < 0):
		return errors.New("flood sizes must not be negative")
	case st.Write != nil && st.Write.Path == "":
		return errors.New("write.path is empty")
	case st.Touch != nil && *st.Touch == "":
		return errors.New("touch path is empty")
	case st.Attack != nil && *st.Attack == "":
		return errors.New("attack is empty")
	case st.WaitForFile != nil && *st.WaitForFile == "":
		return errors.New("wait_for_file path is empty")
	case st.CheckTask != nil && *st.CheckTask == "":
		return errors.New("check_task id is empty")
	case st.SleepMS != nil && *st.SleepMS < 0:
		return errors.New("sleep_ms must not be negative")
	case st.Advance != nil && !validAdvance(*st.Advance):
		return errors.New("advance_clock is not a positive Go duration")
	case st.Hang != nil && st.Hang.AdvanceClock != "" && !validAdvance(st.Hang.AdvanceClock):
		return errors.New("hang.advance_clock is not a positive Go duration")
	case st.Event != nil && !json.Valid(st.Event):
		return errors.New("event is not valid JSON")
	}
	if st.CheckStory != nil {
		if _, _, err := st.checkStoryTarget(); err != nil {
			return err
		}
	}
	if st.Crash != nil {
		if _, err := parseSignal(st.Crash.Signal); err != nil {
			return err
		}
	}
	return nil
}

// checkStoryTarget decodes check_story: true (the story in RALPH_STORY), or
// a story id as a string or number. ok is false for check_story: false.
func (st *step) checkStoryTarget() (story string, ok bool, err error) {
	var b bool
	if json.Unmarshal(st.CheckStory, &b) == nil {
		return "", b, nil
	}
	var s string
	if json.Unmarshal(st.CheckStory, &s) == nil && s != "" {
		return s, true, nil
	}
	var n json.Number
	if json.Unmarshal(st.CheckStory, &n) == nil {
		if _, err := strconv.ParseUint(n.String(), 10, 64); err == nil {
			return n.String(), true, nil
		}
	}
	return "", false, errors.New("check_story wants true or a story id")
}

// usesRuns reports whether selecting a run needs the invocation counter.
func (sc *scenario) usesRuns() bool { return len(sc.Runs) > 0 }

// selectRun picks the script for this invocation and names it for the record.
// k is the 0-based invocation number (only meaningful when runs are used).
func (sc *scenario) selectRun(story string, attempt, k int) (script, string, error) {
	if len(sc.ByStory) > 0 {
		key := story
		runs, ok := sc.ByStory[key]
		if !ok || story == "" {
			key = "*"
			runs, ok = sc.ByStory[key]
		}
		if ok {
			i := min(max(attempt, 1)-1, len(runs)-1)
			return sc.inherit(runs[i]), fmt.Sprintf("by_story[%s][%d]", key, i), nil
		}
		if sc.Runs == nil && sc.Steps == nil {
			return script{}, "", fmt.Errorf("by_story has no entry for RALPH_STORY=%q and no \"*\", and the scenario has no runs or steps to fall back to", story)
		}
	}
	if len(sc.Runs) > 0 {
		i := min(k, len(sc.Runs)-1)
		return sc.inherit(sc.Runs[i]), fmt.Sprintf("runs[%d]", i), nil
	}
	return sc.script, "steps", nil
}

// selectJudge picks the run of the fake as the judge of attempt (RALPH_JUDGE set):
// judge[attempt-1], the last one repeating. A judge the scenario has no run for is the
// test author's mistake.
func (sc *scenario) selectJudge(attempt int) (script, string, error) {
	if len(sc.Judge) == 0 {
		return script{}, "", errors.New("RALPH_JUDGE is set but the scenario has no judge runs")
	}
	i := min(max(attempt, 1)-1, len(sc.Judge)-1)
	return sc.inherit(sc.Judge[i]), fmt.Sprintf("judge[%d]", i), nil
}

// inherit fills the fields a run leaves unset from the top level (never the
// steps) and joins the expected arguments.
func (sc *scenario) inherit(r script) script {
	top := sc.script
	if r.Model == "" {
		r.Model = top.Model
	}
	if r.SessionID == "" {
		r.SessionID = top.SessionID
	}
	if r.Result == nil {
		r.Result = top.Result
	}
	if r.TurnFailed == nil && r.Fail == nil {
		r.TurnFailed = top.TurnFailed
	}
	if r.Fail == nil && r.TurnFailed == nil {
		r.Fail = top.Fail
	}
	if r.After == nil {
		r.After = top.After
	}
	r.ExpectArgs = append(append([]string(nil), top.ExpectArgs...), r.ExpectArgs...)
	return r
}

// hangOf returns the first hang step of the script, if any.
func (s *script) hangOf() *hangSpec {
	for _, steps := range [][]step{s.Steps, s.After} {
		for _, st := range steps {
			if st.Hang != nil {
				return st.Hang
			}
		}
	}
	return nil
}

func validAdvance(s string) bool {
	d, err := time.ParseDuration(s)
	return err == nil && d > 0
}
