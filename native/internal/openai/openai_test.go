package openai

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/caskg/caskg/native/testlib/fixture"
)

const (
	testKey   = "sk-test-secret-0123456789"
	testModel = "test-model"
	testPath  = "chat/completions"
)

// now is the clock of the tests: Retry-After dates are read against it.
var now = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)

type echoRequest struct {
	Model string `json:"model"`
	Text  string `json:"text"`
}

type echoAnswer struct {
	Echo string `json:"echo"`
}

// server answers on 127.0.0.1 like an OpenAI-compatible endpoint: it checks every request and
// hands request number n (from 1) to handle, which answers {"echo": text} when it returns false.
type server struct {
	t   *testing.T
	srv *httptest.Server

	mu       sync.Mutex
	requests int
	handle   func(w http.ResponseWriter, r *http.Request, n int) bool
}

func newServer(t *testing.T, handle func(w http.ResponseWriter, r *http.Request, n int) bool) *server {
	t.Helper()
	s := &server{t: t, handle: handle}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.srv.Close)
	return s
}

func (s *server) serve(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.requests++
	n := s.requests
	s.mu.Unlock()
	if r.Method != http.MethodPost || r.URL.Path != "/v1/"+testPath {
		s.t.Errorf("request %s %s, want POST /v1/%s", r.Method, r.URL.Path, testPath)
	}
	for h, want := range map[string]string{"Authorization": "Bearer " + testKey, "Content-Type": "application/json", "Accept": "application/json"} {
		if got := r.Header.Get(h); got != want {
			s.t.Errorf("%s = %q, want %q", h, got, want)
		}
	}
	body, err := io.ReadAll(r.Body)
	var req echoRequest
	if err != nil || json.Unmarshal(body, &req) != nil || req.Model != testModel {
		s.t.Errorf("request body %q (%v), want JSON naming the model", body, err)
	}
	if s.handle != nil && s.handle(w, r, n) {
		return
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(echoAnswer{Echo: req.Text})
}

func (s *server) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.requests
}

// sleeper records the waits between attempts instead of sleeping, so backoff tests take no
// time and see exact durations. cancel, when set, is called at the first wait: a user who gives
// up while the client backs off.
type sleeper struct {
	mu     sync.Mutex
	waits  []time.Duration
	cancel context.CancelFunc
}

func (s *sleeper) sleep(ctx context.Context, d time.Duration) error {
	s.mu.Lock()
	s.waits = append(s.waits, d)
	s.mu.Unlock()
	if s.cancel != nil {
		s.cancel()
	}
	return ctx.Err()
}

// newTestClient is a client of s with the test clock and sleeper; edit tweaks its Config.
func newTestClient(t *testing.T, s *server, sl *sleeper, edit func(*Config)) *Client {
	t.Helper()
	cfg := Config{URL: s.srv.URL + "/v1", Path: testPath, APIKey: testKey, Model: testModel,
		BaseBackoff: 100 * time.Millisecond, Timeout: 5 * time.Second}
	if edit != nil {
		edit(&cfg)
	}
	c, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	c.now = func() time.Time { return now }
	c.sleep = sl.sleep
	return c
}

func status(code int, header, body string) func(w http.ResponseWriter) {
	return func(w http.ResponseWriter) {
		if header != "" {
			w.Header().Set("Retry-After", header)
		}
		w.WriteHeader(code)
		io.WriteString(w, body)
	}
}

// failFirst answers the first k requests with fail and the rest normally.
func failFirst(k int, fail func(w http.ResponseWriter)) func(w http.ResponseWriter, r *http.Request, n int) bool {
	return func(w http.ResponseWriter, r *http.Request, n int) bool {
		if n <= k {
			fail(w)
			return true
		}
		return false
	}
}

func always(fail func(w http.ResponseWriter)) func(w http.ResponseWriter, r *http.Request, n int) bool {
	return failFirst(1<<30, fail)
}

