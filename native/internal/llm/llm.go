// Package llm answers counterfactual probes and judge prompts with scores in [0,1] from any
// OpenAI-compatible chat-completions endpoint.
//
// A Client bounds parallel requests (Config.Concurrency) and their rate (Config.RPM), retries
// transient failures with jittered exponential backoff (both through native/internal/openai, the
// transport it shares with the HTTP embedder), and keeps every successful answer in an
// on-disk cache keyed by content hash, written right after the answer arrives: a build that is
// interrupted and rerun asks the endpoint only the prompts it has no answer for. Answers that
// fail (HTTP errors after retries, unparseable text, cancellation) are reported as Failed and
// never cached, so a rerun asks again; they are never replaced by a neutral score.
package llm

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/caskg/caskg/native/internal/openai"
)

// Defaults of Config's zero values.
const (
	defaultMaxTokens   = 16
	defaultConcurrency = 4
	DefaultTimeout     = openai.DefaultTimeout
	DefaultRetries     = openai.DefaultRetries
	DefaultBaseBackoff = openai.DefaultBaseBackoff
	// MaxBackoff caps every wait between attempts, Retry-After included.
	MaxBackoff = openai.MaxBackoff
)

// Config of a Client. Zero values take the defaults shown.
type Config struct {
	URL         string        // base URL, e.g. "http://127.0.0.1:8080/v1", or the full ".../chat/completions" URL; required
	Model       string        // model name sent with every request; required
	APIKey      string        // sent as "Authorization: Bearer ..." when non-empty
	Temperature float64       // sampling temperature, in [0,2]; default 0
	MaxTokens   int           // most tokens per answer; default 16
	Concurrency int           // most requests in flight across the Client; default 4
	RPM         int           // most requests started per minute, evenly spaced (no bursts); 0 = unlimited
	Timeout     time.Duration // limit of each HTTP attempt; default 60s
	Retries     int           // retries after the first attempt on 429, 5xx, timeouts and transport errors; default 4, negative for none
	BaseBackoff time.Duration // wait before the first retry, doubled for each next one, with jitter, capped at MaxBackoff; default 500ms
	CacheDir    string        // on-disk answer cache; "" disables caching
	HTTPClient  *http.Client  // optional; default a client with its own connection pool
}

// ConfigFromEnv returns a Config for url and model with the defaults. An empty url falls back to
// $OPENAI_BASE_URL; the API key comes from $CASKG_LLM_API_KEY, else $OPENAI_API_KEY.
func ConfigFromEnv(url, model string) Config {
	if url == "" {
		url = openai.BaseURLFromEnv()
	}
	return Config{URL: url, Model: model, APIKey: openai.APIKeyFromEnv()}
}

// Prompt is one question to the model. The system prompt should ask for a JSON answer
// {"score": x} with x in [0,1]; ParseScore also copes with looser answers.
type Prompt struct {
	Kind   string // "removal", "substitution", "reorder", "judge": counted in Stats.ByKind and part of the cache key
	System string // omitted from the request when empty
	User   string
}

// Outcome says where an Answer came from.
type Outcome int

// Outcomes of Score.
const (
	Fresh  Outcome = iota // answered by the endpoint in this call (and cached)
	Cached                // read from the cache; no request made
	Failed                // no score: see Answer.Err
)

// String returns "fresh", "cached" or "failed".
func (o Outcome) String() string {
	switch o {
	case Fresh:
		return "fresh"
	case Cached:
		return "cached"
	case Failed:
		return "failed"
	}
	return fmt.Sprintf("Outcome(%d)", int(o))
}

// Answer is the result of one Prompt.
type Answer struct {
	Score   float64 // in [0,1]; meaningful only when Outcome != Failed
	Outcome Outcome
	Raw     string // the model's text, kept for failed parses too so they can be reported
	Err     error  // why it failed (HTTP status after retries, unparseable answer, cancellation); nil otherwise
}

