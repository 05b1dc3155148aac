// Package github is the only code in git-ralph that talks to GitHub. It is built on
// go-gh's REST client and token lookup (github.com/cli/go-gh/v2), so a user who has run
// `gh auth login` needs nothing else, and GH_TOKEN, GITHUB_TOKEN, GH_ENTERPRISE_TOKEN,
// GH_HOST and GH_CONFIG_DIR mean what they mean to gh.
//
// The package knows nothing of runs or changes: it resolves repositories, finds the
// token for a host, sends REST requests (waiting out rate limits within a bound) and
// turns GitHub's error answers into a typed *Error. Its fake, for tests, is the
// githubtest package.
package github

import (
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/cli/go-gh/v2/pkg/auth"
)

// DefaultHost is the host of github.com.
const DefaultHost = "github.com"

// Repo names a repository on a GitHub host.
type Repo struct {
	Host  string // e.g. github.com, or an Enterprise host such as ghe.example.com
	Owner string
	Name  string
}

// String is HOST/OWNER/NAME, or OWNER/NAME on github.com.
func (r Repo) String() string {
	if r.Host == "" || strings.EqualFold(r.Host, DefaultHost) {
		return r.Owner + "/" + r.Name
	}
	return r.Host + "/" + r.Owner + "/" + r.Name
}

// FullName is OWNER/NAME, as the API spells a repository.
func (r Repo) FullName() string { return r.Owner + "/" + r.Name }

// path is the REST path of the repository, with every part escaped.
func (r Repo) path() string {
	return "repos/" + url.PathEscape(r.Owner) + "/" + url.PathEscape(r.Name)
}

// ErrBadRepo is wrapped by ParseRepo for a string that names no repository.
var ErrBadRepo = errors.New("not a repository")

// ParseRepo reads "OWNER/REPO", "HOST/OWNER/REPO" or a repository URL (https, ssh or
// scp-style git@host:owner/repo). A name without a host gets defaultHost, or, when that
// is empty, the host go-gh would use (GH_HOST, the only host in gh's config, else
// github.com).
func ParseRepo(s, defaultHost string) (Repo, error) {
	s = strings.TrimSpace(s)
	if r, ok := RepoFromURL(s); ok {
		return r, nil
	}
	if isURLish(s) {
		return Repo{}, fmt.Errorf("%w: %q is not the URL of a GitHub repository", ErrBadRepo, s)
	}
	parts := strings.Split(strings.TrimSuffix(s, ".git"), "/")
	for _, p := range parts {
		if !validName(p) {
			return Repo{}, fmt.Errorf("%w: %q is not [HOST/]OWNER/REPO", ErrBadRepo, s)
		}
	}
	switch len(parts) {
	case 2:
		if defaultHost == "" {
			defaultHost, _ = auth.DefaultHost()
		}
		return Repo{Host: normalizeHost(defaultHost), Owner: parts[0], Name: parts[1]}, nil
	case 3:
		return Repo{Host: normalizeHost(parts[0]), Owner: parts[1], Name: parts[2]}, nil
	}
	return Repo{}, fmt.Errorf("%w: %q is not [HOST/]OWNER/REPO", ErrBadRepo, s)
}

// RepoFromURL reads a git remote URL: https://host/owner/repo(.git),
// ssh://git@host[:port]/owner/repo(.git), git@host:owner/repo(.git). It reports false
// for anything else, such as a local path.
func RepoFromURL(raw string) (Repo, bool) {
	raw = strings.TrimSpace(raw)
	var host, path string
	switch {
	case strings.Contains(raw, "://"):
		u, err := url.Parse(raw)
		if err != nil {
			return Repo{}, false
		}
		switch strings.TrimPrefix(strings.TrimPrefix(u.Scheme, "git+"), "ssh+") {
		case "https", "http", "ssh", "git":
		default:
			return Repo{}, false
		}
		host, path = u.Hostname(), u.Path
	case !strings.HasPrefix(raw, "/") && !strings.HasPrefix(raw, "."):
		// scp-style: [user@]host:owner/repo; a colon before any slash.
		colon := strings.IndexByte(raw, ':')
		slash := strings.IndexByte(raw, '/')
		if colon <= 0 || (slash >= 0 && slash < colon) {
			return Repo{}, false
		}
		host, path = raw[:colon], raw[colon+1:]
		if at := strings.LastIndexByte(host, '@'); at >= 0 {
			host = host[at+1:]
		}
	default:
		return Repo{}, false
	}
	parts := strings.Split(strings.Trim(path, "/"), "/")
	if host == "" || len(parts) != 2 {
		return Repo{}, false
	}
	owner, name := parts[0], strings.TrimSuffix(parts[1], ".git")
	if !validName(owner) || !validName(name) {
		return Repo{}, false
	}
	return Repo{Host: normalizeHost(host), Owner: owner, Name: name}, true
}

func isURLish(s string) bool {
	return strings.Contains(s, "://") || strings.Contains(s, "@") || strings.Contains(s, ":")
}

// validName accepts what GitHub accepts in owner and repository names, and hosts.
func validName(s string) bool {
	if s == "" || s == "." || s == ".." || strings.HasPrefix(s, "-") {
		return false
	}
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.') {
			return false
		}
	}
	return true
}

// normalizeHost lowercases a host and maps www.github.com and ssh.github.com to
// github.com, as gh does.
func normalizeHost(h string) string {
	h = strings.ToLower(h)
	if strings.HasSuffix(h, "."+DefaultHost) {
		return DefaultHost
	}
	return h
}
