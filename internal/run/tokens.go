package run

// SumOldTokens fills in Tokens for a record written before git-ralph summed them
// (TokensKnown unset): its attempts carry their own. A record that sums them is left
// as it is. Run it on each record before adding two together (a run brought home).
func (r *Record) SumOldTokens() {
	if r.TokensKnown {
		return
	}
	for _, a := range r.Attempts {
		if n := a.InputTokens + a.OutputTokens; n > 0 {
			r.Tokens += n
			r.TokensKnown = true
		}
	}
}

// IsRemote says the run is on GitHub Actions: dispatched (or being dispatched) and
// not yet brought home.
func (r *Record) IsRemote() bool {
	return r.Remote != nil && (r.Status == Dispatched || r.Status == Dispatching)
}