func TestPost(t *testing.T) {
	tests := []struct {
		name   string
		handle func(w http.ResponseWriter, r *http.Request, n int) bool
		edit   func(*Config)
		cancel string // "before": ctx done before Post; "backoff": at the first wait; "flight": while the server holds the request

		wantErr   []string        // substrings of the error; none for success
		notErr    []string        // never in the error
		status    int             // *Error.Status
		timeout   bool            // *Error.Timeout
		is        error           // errors.Is target
		requests  int             // requests the server saw
		waits     []time.Duration // waits between attempts, exact
		jittered  []time.Duration // waits between attempts, each in [d/2, d]
		wantRetry int64           // Client.Retries
	}{
		{name: "success", requests: 1},
		{
			name:     "429 with Retry-After seconds, then success",
			handle:   failFirst(1, status(http.StatusTooManyRequests, "7", `{"error":{"message":"rate limited"}}`)),
			requests: 2, waits: []time.Duration{7 * time.Second}, wantRetry: 1,
		},
		{
			name:     "503 with a Retry-After date, then success",
			handle:   failFirst(1, status(http.StatusServiceUnavailable, now.Add(5*time.Second).Format(http.TimeFormat), "")),
			requests: 2, waits: []time.Duration{5 * time.Second}, wantRetry: 1,
		},
		{
			name:     "Retry-After in the past retries at once",
			handle:   failFirst(1, status(http.StatusTooManyRequests, now.Add(-time.Minute).Format(http.TimeFormat), "")),
			requests: 2, waits: []time.Duration{0}, wantRetry: 1,
		},
		{
			name:     "Retry-After beyond the cap waits MaxBackoff",
			handle:   failFirst(2, status(http.StatusTooManyRequests, "3600", "")),
			requests: 3, waits: []time.Duration{MaxBackoff, MaxBackoff}, wantRetry: 2,
		},
		{
			name:     "unreadable Retry-After falls back to the backoff",
			handle:   failFirst(1, status(http.StatusTooManyRequests, "soon", "")),
			requests: 2, jittered: []time.Duration{100 * time.Millisecond}, wantRetry: 1,
		},
		{
			name:     "500 then success",
			handle:   failFirst(1, status(http.StatusInternalServerError, "", "upstream crashed")),
			requests: 2, jittered: []time.Duration{100 * time.Millisecond}, wantRetry: 1,
		},
		{
			name:    "500 until the retries run out",
			handle:  always(status(http.StatusInternalServerError, "", `{"error":{"message":"model crashed"}}`)),
			edit:    func(c *Config) { c.Retries = 2 },
			wantErr: []string{`answered HTTP 500 Internal Server Error: "model crashed" (after 3 attempts)`}, status: 500,
			requests: 3, jittered: []time.Duration{100 * time.Millisecond, 200 * time.Millisecond}, wantRetry: 2,
		},
		{
			name:    "backoff doubles up to the cap",
			handle:  always(status(http.StatusBadGateway, "", "")),
			edit:    func(c *Config) { c.Retries = 3; c.BaseBackoff = 10 * time.Second },
			wantErr: []string{"HTTP 502 Bad Gateway (after 4 attempts)"}, status: 502,
			requests: 4, jittered: []time.Duration{10 * time.Second, 20 * time.Second, MaxBackoff}, wantRetry: 3,
		},
		{
			name:    "negative Retries: one attempt",
			handle:  always(status(http.StatusServiceUnavailable, "0", "")),
			edit:    func(c *Config) { c.Retries = -1 },
			wantErr: []string{"HTTP 503"}, notErr: []string{"attempts"}, status: 503, requests: 1,
		},
		{
			name:    "400 is not retried",
			handle:  always(status(http.StatusBadRequest, "0", `{"error":"context length exceeded"}`)),
			wantErr: []string{`HTTP 400 Bad Request: "context length exceeded"`}, notErr: []string{"attempts"},
			status: 400, requests: 1,
		},
		{
			name: "401 names the key's variables, never the key",
			handle: func(w http.ResponseWriter, r *http.Request, n int) bool {
				w.WriteHeader(http.StatusUnauthorized)
				fmt.Fprintf(w, `{"error":{"message":"Incorrect API key provided: %s"}}`, strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer "))
				return true
			},
			wantErr: []string{"HTTP 401", "Incorrect API key provided: [redacted]", "CASKG_LLM_API_KEY or OPENAI_API_KEY"},
			notErr:  []string{testKey}, status: 401, requests: 1,
		},
		{
			name:    "404 points at the base URL and the model",
			handle:  always(status(http.StatusNotFound, "", "404 page not found\n")),
			wantErr: []string{`HTTP 404 Not Found: "404 page not found"`, "base URL", `model name "test-model"`}, status: 404, requests: 1,
		},
		{
			name: "timeout then success",
			handle: func(w http.ResponseWriter, r *http.Request, n int) bool {
				if n == 1 {
					fixture.WaitDone(r)
					return true
				}
				return false
			},
			edit:     func(c *Config) { c.Timeout = 50 * time.Millisecond },
			requests: 2, jittered: []time.Duration{100 * time.Millisecond}, wantRetry: 1,
		},
		{
			name:    "timeouts until the retries run out",
			handle:  func(w http.ResponseWriter, r *http.Request, n int) bool { fixture.WaitDone(r); return true },
			edit:    func(c *Config) { c.Timeout = 50 * time.Millisecond; c.Retries = 1 },
			wantErr: []string{"no answer from http://127.0.0.1:", "/v1/chat/completions within 50ms (after 2 attempts)"},
			timeout: true, is: context.DeadlineExceeded,
			requests: 2, jittered: []time.Duration{100 * time.Millisecond}, wantRetry: 1,
		},
		{
			name: "connection dropped, then success",
			handle: func(w http.ResponseWriter, r *http.Request, n int) bool {
				if n > 1 {
					return false
				}
				conn, _, err := http.NewResponseController(w).Hijack()
				if err == nil {
					conn.Close()
				}
				return true
			},
			requests: 2, jittered: []time.Duration{100 * time.Millisecond}, wantRetry: 1,
		},
		{
			name:     "body at the cap",
			handle:   always(status(http.StatusOK, "", `{"echo":"hi"}`+strings.Repeat(" ", 50))),
			edit:     func(c *Config) { c.MaxBody = int64(len(`{"echo":"hi"}`) + 50) },
			requests: 1,
		},
		{
			name:    "oversized body is not retried",
			handle:  always(status(http.StatusOK, "", `{"echo":"hi"}`+strings.Repeat(" ", 51))),
			edit:    func(c *Config) { c.MaxBody = int64(len(`{"echo":"hi"}`) + 50) },
			wantErr: []string{"answered HTTP 200 with more than 63 bytes (Config.MaxBody)"}, notErr: []string{"attempts"},
			status: 200, requests: 1,
		},
		{
			name:     "oversized error body is cut, still retried",
			handle:   failFirst(1, status(http.StatusServiceUnavailable, "1", strings.Repeat("busy ", 1000))),
			edit:     func(c *Config) { c.MaxBody = 100 },
			requests: 2, waits: []time.Duration{time.Second}, wantRetry: 1,
		},
		{
			name:    "bad JSON is not retried",
			handle:  always(status(http.StatusOK, "", "<html><body>Gateway login</body></html>")),
			wantErr: []string{"answered HTTP 200 with a body that is not chat/completions JSON", `it starts "<html><body>Gateway login</body></html>"`},
			status:  200, requests: 1,
		},
		{
			name:    "JSON of the wrong shape is not retried",
			handle:  always(status(http.StatusOK, "", `{"echo": 42}`)),
			wantErr: []string{"not chat/completions JSON", "cannot unmarshal number"}, status: 200, requests: 1,
		},
		{
			name:     "cancelled before the call",
			cancel:   "before",
			wantErr:  []string{"request to http://127.0.0.1:", "stopped: context canceled"},
			is:       context.Canceled,
			requests: 0,
		},
		{
			name:     "cancelled while backing off",
			handle:   always(status(http.StatusTooManyRequests, "20", "")),
			cancel:   "backoff",
			wantErr:  []string{"stopped: context canceled"},
			is:       context.Canceled,
			requests: 1, waits: []time.Duration{20 * time.Second}, wantRetry: 1,
		},
		{
			name:     "cancelled in flight",
			cancel:   "flight",
			wantErr:  []string{"stopped: context canceled"},
			is:       context.Canceled,
			requests: 1,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			handle := tt.handle
			sl := &sleeper{}
			switch tt.cancel {
			case "before":
				cancel()
			case "backoff":
				sl.cancel = cancel
			case "flight":
				handle = func(w http.ResponseWriter, r *http.Request, n int) bool {
					cancel()
					fixture.WaitDone(r)
					return true
				}
			}
			s := newServer(t, handle)
			c := newTestClient(t, s, sl, tt.edit)
			var out echoAnswer
			err := c.Post(ctx, echoRequest{Model: testModel, Text: "hi"}, &out)

			if len(tt.wantErr) == 0 {
				if err != nil || out.Echo != "hi" {
					t.Fatalf("Post = %v, answer %+v; want the echo", err, out)
				}
			} else {
				var e *Error
				if !errors.As(err, &e) {
					t.Fatalf("Post = %v (%T), want an *Error", err, err)
				}
				msg := err.Error()
				if !strings.HasPrefix(msg, "openai: ") {
					t.Errorf("error %q lacks the package prefix", msg)
				}
				fixture.Contains(t, "the error", msg, tt.wantErr, tt.notErr)
				if e.Status != tt.status || e.Timeout != tt.timeout {
					t.Errorf("Status %d, Timeout %v; want %d, %v", e.Status, e.Timeout, tt.status, tt.timeout)
				}
				if tt.is != nil && !errors.Is(err, tt.is) {
					t.Errorf("error %v is not %v", err, tt.is)
				}
			}
			if got := s.count(); got != tt.requests {
				t.Errorf("server saw %d requests, want %d", got, tt.requests)
			}
			if got := c.Retries(); got != tt.wantRetry {
				t.Errorf("Retries() = %d, want %d", got, tt.wantRetry)
			}
			if tt.jittered != nil {
				if len(sl.waits) != len(tt.jittered) {
					t.Fatalf("waits %v, want %d jittered around %v", sl.waits, len(tt.jittered), tt.jittered)
				}
				for i, d := range sl.waits {
					if full := tt.jittered[i]; d < full/2 || d > full {
						t.Errorf("wait %d = %v, want in [%v, %v]", i, d, full/2, full)
					}
				}
			} else if diff := cmp.Diff(tt.waits, sl.waits); diff != "" {
				t.Errorf("waits (-want +got):\n%s", diff)
			}
		})
	}
}

