package github

import (
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
)

// IssueRef names an issue of a repository.
type IssueRef struct {
	Repo   Repo
	Number int
}

// String is OWNER/REPO#N, or HOST/OWNER/REPO#N off github.com: gh's own form.
func (r IssueRef) String() string { return r.Repo.String() + "#" + strconv.Itoa(r.Number) }

// ErrBadIssueRef is wrapped by ParseIssueRef for an argument that is an issue
// reference but not a usable one ("#0", the URL of a pull request).
var ErrBadIssueRef = errors.New("not an issue")

// ErrNoIssueRepo is wrapped by ParseIssueRef for "#N" when no repository is known to
// take N from.
var ErrNoIssueRepo = errors.New("no GitHub repository")

// ParseIssueRef reads an issue reference: "#N" (an issue of def, the repository's GitHub
// remote, nil when none), "[HOST/]OWNER/REPO#N" (def's host, else go-gh's), or an issue's
// URL (a query or "#fragment" allowed). isRef is false for what does not look like one (a
// change name, a path); err, wrapping ErrBadIssueRef or ErrNoIssueRepo, for one that names
// no issue.
func ParseIssueRef(s string, def *Repo) (ref IssueRef, isRef bool, err error) {
	s = strings.TrimSpace(s)
	if strings.HasPrefix(s, "https://") || strings.HasPrefix(s, "http://") {
		return issueURL(s)
	}
	before, num, found := strings.Cut(s, "#")
	if !found || num == "" || strings.TrimLeft(num, "0123456789") != "" {
		return IssueRef{}, false, nil
	}
	n, err := issueNumber(num, s)
	if err != nil {
		return IssueRef{}, true, err
	}
	if before == "" {
		if def == nil {
			return IssueRef{}, true, fmt.Errorf("%w to take %s from", ErrNoIssueRepo, s)
		}
		return IssueRef{Repo: *def, Number: n}, true, nil
	}
	if strings.Count(before, "/") < 1 || strings.Count(before, "/") > 2 {
		return IssueRef{}, false, nil // "notes#1" may be a file
	}
	host := ""
	if def != nil {
		host = def.Host
	}
	repo, err := ParseRepo(before, host)
	if err != nil {
		return IssueRef{}, true, fmt.Errorf("%w: %q is not [HOST/]OWNER/REPO#N", ErrBadIssueRef, s)
	}
	return IssueRef{Repo: repo, Number: n}, true, nil
}

func issueNumber(digits, whole string) (int, error) {
	n, err := strconv.Atoi(digits)
	if err != nil || n <= 0 || n > 1<<31-1 {
		return 0, fmt.Errorf("%w: %q: issue numbers go from 1 to 2147483647", ErrBadIssueRef, whole)
	}
	return n, nil
}

func issueURL(s string) (IssueRef, bool, error) {
	bad := func(what string) (IssueRef, bool, error) {
		return IssueRef{}, true, fmt.Errorf("%w: %s is %s, not the URL of an issue (https://HOST/OWNER/REPO/issues/N)", ErrBadIssueRef, s, what)
	}
	u, err := url.Parse(s)
	if err != nil || u.Host == "" {
		return bad("not a URL")
	}
	parts := strings.Split(strings.Trim(u.Path, "/"), "/")
	if len(parts) == 4 && parts[2] == "pull" {
		return bad("a pull request")
	}
	if len(parts) != 4 || parts[2] != "issues" || !validName(parts[0]) || !validName(parts[1]) ||
		parts[3] == "" || strings.TrimLeft(parts[3], "0123456789") != "" {
		return bad("another page")
	}
	n, err := issueNumber(parts[3], s)
	if err != nil {
		return IssueRef{}, true, err
	}
	return IssueRef{Repo: Repo{Host: normalizeHost(u.Hostname()), Owner: parts[0], Name: parts[1]}, Number: n}, true, nil
}
