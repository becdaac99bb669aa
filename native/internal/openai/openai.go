// Package openai is the one HTTP transport of caskg's OpenAI-compatible clients: the LLM
// prober's chat completions (native/internal/llm) and the HTTP embedder (native/internal/embed) both post JSON
// through a Client. It holds what every such call needs and nothing one of them needs alone:
// the endpoint URL and the API key, a timeout per attempt, retries with jittered exponential
// backoff on 429, 5xx, timeouts and connection errors (honouring Retry-After in both its forms),
// cancellation, a bound on requests in flight and on their rate, a cap on the size of an
// answer, and errors (*Error) that name the endpoint and the status but never the API key.
//
// The request and answer types are the callers': the transport speaks JSON, not a schema.
package openai

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Defaults of Config's zero values.
const (
	DefaultTimeout     = 60 * time.Second
	DefaultRetries     = 4
	DefaultBaseBackoff = 500 * time.Millisecond
	DefaultMaxBody     = 1 << 20
	// MaxBackoff caps every wait between attempts, Retry-After included.
	MaxBackoff = 30 * time.Second
)

// The environment variables of the endpoint and its key, shared by the chat and embeddings
// clients.
const (
	envBaseURL   = "OPENAI_BASE_URL"   // base URL, when no flag gives one
	envAPIKey    = "CASKG_LLM_API_KEY" // API key, preferred
	envOpenAIKey = "OPENAI_API_KEY"    // API key, when $CASKG_LLM_API_KEY is empty
)

// jitterSeed seeds the backoff jitter so that runs are reproducible.
const jitterSeed = 0x6361736b67 // "caskg"

// BaseURLFromEnv returns $OPENAI_BASE_URL.
func BaseURLFromEnv() string { return os.Getenv(envBaseURL) }

// APIKeyFromEnv returns $CASKG_LLM_API_KEY, else $OPENAI_API_KEY.
func APIKeyFromEnv() string {
	if k := os.Getenv(envAPIKey); k != "" {
		return k
	}
	return os.Getenv(envOpenAIKey)
}

// Config of a Client. Zero values take the defaults shown.
type Config struct {
	URL         string        // base URL ("http://127.0.0.1:8080/v1") or the full URL of Path under it; required
	Path        string        // the endpoint under the base URL: "chat/completions", "embeddings"; required
	APIKey      string        // sent as "Authorization: Bearer ..." when non-empty; never part of an error
	Model       string        // quoted in the hint of a 404 answer (a wrong model is a common cause); the body names it
	Timeout     time.Duration // limit of each attempt, reading the answer included; default 60s
	Retries     int           // retries after the first attempt on 429, 5xx, timeouts and connection errors; default 4, negative for none
	BaseBackoff time.Duration // wait before the first retry, doubled for each next one, with jitter, capped at MaxBackoff; default 500ms
	MaxBody     int64         // largest answer read, in bytes; a larger success is an error; default 1 MiB
	MaxInFlight int           // most requests in flight at once over the Client (waits between attempts excluded); 0 = no bound
	RPM         int           // most requests started per minute, evenly spaced (no bursts); 0 = no limit
	HTTPClient  *http.Client  // default: a client with its own connection pool
}

// Client posts JSON to one OpenAI-compatible endpoint. It is safe for concurrent use.
type Client struct {
	cfg      Config
	base     *url.URL
	endpoint string // the URL requests go to
	shown    string // endpoint with any password redacted: the one in errors
	http     *http.Client
	sem      chan struct{} // one token per request in flight; nil without a bound
	lim      *limiter      // nil without an RPM limit
	retries  atomic.Int64

	rngMu sync.Mutex
	rng   *rand.Rand

	now   func() time.Time                                 // time.Now; reads Retry-After dates; replaced in tests
	sleep func(ctx context.Context, d time.Duration) error // sleepCtx; waits between attempts; replaced in tests
}

// ParseBaseURL reads raw, a base URL such as "http://127.0.0.1:8080/v1" or the full URL of path
// under it, and returns the base URL: white space, trailing slashes and the path suffix removed,
// the scheme in lower case. It must be http or https, have a host, and no query or fragment.
func ParseBaseURL(raw, path string) (*url.URL, error) {
	s := strings.TrimRight(strings.TrimSpace(raw), "/")
	if path = strings.Trim(path, "/"); path != "" {
		s = strings.TrimRight(strings.TrimSuffix(s, "/"+path), "/")
	}
	u, err := url.Parse(s)
	if err != nil {
		return nil, fmt.Errorf("openai: URL %q: %w", raw, errors.Unwrap(err))
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("openai: URL %q must be an http:// or https:// URL with a host", raw)
	}
	if u.RawQuery != "" || u.Fragment != "" || u.ForceQuery {
		return nil, fmt.Errorf("openai: URL %q must not have a query or fragment", raw)
	}
	return u, nil
}

