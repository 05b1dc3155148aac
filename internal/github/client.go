package github

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/cli/go-gh/v2/pkg/api"
	"github.com/cli/go-gh/v2/pkg/auth"
)

// Options tunes a Client; the zero value is what the git-ralph binary uses.
type Options struct {
	// Token authenticates the requests. Empty: go-gh's lookup for the host
	// (GH_TOKEN/GITHUB_TOKEN for github.com, github.localhost and *.ghe.com;
	// GH_ENTERPRISE_TOKEN/GITHUB_ENTERPRISE_TOKEN for other hosts; then gh's config,
	// then `gh auth token`, which reaches the keyring).
	Token string
	// Transport carries the requests. Nil: http.DefaultTransport, which honours
	// HTTP_PROXY, HTTPS_PROXY and NO_PROXY. In-process tests set one that sends
	// every request to a fake server.
	Transport http.RoundTripper
	// Timeout bounds each request; 0 means one minute.
	Timeout time.Duration
	// MaxWait is the longest rate-limit wait the client sits out before it gives up
	// and returns the *Error; 0 means one minute. Waits add up to at most twice this.
	MaxWait time.Duration
	// Sleep waits d or until ctx is done; nil means a real timer. Tests pass a fake
	// clock.
	Sleep func(ctx context.Context, d time.Duration) error
	// UserAgent goes into every request, e.g. "git-ralph/1.2.3".
	UserAgent string
	// Now is the clock that spaces requests that change things a second apart; nil
	// means time.Now. Tests pass a fake clock that Sleep advances.
	Now func() time.Time
}

// MutationGap is how long the client waits between two requests that change
// something (POST, PATCH, PUT, DELETE), as GitHub asks integrators to.
const MutationGap = time.Second

// Client sends REST requests to one GitHub host. It is safe for sequential use; GitHub
// asks integrators not to send requests concurrently.
type Client struct {
	host string
	rest *api.RESTClient
	opts Options

	mu           sync.Mutex // one request at a time: GitHub asks for serial requests
	lastMutation time.Time  // when the last POST/PATCH/PUT/DELETE was sent
}

// TokenEnv is the environment variable go-gh reads the token of host from:
// GH_ENTERPRISE_TOKEN for an Enterprise host, GH_TOKEN for github.com, *.ghe.com and
// github.localhost.
func TokenEnv(host string) string {
	if auth.IsEnterprise(host) {
		return "GH_ENTERPRISE_TOKEN"
	}
	return "GH_TOKEN"
}

// NoTokenError is returned by New when no token exists for the host.
type NoTokenError struct{ Host string }

func (e *NoTokenError) Error() string { return "no GitHub token for " + e.Host }

