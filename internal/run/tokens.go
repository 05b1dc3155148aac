package run

import "math"

// Spent is what the record's attempts report of the run: the sums of their costs and
// tokens, and whether any attempt reported one. It is the only source of a run's cost and
// tokens: a record's totals are input (a negative or huge one would switch a budget off),
// never read. A negative or NaN figure counts as nothing; the token sum stops at MaxInt64.
func (r *Record) Spent() (cost float64, costKnown bool, tokens int64, tokensKnown bool) {
	for _, a := range r.Attempts {
		if a.CostUSD != nil {
			costKnown = true
			if c := *a.CostUSD; c > 0 { // false for NaN
				cost += c
			}
		}
		in, out := max(a.InputTokens, 0), max(a.OutputTokens, 0)
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
