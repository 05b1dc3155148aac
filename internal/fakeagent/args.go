package fakeagent

import (
	"fmt"
	"strings"
)

// cliArgs is what the fake understood of its command line.
type cliArgs struct {
	prompt *string // first positional argument (codex: after exec [resume ID])

	// claude
	print, verbose, skipPerms bool
	outputFormat              string
	permissionMode            string

	// codex
	lastMessageFile string // -o/--output-last-message
	cd              string // -C/--cd (opencode --dir, cursor --workspace)

	// gemini, opencode, amp, cursor
	yolo         bool   // gemini --yolo, opencode --auto, amp --dangerously-allow-all, cursor --force
	approvalMode string // gemini --approval-mode
	trust        bool   // gemini --skip-trust, cursor --trust
	streamJSON   bool   // amp --stream-json
	execute      bool   // amp -x
	usageFile    string // copilot --usage-output-file
	authType     string // qwen --auth-type

	model     string
	sessionID string // claude --session-id/--resume, codex exec resume ID

	// usage is a misuse of the fake itself (exit 64); errMsg/errCode an
	// error the real CLI prints.
	usage   string
	errMsg  string
	errCode int
}

// Option arities.
const (
	argValue    = 'v' // one value: --model X or --model=X
	argOptional = 'o' // a value if the next argument is not an option
	argVariadic = '*' // values up to the next option (commander's <x...>)
	argFlag     = 'f' // no value
)

// claudeOptions lists the options of claude 2.1.197 that take values (from
// its --help, plus the hidden --max-turns); any other option is a flag.
var claudeOptions = map[string]byte{
	"--add-dir": argVariadic, "--agent": argValue, "--agents": argValue,
	"--allowedTools": argVariadic, "--allowed-tools": argVariadic,
	"--append-system-prompt": argValue, "--append-system-prompt-file": argValue,
	"--betas": argVariadic, "-d": argOptional, "--debug": argOptional, "--debug-file": argValue,
	"--disallowedTools": argVariadic, "--disallowed-tools": argVariadic,
	"--effort": argValue, "--fallback-model": argValue, "--file": argVariadic,
	"--from-pr": argOptional, "--input-format": argValue, "--json-schema": argValue,
	"--max-budget-usd": argValue, "--max-turns": argValue, "--mcp-config": argVariadic,
	"--model": argValue, "-n": argValue, "--name": argValue, "--output-format": argValue,
	"--permission-mode": argValue, "--plugin-dir": argValue, "--plugin-url": argValue,
	"--prompt-suggestions": argOptional, "--remote-control": argOptional,
	"--remote-control-session-name-prefix": argValue, "-r": argOptional, "--resume": argOptional,
	"--session-id": argValue, "--setting-sources": argValue, "--settings": argValue,
	"--system-prompt": argValue, "--system-prompt-file": argValue, "--tools": argVariadic,
	"-w": argOptional, "--worktree": argOptional,
}

// codexOptions lists every option of `codex exec` 0.169.0 (and `exec
// resume`); codex rejects any other.
var codexOptions = map[string]byte{
	"-c": argValue, "--config": argValue, "--enable": argValue, "--disable": argValue,
	"-i": argVariadic, "--image": argVariadic, "-m": argValue, "--model": argValue,
	"--local-provider": argValue, "-p": argValue, "--profile": argValue,
	"-s": argValue, "--sandbox": argValue, "-C": argValue, "--cd": argValue,
	"--add-dir": argValue, "--thread-source": argValue, "--cyber-access-program": argValue,
	"--output-schema": argValue, "--color": argValue,
	"-o": argValue, "--output-last-message": argValue,
	"--strict-config": argFlag, "--oss": argFlag, "--approve-for-me": argFlag,
	"--dangerously-bypass-approvals-and-sandbox": argFlag, "--dangerously-bypass-hook-trust": argFlag,
	"--worktree": argFlag, "--skip-git-repo-check": argFlag, "--trust": argFlag,
	"--ephemeral": argFlag, "--ignore-user-config": argFlag, "--ignore-rules": argFlag,
	"--json": argFlag, "-h": argFlag, "--help": argFlag, "-V": argFlag, "--version": argFlag,
	"--last": argFlag, "--all": argFlag,
}

// option is one parsed option.
type option struct {
	name string
	vals []string
}