// New returns a client for host (github.com, an Enterprise host, github.localhost).
// Without Options.Token it looks the token up the way gh does and returns a
// *NoTokenError when there is none.
func New(host string, opts Options) (*Client, error) {
	host = normalizeHost(host)
	if host == "" {
		host = DefaultHost
	}
	if opts.Token == "" {
		opts.Token, _ = auth.TokenForHost(host)
		if opts.Token == "" {
			return nil, &NoTokenError{Host: host}
		}
	}
	if opts.Timeout == 0 {
		opts.Timeout = time.Minute
	}
	if opts.MaxWait == 0 {
		opts.MaxWait = time.Minute
	}
	if opts.Sleep == nil {
		opts.Sleep = sleep
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	transport := opts.Transport
	if transport == nil {
		transport = http.DefaultTransport
	}
	headers := map[string]string{}
	if opts.UserAgent != "" {
		headers["User-Agent"] = opts.UserAgent
	}
	headers["Accept"] = "application/vnd.github+json"
	rest, err := api.NewRESTClient(api.ClientOptions{
		Host:      host,
		AuthToken: opts.Token,
		Transport: ctxHeaders{transport},
		Timeout:   opts.Timeout,
		Headers:   headers,
		// GH_DEBUG=api shows every request, as it does for gh.
	})
	if err != nil {
		return nil, err
	}
	return &Client{host: host, rest: rest, opts: opts}, nil
}

// REST is go-gh's client underneath, for what Do does not cover (a response's headers,
// a redirect to follow by hand, a 304). Its errors are go-gh's *api.HTTPError.
func (c *Client) REST() *api.RESTClient { return c.rest }

// Host is the host the client talks to.
func (c *Client) Host() string { return c.host }

// Error is GitHub's answer to a request that did not succeed.
type Error struct {
	Method, Path string
	StatusCode   int
	Message      string   // the API's message, e.g. "Validation Failed"
	Details      []string // the messages of its errors list, e.g. "No commits between main and ralph/x"
	// RetryAfter is how long GitHub asked to wait (retry-after, or until
	// x-ratelimit-reset); set on rate-limit answers only.
	RetryAfter time.Duration
	// Scopes are the token's OAuth scopes and AcceptedScopes those the endpoint takes
	// (classic tokens only: X-OAuth-Scopes, X-Accepted-OAuth-Scopes).
	Scopes, AcceptedScopes string
}

// Error reads "POST repos/o/r/pulls: HTTP 422: Validation Failed (No commits …)".
func (e *Error) Error() string {
	msg := fmt.Sprintf("%s %s: HTTP %d", e.Method, e.Path, e.StatusCode)
	if e.Message != "" {
		msg += ": " + e.Message
	}
	if len(e.Details) > 0 {
		msg += " (" + strings.Join(e.Details, "; ") + ")"
	}
	return msg
}

// RateLimited reports whether GitHub refused the request for its rate limits
// (429, or 403 with retry-after or an exhausted x-ratelimit-remaining).
func (e *Error) RateLimited() bool {
	return e.RetryAfter > 0 || e.StatusCode == http.StatusTooManyRequests
}

// Text is the API's own words: the details when there are some, else the message.
func (e *Error) Text() string {
	if len(e.Details) > 0 {
		return strings.Join(e.Details, "; ")
	}
	return e.Message
}

// NetworkError is a request that got no answer from GitHub at all.
type NetworkError struct {
	Host string
	Err  error
}

func (e *NetworkError) Error() string { return "cannot reach " + e.Host + ": " + e.Err.Error() }
func (e *NetworkError) Unwrap() error { return e.Err }

// StatusOf returns the HTTP status of a GitHub *Error in err's chain, or 0.
func StatusOf(err error) int {
	var e *Error
	if errors.As(err, &e) {
		return e.StatusCode
	}
	return 0
}

// Do sends one REST request: in (if non-nil) is sent as JSON, the answer is decoded into
// out (if non-nil). path is relative to the API root, e.g. "repos/o/r/pulls?state=open".
// Rate-limit answers are waited out when GitHub's wait is at most Options.MaxWait;
// anything else that is not 2xx comes back as an *Error, and no answer at all as a
// *NetworkError. Requests are sent one at a time, and those that change something at
// least MutationGap apart.
func (c *Client) Do(ctx context.Context, method, path string, in, out any) error {
	_, err := c.do(ctx, method, path, in, out, "")
	return err
}

// Poll is what a conditional request learnt besides the answer's body.
type Poll struct {
	// ETag identifies the answer: send it back to ask "has it changed?".
	ETag string
	// NotModified: GitHub answered 304 to the ETag sent; nothing was decoded. Such an
	// answer does not count against the rate limit.
	NotModified bool
	// Interval is GitHub's x-poll-interval: the least time to wait before asking again
	// (0 when it did not say).
	Interval time.Duration
	// next is the Link header's rel="next" URL ("" on the last page).
	next string
}

// GetIfChanged is a conditional GET: with etag (from an earlier Poll) GitHub answers 304
// when nothing changed, and out is left alone.
func (c *Client) GetIfChanged(ctx context.Context, path, etag string, out any) (Poll, error) {
	return c.do(ctx, http.MethodGet, path, nil, out, etag)
}

func pollOf(h http.Header, etag string) Poll {
	p := Poll{ETag: h.Get("ETag"), next: nextLink(h.Get("Link"))}
	if p.ETag == "" {
		p.ETag = etag
	}
	if n, err := strconv.Atoi(strings.TrimSpace(h.Get("X-Poll-Interval"))); err == nil && n > 0 {
		p.Interval = time.Duration(n) * time.Second
	}
	return p
}

func (c *Client) do(ctx context.Context, method, path string, in, out any, etag string) (Poll, error) {
	var body []byte
	if in != nil {
		var err error
		if body, err = json.Marshal(in); err != nil {
			return Poll{}, err
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	mutation := method != http.MethodGet && method != http.MethodHead
	if etag != "" {
		ctx = context.WithValue(ctx, headersKey{}, map[string]string{"If-None-Match": etag})
	}
	var waited time.Duration
	for try := 0; ; try++ {
		if mutation && !c.lastMutation.IsZero() {
			if gap := MutationGap - c.opts.Now().Sub(c.lastMutation); gap > 0 {
				if err := c.opts.Sleep(ctx, gap); err != nil {
					return Poll{}, err
				}
			}
		}
		var r io.Reader
		if body != nil {
			r = bytes.NewReader(body)
		}
		resp, err := c.rest.RequestWithContext(ctx, method, path, r)
		if mutation {
			c.lastMutation = c.opts.Now()
		}
		if err == nil {
			defer resp.Body.Close()
			p := pollOf(resp.Header, "")
			if out == nil || resp.StatusCode == http.StatusNoContent {
				_, _ = io.Copy(io.Discard, resp.Body)
				return p, nil
			}
			if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
				return p, fmt.Errorf("%s %s: read GitHub's answer: %w", method, path, err)
			}
			return p, nil
		}
		var he *api.HTTPError
		if !errors.As(err, &he) {
			if ctx.Err() != nil {
				return Poll{}, ctx.Err()
			}
			return Poll{}, &NetworkError{Host: c.host, Err: err}
		}
		if he.StatusCode == http.StatusNotModified && etag != "" {
			p := pollOf(he.Headers, etag)
			p.NotModified = true
			return p, nil
		}
		e := newError(method, path, he, c.opts.Now())
		if !e.RateLimited() || try >= 3 {
			return Poll{}, e
		}
		wait := e.RetryAfter
		if wait == 0 {
			wait = time.Second << try // a 429 without a hint: back off from a second
		}
		if wait > c.opts.MaxWait || waited+wait > 2*c.opts.MaxWait {
			return Poll{}, e
		}
		if err := c.opts.Sleep(ctx, wait); err != nil {
			return Poll{}, err
		}
		waited += wait
	}
}

// headersKey carries extra request headers in a request's context (If-None-Match):
// go-gh's REST client takes none per request.
type headersKey struct{}

// ctxHeaders adds the headers of a request's context.
type ctxHeaders struct{ rt http.RoundTripper }

func (t ctxHeaders) RoundTrip(r *http.Request) (*http.Response, error) {
	if h, ok := r.Context().Value(headersKey{}).(map[string]string); ok {
		r = r.Clone(r.Context())
		for k, v := range h {
			r.Header.Set(k, v)
		}
	}
	return t.rt.RoundTrip(r)
}

func newError(method, path string, he *api.HTTPError, now time.Time) *Error {
	e := &Error{Method: method, Path: strings.SplitN(path, "?", 2)[0], StatusCode: he.StatusCode}
	msgs := strings.Split(he.Message, "\n")
	e.Message = msgs[0]
	for _, m := range msgs[1:] {
		if m != "" {
			e.Details = append(e.Details, m)
		}
	}
	if e.Message == "" || strings.HasPrefix(e.Message, strconv.Itoa(he.StatusCode)+" ") {
		e.Message = http.StatusText(he.StatusCode)
	}
	h := he.Headers
	e.Scopes, e.AcceptedScopes = h.Get("X-OAuth-Scopes"), h.Get("X-Accepted-OAuth-Scopes")
	limited := he.StatusCode == http.StatusTooManyRequests || he.StatusCode == http.StatusForbidden
	if !limited {
		return e
	}
	if s := h.Get("Retry-After"); s != "" {
		if n, err := strconv.Atoi(strings.TrimSpace(s)); err == nil && n >= 0 {
			e.RetryAfter = time.Duration(n) * time.Second
			if n == 0 {
				e.RetryAfter = time.Millisecond // "now", still a rate-limit answer
			}
		}
	} else if h.Get("X-RateLimit-Remaining") == "0" {
		if n, err := strconv.ParseInt(h.Get("X-RateLimit-Reset"), 10, 64); err == nil {
			d := time.Unix(n, 0).Sub(now)
			e.RetryAfter = max(d, time.Second)
		}
	}
	return e
}

// nextLink returns the rel="next" URL of a Link header, e.g.
// `<https://api.github.com/repositories/1/…?page=2>; rel="next", <…>; rel="last"`.
func nextLink(h string) string {
	for part := range strings.SplitSeq(h, ",") {
		u, params, ok := strings.Cut(part, ";")
		if !ok {
			continue
		}
		u = strings.TrimSpace(u)
		if !strings.HasPrefix(u, "<") || !strings.HasSuffix(u, ">") {
			continue
		}
		for p := range strings.SplitSeq(params, ";") {
			k, v, _ := strings.Cut(strings.TrimSpace(p), "=")
			if strings.EqualFold(k, "rel") && slices.Contains(strings.Fields(strings.Trim(v, `"`)), "next") {
				return u[1 : len(u)-1]
			}
		}
	}
	return ""
}

// MaxPages bounds how many pages GetPages follows.
const MaxPages = 10

// GetPages GETs path and the pages GitHub's Link header names after it (at most
// MaxPages, and only on the API's own host, so the token never goes elsewhere),
// calling page with each answer's body to decode.
func (c *Client) GetPages(ctx context.Context, path string, page func(dec func(out any) error) error) error {
	for n := 0; path != ""; n++ {
		if n == MaxPages {
			return fmt.Errorf("GET %s: more than %d pages", strings.SplitN(path, "?", 2)[0], MaxPages)
		}
		var raw json.RawMessage
		p, err := c.do(ctx, http.MethodGet, path, nil, &raw, "")
		if err != nil {
			return err
		}
		if err := page(func(out any) error { return json.Unmarshal(raw, out) }); err != nil {
			return err
		}
		if p.next != "" {
			u, err := url.Parse(p.next)
			if err != nil || !sameDomain(u.Hostname(), c.host) {
				return fmt.Errorf("GET %s: GitHub's next page is not on %s: %q", strings.SplitN(path, "?", 2)[0], c.host, p.next)
			}
		}
		path = p.next
	}
	return nil
}

func sameDomain(host, domain string) bool {
	host, domain = strings.ToLower(host), strings.ToLower(domain)
	return host == domain || strings.HasSuffix(host, "."+domain)
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
