package agent

import (
	"slices"
	"testing"
)

func TestWithoutSecrets(t *testing.T) {
	env := []string{"PATH=/bin", "GH_TOKEN=a", "GITHUB_TOKEN=b", "GH_ENTERPRISE_TOKEN=c", "GITHUB_ENTERPRISE_TOKEN=d", "GH_HOST=example.com", "ANTHROPIC_API_KEY=k"}
	got := WithoutSecrets(env, nil)
	if want := []string{"PATH=/bin", "GH_HOST=example.com", "ANTHROPIC_API_KEY=k"}; !slices.Equal(got, want) {
		t.Errorf("WithoutSecrets(nil) = %q, want %q", got, want)
	}
	got = WithoutSecrets(env, []string{"GITHUB_TOKEN"})
	if want := []string{"PATH=/bin", "GITHUB_TOKEN=b", "GH_HOST=example.com", "ANTHROPIC_API_KEY=k"}; !slices.Equal(got, want) {
		t.Errorf("WithoutSecrets(GITHUB_TOKEN) = %q, want %q", got, want)
	}
	if len(env) != 7 || env[1] != "GH_TOKEN=a" {
		t.Errorf("WithoutSecrets changed its input: %q", env)
	}
}

// The variables that lead to a service of the user's go too, unless kept by name.
func TestWithoutSocketEnv(t *testing.T) {
	env := []string{"PATH=/bin", "SSH_AUTH_SOCK=/run/user/1000/ssh", "GPG_AGENT_INFO=/g", "DBUS_SESSION_BUS_ADDRESS=unix:path=/run/user/1000/bus",
		"DOCKER_HOST=unix:///run/docker.sock", "DISPLAY=:0", "TMUX=/tmp/tmux-1000/default,1,0", "XDG_RUNTIME_DIR=/run/user/1000"}
	got := WithoutSecrets(env, nil)
	if want := []string{"PATH=/bin", "XDG_RUNTIME_DIR=/run/user/1000"}; !slices.Equal(got, want) {
		t.Errorf("WithoutSecrets(nil) = %q, want %q", got, want)
	}
	got = WithoutSecrets(env, []string{"SSH_AUTH_SOCK"})
	if want := []string{"PATH=/bin", "SSH_AUTH_SOCK=/run/user/1000/ssh", "XDG_RUNTIME_DIR=/run/user/1000"}; !slices.Equal(got, want) {
		t.Errorf("WithoutSecrets(SSH_AUTH_SOCK) = %q, want %q", got, want)
	}
}
