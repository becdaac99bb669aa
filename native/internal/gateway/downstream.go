package gateway

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Limits on what passes through the gateway.
const (
	maxArgumentBytes  = 1 << 20 // of a call's arguments, as JSON
	maxResultBytes    = 8 << 20 // of a call's result, as JSON
	maxToolsPerServer = 20000
	maxListPages      = 1000
	// degradeAfter is how many calls in a row must time out before the gateway restarts the
	// server: one timeout may be a slow tool, three in a row with no answer between them is a
	// server that has stopped answering, which a new process or connection often fixes.
	degradeAfter = 3
)

// Server states as health shows them; a failure is "failed: REASON" and a wait before the next
// attempt "restarting in 4s".
const (
	stateConnecting = "connecting"
	stateReady      = "ready"
	stateStopped    = "stopped"
	stateDegraded   = "degraded" // calls kept timing out; the session is being ended to restart
)

// downstream is one configured server: its connection, kept alive by run, and the tools it
// listed last. It gets its options when it is made and tells the gateway (hub) what happened.
type downstream struct {
	cfg ServerConfig
	hub hub
	downstreamOptions

	relist    chan struct{}             // a tools/list_changed arrived; buffered 1, so notifications coalesce
	badOutput atomic.Pointer[badOutput] // what a stdio server wrote that broke the session
	first     chan struct{}             // closed when the first attempt has ended, ready or not

	mu        sync.Mutex
	state     string
	lastErr   string
	session   *mcp.ClientSession // nil unless ready
	tools     []*mcp.Tool        // last listing (or the previous run's catalog); nil before any
	listed    bool               // tools come from this run's listing
	timeouts  int                // calls in a row of the current session that timed out
	kick      chan struct{}      // closed to end the current session (degraded); nil when closed
	restarts  int                // sessions that ended and were started again
	lastEnd   string             // why the last of them ended
	client    *mcp.Client        // of the latest connection, for its roots (setRoots)
	logLevel  mcp.LoggingLevel   // the logging level the current session was given
	firstOnce sync.Once

	pendMu sync.Mutex
	pend   map[*pending]bool // the front requests in flight on this server (track)
}

// downstreamOptions are what a downstream takes of the gateway's options.
type downstreamOptions struct {
	clock clock
	// backoffMin and backoffMax bound the wait before reconnecting (Options.BackoffMin, Max).
	backoffMin, backoffMax time.Duration
	version                string // told to the server
	logf                   func(format string, a ...any)
	dial                   func(ServerConfig) mcp.Transport // Options.dial
}

// hub is what a downstream asks of the gateway (the front sessions' state), and tells it.
type hub interface {
	catalogChanged()                                                // the server's tools changed
	current() *catalog                                              // the current catalog
	logLevel() mcp.LoggingLevel                                     // the most verbose level front sessions asked for
	resubscribe(context.Context, *downstream, *mcp.ClientSession)   // front sessions' subscriptions, again
	serverListChanged(*mcp.ClientSession)                           // a new session: tell the front what it lists
	currentRoots() []*mcp.Root                                      // the roots the front sessions share
	rootsOf(*frontSession) ([]*mcp.Root, bool)                      // the roots one front session gave
	liveSessions() []*frontSession                                  // the registered front sessions
	relayProgress(context.Context, *mcp.ProgressNotificationParams) // to the request it is for
	resourceUpdated(ctx context.Context, server, uri string)        // to the sessions subscribed
	listChanged(kinds int)                                          // the server's resources or prompts changed
}

func newDownstream(h hub, cfg ServerConfig, seed []*mcp.Tool, opt downstreamOptions) *downstream {
	return &downstream{cfg: cfg, hub: h, downstreamOptions: opt, relist: make(chan struct{}, 1), first: make(chan struct{}),
		state: stateConnecting, tools: seed}
}

