package embed

import (
	"bytes"
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
	"strconv"
	"strings"
	"sync"
	"time"
)

// Defaults of HTTPOptions.
const (
	DefaultHTTPBatch   = 64
	DefaultHTTPTimeout = 60 * time.Second
	DefaultHTTPRetries = 4
	defaultBackoff     = 500 * time.Millisecond
	maxBackoff         = 30 * time.Second
	maxHTTPBody        = 64 << 20 // a batch of 64 3,072-dimensional vectors as JSON is a few MB
)

// HTTPOptions configure an OpenAI-compatible embeddings client. Zero values take the defaults.
type HTTPOptions struct {
	URL         string        // base URL ("http://127.0.0.1:8080/v1") or the full ".../embeddings" URL; required
	Model       string        // model name sent with every request; required
	APIKey      string        // sent as "Authorization: Bearer ..."; default $CASKG_LLM_API_KEY, else $OPENAI_API_KEY
	Dim         int           // expected dimension; 0 learns it from the first answer
	Batch       int           // texts per request; default DefaultHTTPBatch
	Timeout     time.Duration // limit of each attempt; default 60s
	Retries     int           // retries on 429, 5xx, timeouts and transport errors; default 4, negative for none
	BaseBackoff time.Duration // wait before the first retry, doubled after each, with jitter; default 500ms
	HTTPClient  *http.Client
}

// HTTP embeds texts with an OpenAI-compatible POST /v1/embeddings endpoint.
type HTTP struct {
	opt      HTTPOptions
	endpoint string
	client   *http.Client

	mu  sync.Mutex
	dim int
	rng *rand.Rand
}

// NewHTTP returns an embedder for the endpoint of opt.
func NewHTTP(opt HTTPOptions) (*HTTP, error) {
	if opt.URL == "" {
		return nil, errors.New("embed: the http embedder needs a URL (--embed-url), e.g. http://127.0.0.1:8080/v1")
	}
	if opt.Model == "" {
		return nil, errors.New("embed: the http embedder needs a model name (--embed-model)")
	}
	u, err := url.Parse(strings.TrimRight(strings.TrimSpace(opt.URL), "/"))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("embed: embedding URL %q is not an http(s) URL", opt.URL)
	}
	endpoint := u.String()
	if !strings.HasSuffix(endpoint, "/embeddings") {
		endpoint += "/embeddings"
	}
	if opt.APIKey == "" {
		opt.APIKey = os.Getenv("CASKG_LLM_API_KEY")
	}
	if opt.APIKey == "" {
		opt.APIKey = os.Getenv("OPENAI_API_KEY")
	}
	if opt.Batch <= 0 {
		opt.Batch = DefaultHTTPBatch
	}
	if opt.Timeout <= 0 {
		opt.Timeout = DefaultHTTPTimeout
	}
	if opt.Retries == 0 {
		opt.Retries = DefaultHTTPRetries
	}
	if opt.BaseBackoff <= 0 {
		opt.BaseBackoff = defaultBackoff
	}
	c := opt.HTTPClient
	if c == nil {
		c = &http.Client{}
	}
	return &HTTP{opt: opt, endpoint: endpoint, client: c, dim: opt.Dim,
		rng: rand.New(rand.NewPCG(builtinSeed, 1))}, nil
}

// ID names the endpoint and the model.
func (h *HTTP) ID() string { return "http:" + h.opt.Model + "@" + h.endpoint }

// Dim is the configured dimension or the one the endpoint answered with; 0 before the first
// answer when not configured.
func (h *HTTP) Dim() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.dim
}

type embeddingsRequest struct {
	Model string   `json:"model"`
	Input []string `json:"input"`
}

type embeddingsResponse struct {
	Data []struct {
		Index     *int      `json:"index"`
		Embedding []float32 `json:"embedding"`
	} `json:"data"`
}

// Embed sends the texts in batches of HTTPOptions.Batch and returns their normalized vectors.
func (h *HTTP) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, 0, len(texts))
	for start := 0; start < len(texts); start += h.opt.Batch {
		batch := texts[start:min(start+h.opt.Batch, len(texts))]
		vecs, err := h.embedBatch(ctx, batch)
		if err != nil {
			return nil, err
		}
		out = append(out, vecs...)
	}
	return out, nil
}

