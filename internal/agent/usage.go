package agent

// Reporter is implemented by drivers whose agent reports what it used: a
// cost in US dollars (Result.CostUSD), token counts (Result.InputTokens,
// Result.OutputTokens). A driver that does not implement it reports neither,
// so a budget on either could not cap it.
type Reporter interface {
	Reports() (cost, tokens bool)
}

// Reports says whether the agent d runs, configured by req (a custom
// agent's format), reports its cost and its tokens.
func Reports(d Driver, req Request) (cost, tokens bool) {
	if c, ok := d.(Configurer); ok {
		d = c.Configure(req)
	}
	if r, ok := d.(Reporter); ok {
		return r.Reports()
	}
	return false, false
}

// Reports: claude reports both (result.total_cost_usd, result.usage).
func (Claude) Reports() (cost, tokens bool) { return true, true }

// Reports: codex reports tokens only (turn.completed.usage).
func (Codex) Reports() (cost, tokens bool) { return false, true }

// Reports: gemini reports tokens only (result.stats).
func (Gemini) Reports() (cost, tokens bool) { return false, true }

// Reports: opencode reports both (step_finish cost and tokens).
func (OpenCode) Reports() (cost, tokens bool) { return true, true }

// Reports: amp reports tokens only (the assistant messages' usage).
func (Amp) Reports() (cost, tokens bool) { return false, true }

// Reports: cursor reports neither.
func (Cursor) Reports() (cost, tokens bool) { return false, false }

// Reports: copilot reports tokens (its usage file) and premium requests, no
// dollars.
func (Copilot) Reports() (cost, tokens bool) { return false, true }

// Reports: qwen reports tokens only (result.usage).
func (Qwen) Reports() (cost, tokens bool) { return false, true }

// Reports: a custom agent speaking Claude Code's stream-json reports what
// its result lines carry (both, as far as git-ralph can know); a plain-text
// one reports neither.
func (c Custom) Reports() (cost, tokens bool) {
	if c.Format == FormatClaudeStreamJSON {
		return true, true
	}
	return false, false
}
