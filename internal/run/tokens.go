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