// status is a server's line in health.
type status struct {
	Name  string `json:"name"`
	State string `json:"state"`
	Tools int    `json:"tools"` // in the catalog: allowed by the config, valid names
	Error string `json:"error,omitempty"`
	// Timeouts counts the calls in a row of the current session that had no result in time;
	// at degradeAfter the server is restarted.
	Timeouts int `json:"timeouts,omitempty"`
	// Restarts counts the sessions that ended (connection lost, degraded) and were started
	// again; LastRestart says why the last one ended.
	Restarts    int    `json:"restarts"`
	LastRestart string `json:"last_restart,omitempty"`
}

func (d *downstream) status() status {
	d.mu.Lock()
	defer d.mu.Unlock()
	return status{Name: d.cfg.Name, State: d.state, Tools: len(d.tools), Error: d.lastErr,
		Timeouts: d.timeouts, Restarts: d.restarts, LastRestart: d.lastEnd}
}

// snapshot returns the tools known and the live session (nil when not ready) with its state.
func (d *downstream) snapshot() ([]*mcp.Tool, *mcp.ClientSession, string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.tools, d.session, d.state
}

func (d *downstream) setState(state, errText string) {
	d.mu.Lock()
	d.state, d.lastErr = state, errText
	d.mu.Unlock()
}

func (d *downstream) firstDone() { d.firstOnce.Do(func() { close(d.first) }) }

// run keeps the server connected until ctx ends: connect, list, serve until the session ends,
// then wait the backoff and try again. Each failure doubles the wait from BackoffMin up to
// BackoffMax; a session that stayed up for BackoffMax resets it.
func (d *downstream) run(ctx context.Context) {
	defer d.firstDone()
	attempt := 0
	for ctx.Err() == nil {
		// The last failure stays in health while the next attempt runs: a server that keeps
		// failing spends most of its time connecting, and health must still say why.
		d.mu.Lock()
		d.state = stateConnecting
		d.mu.Unlock()
		start := d.clock.now()
		wasReady, err := d.attempt(ctx)
		if ctx.Err() != nil {
			break
		}
		if wasReady {
			d.mu.Lock()
			d.restarts++
			d.lastEnd = err.Error()
			d.mu.Unlock()
		}
		if d.clock.now().Sub(start) >= d.backoffMax {
			attempt = 0
		}
		delay := min(d.backoffMin<<min(attempt, 20), d.backoffMax)
		attempt++
		reason := err.Error()
		d.setState(fmt.Sprintf("restarting in %v", delay), reason)
		d.logf("gateway: server %s: %s; restarting in %v", d.cfg.Name, reason, delay)
		d.firstDone()
		d.clock.sleep(ctx, delay)
	}
	d.mu.Lock()
	d.state, d.session = stateStopped, nil
	d.mu.Unlock()
}

// attempt connects once and serves the session until it ends; the error says why it ended,
// and ready whether the session got as far as serving calls.
func (d *downstream) attempt(ctx context.Context) (ready bool, _ error) {
	cs, err := d.connect(ctx)
	if err != nil {
		return false, err
	}
	defer cs.Close()
	ended := make(chan error, 1)
	go func() { ended <- cs.Wait() }()
	tools, err := d.list(ctx, cs)
	if err != nil {
		return false, err
	}
	kick := make(chan struct{})
	d.mu.Lock()
	d.session, d.tools, d.listed, d.state, d.lastErr = cs, tools, true, stateReady, ""
	d.timeouts, d.kick, d.logLevel = 0, kick, ""
	d.mu.Unlock()
	d.firstDone()
	d.hub.catalogChanged()
	// A new session has none of the old one's state: the logging level the clients asked
	// for and their subscriptions are given again.
	if level := d.hub.logLevel(); level != "" {
		d.sendLogLevel(ctx, level)
	}
	d.hub.resubscribe(ctx, d, cs)
	d.hub.serverListChanged(cs)
	defer func() {
		d.mu.Lock()
		d.session, d.kick, d.timeouts = nil, nil, 0
		d.mu.Unlock()
	}()
	for {
		select {
		case <-ctx.Done():
			return true, ctx.Err()
		case <-kick:
			return true, fmt.Errorf("degraded: %d calls in a row had no result within %v", degradeAfter, d.cfg.Timeout)
		case err := <-ended:
			if bad := d.badOutput.Load(); bad != nil {
				err = bad
			} else if err == nil {
				err = errors.New("the server closed the connection")
			}
			return true, fmt.Errorf("failed: connection lost: %s", oneLine(err.Error()))
		case <-d.relist:
			tools, err := d.list(ctx, cs)
			if err != nil {
				return true, err
			}
			d.mu.Lock()
			d.tools = tools
			d.mu.Unlock()
			d.hub.catalogChanged()
		}
	}
}