// Stats counts a Client's work since New. HTTP requests made = Calls + Retries.
type Stats struct {
	Calls       int64            // prompts sent to the endpoint (cache misses)
	Cached      int64            // prompts answered from the cache
	Failed      int64            // prompts with a Failed outcome, cancelled ones included
	Retries     int64            // attempts after the first, over all prompts
	CacheErrors int64            // fresh answers that could not be written to the cache
	ByKind      map[string]int64 // prompts scored, by Prompt.Kind, whatever their outcome
}

// Client scores prompts. It is safe for concurrent use.
type Client struct {
	cfg   Config
	tr    *openai.Client // bounds, paces and retries the requests
	base  string         // normalized base URL, part of the cache key
	cache *cache         // nil when caching is disabled

	calls, cached, failed, cacheErrs atomic.Int64
	kindMu                           sync.Mutex
	byKind                           map[string]int64
}

// New validates cfg, fills in the defaults and creates the cache directory. Errors name the
// offending Config field.
func New(cfg Config) (*Client, error) {
	if cfg.URL == "" {
		return nil, errors.New("llm: Config.URL is required (a base URL such as http://127.0.0.1:8080/v1; OPENAI_BASE_URL is read by ConfigFromEnv)")
	}
	base, err := normalizeBase(cfg.URL)
	if err != nil {
		return nil, fmt.Errorf("llm: Config.URL: %w", err)
	}
	if strings.TrimSpace(cfg.Model) == "" {
		return nil, errors.New("llm: Config.Model is required")
	}
	if math.IsNaN(cfg.Temperature) || cfg.Temperature < 0 || cfg.Temperature > 2 {
		return nil, fmt.Errorf("llm: Config.Temperature %v is outside [0,2]", cfg.Temperature)
	}
	if err := cmp.Or(openai.NotNegative("Config.MaxTokens", cfg.MaxTokens), openai.NotNegative("Config.Concurrency", cfg.Concurrency),
		openai.NotNegative("Config.RPM", cfg.RPM), openai.NotNegative("Config.Timeout", cfg.Timeout),
		openai.NotNegative("Config.BaseBackoff", cfg.BaseBackoff)); err != nil {
		return nil, fmt.Errorf("llm: %w", err)
	}
	tr, err := openai.New(openai.Config{
		URL: cfg.URL, Path: chatPath, APIKey: cfg.APIKey, Model: cfg.Model,
		Timeout: cfg.Timeout, Retries: cfg.Retries, BaseBackoff: cfg.BaseBackoff, MaxBody: maxBody,
		MaxInFlight: cmp.Or(cfg.Concurrency, defaultConcurrency), RPM: cfg.RPM, HTTPClient: cfg.HTTPClient,
	})
	if err != nil {
		return nil, fmt.Errorf("llm: %w", err)
	}
	if cfg.MaxTokens == 0 {
		cfg.MaxTokens = defaultMaxTokens
	}
	if cfg.Concurrency == 0 {
		cfg.Concurrency = defaultConcurrency
	}
	tc := tr.Config() // the transport's settings, defaults filled in
	cfg.Timeout, cfg.Retries, cfg.BaseBackoff = tc.Timeout, tc.Retries, tc.BaseBackoff
	c := &Client{cfg: cfg, tr: tr, base: base, byKind: map[string]int64{}}
	if cfg.CacheDir != "" {
		if err := os.MkdirAll(cfg.CacheDir, 0o755); err != nil {
			return nil, fmt.Errorf("llm: Config.CacheDir: %w", err)
		}
		c.cache = &cache{dir: cfg.CacheDir}
	}
	return c, nil
}

// normalizeBase returns the base URL without a trailing slash or "/chat/completions" suffix,
// with scheme and host in lower case, so that equivalent spellings share cache entries.
func normalizeBase(raw string) (string, error) {
	u, err := openai.ParseBaseURL(raw, chatPath)
	if err != nil {
		return "", err
	}
	u.Host = strings.ToLower(u.Host)
	return u.String(), nil
}

