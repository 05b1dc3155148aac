package fakeagent

import (
	"fmt"
	"strings"
)

// The options of the other CLIs. Unlike claudeOptions these tables list the
// flags too, so that an unknown option is refused as the real CLI refuses it.

// geminiOptions are gemini 0.61.0's (help/gemini-help.txt); yargs arrays
// take values up to the next option.
var geminiOptions = map[string]byte{
	"-d": argFlag, "--debug": argFlag, "-m": argValue, "--model": argValue,
	"-p": argValue, "--prompt": argValue, "-i": argValue, "--prompt-interactive": argValue,
	"--skip-trust": argFlag, "-w": argOptional, "--worktree": argOptional,
	"-s": argFlag, "--sandbox": argFlag, "-y": argFlag, "--yolo": argFlag,
	"--approval-mode": argValue, "--policy": argVariadic, "--admin-policy": argVariadic,
	"--acp": argFlag, "--experimental-acp": argFlag, "--allowed-mcp-server-names": argVariadic,
	"--allowed-tools": argVariadic, "-e": argVariadic, "--extensions": argVariadic,
	"-l": argFlag, "--list-extensions": argFlag, "-r": argValue, "--resume": argValue,
	"--session-file": argValue, "--session-id": argValue, "--list-sessions": argFlag,
	"--delete-session": argValue, "--include-directories": argVariadic, "--screen-reader": argFlag,
	"-o": argValue, "--output-format": argValue, "--raw-output": argFlag,
	"--accept-raw-output-risk": argFlag, "-v": argFlag, "--version": argFlag, "-h": argFlag, "--help": argFlag,
}

// opencodeOptions are `opencode run`'s, 1.18.33 (help/opencode-run-help.txt).
var opencodeOptions = map[string]byte{
	"-h": argFlag, "--help": argFlag, "-v": argFlag, "--version": argFlag,
	"--print-logs": argFlag, "--log-level": argValue, "--pure": argFlag, "--command": argValue,
	"-c": argFlag, "--continue": argFlag, "-s": argValue, "--session": argValue, "--fork": argFlag,
	"--share": argFlag, "-m": argValue, "--model": argValue, "--agent": argValue, "--format": argValue,
	"-f": argVariadic, "--file": argVariadic, "--title": argOptional, "--attach": argValue,
	"-p": argValue, "--password": argValue, "-u": argValue, "--username": argValue,
	"--dir": argValue, "--port": argValue, "--variant": argValue, "--thinking": argFlag,
	"-i": argFlag, "--interactive": argFlag, "--auto": argFlag,
}

// ampOptions are amp's top-level options (help/amp-help.txt) plus the
// hidden --dangerously-allow-all (docs/AGENTS.md, "Amp").
var ampOptions = map[string]byte{
	"--visibility": argValue, "-V": argFlag, "--version": argFlag, "-v": argFlag,
	"--notifications": argFlag, "--no-notifications": argFlag, "--color": argFlag, "--no-color": argFlag,
	"--settings-file": argValue, "--log-level": argValue, "--log-file": argValue,
	"--ide": argFlag, "--no-ide": argFlag, "--mcp-config": argValue, "-m": argValue, "--mode": argValue,
	"--features": argValue, "--fast": argFlag, "--executor": argValue, "--runner-dir": argValue,
	"--no-tui": argFlag, "--amp-env": argFlag, "--remote-control-terminal": argFlag,
	"--no-remote-control-terminal": argFlag, "-x": argOptional, "--execute": argOptional,
	"-ox": argFlag, "--orb-execute": argFlag, "--attach": argValue, "--project": argOptional,
	"--orb-size": argValue, "--title": argValue, "--stream-json": argFlag, "--stream-json-thinking": argFlag,
	"--stream-json-input": argFlag, "--plugin-ready-timeout": argOptional, "--no-archive-after-execute": argFlag,
	"-l": argValue, "--label": argValue, "-h": argFlag, "--help": argFlag,
	"--dangerously-allow-all": argFlag,
}