// callEnded counts a call of session cs that timed out, or resets the count for one that had
// an answer; the degradeAfter-th timeout in a row marks the server degraded and ends the
// session, which run starts again (a new process for stdio, a new connection for HTTP). A
// call of a session that has already ended counts for nothing.
func (d *downstream) callEnded(cs *mcp.ClientSession, timedOut bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.session != cs || cs == nil {
		return
	}
	if !timedOut {
		d.timeouts = 0
		return
	}
	d.timeouts++
	if d.timeouts >= degradeAfter && d.kick != nil {
		d.state = stateDegraded
		close(d.kick)
		d.kick = nil
	}
}

// connect starts the server (stdio) or reaches it (HTTP) and initializes a session, within the
// server's timeout.
func (d *downstream) connect(ctx context.Context) (*mcp.ClientSession, error) {
	var t mcp.Transport
	if d.dial != nil {
		t = d.dial(d.cfg)
	}
	switch {
	case t != nil:
	case d.cfg.http():
		client := &http.Client{Transport: headerTransport{headers: d.cfg.Headers, base: http.DefaultTransport}}
		t = &mcp.StreamableClientTransport{Endpoint: d.cfg.URL, HTTPClient: client, MaxRetries: -1}
	default:
		cmd := exec.Command(d.cfg.Command, d.cfg.Args...)
		cmd.Env = serverEnv(&d.cfg, os.Environ())
		cmd.Dir = d.cfg.Cwd
		cmd.Stderr = &lineWriter{prefix: "gateway: server " + d.cfg.Name + ": stderr: ", logf: d.logf}
		// A child that leaves a grandchild holding stderr must not stall Wait.
		cmd.WaitDelay = 2 * time.Second
		logf := func(format string, a ...any) {
			d.logf("gateway: server %s: %s", d.cfg.Name, fmt.Sprintf(format, a...))
		}
		t = watchedTransport{&commandTransport{cmd: cmd, terminate: 2 * time.Second, maxLine: maxMessageBytes, logf: logf}, &d.badOutput}
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "caskg-gateway", Version: d.version}, d.clientOptions())
	client.AddReceivingMiddleware(d.rootsMiddleware)
	d.mu.Lock()
	d.client = client
	d.mu.Unlock()
	// Roots set after this are the roots setRoots gives every server's client; this is the
	// state it started from (racing a change at worst repeats it).
	applyRoots(client, nil, d.hub.currentRoots())
	cctx, cancel := context.WithTimeout(ctx, d.cfg.Timeout)
	defer cancel()
	d.badOutput.Store(nil)
	cs, err := client.Connect(cctx, t, nil)
	if err != nil {
		if bad := d.badOutput.Load(); bad != nil {
			return nil, fmt.Errorf("failed: %s", oneLine(bad.Error()))
		}
		// A server that wrote garbage ends the session at once, but closing it may outlast the
		// timeout (a child that ignores its closed stdin); the garbage is the reason then.
		if cctx.Err() != nil && ctx.Err() == nil && errors.Is(err, context.DeadlineExceeded) {
			return nil, fmt.Errorf("failed: no answer to initialize within %v", d.cfg.Timeout)
		}
		return nil, fmt.Errorf("failed: %s", oneLine(err.Error()))
	}
	return cs, nil
}

