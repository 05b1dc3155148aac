package git

import (
	"errors"
	"testing"
)

func TestConfig(t *testing.T) {
	dir, r := newRepo(t,
		"ralph.agent", "claude",
		"ralph.allowPush", "yes",
		"ralph.strict", "off",
		"ralph.maxRetries", "5",
		"ralph.big", "2k",
		"ralph.bad", "maybe",
		"ralph.multi", "line one\nline two",
	)
	ctx := t.Context()
	gitT(t, dir, "config", "ralph.model", "local-model")

	strs := []struct {
		key, want string
		ok        bool
	}{
		{"ralph.agent", "claude", true},
		{"ralph.model", "local-model", true},
		{"ralph.multi", "line one\nline two", true},
		{"ralph.missing", "", false},
	}
	for _, tt := range strs {
		v, ok, err := r.Config(ctx, tt.key)
		if err != nil || ok != tt.ok || v != tt.want {
			t.Errorf("Config(%q) = %q, %v, %v; want %q, %v", tt.key, v, ok, err, tt.want, tt.ok)
		}
	}

	bools := []struct {
		key      string
		want, ok bool
	}{
		{"ralph.allowPush", true, true},
		{"ralph.strict", false, true},
		{"ralph.missing", false, false},
	}
	for _, tt := range bools {
		v, ok, err := r.ConfigBool(ctx, tt.key)
		if err != nil || ok != tt.ok || v != tt.want {
			t.Errorf("ConfigBool(%q) = %v, %v, %v; want %v, %v", tt.key, v, ok, err, tt.want, tt.ok)
		}
	}
	var gerr *Error
	if _, _, err := r.ConfigBool(ctx, "ralph.bad"); !errors.As(err, &gerr) {
		t.Errorf("ConfigBool(invalid) = %v, want *Error", err)
	}

}
