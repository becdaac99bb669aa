package embed

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/caskg/caskg/native/testlib/table"
)

// fakeVector is the embedding the fake server gives a text: deterministic, not normalized.
func fakeVector(text string, dim int) []float32 {
	v := make([]float32, dim)
	for i, r := range text {
		v[(i+int(r))%dim] += float32(r%7) + 1
	}
	v[0] += 0.5
	return v
}

// embeddingsServer speaks the OpenAI embeddings protocol. fail, when set, may answer a request
// instead (returning true).
type embeddingsServer struct {
	dim      int
	requests atomic.Int64
	mu       sync.Mutex
	batches  []int
	fail     func(w http.ResponseWriter, r *http.Request, n int64) bool
	reverse  bool // answer in reverse index order
	key      string
}

func (s *embeddingsServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	n := s.requests.Add(1)
	if r.Method != http.MethodPost || r.URL.Path != "/v1/embeddings" {
		http.Error(w, `{"error": {"message": "no such route"}}`, http.StatusNotFound)
		return
	}
	if s.key != "" && r.Header.Get("Authorization") != "Bearer "+s.key {
		w.WriteHeader(http.StatusUnauthorized)
		fmt.Fprint(w, `{"error": {"message": "Incorrect API key provided"}}`)
		return
	}
	if s.fail != nil && s.fail(w, r, n) {
		return
	}
	var req struct {
		Model string   `json:"model"`
		Input []string `json:"input"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil || req.Model == "" {
		http.Error(w, `{"error": "bad request"}`, http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	s.batches = append(s.batches, len(req.Input))
	s.mu.Unlock()
	type item struct {
		Object    string    `json:"object"`
		Index     int       `json:"index"`
		Embedding []float32 `json:"embedding"`
	}
	resp := struct {
		Object string `json:"object"`
		Data   []item `json:"data"`
		Model  string `json:"model"`
	}{Object: "list", Model: req.Model}
	for i, text := range req.Input {
		resp.Data = append(resp.Data, item{"embedding", i, fakeVector(text, s.dim)})
	}
	if s.reverse {
		for i, j := 0, len(resp.Data)-1; i < j; i, j = i+1, j-1 {
			resp.Data[i], resp.Data[j] = resp.Data[j], resp.Data[i]
		}
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(resp)
}

// waitGone blocks a handler until the client gives up on the request, at most a few seconds.
// The server notices a closed connection only once the request body has been read.
func waitGone(r *http.Request) {
	io.Copy(io.Discard, r.Body)
	select {
	case <-r.Context().Done():
	case <-time.After(5 * time.Second):
	}
}

func newHTTPTest(t *testing.T, s *embeddingsServer, opt HTTPOptions) *HTTP {
	t.Helper()
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	if opt.URL == "" {
		opt.URL = srv.URL + "/v1"
	}
	opt.Model = "test-embed"
	if opt.BaseBackoff == 0 {
		opt.BaseBackoff = time.Millisecond
	}
	h, err := NewHTTP(opt)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func TestHTTPEmbed(t *testing.T) {
	s := &embeddingsServer{dim: 8, reverse: true, key: "sk-test"}
	t.Setenv("CASKG_LLM_API_KEY", "sk-test")
	h := newHTTPTest(t, s, HTTPOptions{Batch: 3})
	texts := []string{"heat the egg", "", "pick up the mug", "café 中国", "x", "y", "z"}
	got, err := h.Embed(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	if h.Dim() != 8 {
		t.Errorf("Dim() = %d after an answer, want 8", h.Dim())
	}
	for i, text := range texts {
		in := text
		if in == "" {
			in = " "
		}
		want := fakeVector(in, 8)
		normalize(want)
		for j := range want {
			if math.Abs(float64(got[i][j]-want[j])) > 1e-6 {
				t.Fatalf("text %d %q: got %v, want %v", i, text, got[i], want)
			}
		}
	}
	if fmt.Sprint(s.batches) != "[3 3 1]" {
		t.Errorf("batches %v, want [3 3 1]", s.batches)
	}
	if !strings.HasPrefix(h.ID(), "http:test-embed@") || !strings.HasSuffix(h.ID(), "/v1/embeddings") {
		t.Errorf("ID() = %q", h.ID())
	}
}

func TestHTTPRetries(t *testing.T) {
	tests := []struct {
		name     string
		fail     func(w http.ResponseWriter, r *http.Request, n int64) bool
		retries  int
		timeout  time.Duration
		wantErr  string
		requests int64
	}{
		{"429 then success", func(w http.ResponseWriter, r *http.Request, n int64) bool {
			if n == 1 {
				w.Header().Set("Retry-After", "0")
				w.WriteHeader(http.StatusTooManyRequests)
				return true
			}
			return false
		}, 2, 0, "", 2},
		{"503 twice then success", func(w http.ResponseWriter, r *http.Request, n int64) bool {
			if n <= 2 {
				http.Error(w, `{"error": {"message": "overloaded"}}`, http.StatusServiceUnavailable)
				return true
			}
			return false
		}, 3, 0, "", 3},
		{"500 until retries run out", func(w http.ResponseWriter, r *http.Request, n int64) bool {
			http.Error(w, `{"error": "boom"}`, http.StatusInternalServerError)
			return true
		}, 2, 0, `HTTP 500 Internal Server Error: "boom" (after 3 attempts)`, 3},
		{"400 is not retried", func(w http.ResponseWriter, r *http.Request, n int64) bool {
			http.Error(w, `{"error": {"message": "input too long"}}`, http.StatusBadRequest)
			return true
		}, 3, 0, `HTTP 400 Bad Request: "input too long"`, 1},
		{"timeout then success", func(w http.ResponseWriter, r *http.Request, n int64) bool {
			if n == 1 {
				waitGone(r) // never answers; the client gives up
				return true
			}
			return false
		}, 1, 50 * time.Millisecond, "", 2},
		{"timeouts until retries run out", func(w http.ResponseWriter, r *http.Request, n int64) bool {
			waitGone(r)
			return true
		}, 1, 50 * time.Millisecond, "no answer from", 2},
		{"wrong count is not retried", func(w http.ResponseWriter, r *http.Request, n int64) bool {
			fmt.Fprint(w, `{"data": []}`)
			return true
		}, 3, 0, "returned 0 embeddings for 2 inputs", 1},
		{"not JSON", func(w http.ResponseWriter, r *http.Request, n int64) bool {
			fmt.Fprint(w, `<html>`)
			return true
		}, 3, 0, "not embeddings JSON", 1},
		{"non-finite values", func(w http.ResponseWriter, r *http.Request, n int64) bool {
			fmt.Fprint(w, `{"data": [{"index": 0, "embedding": [1, 2]}, {"index": 1, "embedding": [1, 1e39]}]}`)
			return true
		}, 3, 0, "not embeddings JSON", 1},
		{"repeated index", func(w http.ResponseWriter, r *http.Request, n int64) bool {
			fmt.Fprint(w, `{"data": [{"index": 0, "embedding": [1, 2]}, {"index": 0, "embedding": [1, 1]}]}`)
			return true
		}, 3, 0, "repeated index 0", 1},
		{"dimension changes", func(w http.ResponseWriter, r *http.Request, n int64) bool {
			fmt.Fprint(w, `{"data": [{"index": 0, "embedding": [1, 2]}, {"index": 1, "embedding": [1]}]}`)
			return true
		}, 3, 0, "dimension 1", 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := &embeddingsServer{dim: 4, fail: tc.fail}
			h := newHTTPTest(t, s, HTTPOptions{Retries: tc.retries, Timeout: tc.timeout})
			vecs, err := h.Embed(context.Background(), []string{"a", "b"})
			if tc.wantErr == "" {
				if err != nil || len(vecs) != 2 {
					t.Fatalf("Embed = %v, %v", vecs, err)
				}
			} else if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("err = %v, want %q", err, tc.wantErr)
			}
			if got := s.requests.Load(); got != tc.requests {
				t.Errorf("%d requests, want %d", got, tc.requests)
			}
		})
	}
}

func TestHTTPErrors(t *testing.T) {
	s := &embeddingsServer{dim: 4, key: "right"}
	t.Setenv("CASKG_LLM_API_KEY", "")
	t.Setenv("OPENAI_API_KEY", "wrong")
	h := newHTTPTest(t, s, HTTPOptions{})
	if _, err := h.Embed(context.Background(), []string{"a"}); err == nil || !strings.Contains(err.Error(), "HTTP 401") ||
		!strings.Contains(err.Error(), "check the API key") {
		t.Errorf("bad key: %v", err)
	}
	srv := httptest.NewServer(s)
	defer srv.Close()
	h2, err := NewHTTP(HTTPOptions{URL: srv.URL + "/v2", Model: "m", APIKey: "right"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h2.Embed(context.Background(), []string{"a"}); err == nil || !strings.Contains(err.Error(), "HTTP 404") {
		t.Errorf("wrong path: %v", err)
	}
	for _, opt := range []HTTPOptions{{Model: "m"}, {URL: "http://x/v1"}, {URL: "ftp://x", Model: "m"}} {
		if _, err := NewHTTP(opt); err == nil {
			t.Errorf("NewHTTP(%+v) accepted", opt)
		}
	}
	// Cancellation stops the retries at once.
	slow := &embeddingsServer{dim: 4, fail: func(w http.ResponseWriter, r *http.Request, n int64) bool {
		http.Error(w, "busy", http.StatusServiceUnavailable)
		return true
	}}
	h3 := newHTTPTest(t, slow, HTTPOptions{Retries: 100, BaseBackoff: time.Second})
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	start := time.Now()
	if _, err := h3.Embed(ctx, []string{"a"}); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("cancelled: %v", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("cancellation took %v", d)
	}
}

// TestHTTPID pins the ID of the http embedder for the spellings of a URL: the ID names the
// embedding cache's folder and is stored in artifacts, so changing it orphans existing caches.
func TestHTTPID(t *testing.T) {
	// id is the ID of the http embedder of the URL u, or the error that refuses it.
	id := func(u string) string {
		h, err := NewHTTP(HTTPOptions{URL: u, Model: "m"})
		if err != nil {
			return err.Error()
		}
		return h.ID()
	}
	table.Run(t, "ID of NewHTTP", id, []table.Case[string, string]{
		{"base", "http://127.0.0.1:8080/v1", "http:m@http://127.0.0.1:8080/v1/embeddings"},
		{"trailing slash", "http://127.0.0.1:8080/v1/", "http:m@http://127.0.0.1:8080/v1/embeddings"},
		{"full endpoint", " http://127.0.0.1:8080/v1/embeddings/ ", "http:m@http://127.0.0.1:8080/v1/embeddings"},
		{"scheme case folded, host kept", "HTTPS://Api.Example.com/v1", "http:m@https://Api.Example.com/v1/embeddings"},
		{"no version", "http://h", "http:m@http://h/embeddings"},
	})
}
