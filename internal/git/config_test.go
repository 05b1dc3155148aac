package git

import (
	"errors"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
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

// One git process answers every question about the config, until git-ralph changes
// it; what the listing cannot answer the way git would (a bool git must parse, a path
// with ~) still goes to git.
func TestConfigReadOnce(t *testing.T) {
	dir, r := newRepo(t, "ralph.flag", "yes")
	gitT(t, dir, "config", "ralph.agent", "claude")
	gitT(t, dir, "config", "--add", "ralph.multi", "one")
	gitT(t, dir, "config", "--add", "ralph.multi", "two")
	gitT(t, dir, "config", "Ralph.Sub.Case.Key", "sub")
	gitT(t, dir, "config", "ralph.home", "~/x")
	ctx := t.Context()
	before := r.Calls.Load()
	for range 3 {
		if v, ok, err := r.Config(ctx, "RALPH.Agent"); err != nil || !ok || v != "claude" {
			t.Fatalf("Config = %q %v %v", v, ok, err)
		}
		if v, ok, err := r.Config(ctx, "ralph.multi"); err != nil || !ok || v != "two" {
			t.Fatalf("Config(multi) = %q %v %v; want the last value", v, ok, err)
		}
		if v, ok, err := r.Config(ctx, "ralph.Sub.Case.key"); err != nil || !ok || v != "sub" {
			t.Fatalf("Config(subsection) = %q %v %v", v, ok, err)
		}
		if _, ok, err := r.Config(ctx, "ralph.sub.case.key"); err != nil || ok {
			t.Fatalf("a subsection is case-sensitive, as in git: ok = %v %v", ok, err)
		}
		if v, ok, err := r.ConfigBool(ctx, "ralph.flag"); err != nil || !ok || !v {
			t.Fatalf("ConfigBool = %v %v %v", v, ok, err)
		}
		if _, ok, err := r.Config(ctx, "ralph.unset"); err != nil || ok {
			t.Fatalf("unset: ok = %v %v", ok, err)
		}
	}
	if n := r.Calls.Load() - before; n != 1 {
		t.Errorf("%d git processes for 18 questions, want 1", n)
	}
	home, _ := os.UserHomeDir()
	if v, ok, err := r.ConfigPath(ctx, "ralph.home"); err != nil || !ok || v != filepath.Join(home, "x") {
		t.Errorf("ConfigPath(~/x) = %q %v %v; want git's expansion", v, ok, err)
	}
	if err := r.SetConfig(ctx, "ralph.agent", "codex"); err != nil {
		t.Fatal(err)
	}
	if v, _, _ := r.Config(ctx, "ralph.agent"); v != "codex" {
		t.Errorf("after SetConfig: %q, want the new value", v)
	}
}

// Every value of a multi-valued key, in order, from the cached listing; a "~/" one goes
// to git, which expands it as it expands paths.
func TestConfigPathAll(t *testing.T) {
	dir, r := newRepo(t)
	ctx := t.Context()
	gitT(t, dir, "config", "--add", "ralph.sandboxWritable", "/a")
	gitT(t, dir, "config", "--add", "ralph.sandboxWritable", "/b")
	got, err := r.ConfigPathAll(ctx, "ralph.sandboxWritable")
	if err != nil || len(got) != 2 || got[0] != "/a" || got[1] != "/b" {
		t.Errorf("ConfigPathAll = %q, %v", got, err)
	}
	if got, err := r.ConfigPathAll(ctx, "ralph.missing"); err != nil || len(got) != 0 {
		t.Errorf("ConfigPathAll(missing) = %q, %v", got, err)
	}
	gitT(t, dir, "config", "--add", "ralph.sandboxHide", "~/secret")
	gitT(t, dir, "config", "--add", "ralph.sandboxHide", "/c")
	r2 := open(t, dir)
	home, _ := os.UserHomeDir()
	if got, err := r2.ConfigPathAll(ctx, "ralph.sandboxHide"); err != nil || len(got) != 2 || got[0] != filepath.Join(home, "secret") || got[1] != "/c" {
		t.Errorf("ConfigPathAll(~/) = %q, %v", got, err)
	}
}

// ConfigFiles names the files the config was read from, the included ones too, from
// the same one listing.
func TestConfigFiles(t *testing.T) {
	dir, r := newRepo(t, "ralph.flag", "yes")
	inc := filepath.Join(t.TempDir(), "included")
	if err := os.WriteFile(inc, []byte("[ralph]\n\tfrom = include\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	gitT(t, dir, "config", "include.path", inc)
	files := r.ConfigFiles(t.Context())
	if !slices.Contains(files, inc) || !slices.ContainsFunc(files, func(f string) bool { return strings.HasSuffix(f, ".git/config") }) {
		t.Errorf("ConfigFiles = %q, want the local config and %s", files, inc)
	}
	if v, ok, _ := r.Config(t.Context(), "ralph.from"); !ok || v != "include" {
		t.Errorf("a value of the included file: %q %v", v, ok)
	}
}

// FilterCommands names the filter drivers git add and checkout run, but git-lfs's.
func TestFilterCommands(t *testing.T) {
	dir, r := newRepo(t)
	gitT(t, dir, "config", "filter.lfs.clean", "git-lfs clean -- %f")
	gitT(t, dir, "config", "filter.lfs.smudge", "git-lfs smudge -- %f")
	gitT(t, dir, "config", "filter.lfs.process", "git-lfs filter-process")
	gitT(t, dir, "config", "filter.nb.clean", "python -m nbstripout")
	gitT(t, dir, "config", "filter.nb.smudge", "cat")
	gitT(t, dir, "config", "filter.mine.process", "./filter.sh")
	gitT(t, dir, "config", "filter.mine.required", "true")
	got := r.FilterCommands(t.Context())
	want := map[string]string{"filter.nb.clean": "python -m nbstripout", "filter.nb.smudge": "cat", "filter.mine.process": "./filter.sh"}
	if !maps.Equal(got, want) {
		t.Errorf("FilterCommands = %v, want %v", got, want)
	}
}