// Score answers one prompt: from the cache when it holds the answer, else from the endpoint,
// caching a successful answer before returning it. A cancelled ctx yields a Failed answer
// whose Err wraps ctx.Err().
func (c *Client) Score(ctx context.Context, p Prompt) Answer {
	c.kindMu.Lock()
	c.byKind[p.Kind]++
	c.kindMu.Unlock()
	a := c.score(ctx, p)
	switch a.Outcome {
	case Cached:
		c.cached.Add(1)
	case Failed:
		c.failed.Add(1)
	}
	return a
}

func (c *Client) score(ctx context.Context, p Prompt) Answer {
	if err := ctx.Err(); err != nil {
		return Answer{Outcome: Failed, Err: fmt.Errorf("llm: %w", err)}
	}
	var key string
	if c.cache != nil {
		key = c.key(p)
		if score, raw, ok := c.cache.get(key); ok {
			return Answer{Score: score, Outcome: Cached, Raw: raw}
		}
	}
	c.calls.Add(1)
	text, err := c.complete(ctx, p)
	if err != nil {
		return Answer{Outcome: Failed, Err: err}
	}
	score, ok := ParseScore(text)
	if !ok {
		return Answer{Outcome: Failed, Raw: text,
			Err: fmt.Errorf("llm: no score in [0,1] in the %s answer %q", kindName(p.Kind), openai.Excerpt(text, 120))}
	}
	if c.cache != nil {
		if err := c.cache.put(key, score, text); err != nil {
			c.cacheErrs.Add(1)
		}
	}
	return Answer{Score: score, Outcome: Fresh, Raw: text}
}

func kindName(kind string) string {
	if kind == "" {
		return "model's"
	}
	return kind
}

// ScoreAll answers every prompt with at most Config.Concurrency requests in flight and returns
// the answers in input order. progress, when not nil, is called with (done, total) after each
// answer, one call at a time, done increasing. Cancelling ctx stops new calls promptly and
// aborts those in flight; the prompts not reached are Failed with ctx's error and not reported
// to progress. Every answer received before the cancellation is already in the cache. No
// goroutine started by ScoreAll outlives it.
func (c *Client) ScoreAll(ctx context.Context, ps []Prompt, progress func(done, total int)) []Answer {
	out := make([]Answer, len(ps))
	started := make([]bool, len(ps)) // each index is written by one worker, read after Wait
	var next atomic.Int64
	var progMu sync.Mutex
	done := 0
	var wg sync.WaitGroup
	for range min(c.cfg.Concurrency, len(ps)) {
		wg.Go(func() {
			for ctx.Err() == nil {
				i := int(next.Add(1) - 1)
				if i >= len(ps) {
					return
				}
				started[i] = true
				out[i] = c.Score(ctx, ps[i])
				progMu.Lock()
				done++
				if progress != nil {
					progress(done, len(ps))
				}
				progMu.Unlock()
			}
		})
	}
	wg.Wait()
	for i := range ps {
		if !started[i] {
			out[i] = c.Score(ctx, ps[i]) // ctx is done: Failed at once, counted in Stats
		}
	}
	return out
}

// Stats returns a snapshot of the Client's counters.
func (c *Client) Stats() Stats {
	s := Stats{
		Calls:       c.calls.Load(),
		Cached:      c.cached.Load(),
		Failed:      c.failed.Load(),
		Retries:     c.tr.Retries(),
		CacheErrors: c.cacheErrs.Load(),
		ByKind:      make(map[string]int64, len(c.byKind)),
	}
	c.kindMu.Lock()
	for k, v := range c.byKind {
		s.ByKind[k] = v
	}
	c.kindMu.Unlock()
	return s
}

// Cached reports whether p's answer is in the cache, i.e. whether Score would answer it without
// a request (for --dry-run: how many calls a build would make). Always false without a cache.
func (c *Client) Cached(p Prompt) bool {
	if c.cache == nil {
		return false
	}
	_, _, ok := c.cache.get(c.key(p))
	return ok
}
