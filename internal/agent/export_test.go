package agent

// The helper (helper_test.go) for the tests of Run in package agent_test, which
// run it with Claude Code's driver.
const HelperEnv = helperEnv

var (
	ChildPid = childPid
	WaitGone = waitGone
	NewFlood = newFlood
)
