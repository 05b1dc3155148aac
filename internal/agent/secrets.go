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

// IsSecretEnv reports whether name is one of SecretEnv.
func IsSecretEnv(name string) bool { return slices.Contains(SecretEnv, name) }

// WithoutSecrets returns env (KEY=VALUE entries) without the SecretEnv
// variables, except those named in keep. env itself is not changed.
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