// list lists the server's tools, page by page, within the server's timeout.
func (d *downstream) list(ctx context.Context, cs *mcp.ClientSession) ([]*mcp.Tool, error) {
	lctx, cancel := context.WithTimeout(ctx, d.cfg.Timeout)
	defer cancel()
	var tools []*mcp.Tool
	seen := map[string]bool{}
	params := &mcp.ListToolsParams{}
	for page := 0; ; page++ {
		if page == maxListPages {
			return nil, fmt.Errorf("failed: tools/list gave more than %d pages", maxListPages)
		}
		res, err := cs.ListTools(lctx, params)
		if err != nil {
			if lctx.Err() != nil && ctx.Err() == nil {
				return nil, fmt.Errorf("failed: no answer to tools/list within %v", d.cfg.Timeout)
			}
			return nil, fmt.Errorf("failed: tools/list: %s", oneLine(err.Error()))
		}
		for _, t := range res.Tools {
			if t == nil || t.Name == "" || seen[t.Name] {
				continue
			}
			seen[t.Name] = true
			tools = append(tools, t)
		}
		if len(tools) > maxToolsPerServer {
			return nil, fmt.Errorf("failed: more than %d tools", maxToolsPerServer)
		}
		if res.NextCursor == "" {
			break
		}
		params = &mcp.ListToolsParams{Cursor: res.NextCursor}
	}
	sort.Slice(tools, func(i, j int) bool { return tools[i].Name < tools[j].Name })
	return tools, nil
}

// headerTransport adds the configured headers to every request to an HTTP server.
type headerTransport struct {
	headers map[string]string
	base    http.RoundTripper
}

func (h headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if len(h.headers) > 0 {
		r = r.Clone(r.Context())
		for k, v := range h.headers {
			r.Header.Set(k, v)
		}
	}
	return h.base.RoundTrip(r)
}

// lineWriter passes a child's stderr to the log a line at a time.
type lineWriter struct {
	prefix string
	logf   func(string, ...any)
	mu     sync.Mutex
	buf    []byte
}

func (w *lineWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf = append(w.buf, p...)
	for {
		i := strings.IndexByte(string(w.buf), '\n')
		if i < 0 {
			break
		}
		w.logf("%s%s", w.prefix, strings.TrimRight(string(w.buf[:i]), "\r"))
		w.buf = w.buf[i+1:]
	}
	if len(w.buf) > 4096 {
		w.logf("%s%s", w.prefix, w.buf)
		w.buf = w.buf[:0]
	}
	return len(p), nil
}

// oneLine keeps the first line of an error text, cut to a readable length.
func oneLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	if r := []rune(s); len(r) > 300 {
		s = string(r[:297]) + "..."
	}
	return s
}

// badOutput is why a stdio server's session broke on its output (garbage on stdout).
type badOutput struct{ err error }

func (b *badOutput) Error() string {
	return "the server wrote something that is not JSON-RPC on stdout: " + b.err.Error()
}

// watchedTransport keeps the first read error of a stdio server's connection: the SDK ends a
// session on garbage, but the call that was waiting may see only its timeout or the closing,
// and health must say what the server did. (Only for stdio: the SDK's stdio connection has no
// client-side hooks a wrapper would hide; its HTTP one has.)
type watchedTransport struct {
	mcp.Transport
	bad *atomic.Pointer[badOutput]
}

func (w watchedTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := w.Transport.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return watchedConn{c, w.bad}, nil
}

type watchedConn struct {
	mcp.Connection
	bad *atomic.Pointer[badOutput]
}

func (c watchedConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	m, err := c.Connection.Read(ctx)
	if err != nil && ctx.Err() == nil && !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrClosedPipe) && !errors.Is(err, os.ErrClosed) {
		c.bad.CompareAndSwap(nil, &badOutput{err})
	}
	return m, err
}