func (h *HTTP) embedBatch(ctx context.Context, texts []string) ([][]float32, error) {
	// Servers reject empty inputs; an empty text is sent as one space.
	in := make([]string, len(texts))
	for i, t := range texts {
		if in[i] = t; strings.TrimSpace(t) == "" {
			in[i] = " "
		}
	}
	body, err := json.Marshal(embeddingsRequest{Model: h.opt.Model, Input: in})
	if err != nil {
		return nil, fmt.Errorf("embed: encoding request: %w", err)
	}
	for attempt := 0; ; attempt++ {
		vecs, retryAfter, retry, err := h.attempt(ctx, body, len(texts))
		if err == nil {
			return vecs, nil
		}
		if ctx.Err() != nil {
			return nil, fmt.Errorf("embed: %w", ctx.Err())
		}
		if !retry || attempt >= h.opt.Retries {
			if attempt > 0 {
				err = fmt.Errorf("%w (after %d attempts)", err, attempt+1)
			}
			return nil, err
		}
		wait := retryAfter
		if wait < 0 {
			d := min(h.opt.BaseBackoff<<min(attempt, 20), maxBackoff)
			h.mu.Lock()
			wait = d/2 + time.Duration(h.rng.Int64N(int64(d/2)+1))
			h.mu.Unlock()
		}
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return nil, fmt.Errorf("embed: %w", ctx.Err())
		}
	}
}

// attempt makes one request. retryAfter is the server's Retry-After, or negative.
func (h *HTTP) attempt(ctx context.Context, body []byte, n int) (vecs [][]float32, retryAfter time.Duration, retry bool, err error) {
	actx, cancel := context.WithTimeout(ctx, h.opt.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(actx, http.MethodPost, h.endpoint, bytes.NewReader(body))
	if err != nil {
		return nil, -1, false, fmt.Errorf("embed: building request: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	if h.opt.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+h.opt.APIKey)
	}
	resp, err := h.client.Do(req)
	if err != nil {
		var ne net.Error
		if errors.Is(actx.Err(), context.DeadlineExceeded) || errors.As(err, &ne) && ne.Timeout() {
			return nil, -1, true, fmt.Errorf("embed: no answer from %s within %v", h.endpoint, h.opt.Timeout)
		}
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return nil, -1, true, fmt.Errorf("embed: request to %s failed: %w", h.endpoint, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxHTTPBody))
	if err != nil {
		return nil, -1, true, fmt.Errorf("embed: reading the answer of %s: %w", h.endpoint, err)
	}
	if resp.StatusCode/100 != 2 {
		code := resp.StatusCode
		retry = code == http.StatusTooManyRequests || code >= 500
		msg := fmt.Sprintf("embed: %s answered HTTP %d %s", h.endpoint, code, http.StatusText(code))
		if d := errorDetail(data); d != "" {
			msg += ": " + strconv.Quote(d)
		}
		switch code {
		case http.StatusUnauthorized, http.StatusForbidden:
			msg += "; check the API key (CASKG_LLM_API_KEY or OPENAI_API_KEY)"
		case http.StatusNotFound:
			msg += fmt.Sprintf("; check the URL (most servers want it to end in /v1) and the model %q", h.opt.Model)
		}
		retryAfter = -1
		if s, perr := strconv.Atoi(strings.TrimSpace(resp.Header.Get("Retry-After"))); perr == nil && s >= 0 {
			retryAfter = min(time.Duration(s)*time.Second, maxBackoff)
		}
		return nil, retryAfter, retry, errors.New(msg)
	}
	var er embeddingsResponse
	if err := json.Unmarshal(data, &er); err != nil {
		return nil, -1, false, fmt.Errorf("embed: %s answered with a body that is not embeddings JSON: %w", h.endpoint, err)
	}
	if len(er.Data) != n {
		return nil, -1, false, fmt.Errorf("embed: %s returned %d embeddings for %d inputs", h.endpoint, len(er.Data), n)
	}
	vecs = make([][]float32, n)
	for i, d := range er.Data {
		idx := i
		if d.Index != nil {
			idx = *d.Index
		}
		if idx < 0 || idx >= n || vecs[idx] != nil {
			return nil, -1, false, fmt.Errorf("embed: %s returned a bad or repeated index %d", h.endpoint, idx)
		}
		vecs[idx] = d.Embedding
	}
	h.mu.Lock()
	if h.dim == 0 && len(vecs[0]) > 0 {
		h.dim = len(vecs[0])
	}
	dim := h.dim
	h.mu.Unlock()
	if err := checkVectors(vecs, n, dim, h.endpoint); err != nil {
		return nil, -1, false, err
	}
	for _, v := range vecs {
		normalize(v)
	}
	return vecs, -1, false, nil
}

// errorDetail reads an OpenAI-style error body ({"error": {"message": ...}} or {"error": "..."}),
// else the start of the body.
func errorDetail(data []byte) string {
	var body struct {
		Error json.RawMessage `json:"error"`
	}
	if json.Unmarshal(data, &body) == nil && len(body.Error) > 0 {
		var s string
		if json.Unmarshal(body.Error, &s) == nil {
			return s
		}
		var obj struct {
			Message string `json:"message"`
		}
		if json.Unmarshal(body.Error, &obj) == nil && obj.Message != "" {
			return obj.Message
		}
	}
	s := strings.Join(strings.Fields(strings.ToValidUTF8(string(data), "\uFFFD")), " ")
	if r := []rune(s); len(r) > 200 {
		s = string(r[:200]) + "…"
	}
	return s
}