// NotNegative is nil when v is at least 0, else the error "<field> <v> is negative": the check
// of a Config's counts and durations, shared with the clients that pass theirs through.
func NotNegative[T ~int | ~int64](field string, v T) error {
	if v >= 0 {
		return nil
	}
	return fmt.Errorf("%s %v is negative", field, v)
}

// New validates cfg and fills in the defaults. Errors name the offending Config field.
func New(cfg Config) (*Client, error) {
	cfg.Path = strings.Trim(cfg.Path, "/")
	if cfg.Path == "" {
		return nil, errors.New("openai: Config.Path is required (\"chat/completions\", \"embeddings\")")
	}
	base, err := ParseBaseURL(cfg.URL, cfg.Path)
	if err != nil {
		return nil, err
	}
	if err := cmp.Or(NotNegative("Config.Timeout", cfg.Timeout), NotNegative("Config.BaseBackoff", cfg.BaseBackoff),
		NotNegative("Config.MaxBody", cfg.MaxBody), NotNegative("Config.MaxInFlight", cfg.MaxInFlight),
		NotNegative("Config.RPM", cfg.RPM)); err != nil {
		return nil, fmt.Errorf("openai: %w", err)
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = DefaultTimeout
	}
	switch {
	case cfg.Retries == 0:
		cfg.Retries = DefaultRetries
	case cfg.Retries < 0:
		cfg.Retries = 0
	}
	if cfg.BaseBackoff == 0 {
		cfg.BaseBackoff = DefaultBaseBackoff
	}
	if cfg.MaxBody == 0 {
		cfg.MaxBody = DefaultMaxBody
	}
	c := &Client{
		cfg:      cfg,
		base:     base,
		endpoint: base.String() + "/" + cfg.Path,
		shown:    base.Redacted() + "/" + cfg.Path,
		http:     cfg.HTTPClient,
		rng:      rand.New(rand.NewPCG(jitterSeed, jitterSeed)),
		now:      time.Now,
		sleep:    sleepCtx,
	}
	if c.http == nil {
		tr := http.DefaultTransport.(*http.Transport).Clone()
		if cfg.MaxInFlight > 0 {
			tr.MaxIdleConnsPerHost = cfg.MaxInFlight
		}
		c.http = &http.Client{Transport: tr}
	}
	if cfg.MaxInFlight > 0 {
		c.sem = make(chan struct{}, cfg.MaxInFlight)
	}
	if cfg.RPM > 0 {
		c.lim = newLimiter(time.Minute / time.Duration(cfg.RPM))
	}
	return c, nil
}

// Config returns the Client's Config with the defaults filled in (Retries 0 when none).
func (c *Client) Config() Config { return c.cfg }

// Endpoint returns the URL requests go to: the base URL, a slash and Config.Path.
func (c *Client) Endpoint() string { return c.endpoint }

// Redacted returns Endpoint with any password in it replaced by "xxxxx": the form errors show.
func (c *Client) Redacted() string { return c.shown }

// BaseURL returns a copy of the parsed base URL (see ParseBaseURL).
func (c *Client) BaseURL() *url.URL {
	u := *c.base // its *url.Userinfo is immutable, so sharing it is safe
	return &u
}

// Retries counts the attempts after the first over every Post since New: HTTP requests made
// = Posts + Retries.
func (c *Client) Retries() int64 { return c.retries.Load() }

// Post sends in as JSON to the endpoint and decodes a 2xx answer into out (skipped when out is
// nil). It retries 429, 5xx, timeouts and connection errors up to Config.Retries times; a
// cancelled ctx stops it at once, waits included. Every failure is an *Error; one caused by
// ctx wraps ctx.Err().
func (c *Client) Post(ctx context.Context, in, out any) error {
	body, err := json.Marshal(in)
	if err != nil {
		return fmt.Errorf("openai: encoding the request to %s: %w", c.shown, err)
	}
	if ctx.Err() != nil {
		return c.stopped(ctx, 0)
	}
	for attempt := 1; ; attempt++ {
		e := c.attempt(ctx, body, out)
		if e == nil {
			return nil
		}
		if ctx.Err() != nil {
			return c.stopped(ctx, attempt)
		}
		e.Attempts = attempt
		if !e.retry || attempt > c.cfg.Retries {
			return e
		}
		c.retries.Add(1)
		if c.sleep(ctx, c.backoff(attempt-1, e)) != nil || ctx.Err() != nil {
			return c.stopped(ctx, attempt)
		}
	}
}

// stopped is the error of a Post that ctx ended after attempts requests.
func (c *Client) stopped(ctx context.Context, attempts int) *Error {
	return &Error{Endpoint: c.shown, Attempts: attempts, err: ctx.Err(),
		msg: fmt.Sprintf("request to %s stopped: %v", c.shown, ctx.Err())}
}

