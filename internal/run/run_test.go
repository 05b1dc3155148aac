package run

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestSaveLoadRemove(t *testing.T) {
	s := NewStore(t.TempDir())
	if _, err := s.Load("c"); !errors.Is(err, ErrNoRun) {
		t.Fatalf("Load of nothing = %v, want ErrNoRun", err)
	}
	cost := 0.25
	r := &Record{Change: "c", Branch: "ralph/c", Status: Running, Checkpoint: "abc",
		Attempts: []Attempt{{Story: "1", N: 1, Outcome: OutcomeFailed, Reason: "no", PassOn: true, CostUSD: &cost}}}
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	if err := s.Save(r, now); err != nil {
		t.Fatal(err)
	}
	got, err := s.Load("c")
	if err != nil {
		t.Fatal(err)
	}
	if got.Checkpoint != "abc" || got.Version != 1 || !got.Updated.Equal(now) || *got.Attempts[0].CostUSD != 0.25 || !got.Attempts[0].PassOn {
		t.Errorf("round trip: %+v", got)
	}
	// Save leaves no temporary file behind.
	entries, _ := os.ReadDir(s.ChangeDir("c"))
	for _, e := range entries {
		if e.Name() != "run.json" {
			t.Errorf("left %s in the change dir", e.Name())
		}
	}
	if names, _ := s.Changes(); len(names) != 1 || names[0] != "c" {
		t.Errorf("Changes = %v", names)
	}
	if err := s.Remove("c"); err != nil {
		t.Fatal(err)
	}
	if err := s.Remove("c"); err != nil {
		t.Errorf("second Remove: %v", err)
	}
	if names, _ := s.Changes(); len(names) != 0 {
		t.Errorf("Changes after Remove = %v", names)
	}
}