// cursorOptions are cursor-agent's, from its documentation
// (docs/AGENTS.md, "Cursor").
var cursorOptions = map[string]byte{
	"-p": argFlag, "--print": argFlag, "--output-format": argValue, "--stream-partial-output": argFlag,
	"-f": argFlag, "--force": argFlag, "--yolo": argFlag, "--trust": argFlag, "--sandbox": argValue,
	"--approve-mcps": argFlag, "--mode": argValue, "--resume": argOptional, "--continue": argFlag,
	"--api-key": argValue, "--workspace": argValue, "--worktree": argOptional, "--model": argValue,
	"-h": argFlag, "--help": argFlag, "-v": argFlag, "--version": argFlag,
}

// unknownOption returns the first option of opts that table lacks.
func unknownOption(opts []option, table map[string]byte) string {
	for _, o := range opts {
		if _, ok := table[o.name]; !ok {
			return o.name
		}
	}
	return ""
}

// parseGeminiArgs understands gemini's command line. yargs reports an
// unknown option or an invalid choice and exits 1.
func parseGeminiArgs(argv []string) cliArgs {
	var c cliArgs
	opts, pos, missing := splitArgs(argv, geminiOptions)
	if missing != "" {
		c.errCode, c.errMsg = 1, fmt.Sprintf("Not enough arguments following: %s\n", strings.TrimLeft(missing, "-"))
		return c
	}
	if u := unknownOption(opts, geminiOptions); u != "" {
		c.errCode, c.errMsg = 1, fmt.Sprintf("Unknown argument: %s\n", strings.TrimLeft(u, "-"))
		return c
	}
	for _, o := range opts {
		switch o.name {
		case "-m", "--model":
			c.model = o.val()
		case "-p", "--prompt":
			v := o.val()
			c.prompt = &v
		case "-i", "--prompt-interactive":
			c.usage = "gemini -i (interactive mode) is not emulated"
		case "-y", "--yolo":
			c.yolo = true
		case "--approval-mode":
			c.approvalMode = o.val()
		case "--skip-trust":
			c.trust = true
		case "-o", "--output-format":
			c.outputFormat = o.val()
		case "--session-id":
			c.sessionID = o.val()
		}
	}
	switch c.outputFormat {
	case "", "text", "json", "stream-json":
	default:
		c.errCode, c.errMsg = 1, fmt.Sprintf("Invalid values:\n  Argument: output-format, Given: %q, Choices: \"text\", \"json\", \"stream-json\"\n", c.outputFormat)
		return c
	}
	switch c.approvalMode {
	case "", "default", "auto_edit", "yolo", "plan":
	default:
		c.errCode, c.errMsg = 1, fmt.Sprintf("Invalid values:\n  Argument: approval-mode, Given: %q, Choices: \"default\", \"auto_edit\", \"yolo\", \"plan\"\n", c.approvalMode)
		return c
	}
	if c.approvalMode == "yolo" {
		c.yolo = true
	}
	if c.prompt == nil && len(pos) > 0 {
		// With stdin not a terminal, the query runs headless too.
		q := strings.Join(pos, " ")
		c.prompt = &q
	}
	return c
}

// geminiChecks emulates the refusal in a folder gemini was never told to
// trust (exit 55, docs/AGENTS.md, "Gemini CLI").
func (f *fake) geminiChecks() {
	if !f.cli.trust && f.env("GEMINI_CLI_TRUST_WORKSPACE") != "true" {
		f.cli.errCode, f.cli.errMsg = 55, "Gemini CLI is not running in a trusted directory. To proceed, either use --skip-trust, "+
			"set the GEMINI_CLI_TRUST_WORKSPACE=true environment variable, or trust this directory in interactive mode.\n"
	}
}

