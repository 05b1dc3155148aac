// Package demo is `git ralph demo`: a throwaway repository holding a small OpenSpec
// change, and a scripted agent that speaks Claude Code's stream-json, so that a newcomer
// can watch the real loop (process spawning, stream decoding, checkpoints, a retry)
// without an API key, a network or an OpenSpec install.
//
// The agent is git-ralph's own binary run through the hidden `demo-agent` command; it is
// chosen only by the demo, or by `--agent demo` for experiments, never by default.
package demo

import (
	"context"
	"embed"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/git-ralph/git-ralph/internal/agent"
	"github.com/git-ralph/git-ralph/internal/agent/claude"
	"github.com/git-ralph/git-ralph/internal/git"
)

// Change is the name of the demo's change.
const Change = "add-greeter"

//go:embed all:repo
var files embed.FS

// ErrNotEmpty is returned by Setup when the directory has files in it.
var ErrNotEmpty = errors.New("directory is not empty")

// Setup creates the demo repository in dir (which must be absent or empty): the files
// of a tiny program and its change, committed as "base". It never touches anything
// outside dir.
func Setup(ctx context.Context, dir string) (*git.Repo, error) {
	if entries, err := os.ReadDir(dir); err == nil && len(entries) > 0 {
		return nil, ErrNotEmpty
	} else if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	err := fs.WalkDir(files, "repo", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := files.ReadFile(p)
		if err != nil {
			return err
		}
		// Go files are stored as .txt so that the Go tool does not build them here.
		dst := filepath.Join(dir, filepath.FromSlash(strings.TrimSuffix(strings.TrimPrefix(p, "repo/"), ".txt")))
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		return os.WriteFile(dst, b, 0o644)
	})
	if err != nil {
		return nil, err
	}
	repo, err := git.Init(ctx, dir)
	if err != nil {
		return nil, err
	}
	// A throwaway repository: an identity of its own (the user may have none yet),
	// and no signing, which could prompt for a passphrase.
	for k, v := range map[string]string{
		"user.name": "git-ralph demo", "user.email": "demo@git-ralph.invalid",
		"commit.gpgSign": "false", "core.hooksPath": ".git/hooks",
	} {
		if err := repo.SetConfig(ctx, k, v); err != nil {
			return nil, err
		}
	}
	if err := repo.AddAll(ctx); err != nil {
		return nil, err
	}
	if _, err := repo.Commit(ctx, "base: a greeter that only says hello", git.CommitOptions{}); err != nil {
		return nil, err
	}
	return repo, nil
}

// Driver is the demo agent: this binary's hidden demo-agent command, speaking Claude
// Code's stream-json (so the claude decoder reads it). delay paces its output.
func Driver(exe string, delay time.Duration) agent.Driver {
	return driver{exe: exe, delay: delay}
}

type driver struct {
	claude.Claude
	exe   string
	delay time.Duration
}

// Name returns "demo".
func (driver) Name() string { return "demo" }

// Binary is the path of git-ralph itself.
func (d driver) Binary() string { return d.exe }

// InstallHint: the demo agent is built in.
func (driver) InstallHint() string { return "the demo agent is part of git-ralph; reinstall git-ralph" }

// Argv runs `git-ralph demo-agent` with claude's headless flags.
func (d driver) Argv(req agent.Request) []string {
	argv := []string{d.exe, "demo-agent", "--delay", d.delay.String(), "-p", "--output-format", "stream-json", "--verbose"}
	if req.Model != "" {
		argv = append(argv, "--model", req.Model)
	}
	return append(argv, req.Args...)
}

// Diagnose has nothing to recognise for the demo agent.
func (driver) Diagnose(*agent.Result) {}
