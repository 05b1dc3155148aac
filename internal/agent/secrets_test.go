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
