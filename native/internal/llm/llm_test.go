package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/caskg/caskg/native/testlib/fixture"
)

const (
	testModel = "test-model"
	testKey   = "test-key"
)

// fakeServer speaks the OpenAI chat-completions protocol on 127.0.0.1 and checks every request.
type fakeServer struct {
	t   *testing.T
	srv *httptest.Server

	// handle answers request number n (1-based); nil answers content(user).
	handle  func(w http.ResponseWriter, r *http.Request, n int, user string)
	content func(user string) string

	requests    atomic.Int64
	mu          sync.Mutex
	inFlight    int
	maxInFlight int
	answered    map[string]int // user prompt → completions written for it
	arrivals    []time.Time
}

func newFakeServer(t *testing.T) *fakeServer {
	t.Helper()
	f := &fakeServer{t: t, answered: map[string]int{}}
	f.content = func(string) string { return `{"score": 0.7}` }
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	return f
}

// client returns a Client for f with fast retries; edit tweaks the Config first.
func (f *fakeServer) client(t *testing.T, edit func(*Config)) *Client {
	t.Helper()
	cfg := Config{URL: f.srv.URL + "/v1", Model: testModel, APIKey: testKey, BaseBackoff: time.Millisecond, Timeout: 5 * time.Second}
	if edit != nil {
		edit(&cfg)
	}
	c, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func (f *fakeServer) serve(w http.ResponseWriter, r *http.Request) {
	n := int(f.requests.Add(1))
	f.mu.Lock()
	f.inFlight++
	f.maxInFlight = max(f.maxInFlight, f.inFlight)
	f.arrivals = append(f.arrivals, time.Now())
	f.mu.Unlock()
	defer func() {
		f.mu.Lock()
		f.inFlight--
		f.mu.Unlock()
	}()

	user, ok := f.check(r)
	if !ok {
		http.Error(w, `{"error":{"message":"bad request"}}`, http.StatusBadRequest)
		return
	}
	if f.handle != nil {
		f.handle(w, r, n, user)
		return
	}
	f.answer(w, user, f.content(user))
}

// check validates method, path, headers and body, returning the user message.
func (f *fakeServer) check(r *http.Request) (string, bool) {
	t := f.t
	if r.Method != http.MethodPost || r.URL.Path != "/v1/chat/completions" {
		t.Errorf("request %s %s, want POST /v1/chat/completions", r.Method, r.URL.Path)
		return "", false
	}
	if got := r.Header.Get("Authorization"); got != "Bearer "+testKey {
		t.Errorf("Authorization = %q, want %q", got, "Bearer "+testKey)
		return "", false
	}
	if ct := r.Header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type = %q", ct)
	}
	var body map[string]json.RawMessage
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		t.Errorf("body: %v", err)
		return "", false
	}
	if _, has := body["response_format"]; has {
		t.Errorf("request has response_format; many servers reject it")
	}
	var model string
	var msgs []chatMessage
	var maxTokens int
	if json.Unmarshal(body["model"], &model) != nil || model != testModel {
		t.Errorf("model = %s, want %q", body["model"], testModel)
		return "", false
	}
	if json.Unmarshal(body["max_tokens"], &maxTokens) != nil || maxTokens <= 0 {
		t.Errorf("max_tokens = %s", body["max_tokens"])
	}
	if _, has := body["temperature"]; !has {
		t.Errorf("request has no temperature")
	}
	if json.Unmarshal(body["messages"], &msgs) != nil || len(msgs) == 0 || msgs[len(msgs)-1].Role != "user" {
		t.Errorf("messages = %s, want a list ending with the user message", body["messages"])
		return "", false
	}
	if len(msgs) == 2 && msgs[0].Role != "system" {
		t.Errorf("first of two messages has role %q, want system", msgs[0].Role)
	}
	return msgs[len(msgs)-1].Content, true
}

