package agent

// Reporter is implemented by drivers whose agent reports what it used: a
// cost in US dollars (Result.CostUSD), token counts (Result.InputTokens,
// Result.OutputTokens). A driver that does not implement it reports neither,
// so a budget on either could not cap it.
type Reporter interface {
	Reports() (cost, tokens bool)
}

// Reports says whether the agent d runs reports its cost and its tokens.
func Reports(d Driver) (cost, tokens bool) {
	if r, ok := d.(Reporter); ok {
		return r.Reports()
	}
	return false, false
}