// TestPostNoAnswer checks a Post whose answer is not read (out nil) and one to a closed port.
func TestPostNoAnswer(t *testing.T) {
	s := newServer(t, nil)
	sl := &sleeper{}
	c := newTestClient(t, s, sl, nil)
	if err := c.Post(context.Background(), echoRequest{Model: testModel}, nil); err != nil {
		t.Errorf("Post with a nil answer: %v", err)
	}
	s.srv.Close() // nothing listens there any more
	err := c.Post(context.Background(), echoRequest{Model: testModel}, nil)
	var e *Error
	if !errors.As(err, &e) || e.Status != 0 || e.Timeout || !strings.Contains(err.Error(), "failed") ||
		!strings.Contains(err.Error(), "(after 5 attempts)") {
		t.Errorf("Post to a closed port = %v, want a connection failure after 5 attempts", err)
	}
	if len(sl.waits) != DefaultRetries {
		t.Errorf("%d waits, want the %d default retries", len(sl.waits), DefaultRetries)
	}
	if err := c.Post(context.Background(), func() {}, nil); err == nil || !strings.HasPrefix(err.Error(), "openai: encoding") {
		t.Errorf("Post of an unencodable request = %v", err)
	}
}

// TestMaxInFlight holds every request at the server until the bound is reached, then gives the
// other Posts a moment to overstep it before letting all go: a correct Client never fails.
func TestMaxInFlight(t *testing.T) {
	const limit, posts = 2, 8
	var mu sync.Mutex
	inFlight, most := 0, 0
	release := make(chan struct{})
	s := newServer(t, func(w http.ResponseWriter, r *http.Request, n int) bool {
		mu.Lock()
		inFlight++
		most = max(most, inFlight)
		mu.Unlock()
		select {
		case <-release:
		case <-time.After(5 * time.Second):
			t.Errorf("request %d never released", n)
		}
		mu.Lock()
		inFlight--
		mu.Unlock()
		return false
	})
	c := newTestClient(t, s, &sleeper{}, func(c *Config) { c.MaxInFlight = limit })
	var wg sync.WaitGroup
	for i := range posts {
		wg.Go(func() {
			var out echoAnswer
			if err := c.Post(context.Background(), echoRequest{Model: testModel, Text: fmt.Sprint(i)}, &out); err != nil || out.Echo != fmt.Sprint(i) {
				t.Errorf("post %d: %v, %+v", i, err, out)
			}
		})
	}
	for range 500 {
		mu.Lock()
		reached := inFlight >= limit
		mu.Unlock()
		if reached {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(50 * time.Millisecond) // room for requests beyond the bound, were there no bound
	close(release)
	wg.Wait()
	if most != limit {
		t.Errorf("at most %d requests in flight, want %d", most, limit)
	}
	if got := s.count(); got != posts {
		t.Errorf("server saw %d requests, want %d", got, posts)
	}
}

func TestSleepCtx(t *testing.T) {
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	tests := []struct {
		name string
		ctx  context.Context
		d    time.Duration
		want error
	}{
		{"no wait", context.Background(), 0, nil},
		{"negative wait", context.Background(), -time.Second, nil},
		{"short wait", context.Background(), time.Millisecond, nil},
		{"cancelled, no wait", cancelled, 0, context.Canceled},
		{"cancelled interrupts an hour", cancelled, time.Hour, context.Canceled},
	}
	for _, tt := range tests {
		if err := sleepCtx(tt.ctx, tt.d); !errors.Is(err, tt.want) || (tt.want == nil && err != nil) {
			t.Errorf("%s: sleepCtx = %v, want %v", tt.name, err, tt.want)
		}
	}
}

func TestParseBaseURL(t *testing.T) {
	tests := []struct {
		in, want, err string
	}{
		{in: "http://127.0.0.1:8080/v1", want: "http://127.0.0.1:8080/v1"},
		{in: " http://127.0.0.1:8080/v1/ ", want: "http://127.0.0.1:8080/v1"},
		{in: "http://h/v1/chat/completions", want: "http://h/v1"},
		{in: "http://h/v1/chat/completions//", want: "http://h/v1"},
		{in: "HTTPS://Host.Example/api/v1", want: "https://Host.Example/api/v1"},
		{in: "http://user:pw@h/v1", want: "http://user:pw@h/v1"},
		{in: "http://h", want: "http://h"},
		{in: "", err: "must be an http:// or https:// URL with a host"},
		{in: "ftp://h/v1", err: "must be an http:// or https:// URL with a host"},
		{in: "http:///v1", err: "with a host"},
		{in: "127.0.0.1:8080/v1", err: "openai: URL"},
		{in: "http://h/v1?api-version=1", err: "must not have a query or fragment"},
		{in: "http://h/v1#x", err: "must not have a query or fragment"},
		{in: "http://h/v1?", err: "must not have a query or fragment"},
		{in: "http://h:port/v1", err: "openai: URL"},
	}
	for _, tt := range tests {
		u, err := ParseBaseURL(tt.in, testPath)
		switch {
		case tt.err != "":
			if err == nil || !strings.Contains(err.Error(), tt.err) || !strings.HasPrefix(err.Error(), "openai: ") {
				t.Errorf("ParseBaseURL(%q) = %v, %v; want an error with %q", tt.in, u, err, tt.err)
			}
		case err != nil || u.String() != tt.want:
			t.Errorf("ParseBaseURL(%q) = %v, %v; want %s", tt.in, u, err, tt.want)
		}
	}
}

func TestNewConfig(t *testing.T) {
	tests := []struct {
		name string
		cfg  Config
		err  string // the Config field the error names; "" for none
	}{
		{"defaults", Config{URL: "http://h/v1", Path: "/embeddings/"}, ""},
		{"no path", Config{URL: "http://h/v1"}, "Config.Path"},
		{"bad URL", Config{URL: "h/v1", Path: "embeddings"}, "URL"},
		{"timeout", Config{URL: "http://h/v1", Path: "embeddings", Timeout: -1}, "Config.Timeout"},
		{"backoff", Config{URL: "http://h/v1", Path: "embeddings", BaseBackoff: -1}, "Config.BaseBackoff"},
		{"max body", Config{URL: "http://h/v1", Path: "embeddings", MaxBody: -1}, "Config.MaxBody"},
		{"in flight", Config{URL: "http://h/v1", Path: "embeddings", MaxInFlight: -1}, "Config.MaxInFlight"},
		{"rpm", Config{URL: "http://h/v1", Path: "embeddings", RPM: -1}, "Config.RPM"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := New(tt.cfg)
			if fixture.WantErr(t, err, "openai: ", tt.err) {
				return
			}
			want := Config{URL: "http://h/v1", Path: "embeddings", Timeout: DefaultTimeout, Retries: DefaultRetries,
				BaseBackoff: DefaultBaseBackoff, MaxBody: DefaultMaxBody}
			if diff := cmp.Diff(want, c.cfg); diff != "" {
				t.Errorf("defaults (-want +got):\n%s", diff)
			}
			if c.Endpoint() != "http://h/v1/embeddings" {
				t.Errorf("Endpoint() = %q", c.Endpoint())
			}
		})
	}
}

func TestRedacted(t *testing.T) {
	c, err := New(Config{URL: "https://user:hunter2@h/v1", Path: "embeddings"})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := c.Redacted(), "https://user:xxxxx@h/v1/embeddings"; got != want {
		t.Errorf("Redacted() = %q, want %q", got, want)
	}
	if got, want := c.Endpoint(), "https://user:hunter2@h/v1/embeddings"; got != want {
		t.Errorf("Endpoint() = %q, want %q", got, want)
	}
	u := c.BaseURL()
	u.User = nil
	u.Path = "/changed"
	if c.BaseURL().String() != "https://user:hunter2@h/v1" {
		t.Errorf("BaseURL() shares state with the Client")
	}
}

func TestBackoff(t *testing.T) {
	tests := []struct {
		name  string
		base  time.Duration
		retry int
		e     Error
		lo    time.Duration
		hi    time.Duration
	}{
		{"first", 100 * time.Millisecond, 0, Error{}, 50 * time.Millisecond, 100 * time.Millisecond},
		{"second", 100 * time.Millisecond, 1, Error{}, 100 * time.Millisecond, 200 * time.Millisecond},
		{"third", 100 * time.Millisecond, 2, Error{}, 200 * time.Millisecond, 400 * time.Millisecond},
		{"capped", 100 * time.Millisecond, 40, Error{}, MaxBackoff / 2, MaxBackoff},
		{"a large base does not overflow", time.Hour, 30, Error{}, MaxBackoff / 2, MaxBackoff},
		{"Retry-After", 100 * time.Millisecond, 0, Error{hasAfter: true, after: 3 * time.Second}, 3 * time.Second, 3 * time.Second},
		{"Retry-After capped", 100 * time.Millisecond, 0, Error{hasAfter: true, after: time.Hour}, MaxBackoff, MaxBackoff},
	}
	for _, tt := range tests {
		c, err := New(Config{URL: "http://h/v1", Path: testPath, BaseBackoff: tt.base})
		if err != nil {
			t.Fatal(err)
		}
		for range 20 {
			if d := c.backoff(tt.retry, &tt.e); d < tt.lo || d > tt.hi {
				t.Errorf("%s: backoff(%d) = %v, want in [%v, %v]", tt.name, tt.retry, d, tt.lo, tt.hi)
			}
		}
	}
}

var retryAfterTests = []struct {
	in   string
	want time.Duration
	ok   bool
}{
	{"", 0, false},
	{"0", 0, true},
	{" 3 ", 3 * time.Second, true},
	{"99999999999", MaxBackoff, true},
	{"99999999999999999999999", 0, false},
	{"-1", 0, false},
	{"1.5", 0, false},
	{"soon", 0, false},
	{"Wed, 01 Jan 2025 00:00:05 GMT", 5 * time.Second, true},
	{"Wednesday, 01-Jan-25 00:00:07 GMT", 7 * time.Second, true}, // RFC 850, still valid in HTTP
	{"Wed Jan  1 00:00:09 2025", 9 * time.Second, true},          // ANSI C asctime
	{"Tue, 31 Dec 2024 23:59:00 GMT", 0, true},
	{"Thu, 02 Jan 2025 00:00:00 GMT", MaxBackoff, true},
}

func TestParseRetryAfter(t *testing.T) {
	for _, tt := range retryAfterTests {
		got, ok := parseRetryAfter(tt.in, now)
		if got != tt.want || ok != tt.ok {
			t.Errorf("parseRetryAfter(%q) = %v, %v; want %v, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
}

func FuzzParseRetryAfter(f *testing.F) {
	for _, tt := range retryAfterTests {
		f.Add(tt.in)
	}
	f.Fuzz(func(t *testing.T, v string) {
		if d, ok := parseRetryAfter(v, now); d < 0 || d > MaxBackoff || (!ok && d != 0) {
			t.Errorf("parseRetryAfter(%q) = %v, %v", v, d, ok)
		}
	})
}

var errorMessageTests = []struct {
	in, want string
}{
	{`{"error":{"message":"model not found","type":"invalid_request_error"}}`, "model not found"},
	{`{"error":"boom"}`, "boom"},
	{`{"message":"bare object"}`, "bare object"},
	{`{"message":"no capacity","type":"server_error"}`, "no capacity"},
	{`"a string"`, "a string"},
	{`{"error":null}`, ""},
	{`{"error":{"code":500}}`, ""},
	{`{"detail":"not OpenAI"}`, ""},
	{`<html>`, ""},
	{``, ""},
	{`{"error":"` + strings.Repeat("long ", 100) + `"}`, strings.Repeat("long ", 40) + "…"},
}

func TestErrorMessage(t *testing.T) {
	for _, tt := range errorMessageTests {
		if got := ErrorMessage([]byte(tt.in)); got != tt.want {
			t.Errorf("ErrorMessage(%s) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func FuzzErrorMessage(f *testing.F) {
	for _, tt := range errorMessageTests {
		f.Add(tt.in)
	}
	f.Fuzz(func(t *testing.T, in string) {
		if got := []rune(ErrorMessage([]byte(in))); len(got) > 201 {
			t.Errorf("ErrorMessage gave %d runes, want at most 200 and an ellipsis", len(got))
		}
	})
}

func FuzzParseBaseURL(f *testing.F) {
	for _, s := range []string{"http://127.0.0.1:8080/v1", "HTTPS://h/v1/chat/completions/", "ftp://h", "http://h/v1?x", "http://[::1]:80/v1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		u, err := ParseBaseURL(raw, testPath)
		if err != nil {
			return
		}
		if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
			t.Errorf("ParseBaseURL(%q) accepted %v", raw, u)
		}
	})
}