// answer writes a chat completion and records that user was answered.
func (f *fakeServer) answer(w http.ResponseWriter, user, content string) {
	f.mu.Lock()
	f.answered[user]++
	f.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]any{
		"id":      "chatcmpl-test",
		"object":  "chat.completion",
		"created": 1700000000,
		"model":   testModel,
		"choices": []map[string]any{{
			"index":         0,
			"message":       map[string]any{"role": "assistant", "content": content},
			"finish_reason": "stop",
		}},
	})
}

func (f *fakeServer) count() int { return int(f.requests.Load()) }

func prompts(n int, kind string) []Prompt {
	ps := make([]Prompt, n)
	for i := range ps {
		ps[i] = Prompt{Kind: kind, System: `Answer with JSON {"score": x}, x in [0,1].`, User: fmt.Sprintf("prompt %02d", i)}
	}
	return ps
}

func TestScoreAnswers(t *testing.T) {
	f := newFakeServer(t)
	f.content = func(user string) string {
		switch user {
		case "prompt 00":
			return `{"score": 0.9}`
		case "prompt 01":
			return "```json\n{\"score\": \"0.25\"}\n```"
		}
		return "Probably impaired: 0.6"
	}
	c := f.client(t, nil)
	ps := append(prompts(2, "removal"), prompts(3, "reorder")[2], Prompt{Kind: "judge", User: "no system prompt"})
	var calls [][2]int
	got := c.ScoreAll(context.Background(), ps, func(done, total int) { calls = append(calls, [2]int{done, total}) })
	want := []Answer{
		{Score: 0.9, Outcome: Fresh, Raw: `{"score": 0.9}`},
		{Score: 0.25, Outcome: Fresh, Raw: "```json\n{\"score\": \"0.25\"}\n```"},
		{Score: 0.6, Outcome: Fresh, Raw: "Probably impaired: 0.6"},
		{Score: 0.6, Outcome: Fresh, Raw: "Probably impaired: 0.6"},
	}
	if diff := cmp.Diff(want, got, cmp.Comparer(func(a, b error) bool { return a == b })); diff != "" {
		t.Errorf("answers (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([][2]int{{1, 4}, {2, 4}, {3, 4}, {4, 4}}, calls); diff != "" {
		t.Errorf("progress calls (-want +got):\n%s", diff)
	}
	wantStats := Stats{Calls: 4, ByKind: map[string]int64{"removal": 2, "reorder": 1, "judge": 1}}
	if diff := cmp.Diff(wantStats, c.Stats()); diff != "" {
		t.Errorf("stats (-want +got):\n%s", diff)
	}
	if f.count() != 4 {
		t.Errorf("server saw %d requests, want 4", f.count())
	}
	if c.Cached(ps[0]) {
		t.Errorf("Cached = true without a CacheDir")
	}
}

func TestURLForms(t *testing.T) {
	f := newFakeServer(t)
	dir := t.TempDir()
	for i, u := range []string{f.srv.URL + "/v1", f.srv.URL + "/v1/", f.srv.URL + "/v1/chat/completions", strings.Replace(f.srv.URL, "http://", "HTTP://", 1) + "/v1"} {
		c := f.client(t, func(cfg *Config) { cfg.URL = u; cfg.CacheDir = dir })
		a := c.Score(context.Background(), Prompt{Kind: "judge", User: "same"})
		if a.Err != nil {
			t.Fatalf("URL %q: %v", u, a.Err)
		}
		if want := map[bool]Outcome{true: Fresh, false: Cached}[i == 0]; a.Outcome != want {
			t.Errorf("URL %q: outcome %v, want %v (equivalent URLs share the cache)", u, a.Outcome, want)
		}
	}
	if f.count() != 1 {
		t.Errorf("server saw %d requests, want 1", f.count())
	}
}

func TestRetryAfter429(t *testing.T) {
	f := newFakeServer(t)
	f.handle = func(w http.ResponseWriter, r *http.Request, n int, user string) {
		if n == 1 {
			w.Header().Set("Retry-After", "0")
			http.Error(w, `{"error":{"message":"rate limited"}}`, http.StatusTooManyRequests)
			return
		}
		f.answer(w, user, `{"score": 0.4}`)
	}
	// A huge BaseBackoff proves Retry-After: 0 is honoured; ctx bounds the test if it is not.
	c := f.client(t, func(cfg *Config) { cfg.BaseBackoff = 20 * time.Second })
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	a := c.Score(ctx, Prompt{Kind: "removal", User: "u"})
	if a.Outcome != Fresh || a.Score != 0.4 || a.Err != nil {
		t.Fatalf("answer %+v, want fresh 0.4", a)
	}
	if s := c.Stats(); s.Retries != 1 || s.Calls != 1 || s.Failed != 0 {
		t.Errorf("stats %+v, want 1 call, 1 retry", s)
	}
	if f.count() != 2 {
		t.Errorf("server saw %d requests, want 2", f.count())
	}
}

// TestFailures checks every way an answer fails: Failed, with an llm: error that says why, and
// retried only when another attempt may succeed.
func TestFailures(t *testing.T) {
	type handler = func(w http.ResponseWriter, r *http.Request, n int, user string)
	// status answers code and body; a Retry-After of 0 must not make a client error worth retrying.
	status := func(code int, retryAfter, body string) handler {
		return func(w http.ResponseWriter, r *http.Request, n int, user string) {
			if retryAfter != "" {
				w.Header().Set("Retry-After", retryAfter)
			}
			w.WriteHeader(code)
			fmt.Fprint(w, body)
		}
	}
	const tooLong = `{"error":{"message":"context length exceeded","type":"invalid_request_error"}}`
	tests := []struct {
		name     string
		handle   handler
		edit     func(*Config)
		wantErr  []string // in the error, after the llm: prefix
		requests int      // made to the server
		retries  int64    // in Stats
	}{
		{"persistent 500", status(http.StatusInternalServerError, "", "upstream model crashed"), func(cfg *Config) { cfg.Retries = 3 },
			[]string{"500", "upstream model crashed", "after 4 attempts"}, 4, 3},
		{"no retries", status(http.StatusServiceUnavailable, "", "busy"), func(cfg *Config) { cfg.Retries = -1 }, []string{"503", "busy"}, 1, 0},
		{"unauthorized, not retried", status(http.StatusUnauthorized, "0", tooLong), nil, []string{"401", "CASKG_LLM_API_KEY or OPENAI_API_KEY"}, 1, 0},
		{"forbidden, not retried", status(http.StatusForbidden, "0", tooLong), nil, []string{"403", "API key"}, 1, 0},
		{"bad request, not retried", status(http.StatusBadRequest, "0", tooLong), nil, []string{"400", "context length exceeded"}, 1, 0},
		{"not found, not retried", status(http.StatusNotFound, "0", tooLong), nil, []string{"404", "base URL"}, 1, 0},
		{"timeout retried", func(w http.ResponseWriter, r *http.Request, n int, user string) { fixture.WaitDone(r) },
			func(cfg *Config) { cfg.Timeout = 50 * time.Millisecond; cfg.Retries = 2 }, []string{"Config.Timeout"}, 3, 2},
		{"no choices", status(http.StatusOK, "", `{"object":"chat.completion","choices":[]}`), nil, []string{"no choices"}, 1, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFakeServer(t)
			f.handle = tt.handle
			c := f.client(t, tt.edit)
			start := time.Now()
			a := c.Score(context.Background(), Prompt{Kind: "judge", User: "u"})
			if a.Outcome != Failed || a.Err == nil {
				t.Fatalf("answer %+v, want Failed", a)
			}
			if msg := a.Err.Error(); !strings.HasPrefix(msg, "llm: ") {
				t.Errorf("error %q lacks the llm: prefix", msg)
			}
			for _, want := range tt.wantErr {
				if !strings.Contains(a.Err.Error(), want) {
					t.Errorf("error %q does not mention %q", a.Err, want)
				}
			}
			if f.count() != tt.requests {
				t.Errorf("server saw %d requests, want %d", f.count(), tt.requests)
			}
			if s := c.Stats(); s.Retries != tt.retries || s.Failed != 1 || s.Calls != 1 {
				t.Errorf("stats %+v, want 1 call, %d retries, 1 failed", s, tt.retries)
			}
			if d := time.Since(start); d > 3*time.Second {
				t.Errorf("took %v; the per-attempt timeout or the Retry-After was not applied", d)
			}
		})
	}
}

