package mcpserver_test

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/caskg/caskg/native/internal/mcpserver"
	"github.com/caskg/caskg/native/internal/mcptransport"
)

const initialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`

// httpFront serves the sample's tools through HTTPHandler with opt on a loopback port.
func httpFront(t *testing.T, opt mcptransport.HTTPOptions) *httptest.Server {
	t.Helper()
	srv, err := mcpserver.New(sample(t), mcpserver.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	m := srv.MCP()
	ts := httptest.NewServer(mcptransport.HTTPHandler(func(*http.Request) *mcp.Server { return m }, opt))
	t.Cleanup(ts.Close)
	return ts
}

// bearer is a Guard that wants "Authorization: Bearer secret".
func bearer(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer secret" {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		next.ServeHTTP(w, r)
	})
}

func TestHTTPHandler(t *testing.T) {
	health := func() any { return map[string]int{"skills": 96} }
	open := httpFront(t, mcptransport.HTTPOptions{MaxBodyBytes: 4096, Health: health})
	guarded := httpFront(t, mcptransport.HTTPOptions{Guard: bearer})
	stateless := httpFront(t, mcptransport.HTTPOptions{Stateless: true})
	host := strings.TrimPrefix(open.URL, "http://")
	tests := []struct {
		name    string
		ts      *httptest.Server
		method  string
		path    string
		host    string
		headers map[string]string
		body    string
		code    int
		want    string
	}{
		{"initialize", open, "POST", "/mcp", "", nil, initialize, 200, `"serverInfo":{"name":"caskg"`},
		{"localhost host", open, "POST", "/mcp", "localhost:1234", nil, initialize, 200, `"protocolVersion"`},
		{"same origin", open, "POST", "/mcp", "", map[string]string{"Origin": "http://" + host}, initialize, 200, `"protocolVersion"`},
		{"health", open, "GET", "/v1/health", "", nil, "", 200, `{"skills":96}`},
		{"default health", guarded, "GET", "/v1/health", "", nil, "", 200, `{"status":"ok"}`},
		{"rebound host", open, "POST", "/mcp", "evil.example.com", nil, initialize, 403, "loopback host"},
		{"rebound host, health", open, "GET", "/v1/health", "evil.example.com:80", nil, "", 403, "loopback host"},
		{"cross origin", open, "POST", "/mcp", "", map[string]string{"Origin": "http://evil.example.com"}, initialize, 403, "cross-origin"},
		{"cross site fetch", open, "POST", "/mcp", "", map[string]string{"Sec-Fetch-Site": "cross-site"}, initialize, 403, "cross-origin"},
		{"too big", open, "POST", "/mcp", "", nil, `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":"` + strings.Repeat("a", 5000) + `"}}`, 413, ""},
		{"no token", guarded, "POST", "/mcp", "", nil, initialize, 401, "unauthorized"},
		{"token", guarded, "POST", "/mcp", "", map[string]string{"Authorization": "Bearer secret"}, initialize, 200, `"protocolVersion"`},
		{"rebound host before the token", guarded, "POST", "/mcp", "evil.example.com", nil, initialize, 403, "loopback host"},
		{"stateless GET", stateless, "GET", "/mcp", "", nil, "", 405, ""},
		{"stateless initialize", stateless, "POST", "/mcp", "", nil, initialize, 200, `"protocolVersion"`},
		{"unknown path", open, "GET", "/nope", "", nil, "", 404, ""},
		{"health by POST", open, "POST", "/v1/health", "", nil, "{}", 405, ""},
	}
	client := &http.Client{Timeout: 10 * time.Second}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, err := http.NewRequest(tt.method, tt.ts.URL+tt.path, strings.NewReader(tt.body))
			if err != nil {
				t.Fatal(err)
			}
			if tt.host != "" {
				req.Host = tt.host
			}
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			for k, v := range tt.headers {
				req.Header.Set(k, v)
			}
			resp, err := client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			// An initialize answer comes as one event; read up to it, not to the stream's end.
			b := make([]byte, 8192)
			n, _ := io.ReadAtLeast(resp.Body, b, len(tt.want))
			if resp.StatusCode != tt.code || !strings.Contains(string(b[:n]), tt.want) {
				t.Errorf("%s %s: %d %q; want %d and %q", tt.method, tt.path, resp.StatusCode, b[:n], tt.code, tt.want)
			}
		})
	}
}

// TestServeHTTP: a request in flight when the context ends still gets its whole answer, an
// open event stream does not hold the shutdown, and nothing is served afterwards.
func TestServeHTTP(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	started := make(chan struct{}, 1)
	mux := http.NewServeMux()
	mux.HandleFunc("POST /slow", func(w http.ResponseWriter, r *http.Request) {
		started <- struct{}{}
		time.Sleep(300 * time.Millisecond)
		io.WriteString(w, "done")
	})
	srv, err := mcpserver.New(sample(t), mcpserver.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	m := srv.MCP()
	mux.Handle("/", mcptransport.HTTPHandler(func(*http.Request) *mcp.Server { return m }, mcptransport.HTTPOptions{}))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	served := make(chan error, 1)
	go func() { served <- mcptransport.ServeHTTP(ctx, ln, mux) }()
	base := "http://" + ln.Addr().String()

	// A Go SDK session, which holds a GET event stream open.
	cctx, ccancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer ccancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil).
		Connect(cctx, &mcp.StreamableClientTransport{Endpoint: base + mcptransport.MCPPath}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if err := cs.Ping(cctx, nil); err != nil {
		t.Fatal(err)
	}

	slow := make(chan string, 1)
	go func() {
		resp, err := (&http.Client{Timeout: 10 * time.Second}).Post(base+"/slow", "text/plain", nil)
		if err != nil {
			slow <- err.Error()
			return
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		slow <- string(b)
	}()
	select {
	case <-started:
	case <-time.After(10 * time.Second):
		t.Fatal("the slow request did not arrive")
	}
	start := time.Now()
	cancel()
	select {
	case err := <-served:
		if err != nil {
			t.Errorf("ServeHTTP: %v", err)
		}
	case <-time.After(2 * mcptransport.ShutdownTimeout):
		t.Fatal("ServeHTTP did not return after its context ended")
	}
	if took := time.Since(start); took >= mcptransport.ShutdownTimeout {
		t.Errorf("shutdown took %v: the event stream held it", took)
	}
	if got := <-slow; got != "done" {
		t.Errorf("the request in flight got %q, want its answer", got)
	}
	if _, err := (&http.Client{Timeout: 2 * time.Second}).Get(base + mcptransport.HealthPath); err == nil {
		t.Error("served after shutdown")
	}
}

func TestServeHTTPListenerError(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ln.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := mcptransport.ServeHTTP(ctx, ln, http.NotFoundHandler()); err == nil || !strings.HasPrefix(err.Error(), "graceful: serve http:") || errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("ServeHTTP on a closed listener: %v", err)
	}
}