// splitArgs separates options from positional arguments. It reports the
// first option that lacks its value.
func splitArgs(argv []string, table map[string]byte) (opts []option, pos []string, missing string) {
	for i := 0; i < len(argv); i++ {
		a := argv[i]
		if a == "--" {
			pos = append(pos, argv[i+1:]...)
			break
		}
		if len(a) < 2 || a[0] != '-' {
			pos = append(pos, a)
			continue
		}
		name, val, hasVal := a, "", false
		if strings.HasPrefix(a, "--") {
			name, val, hasVal = strings.Cut(a, "=")
		}
		o := option{name: name}
		isOpt := func(s string) bool { return len(s) > 1 && s[0] == '-' }
		switch table[name] {
		case argValue:
			switch {
			case hasVal:
				o.vals = []string{val}
			case i+1 < len(argv):
				i++
				o.vals = []string{argv[i]}
			default:
				return opts, pos, name
			}
		case argOptional:
			if hasVal {
				o.vals = []string{val}
			} else if i+1 < len(argv) && !isOpt(argv[i+1]) {
				i++
				o.vals = []string{argv[i]}
			}
		case argVariadic:
			if hasVal {
				o.vals = []string{val}
			}
			for i+1 < len(argv) && !isOpt(argv[i+1]) {
				i++
				o.vals = append(o.vals, argv[i])
			}
			if len(o.vals) == 0 {
				return opts, pos, name
			}
		}
		opts = append(opts, o)
	}
	return opts, pos, ""
}

func (o option) val() string {
	if len(o.vals) == 0 {
		return ""
	}
	return o.vals[0]
}

// parseClaudeArgs understands claude's command line (argv without argv[0]).
func parseClaudeArgs(argv []string) cliArgs {
	var c cliArgs
	opts, pos, missing := splitArgs(argv, claudeOptions)
	if missing != "" {
		c.errCode, c.errMsg = 1, fmt.Sprintf("error: option '%s' argument missing\n", missing)
		return c
	}
	for _, o := range opts {
		switch o.name {
		case "-p", "--print":
			c.print = true
		case "--verbose":
			c.verbose = true
		case "--dangerously-skip-permissions":
			c.skipPerms = true
		case "--output-format":
			c.outputFormat = o.val()
		case "--permission-mode":
			c.permissionMode = o.val()
		case "--model":
			c.model = o.val()
		case "--session-id", "-r", "--resume":
			if v := o.val(); v != "" {
				c.sessionID = v
			}
		}
	}
	switch c.outputFormat {
	case "", "text", "json", "stream-json":
	default:
		c.errCode, c.errMsg = 1, fmt.Sprintf("error: option '--output-format <format>' argument '%s' is invalid. Allowed choices are text, json, stream-json.\n", c.outputFormat)
	}
	if len(pos) > 0 {
		c.prompt = &pos[0]
	}
	return c
}

// parseCodexArgs understands `codex [global options] exec [options] [resume
// ID] [PROMPT]`.
func parseCodexArgs(argv []string) cliArgs {
	var c cliArgs
	execAt := -1
	for i := 0; i < len(argv); i++ {
		a := argv[i]
		if a == "exec" || a == "e" {
			execAt = i
			break
		}
		if len(a) > 1 && a[0] == '-' {
			if codexOptions[a] == argValue && i+1 < len(argv) {
				i++
			}
			continue
		}
		break
	}
	if execAt < 0 {
		c.usage = "codex was called without the exec subcommand; only `codex exec --json` is emulated"
		return c
	}
	opts, pos, missing := splitArgs(argv[execAt+1:], codexOptions)
	if missing != "" {
		c.errCode, c.errMsg = 2, fmt.Sprintf("error: a value is required for '%s' but none was supplied\n\nFor more information, try '--help'.\n", missing)
		return c
	}
	json, last := false, false
	for _, o := range opts {
		if _, known := codexOptions[o.name]; !known {
			c.errCode, c.errMsg = 2, fmt.Sprintf("error: unexpected argument '%s' found\n\n  tip: to pass '%s' as a value, use '-- %s'\n\nUsage: codex exec [OPTIONS] [PROMPT]\n\nFor more information, try '--help'.\n", o.name, o.name, o.name)
			return c
		}
		switch o.name {
		case "--json":
			json = true
		case "--last":
			last = true
		case "-m", "--model":
			c.model = o.val()
		case "-o", "--output-last-message":
			c.lastMessageFile = o.val()
		case "-C", "--cd":
			c.cd = o.val()
		}
	}
	if len(pos) > 0 {
		switch pos[0] {
		case "resume":
			pos = pos[1:]
			if !last && len(pos) > 0 {
				c.sessionID, pos = pos[0], pos[1:]
			}
		case "fork", "review", "help":
			c.usage = fmt.Sprintf("`codex exec %s` is not emulated", pos[0])
			return c
		}
	}
	if !json {
		c.usage = "codex exec was called without --json; only the JSONL output is emulated"
		return c
	}
	if len(pos) > 0 {
		c.prompt = &pos[0]
	}
	return c
}
