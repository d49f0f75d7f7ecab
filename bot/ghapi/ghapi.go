// Package ghapi is the bot's GitHub REST client: a thin layer over go-github v60 that keeps
// to GitHub's rate limits and retry rules:
//
//   - Content-creating calls (POST, PATCH, PUT, DELETE) are serialised per installation and
//     spaced by Config.WriteSpacing, so the bot stays under GitHub's secondary rate limits.
//   - Secondary rate limits are waited out for Retry-After; primary rate limits until
//     X-RateLimit-Reset (bounded by ctx); 5xx answers and network errors are retried with
//     exponential backoff and jitter, up to Config.MaxRetries. Other 4xx are not retried.
//   - A comment create whose outcome is unknown is never blindly repeated: CreateComment
//     looks for the body's hidden marker first (see CreateComment).
//
// Authentication is a token (Config.Token) or a GitHub App (Config.AppID and
// Config.PrivateKey, through ghinstallation), in which case every method takes the
// installation id of the webhook event.
package ghapi

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/bradleyfalzon/ghinstallation/v2"
	"github.com/google/go-github/v60/github"

	"github.com/arenabot/arenabot/internal/clock"
)

// DefaultBaseURL is the public GitHub API.
const DefaultBaseURL = "https://api.github.com/"

// WebURL is the web root of the GitHub whose REST API root is apiURL, ending in a slash:
// https://github.com/ for api.github.com, https://ghe.example.com/ for GitHub Enterprise
// Server's https://ghe.example.com/api/v3/, and the API root itself otherwise (a GitHub whose
// API and pages share a root, as the tests' fake does). An address that does not parse
// gives https://github.com/.
func WebURL(apiURL string) string {
	u, err := url.Parse(strings.TrimSpace(apiURL))
	if err != nil || u.Host == "" || (u.Scheme != "https" && u.Scheme != "http") {
		return "https://github.com/"
	}
	if strings.EqualFold(u.Hostname(), "api.github.com") {
		return "https://github.com/"
	}
	path := strings.TrimSuffix(u.Path, "/")
	path = strings.TrimSuffix(path, "/api/v3")
	return u.Scheme + "://" + u.Host + path + "/"
}

var (
	// ErrNotFound is wrapped by errors for a pull request, file, directory, comment or
	// branch that does not exist (HTTP 404).
	ErrNotFound = errors.New("not found")
	// ErrPushDenied is wrapped by CommitFiles' error when GitHub refuses a write to the
	// branch's repository (HTTP 403 or 404 on a Git Data write), as for a fork whose author
	// does not allow edits by maintainers.
	ErrPushDenied = errors.New("push denied")
)

// Config configures a Client. Zero values take the documented defaults.
type Config struct {
	// BaseURL is the REST API root (ARENA_GITHUB_API_URL), default DefaultBaseURL. A
	// missing trailing slash is added.
	BaseURL string
	// Token authenticates as a user or with a fixed token (ARENA_GITHUB_TOKEN). Methods
	// then take installation id 0.
	Token string
	// AppID and PrivateKey (PEM, PKCS#1 or PKCS#8) authenticate as a GitHub App
	// (ARENA_GITHUB_APP_ID, ARENA_GITHUB_PRIVATE_KEY_FILE); each method call names the
	// installation, whose token is fetched and refreshed by ghinstallation.
	AppID      int64
	PrivateKey []byte
	// BotLogin is the bot's own login (for an App "<slug>[bot]"), ARENA_BOT_LOGIN:
	// FindComment takes only comments written by it, so nobody else can plant a marker.
	// ResolveLogin learns the login from GitHub and checks it against this one; with
	// neither, FindComment fails.
	BotLogin string
	// WriteSpacing is the minimum gap between content-creating calls of one installation;
	// default 1s. Negative means no spacing.
	WriteSpacing time.Duration
	// MaxRetries bounds retries after 5xx answers, network errors and rate limits;
	// default 5. Negative means none.
	MaxRetries int
	// PermissionTTL is how long Permission answers are cached; default 1m. Negative
	// disables the cache.
	PermissionTTL time.Duration
	// Sleep waits d or until ctx is done; default a timer select. Tests record instead.
	Sleep func(ctx context.Context, d time.Duration) error
	// Transport is the HTTP transport under authentication, retries and pacing; default
	// http.DefaultTransport.
	Transport http.RoundTripper
	// Logger receives retries and waits; default discards.
	Logger *slog.Logger
}

// Client is a GitHub REST client safe for concurrent use.
type Client struct {
	cfg  Config
	base *url.URL
	log  *slog.Logger
	now  func() time.Time
	apps *ghinstallation.AppsTransport // nil with token auth

	mu      sync.Mutex
	clients map[int64]*github.Client
	gates   map[int64]*gate
	perms   map[string]permEntry
	login   string // from ResolveLogin
}