// parseOpenCodeArgs understands `opencode [options] run [options] [message..]`.
func parseOpenCodeArgs(argv []string) cliArgs {
	var c cliArgs
	opts, pos, missing := splitArgs(argv, opencodeOptions)
	if missing != "" {
		c.errCode, c.errMsg = 1, fmt.Sprintf("Not enough arguments following: %s\n", strings.TrimLeft(missing, "-"))
		return c
	}
	if len(pos) == 0 || pos[0] != "run" {
		c.usage = "opencode was called without the run subcommand; only `opencode run` is emulated"
		return c
	}
	pos = pos[1:]
	if u := unknownOption(opts, opencodeOptions); u != "" {
		c.errCode, c.errMsg = 1, fmt.Sprintf("Unknown argument: %s\n", strings.TrimLeft(u, "-"))
		return c
	}
	for _, o := range opts {
		switch o.name {
		case "-m", "--model":
			c.model = o.val()
		case "--format":
			c.outputFormat = o.val()
		case "--auto":
			c.yolo = true
		case "--dir":
			c.cd = o.val()
		case "-s", "--session":
			c.sessionID = o.val()
		case "-i", "--interactive":
			c.usage = "opencode run --interactive is not emulated"
			return c
		}
	}
	switch c.outputFormat {
	case "", "default", "json":
	default:
		c.errCode, c.errMsg = 1, fmt.Sprintf("Invalid values:\n  Argument: format, Given: %q, Choices: \"default\", \"json\"\n", c.outputFormat)
		return c
	}
	if c.model != "" && !strings.Contains(c.model, "/") {
		c.errCode, c.errMsg = 1, fmt.Sprintf("Error: model %q is not in the format provider/model\n", c.model)
		return c
	}
	if len(pos) > 0 {
		m := strings.Join(pos, " ")
		c.prompt = &m
	}
	return c
}

// parseAmpArgs understands amp's execute mode. commander refuses an unknown
// option with exit 1 (docs/AGENTS.md, "Amp").
func parseAmpArgs(argv []string) cliArgs {
	var c cliArgs
	opts, pos, missing := splitArgs(argv, ampOptions)
	if missing != "" {
		c.errCode, c.errMsg = 1, fmt.Sprintf("error: option '%s <value>' argument missing\n", missing)
		return c
	}
	if u := unknownOption(opts, ampOptions); u != "" {
		c.errCode, c.errMsg = 1, fmt.Sprintf("error: unknown option '%s'\n", u)
		return c
	}
	if len(pos) > 0 {
		c.usage = fmt.Sprintf("amp subcommand %q is not emulated; only execute mode (-x) is", pos[0])
		return c
	}
	for _, o := range opts {
		switch o.name {
		case "-x", "--execute":
			c.execute = true
			if len(o.vals) > 0 {
				v := o.val()
				c.prompt = &v
			}
		case "--stream-json", "--stream-json-thinking":
			c.streamJSON = true
		case "--stream-json-input":
			c.usage = "amp --stream-json-input is not emulated"
			return c
		case "--dangerously-allow-all":
			c.yolo = true
		case "-m", "--mode":
			c.model = o.val()
		}
	}
	// Execute mode is enabled automatically when stdout is redirected, as it
	// always is here.
	c.execute = true
	return c
}

// parseCursorArgs understands cursor-agent's print mode.
func parseCursorArgs(argv []string) cliArgs {
	var c cliArgs
	opts, pos, missing := splitArgs(argv, cursorOptions)
	if missing != "" {
		c.errCode, c.errMsg = 1, fmt.Sprintf("error: option '%s <value>' argument missing\n", missing)
		return c
	}
	if u := unknownOption(opts, cursorOptions); u != "" {
		c.errCode, c.errMsg = 1, fmt.Sprintf("error: unknown option '%s'\n", u)
		return c
	}
	for _, o := range opts {
		switch o.name {
		case "-p", "--print":
			c.print = true
		case "--output-format":
			c.outputFormat = o.val()
		case "-f", "--force", "--yolo":
			c.yolo = true
		case "--trust":
			c.trust = true
		case "--model":
			c.model = o.val()
		case "--workspace":
			c.cd = o.val()
		case "--resume":
			c.sessionID = o.val()
		}
	}
	switch c.outputFormat {
	case "", "text", "json", "stream-json":
	default:
		c.errCode, c.errMsg = 1, fmt.Sprintf("error: option '--output-format <format>' argument '%s' is invalid. Allowed choices are text, json, stream-json.\n", c.outputFormat)
		return c
	}
	if len(pos) > 0 {
		p := strings.Join(pos, " ")
		c.prompt = &p
	}
	return c
}

// cursorChecks emulates the workspace-trust prompt a headless run cannot
// answer (docs/AGENTS.md, "Cursor": --trust is needed for headless runs).
func (f *fake) cursorChecks() {
	if !f.cli.trust {
		f.cli.errCode, f.cli.errMsg = 1, "Workspace Trust Required: cursor-agent cannot ask whether to trust "+
			"this directory in print mode. Pass --trust to trust it for this run.\n"
	}
}