// backoff is the wait before retry number retry+1 (from 0): the server's Retry-After when given,
// else BaseBackoff·2^retry with "equal jitter" (half fixed, half random), capped at MaxBackoff.
func (c *Client) backoff(retry int, e *Error) time.Duration {
	if e.hasAfter {
		return min(e.after, MaxBackoff)
	}
	d := MaxBackoff
	if retry < 32 && c.cfg.BaseBackoff <= MaxBackoff>>retry {
		d = c.cfg.BaseBackoff << retry
	}
	half := d / 2
	c.rngMu.Lock()
	j := time.Duration(c.rng.Int64N(int64(half) + 1))
	c.rngMu.Unlock()
	return d - half + j
}

// attempt makes one request, holding an in-flight token and a rate slot. It returns nil after
// decoding a 2xx answer into out; a failure says whether it is worth another attempt.
func (c *Client) attempt(ctx context.Context, body []byte, out any) *Error {
	if c.sem != nil {
		select {
		case c.sem <- struct{}{}:
		case <-ctx.Done():
			return c.stopped(ctx, 0)
		}
		defer func() { <-c.sem }()
	}
	if c.lim != nil {
		if err := c.lim.wait(ctx); err != nil {
			return c.stopped(ctx, 0)
		}
	}
	actx, cancel := context.WithTimeout(ctx, c.cfg.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(actx, http.MethodPost, c.endpoint, bytes.NewReader(body))
	if err != nil {
		return &Error{Endpoint: c.shown, err: err, msg: fmt.Sprintf("building the request to %s: %v", c.shown, err)}
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	if c.cfg.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+c.cfg.APIKey)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return c.transportError(actx, "request to %s failed: %v", err)
	}
	defer resp.Body.Close()
	// One byte over the cap tells a body at the cap from a larger one.
	data, err := io.ReadAll(io.LimitReader(resp.Body, c.cfg.MaxBody+1))
	if err != nil {
		return c.transportError(actx, "reading the answer of %s: %v", err)
	}
	code := resp.StatusCode
	if code < 200 || code > 299 {
		return c.statusError(resp, data[:min(int64(len(data)), c.cfg.MaxBody)])
	}
	if int64(len(data)) > c.cfg.MaxBody {
		return &Error{Endpoint: c.shown, Status: code,
			msg: fmt.Sprintf("%s answered HTTP %d with more than %d bytes (Config.MaxBody)", c.shown, code, c.cfg.MaxBody)}
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(data, out); err != nil {
		return &Error{Endpoint: c.shown, Status: code, err: err,
			msg: fmt.Sprintf("%s answered HTTP %d with a body that is not %s JSON: %v; it starts %q",
				c.shown, code, c.cfg.Path, err, c.redact(Excerpt(string(data), 120)))}
	}
	return nil
}

// transportError classifies a round trip that got no (whole) answer: a timeout or a connection
// error is worth another attempt. The caller's cancellation is handled by Post.
func (c *Client) transportError(actx context.Context, format string, err error) *Error {
	var ne net.Error
	if errors.Is(actx.Err(), context.DeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout()) {
		return &Error{Endpoint: c.shown, Timeout: true, retry: true, err: err,
			msg: fmt.Sprintf("no answer from %s within %v", c.shown, c.cfg.Timeout)}
	}
	var ue *url.Error // net/http's `Post "url":` wrapper; the message names the URL already
	if errors.As(err, &ue) {
		err = ue.Err
	}
	return &Error{Endpoint: c.shown, retry: true, err: err, msg: fmt.Sprintf(format, c.shown, err)}
}

// statusError describes a non-2xx answer; 429 and 5xx are worth another attempt, after the
// server's Retry-After when it gives one.
func (c *Client) statusError(resp *http.Response, data []byte) *Error {
	code := resp.StatusCode
	e := &Error{Endpoint: c.shown, Status: code, retry: code == http.StatusTooManyRequests || (code >= 500 && code <= 599)}
	e.Detail = c.redact(ErrorMessage(data))
	if e.Detail == "" {
		e.Detail = c.redact(Excerpt(string(data), 200))
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s answered HTTP %d %s", c.shown, code, http.StatusText(code))
	if e.Detail != "" {
		fmt.Fprintf(&b, ": %q", e.Detail)
	}
	switch code {
	case http.StatusUnauthorized, http.StatusForbidden:
		fmt.Fprintf(&b, "; check the API key (set %s or %s)", envAPIKey, envOpenAIKey)
	case http.StatusNotFound:
		b.WriteString("; check the base URL (it should end in /v1 for most servers)")
		if c.cfg.Model != "" {
			fmt.Fprintf(&b, " and the model name %q", c.cfg.Model)
		}
	}
	e.msg = b.String()
	if e.retry {
		e.after, e.hasAfter = parseRetryAfter(resp.Header.Get("Retry-After"), c.now())
	}
	return e
}

// redact replaces the API key in s, should a server echo it.
func (c *Client) redact(s string) string {
	if c.cfg.APIKey == "" {
		return s
	}
	return strings.ReplaceAll(s, c.cfg.APIKey, "[redacted]")
}

// sleepCtx waits d or until ctx is done.
func sleepCtx(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
