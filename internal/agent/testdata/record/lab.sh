# lab.sh, sourced by record.sh and loop.sh: where each genuine CLI is installed in $LAB,
# how it is pointed at model.go on 127.0.0.1:$PORT (its environment and the provider
# configuration written into its HOME), and the model it is asked for. See README.md.

# bin AGENT: the argv prefix that runs the CLI installed in $LAB.
bin() {
	case $1 in
	copilot) echo "$LAB/node_modules/@github/copilot-linux-x64/copilot" ;;
	qwen) echo "node $LAB/node_modules/@qwen-code/qwen-code/cli.js" ;;
	claude) echo "$LAB/node_modules/@anthropic-ai/claude-code-linux-x64/claude" ;;
	codex) echo "$LAB/node_modules/@openai/codex-linux-x64/vendor/x86_64-unknown-linux-musl/bin/codex" ;;
	opencode) echo "$LAB/node_modules/opencode-linux-x64/bin/opencode" ;;
	gemini) echo "node $LAB/node_modules/@google/gemini-cli/bundle/gemini.js" ;;
	*) echo "unknown agent $1" >&2; return 1 ;;
	esac
}

# shims: $LAB/shim/<agent>, one per CLI, for git-ralph to find on PATH. With TRACE=1 the
# shim runs the CLI under strace, which writes every file system call that failed (-Z)
# to ~/.cache/trace/<agent>.<pid> (the cache is writable in the sandbox): grep them for
# EACCES (what the sandbox refused), EXDEV (a rename it refused) or EROFS. TRACE=all
# writes every call, failed or not. TRACE_CALLS names the calls traced (strace -e trace=),
# %file,%desc by default: e.g. %network,%process,chown,fchownat,fsetxattr,setpriority.
shims() {
	mkdir -p "$LAB/shim"
	for a in copilot qwen claude codex opencode gemini; do
		if [ -n "${TRACE:-}" ]; then
			z=-Z; [ "$TRACE" = all ] && z=
			printf '#!/bin/sh\nmkdir -p "$HOME/.cache/trace"\nexec strace -f -qq %s -e trace=%s -o "$HOME/.cache/trace/%s.$$" %s "$@"\n' "$z" "${TRACE_CALLS:-%file,%desc}" $a "$(bin $a)" > "$LAB/shim/$a"
		else
			printf '#!/bin/sh\nexec %s "$@"\n' "$(bin $a)" > "$LAB/shim/$a"
		fi
		chmod +x "$LAB/shim/$a"
	done
}

# model_of AGENT: the model git-ralph (or record.sh) asks for.
model_of() {
	case $1 in
	copilot) echo gpt-4.1 ;;
	qwen) echo qwen3-coder-plus ;;
	claude) echo claude-sonnet-4-5 ;;
	codex) echo gpt-5.5 ;;
	opencode) echo scripted/scripted-model ;;
	gemini) echo gemini-2.5-pro ;;
	esac
}

# env_of AGENT PORT: the CLI's own variables (KEY=VALUE words for env -i).
env_of() {
	case $1 in
	copilot) echo "COPILOT_OFFLINE=true COPILOT_PROVIDER_BASE_URL=http://127.0.0.1:$2/v1 COPILOT_PROVIDER_API_KEY=sk-loopback" ;;
	qwen) echo "OPENAI_API_KEY=sk-loopback OPENAI_BASE_URL=http://127.0.0.1:$2/v1 OPENAI_MODEL=qwen3-coder-plus" ;;
	# IS_SANDBOX=1: Claude Code refuses --dangerously-skip-permissions as root without it.
	claude) echo "ANTHROPIC_API_KEY=sk-loopback ANTHROPIC_BASE_URL=http://127.0.0.1:$2$([ "$(id -u)" = 0 ] && echo ' IS_SANDBOX=1')" ;;
	codex) echo "SCRIPTED_API_KEY=sk-loopback" ;;
	opencode) echo "SCRIPTED_API_KEY=sk-loopback" ;;
	gemini) echo "GEMINI_API_KEY=sk-loopback GOOGLE_GEMINI_BASE_URL=http://127.0.0.1:$2" ;;
	esac
}

# configure AGENT HOMEDIR PORT: the provider configuration the CLI reads from its HOME.
configure() {
	case $1 in
	codex)
		mkdir -p "$2/.codex"
		cat > "$2/.codex/config.toml" <<TOML
model_provider = "scripted"

[model_providers.scripted]
name = "scripted"
base_url = "http://127.0.0.1:$3/v1"
wire_api = "responses"
env_key = "SCRIPTED_API_KEY"
TOML
		;;
	opencode)
		mkdir -p "$2/.config/opencode"
		cat > "$2/.config/opencode/opencode.json" <<JSON
{
  "\$schema": "https://opencode.ai/config.json",
  "provider": {
    "scripted": {
      "npm": "@ai-sdk/openai-compatible",
      "name": "scripted",
      "options": {"baseURL": "http://127.0.0.1:$3/v1", "apiKey": "{env:SCRIPTED_API_KEY}"},
      "models": {"scripted-model": {"name": "scripted-model", "tool_call": true}}
    }
  }
}
JSON
		;;
	gemini)
		# With GOOGLE_GEMINI_BASE_URL set, 0.61.0 infers the "gateway" auth type and refuses
		# it ("Invalid auth method selected.", exit 41) unless the key type is selected here.
		mkdir -p "$2/.gemini"
		echo '{"security":{"auth":{"selectedType":"gemini-api-key"}}}' > "$2/.gemini/settings.json"
		;;
	esac
}
