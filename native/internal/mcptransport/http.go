package mcptransport

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/caskg/caskg/native/internal/graceful"
	"github.com/caskg/caskg/wasm/service"
)

// Defaults and limits of the HTTP front.
const (
	MCPPath     = "/mcp"       // where HTTPHandler serves streamable HTTP
	HealthPath  = "/v1/health" // where it answers GET with the health JSON, as the /v1 API does (api.Prefix)
	MetricsPath = "/metrics"   // where it answers GET with HTTPOptions.Metrics, as Prometheus scrapes by default

	defaultMaxBodyBytes   = 4 << 20          // of one POST to /mcp, as the SDK's default
	defaultSessionTimeout = 30 * time.Minute // a session idle this long is closed
	ShutdownTimeout       = 5 * time.Second  // ServeHTTP's wait for requests in flight
)

// HTTPOptions configure HTTPHandler. The zero value is a stateful server with the default
// limits and {"status": "ok"} for health.
type HTTPOptions struct {
	// Stateless gives every POST a fresh session and refuses GET and DELETE: no memory per
	// client, but no server-to-client requests or notifications outside a call either.
	Stateless bool
	// MaxBodyBytes bounds a request body (413 beyond it); 0 means defaultMaxBodyBytes.
	MaxBodyBytes int64
	// SessionTimeout closes a session idle this long; 0 means defaultSessionTimeout.
	SessionTimeout time.Duration
	// Guard wraps /mcp after the host and origin checks: the place for a bearer-token check on
	// a server that listens beyond loopback. nil: none.
	Guard func(http.Handler) http.Handler
	// Health is marshalled as the body of GET /v1/health, once per request; nil gives
	// {"status": "ok"}.
	Health func() any
	// Metrics, when set, answers GET /metrics (Prometheus text), behind Guard like /mcp:
	// server names and call counts are not for anyone who can reach the port.
	Metrics http.Handler
}

// HTTPHandler serves MCP over streamable HTTP at /mcp and a health document at GET
// /v1/health, for `caskg mcp --http` and the gateway. getServer returns the server of a new
// session (it may return the same one every time). Every route is behind checkHost: a request
// that arrives on a loopback address must name a loopback host, which stops DNS rebinding
// (a web page whose name resolves to 127.0.0.1). /mcp is also behind Go's
// http.CrossOriginProtection, so a browser page of another origin cannot POST to it, and the
// SDK's own loopback check stays on.
func HTTPHandler(getServer func(*http.Request) *mcp.Server, opt HTTPOptions) http.Handler {
	if opt.MaxBodyBytes <= 0 {
		opt.MaxBodyBytes = defaultMaxBodyBytes
	}
	if opt.SessionTimeout <= 0 {
		opt.SessionTimeout = defaultSessionTimeout
	}
	var h http.Handler = mcp.NewStreamableHTTPHandler(getServer, &mcp.StreamableHTTPOptions{
		Stateless:           opt.Stateless,
		SessionTimeout:      opt.SessionTimeout,
		MaxRequestBodyBytes: opt.MaxBodyBytes,
	})
	h = endStreamsOnShutdown(h)
	if opt.Guard != nil {
		h = opt.Guard(h)
	}
	h = http.NewCrossOriginProtection().Handler(h)

	mux := http.NewServeMux()
	mux.Handle(MCPPath, h)
	if opt.Metrics != nil {
		m := opt.Metrics
		if opt.Guard != nil {
			m = opt.Guard(m)
		}
		mux.Handle("GET "+MetricsPath, m)
	}
	mux.HandleFunc("GET "+HealthPath, func(w http.ResponseWriter, r *http.Request) {
		var v any = map[string]string{"status": "ok"}
		if opt.Health != nil {
			v = opt.Health()
		}
		b, err := json.Marshal(v)
		if err != nil {
			http.Error(w, "mcptransport: health: "+err.Error(), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-store")
		w.Write(append(b, '\n'))
	})
	return checkHost(mux)
}

// checkHost refuses, with 403, a request that reached a loopback address under a Host that is
// not loopback: a browser sends the page's name as Host, so a rebound name is caught even
// when the page is "same-origin" with itself. Requests to other addresses (a server bound
// beyond loopback, reached over the network) pass; they need a Guard instead.
func checkHost(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if local, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr); ok && local != nil &&
			isLoopback(local.String()) && !isLoopback(r.Host) {
			http.Error(w, fmt.Sprintf("Forbidden: a server on loopback answers only requests to a loopback host, not %q", service.Echo(r.Host)), http.StatusForbidden)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// isLoopback tells whether hostport ("host", "host:port", "[v6]:port") names localhost or a
// loopback IP without a zone.
func isLoopback(hostport string) bool {
	host, _, err := net.SplitHostPort(hostport)
	if err != nil {
		host = strings.TrimSuffix(strings.TrimPrefix(hostport, "["), "]")
	}
	if strings.EqualFold(host, "localhost") {
		return true
	}
	// A zone ("::1%x.evil.example") is text a name could end in; loopback needs none.
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.Zone() == "" && ip.IsLoopback()
}

// IsLoopbackAddr tells whether a listener's address is loopback only: a front bound elsewhere
// (0.0.0.0, a LAN address) is reachable by others, and its command warns so.
func IsLoopbackAddr(addr net.Addr) bool {
	if tcp, ok := addr.(*net.TCPAddr); ok {
		return tcp.IP.IsLoopback()
	}
	return isLoopback(addr.String())
}

// shutdownKey carries, in the base context of ServeHTTP's requests, a context that ends when
// the server starts shutting down.
type shutdownKey struct{}

// endStreamsOnShutdown ends a GET event stream when ServeHTTP shuts down. Such a stream stays
// open until the client leaves, and http.Server.Shutdown waits for open requests: without
// this, every shutdown with a client attached would take the whole ShutdownTimeout. POSTs keep
// their context, so calls in flight finish.
func endStreamsOnShutdown(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if down, ok := r.Context().Value(shutdownKey{}).(context.Context); ok && r.Method == http.MethodGet {
			ctx, cancel := context.WithCancel(r.Context())
			defer cancel()
			defer context.AfterFunc(down, cancel)()
			r = r.WithContext(ctx)
		}
		next.ServeHTTP(w, r)
	})
}

// ServeHTTP serves h on ln until ctx ends, then shuts down (graceful.Serve): it stops
// accepting, ends the GET event streams, closes the connections that have not sent a request,
// and waits up to ShutdownTimeout for requests in flight before closing what is left. The http.Server bounds the time to read a request's header and body, never the
// time to write a response (an event stream lasts as long as its session).
func ServeHTTP(ctx context.Context, ln net.Listener, h http.Handler) error {
	down, shutDown := context.WithCancel(context.Background())
	defer shutDown()
	hs := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       time.Minute,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    64 << 10,
		BaseContext: func(net.Listener) context.Context {
			return context.WithValue(context.Background(), shutdownKey{}, down)
		},
	}
	hs.RegisterOnShutdown(shutDown)
	return graceful.Serve(ctx, hs, ln, ShutdownTimeout)
}
