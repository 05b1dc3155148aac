// Package ci writes the GitHub Actions workflow that runs git-ralph's loop on a runner
// (`git ralph ci init`). The workflow is a template embedded in the binary; the only
// values put into it are checked here (an agent from a fixed table, a secret name of
// letters, digits and underscores, a version string), so nothing a user types can
// change its structure. It never runs git.
package ci

import (
	"bytes"
	_ "embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"text/template"
)

// Path is where the workflow goes, relative to the repository root.
const Path = ".github/workflows/ralph.yml"

// Marker starts the first line of a workflow git-ralph wrote. ci init updates a file
// that carries it and leaves any other file alone.
const Marker = "# written by git ralph ci init"

//go:embed ralph.yml.tmpl
var workflowTemplate string

// The actions the workflow uses, pinned by commit: a tag can be moved, a commit cannot.
const (
	checkoutSHA = "3d3c42e5aac5ba805825da76410c181273ba90b1" // actions/checkout v7.0.1
	setupGoSHA  = "b7ad1dad31e06c5925ef5d2fc7ad053ef454303e" // actions/setup-go v7.0.0
	uploadSHA   = "bbbca2ddaa5d8feaa63e36b76fdaad77386f024f" // actions/upload-artifact v7.0.0
	downloadSHA = "3e5f45b2cfb9172054b4087a40e8e0b5a5461e7c" // actions/download-artifact v8.0.1
)

// Timing of the loop job, under GitHub's 6 h limit for a hosted job: the loop stops
// itself at the deadline, the step is cancelled at its timeout, and the job's timeout
// is the last backstop, leaving time for export and the artifact upload.
const (
	jobMinutes  = 350
	stepMinutes = 330
	deadline    = "320m"
)

// Agent is what the workflow needs to know about one agent.
type Agent struct {
	Name    string // the driver name, as --agent takes it
	Package string // the npm package that installs it
	KeyEnv  string // the environment variable the agent reads its API key from
}

// agents are the agents the workflow can install; each installs with npm, which the
// hosted runners have.
var agents = []Agent{
	{Name: "amp", Package: "@sourcegraph/amp", KeyEnv: "AMP_API_KEY"},
	{Name: "claude", Package: "@anthropic-ai/claude-code", KeyEnv: "ANTHROPIC_API_KEY"},
	{Name: "codex", Package: "@openai/codex", KeyEnv: "OPENAI_API_KEY"},
	// A fine-grained token with the Copilot Requests permission: the runner's own
	// GITHUB_TOKEN cannot use Copilot, and GitHub keeps GITHUB_* secret names.
	{Name: "copilot", Package: "@github/copilot", KeyEnv: "COPILOT_GITHUB_TOKEN"},
	{Name: "gemini", Package: "@google/gemini-cli", KeyEnv: "GEMINI_API_KEY"},
	{Name: "opencode", Package: "opencode-ai", KeyEnv: "ANTHROPIC_API_KEY"},
}

// AgentNames lists the agents ci init can set up, sorted.
func AgentNames() []string {
	var out []string
	for _, a := range agents {
		out = append(out, a.Name)
	}
	return out
}

// LookupAgent returns the agent called name.
func LookupAgent(name string) (Agent, bool) {
	i := slices.IndexFunc(agents, func(a Agent) bool { return a.Name == name })
	if i < 0 {
		return Agent{}, false
	}
	return agents[i], true
}

// Options are the inputs of the workflow.
type Options struct {
	Agent        string // required: one of AgentNames
	Secret       string // the repository secret holding the key; "" means the agent's KeyEnv
	RalphVersion string // the git-ralph version the runner installs by default; "" means latest
}

var (
	secretName  = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`) })
	versionText = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._+-]*$`) })
)

// CheckSecret tells whether name can be a GitHub Actions secret name.
func CheckSecret(name string) error {
	switch {
	case !secretName().MatchString(name):
		return fmt.Errorf("secret name %q may hold only letters, digits and underscores, and not start with a digit", name)
	case strings.HasPrefix(strings.ToUpper(name), "GITHUB_"):
		return fmt.Errorf("secret name %q starts with GITHUB_, which GitHub keeps for itself", name)
	}
	return nil
}

