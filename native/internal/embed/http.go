package embed

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/caskg/caskg/native/internal/openai"
)

// Defaults of HTTPOptions.
const (
	DefaultHTTPBatch   = 64
	defaultHTTPTimeout = openai.DefaultTimeout
	defaultHTTPRetries = openai.DefaultRetries
	maxHTTPBody        = 64 << 20 // a batch of 64 3,072-dimensional vectors as JSON is a few MB
)

// embeddingsPath is the endpoint under the base URL.
const embeddingsPath = "embeddings"

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

// HTTP embeds texts with an OpenAI-compatible POST /v1/embeddings endpoint, through the
// transport native/internal/openai (retries, timeouts, Retry-After, bounded answers).
type HTTP struct {
	opt HTTPOptions
	tr  *openai.Client

	mu  sync.Mutex
	dim int
}

// NewHTTP returns an embedder for the endpoint of opt.
func NewHTTP(opt HTTPOptions) (*HTTP, error) {
	if opt.URL == "" {
		return nil, errors.New("embed: the http embedder needs a URL (--embed-url), e.g. http://127.0.0.1:8080/v1")
	}
	if opt.Model == "" {
		return nil, errors.New("embed: the http embedder needs a model name (--embed-model)")
	}
	if opt.APIKey == "" {
		opt.APIKey = openai.APIKeyFromEnv()
	}
	if opt.Batch <= 0 {
		opt.Batch = DefaultHTTPBatch
	}
	tr, err := openai.New(openai.Config{
		URL: opt.URL, Path: embeddingsPath, APIKey: opt.APIKey, Model: opt.Model,
		Timeout: max(opt.Timeout, 0), Retries: opt.Retries, BaseBackoff: max(opt.BaseBackoff, 0),
		MaxBody: maxHTTPBody, HTTPClient: opt.HTTPClient,
	})
	if err != nil {
		return nil, fmt.Errorf("embed: the embedding URL (--embed-url): %w", err)
	}
	return &HTTP{opt: opt, tr: tr, dim: opt.Dim}, nil
}

// ID names the endpoint and the model.
func (h *HTTP) ID() string { return "http:" + h.opt.Model + "@" + h.tr.Endpoint() }

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

// embedBatch embeds one request's texts. An answer that is well-formed JSON but wrong (counts,
// indexes, dimensions, non-finite values) is an error, not retried: asking again would not fix it.
func (h *HTTP) embedBatch(ctx context.Context, texts []string) ([][]float32, error) {
	// Servers reject empty inputs; an empty text is sent as one space.
	in := make([]string, len(texts))
	for i, t := range texts {
		if in[i] = t; strings.TrimSpace(t) == "" {
			in[i] = " "
		}
	}
	var er embeddingsResponse
	if err := h.tr.Post(ctx, embeddingsRequest{Model: h.opt.Model, Input: in}, &er); err != nil {
		return nil, fmt.Errorf("embed: %w", err)
	}
	who, n := h.tr.Redacted(), len(texts)
	if len(er.Data) != n {
		return nil, fmt.Errorf("embed: %s returned %d embeddings for %d inputs", who, len(er.Data), n)
	}
	vecs := make([][]float32, n)
	for i, d := range er.Data {
		idx := i
		if d.Index != nil {
			idx = *d.Index
		}
		if idx < 0 || idx >= n || vecs[idx] != nil {
			return nil, fmt.Errorf("embed: %s returned a bad or repeated index %d", who, idx)
		}
		vecs[idx] = d.Embedding
	}
	h.mu.Lock()
	if h.dim == 0 && len(vecs[0]) > 0 {
		h.dim = len(vecs[0])
	}
	dim := h.dim
	h.mu.Unlock()
	if err := checkVectors(vecs, n, dim, who); err != nil {
		return nil, err
	}
	for _, v := range vecs {
		normalize(v)
	}
	return vecs, nil
}