func TestConnectionErrorRetried(t *testing.T) {
	f := newFakeServer(t)
	url := f.srv.URL
	f.srv.Close() // nothing listens there any more
	c, err := New(Config{URL: url + "/v1", Model: testModel, Retries: 2, BaseBackoff: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	a := c.Score(context.Background(), Prompt{User: "u"})
	if a.Outcome != Failed || a.Err == nil || !strings.Contains(a.Err.Error(), "after 3 attempts") {
		t.Fatalf("answer %+v, want Failed after 3 attempts", a)
	}
	if c.Stats().Retries != 2 {
		t.Errorf("stats %+v, want 2 retries", c.Stats())
	}
}

func TestGarbageAnswerFailsAndIsNotCached(t *testing.T) {
	f := newFakeServer(t)
	const garbage = "I'm sorry, I can't help with that."
	f.content = func(string) string { return garbage }
	c := f.client(t, func(cfg *Config) { cfg.CacheDir = t.TempDir() })
	p := Prompt{Kind: "substitution", User: "u"}
	for i := range 2 {
		a := c.Score(context.Background(), p)
		if a.Outcome != Failed || a.Raw != garbage || a.Err == nil || a.Score != 0 {
			t.Fatalf("try %d: answer %+v, want Failed with the raw text kept", i, a)
		}
		if !strings.Contains(a.Err.Error(), "substitution") {
			t.Errorf("error %q does not name the probe kind", a.Err)
		}
		if c.Cached(p) {
			t.Fatalf("an unparseable answer was cached")
		}
	}
	if f.count() != 2 {
		t.Errorf("server saw %d requests, want 2 (a failed parse is asked again)", f.count())
	}
	if s := c.Stats(); s.Failed != 2 || s.Retries != 0 {
		t.Errorf("stats %+v, want 2 failed, no retries (a parse failure is not retried)", s)
	}
}

func TestContentParts(t *testing.T) {
	f := newFakeServer(t)
	f.handle = func(w http.ResponseWriter, r *http.Request, n int, user string) {
		fmt.Fprint(w, `{"object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":[{"type":"text","text":"{\"score\":"},{"type":"text","text":" 0.45}"}]},"finish_reason":"stop"}]}`)
	}
	c := f.client(t, nil)
	if a := c.Score(context.Background(), Prompt{User: "u"}); a.Outcome != Fresh || a.Score != 0.45 || a.Raw != `{"score": 0.45}` {
		t.Errorf("answer %+v, want fresh 0.45 from the joined parts", a)
	}
}

func TestConcurrencyBound(t *testing.T) {
	const limit = 3
	f := newFakeServer(t)
	full := make(chan struct{})
	var once sync.Once
	f.handle = func(w http.ResponseWriter, r *http.Request, n int, user string) {
		f.mu.Lock()
		reached := f.inFlight >= limit
		f.mu.Unlock()
		if reached {
			once.Do(func() { close(full) })
		}
		// Hold the first requests until the limit is reached, so the test sees it reached.
		select {
		case <-full:
		case <-time.After(5 * time.Second):
			t.Errorf("request %d: never %d requests in flight", n, limit)
		}
		f.answer(w, user, `{"score": 0.5}`)
	}
	c := f.client(t, func(cfg *Config) { cfg.Concurrency = limit })
	// Two ScoreAll calls at once share the Client's bound.
	var wg sync.WaitGroup
	for k := range 2 {
		wg.Go(func() {
			for i, a := range c.ScoreAll(context.Background(), prompts(15, fmt.Sprint("k", k)), nil) {
				if a.Outcome != Fresh {
					t.Errorf("answer %d: %+v", i, a)
				}
			}
		})
	}
	wg.Wait()
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.maxInFlight != limit {
		t.Errorf("max in flight %d, want %d", f.maxInFlight, limit)
	}
}

func TestRPMSpacing(t *testing.T) {
	f := newFakeServer(t)
	const rpm, n = 3000, 6 // 20ms apart
	interval := time.Minute / rpm
	c := f.client(t, func(cfg *Config) { cfg.RPM = rpm; cfg.Concurrency = 4 })
	start := time.Now()
	for _, a := range c.ScoreAll(context.Background(), prompts(n, "judge"), nil) {
		if a.Outcome != Fresh {
			t.Fatalf("answer %+v", a)
		}
	}
	if d := time.Since(start); d < (n-1)*interval {
		t.Errorf("%d requests took %v, want at least %v at %d RPM", n, d, (n-1)*interval, rpm)
	}
}

func TestCacheHitOnSecondClient(t *testing.T) {
	f := newFakeServer(t)
	dir := t.TempDir()
	ps := prompts(8, "removal")
	first := f.client(t, func(cfg *Config) { cfg.CacheDir = dir })
	for _, a := range first.ScoreAll(context.Background(), ps, nil) {
		if a.Outcome != Fresh {
			t.Fatalf("first run: %+v", a)
		}
	}
	before := f.count()

	second := f.client(t, func(cfg *Config) { cfg.CacheDir = dir })
	for i, p := range ps {
		if !second.Cached(p) {
			t.Errorf("prompt %d not reported cached", i)
		}
	}
	for i, a := range second.ScoreAll(context.Background(), ps, nil) {
		if a.Outcome != Cached || a.Score != 0.7 || a.Raw != `{"score": 0.7}` {
			t.Errorf("answer %d: %+v, want cached 0.7", i, a)
		}
	}
	if f.count() != before {
		t.Errorf("second client made %d requests, want 0", f.count()-before)
	}
	if s := second.Stats(); s.Calls != 0 || s.Cached != int64(len(ps)) {
		t.Errorf("stats %+v, want 0 calls, %d cached", s, len(ps))
	}

	// What determines the answer is in the key: another kind, model or temperature misses.
	p := ps[0]
	other := f.client(t, func(cfg *Config) { cfg.CacheDir = dir; cfg.Temperature = 0.5 })
	for name, miss := range map[string]bool{
		"kind":        first.Cached(Prompt{Kind: "judge", System: p.System, User: p.User}),
		"system":      first.Cached(Prompt{Kind: p.Kind, User: p.User}),
		"temperature": other.Cached(p),
	} {
		if miss {
			t.Errorf("changing the %s still hits the cache", name)
		}
	}
}

const runHeader = "X-Test-Run"

// runTransport marks every request with the test run it belongs to.
type runTransport struct {
	run  string
	base http.RoundTripper
}

func (rt runTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set(runHeader, rt.run)
	return rt.base.RoundTrip(r)
}

func runClient(run string) *http.Client {
	return &http.Client{Transport: runTransport{run: run, base: http.DefaultTransport.(*http.Transport).Clone()}}
}

// TestResumeAfterKill cancels a ScoreAll midway, then checks that a fresh Client over the same
// cache asks exactly the prompts that were not answered, and none twice.
func TestResumeAfterKill(t *testing.T) {
	const total, answered = 40, 15
	f := newFakeServer(t)
	dir := t.TempDir()
	ps := prompts(total, "removal")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// Requests carry the run they belong to: a request of the first run may still reach the
	// server after its ScoreAll returned, as it may after a real kill, and must not be answered.
	firstRun, secondRun := 0, 0
	f.handle = func(w http.ResponseWriter, r *http.Request, n int, user string) {
		if r.Header.Get(runHeader) == "2" {
			f.mu.Lock()
			secondRun++
			f.mu.Unlock()
		}
		if r.Header.Get(runHeader) == "1" {
			f.mu.Lock()
			dying := firstRun >= answered
			if !dying {
				firstRun++
			}
			f.mu.Unlock()
			if dying {
				fixture.WaitDone(r) // the build dies before these are answered
				return
			}
		}
		f.answer(w, user, `{"score": 0.3}`)
	}
	first := f.client(t, func(cfg *Config) { cfg.CacheDir = dir; cfg.HTTPClient = runClient("1") })
	got := first.ScoreAll(ctx, ps, func(done, _ int) {
		if done == answered {
			cancel()
		}
	})
	fresh := 0
	for i, a := range got {
		switch a.Outcome {
		case Fresh:
			fresh++
		case Failed:
			if !errors.Is(a.Err, context.Canceled) {
				t.Errorf("answer %d: %v, want context.Canceled", i, a.Err)
			}
		default:
			t.Errorf("answer %d: %+v", i, a)
		}
	}
	if fresh != answered {
		t.Fatalf("%d fresh answers before the kill, want %d", fresh, answered)
	}
	if s := first.Stats(); s.Failed != total-answered {
		t.Errorf("first run stats %+v, want %d failed", s, total-answered)
	}

	second := f.client(t, func(cfg *Config) { cfg.CacheDir = dir; cfg.HTTPClient = runClient("2") })
	cached := 0
	for _, p := range ps {
		if second.Cached(p) {
			cached++
		}
	}
	if cached != answered {
		t.Fatalf("%d prompts cached after the kill, want every one answered (%d)", cached, answered)
	}
	for i, a := range second.ScoreAll(context.Background(), ps, nil) {
		if a.Outcome == Failed || a.Score != 0.3 {
			t.Errorf("resumed answer %d: %+v", i, a)
		}
	}
	f.mu.Lock()
	calls := secondRun
	f.mu.Unlock()
	if calls != total-cached {
		t.Errorf("resume made %d requests, want %d", calls, total-cached)
	}
	if s := second.Stats(); s.Calls != total-answered || s.Cached != answered {
		t.Errorf("resume stats %+v, want %d calls, %d cached", s, total-answered, answered)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, p := range ps {
		if n := f.answered[p.User]; n != 1 {
			t.Errorf("%q answered %d times across both runs, want 1", p.User, n)
		}
	}
}

func TestCorruptCacheIsMiss(t *testing.T) {
	for _, content := range []string{"", "{", "not json", `{"score": 2}`, `{"score": -1}`, `{"raw": "x"}`, `{"score": "0.5"}`, "\x00\x01"} {
		t.Run(fmt.Sprintf("%q", content), func(t *testing.T) {
			f := newFakeServer(t)
			dir := t.TempDir()
			c := f.client(t, func(cfg *Config) { cfg.CacheDir = dir })
			p := Prompt{Kind: "reorder", User: "u"}
			path := c.cache.path(c.key(p))
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
				t.Fatal(err)
			}
			if c.Cached(p) {
				t.Fatalf("corrupt file reported cached")
			}
			if a := c.Score(context.Background(), p); a.Outcome != Fresh || a.Score != 0.7 {
				t.Fatalf("answer %+v, want fresh 0.7", a)
			}
			if !c.Cached(p) {
				t.Fatalf("corrupt file not overwritten by the fresh answer")
			}
			if a := c.Score(context.Background(), p); a.Outcome != Cached || a.Score != 0.7 {
				t.Errorf("answer %+v, want cached 0.7", a)
			}
			if f.count() != 1 {
				t.Errorf("server saw %d requests, want 1", f.count())
			}
			if entries, _ := os.ReadDir(filepath.Dir(path)); len(entries) != 1 {
				t.Errorf("%d files in the cache folder, want only the answer (no temporary left)", len(entries))
			}
		})
	}
}

func TestCacheFileFormat(t *testing.T) {
	f := newFakeServer(t)
	dir := t.TempDir()
	c := f.client(t, func(cfg *Config) { cfg.CacheDir = dir })
	p := Prompt{Kind: "judge", User: "u"}
	c.Score(context.Background(), p)
	key := c.key(p)
	data, err := os.ReadFile(filepath.Join(dir, key[:2], key+".json"))
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"score":0.7,"raw":"{\"score\": 0.7}"}`; string(data) != want {
		t.Errorf("cache file %s, want %s", data, want)
	}
}

// configCase is a table row of the tests that map a Config to one string.
type configCase struct {
	name string
	cfg  Config
	want string
}

// TestCacheKey pins the cache key of a few configurations: a key that changes orphans every
// answer already cached, and makes the next build ask them all again.
func TestCacheKey(t *testing.T) {
	tests := []configCase{
		{"cases and trailing slash folded", Config{URL: "HTTP://Example.COM/v1/", Model: "m"},
			"11106413bf122ced781279166487a044936a7dff5ab29d733a57c2c645e0c40c"},
		{"full endpoint URL, port, temperature", Config{URL: " https://EXAMPLE.com:8443/api/v1/chat/completions ", Model: "m", Temperature: 0.5},
			"f8903e3b23b021210f55d338a6db56d622d1ad5d960a47702af51160d3472dad"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := New(tt.cfg)
			if err != nil {
				t.Fatal(err)
			}
			if got := c.key(Prompt{Kind: "judge", System: "sys", User: "user"}); got != tt.want {
				t.Errorf("key = %s, want %s", got, tt.want)
			}
		})
	}
}

func TestCancelledBeforeStart(t *testing.T) {
	f := newFakeServer(t)
	c := f.client(t, nil)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	progressed := false
	got := c.ScoreAll(ctx, prompts(10, "removal"), func(int, int) { progressed = true })
	for i, a := range got {
		if a.Outcome != Failed || !errors.Is(a.Err, context.Canceled) {
			t.Errorf("answer %d: %+v, want Failed with context.Canceled", i, a)
		}
	}
	if f.count() != 0 || progressed {
		t.Errorf("%d requests, progress called %v; want none", f.count(), progressed)
	}
	if s := c.Stats(); s.Failed != 10 || s.ByKind["removal"] != 10 {
		t.Errorf("stats %+v", s)
	}
}

func TestCancelStopsBackoff(t *testing.T) {
	f := newFakeServer(t)
	f.handle = func(w http.ResponseWriter, r *http.Request, n int, user string) {
		w.Header().Set("Retry-After", "30")
		http.Error(w, "slow down", http.StatusTooManyRequests)
	}
	c := f.client(t, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	a := c.Score(ctx, Prompt{User: "u"})
	if a.Outcome != Failed || !errors.Is(a.Err, context.DeadlineExceeded) {
		t.Errorf("answer %+v, want Failed with the context's error", a)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("Score returned after %v; cancellation must interrupt the Retry-After wait", d)
	}
}

func TestNoGoroutineLeak(t *testing.T) {
	f := newFakeServer(t)
	f.handle = func(w http.ResponseWriter, r *http.Request, n int, user string) {
		if n%3 == 0 {
			fixture.WaitDone(r)
			return
		}
		f.answer(w, user, `{"score": 0.5}`)
	}
	c := f.client(t, func(cfg *Config) { cfg.Retries = -1; cfg.RPM = 60000 })
	ctx, cancel := context.WithCancel(context.Background())
	c.ScoreAll(ctx, prompts(20, "judge"), func(done, _ int) {
		if done == 5 {
			cancel()
		}
	})
	cancel()
	var stacks string
	for range 200 { // a worker may still be unwinding after wg.Done
		buf := make([]byte, 1<<20)
		stacks = string(buf[:runtime.Stack(buf, true)])
		if !strings.Contains(stacks, "llm.(*Client)") && !strings.Contains(stacks, "openai.(*Client)") &&
			!strings.Contains(stacks, "openai.(*limiter)") {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Errorf("goroutines of the Client still running after ScoreAll returned:\n%s", stacks)
}

// TestNewValidates pins the error of each bad Config: the CLI shows them as they are.
func TestNewValidates(t *testing.T) {
	tests := []configCase{
		{"no URL", Config{Model: "m"},
			"llm: Config.URL is required (a base URL such as http://127.0.0.1:8080/v1; OPENAI_BASE_URL is read by ConfigFromEnv)"},
		{"bad scheme", Config{URL: "ftp://h/v1", Model: "m"},
			`llm: Config.URL: openai: URL "ftp://h/v1" must be an http:// or https:// URL with a host`},
		{"no host", Config{URL: "http:///v1", Model: "m"},
			`llm: Config.URL: openai: URL "http:///v1" must be an http:// or https:// URL with a host`},
		{"query", Config{URL: "http://h/v1?x=1", Model: "m"}, `llm: Config.URL: openai: URL "http://h/v1?x=1" must not have a query or fragment`},
		{"no model", Config{URL: "http://h/v1"}, "llm: Config.Model is required"},
		{"temperature", Config{URL: "http://h/v1", Model: "m", Temperature: -1}, "llm: Config.Temperature -1 is outside [0,2]"},
		{"max tokens", Config{URL: "http://h/v1", Model: "m", MaxTokens: -1}, "llm: Config.MaxTokens -1 is negative"},
		{"concurrency", Config{URL: "http://h/v1", Model: "m", Concurrency: -2}, "llm: Config.Concurrency -2 is negative"},
		{"rpm", Config{URL: "http://h/v1", Model: "m", RPM: -1}, "llm: Config.RPM -1 is negative"},
		{"timeout", Config{URL: "http://h/v1", Model: "m", Timeout: -time.Second}, "llm: Config.Timeout -1s is negative"},
		{"backoff", Config{URL: "http://h/v1", Model: "m", BaseBackoff: -time.Second}, "llm: Config.BaseBackoff -1s is negative"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := New(tt.cfg); err == nil || err.Error() != tt.want {
				t.Errorf("New: %v, want %s", err, tt.want)
			}
		})
	}

	blocker := filepath.Join(t.TempDir(), "file")
	os.WriteFile(blocker, nil, 0o644)
	if _, err := New(Config{URL: "http://h/v1", Model: "m", CacheDir: filepath.Join(blocker, "cache")}); err == nil || !strings.Contains(err.Error(), "Config.CacheDir") {
		t.Errorf("New with an uncreatable cache dir: %v, want an error naming Config.CacheDir", err)
	}
	dir := filepath.Join(t.TempDir(), "a", "b")
	c, err := New(Config{URL: "http://h/v1", Model: "m", CacheDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		t.Errorf("cache dir not created: %v", err)
	}
	want := Config{URL: "http://h/v1", Model: "m", CacheDir: dir, MaxTokens: 16, Concurrency: 4, Timeout: time.Minute, Retries: 4, BaseBackoff: 500 * time.Millisecond}
	if diff := cmp.Diff(want, c.cfg); diff != "" {
		t.Errorf("defaults (-want +got):\n%s", diff)
	}
}

func TestConfigFromEnv(t *testing.T) {
	t.Setenv("OPENAI_BASE_URL", "http://env/v1")
	t.Setenv("OPENAI_API_KEY", "openai-key")
	t.Setenv("CASKG_LLM_API_KEY", "")
	if got, want := ConfigFromEnv("", "m"), (Config{URL: "http://env/v1", Model: "m", APIKey: "openai-key"}); got != want {
		t.Errorf("ConfigFromEnv = %+v, want %+v", got, want)
	}
	t.Setenv("CASKG_LLM_API_KEY", "caskg-key")
	if got, want := ConfigFromEnv("http://flag/v1", "m"), (Config{URL: "http://flag/v1", Model: "m", APIKey: "caskg-key"}); got != want {
		t.Errorf("ConfigFromEnv = %+v, want %+v", got, want)
	}
}