// Render returns the workflow for o.
func Render(o Options) ([]byte, error) {
	a, ok := LookupAgent(o.Agent)
	if !ok {
		return nil, fmt.Errorf("agent %q cannot be set up by ci init (it can set up %s)", o.Agent, strings.Join(AgentNames(), ", "))
	}
	secret := o.Secret
	if secret == "" {
		secret = a.KeyEnv
	}
	if err := CheckSecret(secret); err != nil {
		return nil, err
	}
	v := o.RalphVersion
	if v == "" || v == "dev" {
		v = "latest"
	}
	if !versionText().MatchString(v) {
		return nil, fmt.Errorf("version %q is not a module version", v)
	}
	t := template.Must(template.New("ralph.yml").Delims("<%", "%>").Option("missingkey=error").Parse(workflowTemplate))
	var b bytes.Buffer
	err := t.Execute(&b, map[string]any{
		"Agent": a.Name, "Package": a.Package, "KeyEnv": a.KeyEnv, "Secret": secret,
		"RalphVersion": v,
		"JobMinutes":   jobMinutes, "StepMinutes": stepMinutes, "Deadline": deadline,
		"Checkout": checkoutSHA, "CheckoutTag": "v7.0.1",
		"SetupGo": setupGoSHA, "SetupGoTag": "v7.0.0",
		"Upload": uploadSHA, "UploadTag": "v7.0.0",
		"Download": downloadSHA, "DownloadTag": "v8.0.1",
	})
	if err != nil {
		panic("ci: workflow template: " + err.Error()) // the template and its data disagree: a bug
	}
	return b.Bytes(), nil
}

// Action is what Write did.
type Action int

const (
	// Created: there was no file.
	Created Action = iota
	// Updated: git-ralph's earlier file was replaced.
	Updated
	// Unchanged: the file was already exactly this.
	Unchanged
)

// ErrForeign is returned by Write when the file there is not git-ralph's.
var ErrForeign = errors.New("not written by git ralph ci init")

// maxRead bounds how much of an existing file is read to look for the marker.
const maxRead = 1 << 20

// Write puts content at root/Path unless a file that is not git-ralph's is there
// (ErrForeign: nothing is changed). It creates .github/workflows as needed and
// replaces the file by renaming a complete new one over it.
func Write(root string, content []byte) (Action, error) {
	p := filepath.Join(root, filepath.FromSlash(Path))
	action := Created
	fi, err := os.Lstat(p)
	switch {
	case err == nil:
		if !fi.Mode().IsRegular() || fi.Size() > maxRead {
			return 0, ErrForeign
		}
		old, err := os.ReadFile(p)
		if err != nil {
			return 0, err
		}
		if !Ours(old) {
			return 0, ErrForeign
		}
		if bytes.Equal(old, content) {
			return Unchanged, nil
		}
		action = Updated
	case !errors.Is(err, fs.ErrNotExist):
		return 0, err
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return 0, err
	}
	tmp, err := os.CreateTemp(filepath.Dir(p), ".ralph-*.yml")
	if err != nil {
		return 0, err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(content); err != nil {
		tmp.Close()
		return 0, err
	}
	if err := tmp.Chmod(0o644); err != nil {
		tmp.Close()
		return 0, err
	}
	if err := tmp.Close(); err != nil {
		return 0, err
	}
	return action, os.Rename(tmp.Name(), p)
}

// Outdated tells whether a workflow file is one git-ralph wrote before its loop step ran
// the binary itself: its loop step runs 'exec git ralph start', which makes git the
// step's process. A cancelled run of it loses the story under way (the runner's kill
// reaches git, not the loop, which goes on holding the run while export gives up);
// ci init replaces it.
func Outdated(content []byte) bool {
	return Ours(content) && bytes.Contains(content, []byte("run: exec git ralph start "))
}

// Ours tells whether a workflow file is git-ralph's: its first line starts with Marker.
func Ours(content []byte) bool {
	first, _, _ := bytes.Cut(content, []byte("\n"))
	return bytes.HasPrefix(first, []byte(Marker))
}