func TestLoadReportsACorruptRecord(t *testing.T) {
	s := NewStore(t.TempDir())
	if err := os.MkdirAll(s.ChangeDir("c"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(s.ChangeDir("c"), "run.json"), []byte("{"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Load("c"); err == nil || errors.Is(err, ErrNoRun) {
		t.Errorf("Load of a corrupt record = %v, want an error naming it", err)
	}
}

func TestLockIsExclusiveAndHeldReportsIt(t *testing.T) {
	s := NewStore(t.TempDir())
	if s.Held("c") {
		t.Fatal("Held before any lock")
	}
	if _, err := os.Stat(s.ChangeDir("c")); !os.IsNotExist(err) {
		t.Fatalf("Held created the change dir: %v", err)
	}
	l, err := s.Lock("c")
	if err != nil {
		t.Fatal(err)
	}
	if !s.Held("c") {
		t.Error("Held = false while locked")
	}
	if _, err := s.Lock("c"); !errors.Is(err, ErrLocked) {
		t.Errorf("second Lock = %v, want ErrLocked", err)
	}
	l.Unlock()
	if s.Held("c") {
		t.Error("Held = true after Unlock")
	}
	l2, err := s.Lock("c")
	if err != nil {
		t.Fatalf("Lock after Unlock: %v", err)
	}
	l2.Unlock()
}

func TestLearningsAreCreatedEmptyAndKept(t *testing.T) {
	s := NewStore(t.TempDir())
	if err := s.EnsureLearnings("c"); err != nil {
		t.Fatal(err)
	}
	if text, err := os.ReadFile(s.LearningsPath("c")); err != nil || len(text) != 0 {
		t.Fatalf("the learnings file = %q, %v; want it empty", text, err)
	}
	if err := os.WriteFile(s.LearningsPath("c"), []byte("use make\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := s.EnsureLearnings("c"); err != nil {
		t.Fatal(err)
	}
	if text, _ := os.ReadFile(s.LearningsPath("c")); string(text) != "use make\n" {
		t.Errorf("EnsureLearnings overwrote the file: %q", text)
	}
}

// TestSpent: a run's cost and tokens are the sums of its attempts', whatever totals the
// record carries; a negative or NaN figure of an attempt counts as nothing, and the
// token sum stops at the largest int64 rather than wrap to a negative.
func TestSpent(t *testing.T) {
	usd := func(v float64) *float64 { return &v }
	r := &Record{CostUSD: -1e300, CostKnown: true, Tokens: -5, TokensKnown: true, Attempts: []Attempt{
		{Story: "1", N: 1, CostUSD: usd(0.25), InputTokens: 100, OutputTokens: 20},
		{Story: "1", N: 2, CostUSD: usd(-7), InputTokens: -50},
		{Story: "2", N: 1, CostUSD: usd(math.NaN()), OutputTokens: 3},
	}}
	cost, costKnown, tokens, tokensKnown := r.Spent()
	if cost != 0.25 || !costKnown || tokens != 123 || !tokensKnown {
		t.Errorf("Spent = %v %v %d %v, want 0.25 true 123 true", cost, costKnown, tokens, tokensKnown)
	}
	r.SumAttempts()
	if r.CostUSD != 0.25 || r.Tokens != 123 {
		t.Errorf("SumAttempts left %v and %d", r.CostUSD, r.Tokens)
	}
	huge := &Record{Attempts: []Attempt{{InputTokens: math.MaxInt64, OutputTokens: 1}, {InputTokens: math.MaxInt64}}}
	if _, _, tokens, _ := huge.Spent(); tokens != math.MaxInt64 {
		t.Errorf("tokens %d, want the largest int64", tokens)
	}
	none := &Record{Attempts: []Attempt{{Story: "1", N: 1}}}
	if cost, costKnown, tokens, tokensKnown := none.Spent(); cost != 0 || costKnown || tokens != 0 || tokensKnown {
		t.Errorf("an attempt that reported nothing: %v %v %d %v", cost, costKnown, tokens, tokensKnown)
	}
}

// A stopped run has no process; one that runs keeps its own.
func TestStopClearsPID(t *testing.T) {
	r := &Record{PID: 42}
	r.Stop(Running, "", nil)
	if r.PID != 42 {
		t.Errorf("a running record lost its PID: %d", r.PID)
	}
	r.Stop(Failed, "could not save a failed attempt", errors.New("disk full"))
	if r.PID != 0 || r.StopCause != "disk full" {
		t.Errorf("a failed record: PID %d, cause %q", r.PID, r.StopCause)
	}
}

// A lock file removed or replaced while this process holds the change's lock is locked
// again where it now is; held by another process, Relock says so (ErrLocked), as a
// second loop on the change.
func TestRelock(t *testing.T) {
	s := NewStore(t.TempDir())
	l, err := s.Lock("x")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Unlock()
	if replaced, err := s.Relock("x"); replaced || err != nil {
		t.Fatalf("an untouched lock: %v %v", replaced, err)
	}
	path := filepath.Join(s.ChangeDir("x"), "lock")
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if s.Held("x") {
		t.Fatal("the test shows nothing: a removed lock file is still held")
	}
	if replaced, err := s.Relock("x"); !replaced || err != nil {
		t.Fatalf("a removed lock: %v %v", replaced, err)
	}
	if !s.Held("x") {
		t.Error("after Relock the change is not held")
	}
	if _, err := NewStore(filepath.Dir(s.Dir)).Lock("x"); !errors.Is(err, ErrLocked) {
		t.Errorf("another loop took the change after Relock: %v", err)
	}
	// replaced, and taken by another before this process looks
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	other, err := NewStore(filepath.Dir(s.Dir)).Lock("x")
	if err != nil {
		t.Fatal(err)
	}
	defer other.Unlock()
	if replaced, err := s.Relock("x"); !replaced || !errors.Is(err, ErrLocked) {
		t.Errorf("a lock another took: %v %v", replaced, err)
	}
}

// A lock taken again is this process's from then on: the next Relock finds it in place.
func TestRelockTwice(t *testing.T) {
	s := NewStore(t.TempDir())
	l, err := s.Lock("x")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Unlock()
	if err := os.Remove(filepath.Join(s.ChangeDir("x"), "lock")); err != nil {
		t.Fatal(err)
	}
	if replaced, err := s.Relock("x"); !replaced || err != nil {
		t.Fatalf("a removed lock: %v %v", replaced, err)
	}
	if replaced, err := s.Relock("x"); replaced || err != nil {
		t.Errorf("the lock taken again: %v %v", replaced, err)
	}
}

// The judge's cost and tokens count in the run's, beside its attempt's.
func TestSpentCountsTheJudge(t *testing.T) {
	c := func(f float64) *float64 { return &f }
	r := &Record{Attempts: []Attempt{
		{InputTokens: 10, OutputTokens: 5, Judge: &Judge{CostUSD: c(0.03), InputTokens: 100, OutputTokens: 1}},
		{CostUSD: c(0.02), InputTokens: 1, Judge: &Judge{Verdict: VerdictNone}},
	}}
	cost, costKnown, tokens, tokensKnown := r.Spent()
	if cost < 0.0499 || cost > 0.0501 || !costKnown || tokens != 117 || !tokensKnown {
		t.Errorf("Spent() = %v %v %v %v, want 0.05 true 117 true", cost, costKnown, tokens, tokensKnown)
	}
	if uc, ut := r.Attempts[0].Uses(); uc == nil || *uc != 0.03 || ut != 116 {
		t.Errorf("Uses() = %v %d", uc, ut)
	}
}
