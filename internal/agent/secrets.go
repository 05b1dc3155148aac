package agent

import (
	"slices"
	"strings"
)

// SecretEnv are the variables that hold git-ralph's own credentials: the
// GitHub tokens that finish --pr and the Actions commands use. The agent
// needs none of them to write code, so its environment loses them unless the
// user keeps one by name (--agent-env-keep, ralph.agentEnvKeep). A driver
// whose agent authenticates with one of them (GitHub Copilot's CLI) should
// say so in its install hint rather than keep it silently.
var SecretEnv = []string{"GH_TOKEN", "GITHUB_TOKEN", "GH_ENTERPRISE_TOKEN", "GITHUB_ENTERPRISE_TOKEN"}

// SocketEnv are the variables that lead a program to a service of the user's that
// acts for them (agents that sign, buses and engines that start things, displays and
// multiplexers that type): the agent's environment loses them unless the user keeps
// one by name, as for SecretEnv (docs/SANDBOX.md, "What else it is denied").
var SocketEnv = []string{
	"SSH_AUTH_SOCK", "SSH_AGENT_PID", "GPG_AGENT_INFO",
	"DBUS_SESSION_BUS_ADDRESS", "DBUS_SYSTEM_BUS_ADDRESS",
	"DOCKER_HOST", "CONTAINER_HOST",
	"DISPLAY", "WAYLAND_DISPLAY", "XAUTHORITY",
	"TMUX", "TMUX_PANE", "STY", "SWAYSOCK", "I3SOCK", "HYPRLAND_INSTANCE_SIGNATURE",
	"KITTY_LISTEN_ON", "WEZTERM_UNIX_SOCKET", "NVIM", "NVIM_LISTEN_ADDRESS",
}

// IsSecretEnv reports whether name is one of SecretEnv or SocketEnv: what the
// agent's environment loses unless kept.
func IsSecretEnv(name string) bool {
	return slices.Contains(SecretEnv, name) || slices.Contains(SocketEnv, name)
}

// WithoutSecrets returns env (KEY=VALUE entries) without the SecretEnv and
// SocketEnv variables, except those named in keep. env itself is not changed.
func WithoutSecrets(env, keep []string) []string {
	out := make([]string, 0, len(env))
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		if IsSecretEnv(k) && !slices.Contains(keep, k) {
			continue
		}
		out = append(out, kv)
	}
	return out
}
