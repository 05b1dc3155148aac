package run

import "math"

// Spent is what the record's attempts report of the run: the sums of their costs and
// tokens, and whether any attempt reported one. It is the only source of a run's cost and
// tokens: a record's totals are input (a negative or huge one would switch a budget off),
// never read. A negative or NaN figure counts as nothing; the token sum stops at MaxInt64.
func (r *Record) Spent() (cost float64, costKnown bool, tokens int64, tokensKnown bool) {
	add := func(c *float64, in, out int64) {
		if c != nil {
			costKnown = true
			if *c > 0 { // false for NaN
				cost += *c
			}
		}
		in, out = max(in, 0), max(out, 0)
		if in > math.MaxInt64-out {
			in, out = math.MaxInt64, 0
		}
		if n := in + out; n > 0 {
			tokensKnown = true
			if tokens > math.MaxInt64-n {
				tokens = math.MaxInt64
			} else {
				tokens += n
			}
		}
	}
	for _, a := range r.Attempts {
		add(a.CostUSD, a.InputTokens, a.OutputTokens)
		if j := a.Judge; j != nil { // the judge's run counts as the agent's does
			add(j.CostUSD, j.InputTokens, j.OutputTokens)
		}
	}
	return cost, costKnown, tokens, tokensKnown
}

// SumAttempts sets the record's totals (CostUSD, CostKnown, Tokens, TokensKnown) to
// what its attempts report (Spent). Load does it to every record it reads, so a
// record written before git-ralph summed the tokens gets them too.
func (r *Record) SumAttempts() {
	r.CostUSD, r.CostKnown, r.Tokens, r.TokensKnown = r.Spent()
}

// IsRemote says the run is on GitHub Actions: dispatched (or being dispatched) and
// not yet brought home.
func (r *Record) IsRemote() bool {
	return r.Remote != nil && (r.Status == Dispatched || r.Status == Dispatching)
}