type permEntry struct {
	perm    string
	expires time.Time
}

// New checks cfg and returns a client. It makes no request.
func New(cfg Config) (*Client, error) {
	if cfg.BaseURL == "" {
		cfg.BaseURL = DefaultBaseURL
	}
	if !strings.HasSuffix(cfg.BaseURL, "/") {
		cfg.BaseURL += "/"
	}
	base, err := url.Parse(cfg.BaseURL)
	if err != nil || base.Scheme == "" || base.Host == "" {
		return nil, fmt.Errorf("github api url %q: must be an absolute URL", cfg.BaseURL)
	}
	if cfg.WriteSpacing == 0 {
		cfg.WriteSpacing = time.Second
	}
	if cfg.MaxRetries == 0 {
		cfg.MaxRetries = 5
	}
	cfg.MaxRetries = max(cfg.MaxRetries, 0)
	if cfg.PermissionTTL == 0 {
		cfg.PermissionTTL = time.Minute
	}
	if cfg.Sleep == nil {
		cfg.Sleep = clock.Sleep
	}
	if cfg.Transport == nil {
		cfg.Transport = http.DefaultTransport
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	c := &Client{
		cfg: cfg, base: base, log: cfg.Logger, now: time.Now,
		clients: map[int64]*github.Client{},
		gates:   map[int64]*gate{},
		perms:   map[string]permEntry{},
	}
	switch {
	case cfg.Token != "" && cfg.AppID != 0:
		return nil, errors.New("github auth: set either a token or an app id, not both")
	case cfg.AppID != 0:
		if len(cfg.PrivateKey) == 0 {
			return nil, errors.New("github app auth: private key is empty")
		}
		atr, err := ghinstallation.NewAppsTransport(cfg.Transport, cfg.AppID, cfg.PrivateKey)
		if err != nil {
			return nil, fmt.Errorf("github app private key: %w", err)
		}
		atr.BaseURL = strings.TrimSuffix(cfg.BaseURL, "/")
		c.apps = atr
	case len(cfg.PrivateKey) != 0:
		return nil, errors.New("github app auth: private key given without an app id")
	}
	return c, nil
}

// gh returns the go-github client of an installation (0 with token auth).
func (c *Client) gh(inst int64) (*github.Client, error) {
	if c.apps != nil && inst == 0 {
		return nil, errors.New("github app auth needs an installation id")
	}
	if c.apps == nil {
		inst = 0
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if g, ok := c.clients[inst]; ok {
		return g, nil
	}
	var tr http.RoundTripper = c.cfg.Transport
	if c.apps != nil {
		itr := ghinstallation.NewFromAppsTransport(c.apps, inst)
		itr.BaseURL = c.apps.BaseURL
		tr = itr
	}
	g := github.NewClient(&http.Client{Transport: &transport{c: c, next: tr, gate: c.gate(inst)}})
	if c.cfg.Token != "" {
		g = g.WithAuthToken(c.cfg.Token)
	}
	u := *c.base
	g.BaseURL, g.UploadURL = &u, &u
	c.clients[inst] = g
	return g, nil
}

// gate returns the write gate of an installation; c.mu is held.
func (c *Client) gate(inst int64) *gate {
	g, ok := c.gates[inst]
	if !ok {
		g = &gate{sem: make(chan struct{}, 1)}
		c.gates[inst] = g
	}
	return g
}

// splitRepo splits "owner/name".
func splitRepo(repo string) (owner, name string, err error) {
	owner, name, ok := strings.Cut(repo, "/")
	if !ok || owner == "" || name == "" || strings.Contains(name, "/") {
		return "", "", fmt.Errorf("repository %q: want owner/name", repo)
	}
	return owner, name, nil
}

// status returns the HTTP status of a go-github error, 0 when it has none.
func status(err error) int {
	if e, ok := errors.AsType[*github.ErrorResponse](err); ok && e.Response != nil {
		return e.Response.StatusCode
	}
	if e, ok := errors.AsType[*github.RateLimitError](err); ok && e.Response != nil {
		return e.Response.StatusCode
	}
	if e, ok := errors.AsType[*github.AbuseRateLimitError](err); ok && e.Response != nil {
		return e.Response.StatusCode
	}
	return 0
}

// wrap adds ErrNotFound to a 404 and the operation to any error.
func wrap(err error, format string, args ...any) error {
	what := fmt.Sprintf(format, args...)
	if status(err) == http.StatusNotFound {
		return fmt.Errorf("%s: %w: %w", what, ErrNotFound, err)
	}
	return fmt.Errorf("%s: %w", what, err)
}
