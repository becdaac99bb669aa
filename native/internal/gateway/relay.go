package gateway

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A downstream server's own requests (sampling, elicitation, roots) and its notifications
// (logging, resources updated) go to the front session that caused them. One connection to a
// server serves every front session, and MCP does not say which of a client's requests a
// server's request belongs to (the streamable HTTP transport routes it on the request's
// stream, but the SDK's client does not tell its handlers). The gateway knows which front
// requests are in flight on each server: a server request is the work of the one session with
// requests in flight there. When requests of several sessions are in flight, it cannot tell
// whose it is; sending a sampling prompt or a question to the wrong user is worse than
// refusing it, so it is refused, with an error that says so.

// pending is one front request forwarded to a server: in flight, or answered a moment ago.
type pending struct {
	s     *frontSession
	ss    *mcp.ServerSession
	ctx   context.Context // the front request's: a request sent with it goes on that request's stream
	ended time.Time       // zero while in flight
}

// noteGrace is how long a request is still the likely cause of a server's notifications after
// its answer: the SDK may handle a notification the server sent before its result after the
// result, as with progress (progressGrace).
const noteGrace = progressGrace

// track notes a front request in flight on d until the returned func is called.
func (d *downstream) track(s *frontSession, ss *mcp.ServerSession, ctx context.Context) func() {
	if ss == nil {
		return func() {}
	}
	p := &pending{s: s, ss: ss, ctx: ctx}
	now := time.Now()
	d.pendMu.Lock()
	if d.pend == nil {
		d.pend = map[*pending]bool{}
	}
	for q := range d.pend {
		if !q.ended.IsZero() && now.Sub(q.ended) > noteGrace {
			delete(d.pend, q)
		}
	}
	d.pend[p] = true
	d.pendMu.Unlock()
	return func() {
		d.pendMu.Lock()
		p.ended = time.Now()
		d.pendMu.Unlock()
	}
}

// errNoCaller and errManyCallers are why a server's request has no front session to go to.
var (
	errNoCaller    = errors.New("no client request is in flight on this server")
	errManyCallers = errors.New("requests of several clients are in flight on this server, and MCP does not say whose this is")
)

// caller is the front request a server's request belongs to: the latest in flight of the one
// session with requests in flight on d. With recent, requests answered within noteGrace
// count too (for notifications).
func (d *downstream) caller(recent ...bool) (*pending, error) {
	withRecent := len(recent) > 0 && recent[0]
	now := time.Now()
	d.pendMu.Lock()
	defer d.pendMu.Unlock()
	var out *pending
	for p := range d.pend {
		if !p.ended.IsZero() && (!withRecent || now.Sub(p.ended) > noteGrace) {
			continue
		}
		if out != nil && out.s != p.s {
			return nil, errManyCallers
		}
		// One in flight before any answered; of the answered, the latest.
		if out == nil || p.ended.IsZero() && !out.ended.IsZero() || !out.ended.IsZero() && p.ended.After(out.ended) {
			out = p
		}
	}
	if out == nil {
		return nil, errNoCaller
	}
	return out, nil
}

// refuse is the JSON-RPC error a server gets for a request of method the gateway cannot pass on.
func (d *downstream) refuse(method string, why error) error {
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest,
		Message: fmt.Sprintf("caskg gateway: %s from server %s not passed on: %v", method, d.cfg.Name, why)}
}

// relayRequest sends a server's request of method to the front session it goes to (forCaller),
// as send does it there, and answers with what the client answered.
func relayRequest[R any](ctx context.Context, d *downstream, method string, has func(*mcp.ClientCapabilities) bool,
	send func(context.Context, *mcp.ServerSession) (R, error)) (R, error) {
	p, cctx, done, err := d.forCaller(ctx, method, has)
	if err != nil {
		var zero R
		return zero, err
	}
	defer done()
	return send(cctx, p.ss)
}

// forCaller finds the session a server request of method goes to, with has saying whether its
// client declared the capability, and a context that ends with either request.
func (d *downstream) forCaller(ctx context.Context, method string, has func(*mcp.ClientCapabilities) bool) (*pending, context.Context, func(), error) {
	p, err := d.caller()
	if err != nil {
		return nil, nil, nil, d.refuse(method, err)
	}
	ip := p.ss.InitializeParams()
	if ip == nil || ip.Capabilities == nil || !has(ip.Capabilities) {
		return nil, nil, nil, d.refuse(method, errors.New("the client of the request in flight does not support it"))
	}
	cctx, cancel := context.WithCancel(p.ctx)
	stop := context.AfterFunc(ctx, cancel)
	return p, cctx, func() { stop(); cancel() }, nil
}

// clientOptions are the handlers of d's connection for what the server sends on its own.
//
// The connection advertises sampling, elicitation and roots (with listChanged): it serves
// every front session, those that have these capabilities and those that do not, and the
// gateway cannot reconnect a server each time a client comes or goes. A request whose client
// lacks the capability is refused, naming it, as a client without it would refuse it.
func (d *downstream) clientOptions() *mcp.ClientOptions {
	h := d.hub
	return &mcp.ClientOptions{
		Capabilities: &mcp.ClientCapabilities{
			RootsV2:     &mcp.RootCapabilities{ListChanged: true},
			Sampling:    &mcp.SamplingCapabilities{},
			Elicitation: &mcp.ElicitationCapabilities{Form: &mcp.FormElicitationCapabilities{}, URL: &mcp.URLElicitationCapabilities{}},
		},
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
			select {
			case d.relist <- struct{}{}:
			default:
			}
		},
		ProgressNotificationHandler: func(ctx context.Context, req *mcp.ProgressNotificationClientRequest) {
			h.relayProgress(ctx, req.Params)
		},
		CreateMessageWithToolsHandler: func(ctx context.Context, req *mcp.CreateMessageWithToolsRequest) (*mcp.CreateMessageWithToolsResult, error) {
			return relayRequest(ctx, d, "sampling/createMessage", func(c *mcp.ClientCapabilities) bool { return c.Sampling != nil },
				func(ctx context.Context, ss *mcp.ServerSession) (*mcp.CreateMessageWithToolsResult, error) {
					return ss.CreateMessageWithTools(ctx, req.Params)
				})
		},
		ElicitationHandler: func(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return relayRequest(ctx, d, "elicitation/create", func(c *mcp.ClientCapabilities) bool { return c.Elicitation != nil },
				func(ctx context.Context, ss *mcp.ServerSession) (*mcp.ElicitResult, error) {
					return ss.Elicit(ctx, req.Params)
				})
		},
		LoggingMessageHandler: func(ctx context.Context, req *mcp.LoggingMessageRequest) {
			d.relayLog(ctx, req.Params)
		},
		ResourceUpdatedHandler: func(ctx context.Context, req *mcp.ResourceUpdatedNotificationRequest) {
			if req.Params != nil {
				h.resourceUpdated(ctx, d.cfg.Name, req.Params.URI)
			}
		},
		ResourceListChangedHandler: func(context.Context, *mcp.ResourceListChangedRequest) {
			h.listChanged(changedResources)
		},
		PromptListChangedHandler: func(context.Context, *mcp.PromptListChangedRequest) {
			h.listChanged(changedPrompts)
		},
	}
}

// rootsMiddleware answers a server's roots/list with the roots of the client whose request is
// in flight, when there is one: those it gave (fetchRoots), or else asked of it now.
// Otherwise the SDK answers with the client's roots, which setRoots keeps at the roots every
// connected client shares (sharedRoots).
func (d *downstream) rootsMiddleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if method != "roots/list" {
			return next(ctx, method, req)
		}
		p, err := d.caller()
		if err != nil {
			return next(ctx, method, req)
		}
		if !hasRoots(p.ss) {
			// A client without roots has given none: the shared roots would be other
			// clients'.
			return &mcp.ListRootsResult{Roots: []*mcp.Root{}}, nil
		}
		if roots, ok := d.hub.rootsOf(p.s); ok {
			return &mcp.ListRootsResult{Roots: roots}, nil
		}
		cctx, cancel := context.WithCancel(p.ctx)
		defer cancel()
		defer context.AfterFunc(ctx, cancel)()
		res, err := p.ss.ListRoots(cctx, nil)
		if err != nil {
			return nil, d.refuse(method, err)
		}
		return res, nil
	}
}

// rootsOf are the roots session s gave, if it has.
func (g *Gateway) rootsOf(s *frontSession) ([]*mcp.Root, bool) {
	g.roots.mu.Lock()
	defer g.roots.mu.Unlock()
	r, ok := g.roots.bySess[s]
	if r == nil {
		r = []*mcp.Root{}
	}
	return r, ok
}

// relayLog passes a server's log message to the session whose request is in flight, or, with
// none, to every session whose client may see the server's tools; the front session's level
// (logging/setLevel) decides whether it is sent. With requests of several sessions in flight
// the message is dropped: it may be about any of them.
func (d *downstream) relayLog(ctx context.Context, params *mcp.LoggingMessageParams) {
	if params == nil {
		return
	}
	msg := *params
	if msg.Logger == "" {
		msg.Logger = d.cfg.Name
	} else {
		msg.Logger = d.cfg.Name + sep + msg.Logger
	}
	p, err := d.caller(true)
	switch {
	case err == nil:
		_ = p.ss.Log(ctx, &msg)
		return
	case errors.Is(err, errManyCallers):
		return
	}
	c := d.hub.current()
	for _, s := range d.hub.liveSessions() {
		if s.seesServer(c, d.cfg.Name) {
			if ss := s.session(); ss != nil {
				_ = ss.Log(ctx, &msg)
			}
		}
	}
}

// liveSessions are the registered front sessions.
func (g *Gateway) liveSessions() []*frontSession {
	g.mu.Lock()
	defer g.mu.Unlock()
	out := make([]*frontSession, 0, len(g.sessions))
	for s := range g.sessions {
		out = append(out, s)
	}
	return out
}

// session is the front session's SDK session, nil before its first request.
func (s *frontSession) session() *mcp.ServerSession { return s.g.sdkSession(s) }

// sdkSession is s.ss, which the gateway's lock guards.
func (g *Gateway) sdkSession(s *frontSession) *mcp.ServerSession {
	g.mu.Lock()
	defer g.mu.Unlock()
	return s.ss
}

// seesServer reports whether the session's client may see a tool of server in c: what a
// client may not see of a server, it may not hear from it either.
func (s *frontSession) seesServer(c *catalog, server string) bool {
	if s.filter == nil {
		return true
	}
	for _, e := range c.entries {
		if e.Server == server && s.keeps(e.Name) {
			return true
		}
	}
	return false
}

// logLevels are MCP's logging levels, most verbose first.
var logLevels = []mcp.LoggingLevel{"debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"}

// setLogLevel records a front session's logging/setLevel and passes the most verbose level any
// session asked for to every server that logs; each session still gets only the messages at
// its own level (ServerSession.Log).
func (s *frontSession) setLogLevel(level mcp.LoggingLevel) {
	if slices.Contains(logLevels, level) {
		s.g.setLogLevel(s, level)
	}
}

// setLogLevel is setLogLevel's work on the gateway's state.
func (g *Gateway) setLogLevel(s *frontSession, level mcp.LoggingLevel) {
	g.mu.Lock()
	s.logLevel = level
	g.mu.Unlock()
	g.syncLogLevel(context.Background())
}

// logLevel is the most verbose level of the sessions, "" when none asked for logs.
func (g *Gateway) logLevel() mcp.LoggingLevel {
	g.mu.Lock()
	defer g.mu.Unlock()
	best := -1
	for s := range g.sessions {
		if i := slices.Index(logLevels, s.logLevel); i >= 0 && (best < 0 || i < best) {
			best = i
		}
	}
	if best < 0 {
		return ""
	}
	return logLevels[best]
}

// syncLogLevel passes the sessions' level to every ready server that logs and has not had it.
func (g *Gateway) syncLogLevel(ctx context.Context) {
	level := g.logLevel()
	if level == "" {
		return
	}
	for _, d := range g.downs {
		d.sendLogLevel(ctx, level)
	}
}

// sendLogLevel sends level to d's session when it logs and has another level.
func (d *downstream) sendLogLevel(ctx context.Context, level mcp.LoggingLevel) {
	d.mu.Lock()
	cs, sent := d.session, d.logLevel
	d.mu.Unlock()
	if cs == nil || sent == level {
		return
	}
	if ir := cs.InitializeResult(); ir == nil || ir.Capabilities == nil || ir.Capabilities.Logging == nil {
		return
	}
	cctx, cancel := context.WithTimeout(ctx, d.cfg.Timeout)
	defer cancel()
	if err := cs.SetLoggingLevel(cctx, &mcp.SetLoggingLevelParams{Level: level}); err != nil {
		d.logf("gateway: server %s: logging/setLevel %s: %s", d.cfg.Name, level, oneLine(err.Error()))
		return
	}
	d.mu.Lock()
	if d.session == cs {
		d.logLevel = level
	}
	d.mu.Unlock()
}

// Roots. A server asks for roots when it starts and after roots/list_changed, with no client
// request in flight (server-filesystem does): it then gets the roots every connected client
// with roots shares, so no client's folders reach a server through another client. A single
// client (stdio, one agent) shares all of its roots.

// rootsTimeout bounds a client's answer to roots/list.
const rootsTimeout = 10 * time.Second

// rootsState keeps the roots each front session gave.
type rootsState struct {
	mu     sync.Mutex
	bySess map[*frontSession][]*mcp.Root
	shared []*mcp.Root
}

// fetchRoots asks the session's client for its roots (after initialized, and after its
// roots/list_changed) and updates the shared roots.
func (s *frontSession) fetchRoots(ctx context.Context, ss *mcp.ServerSession) {
	if !hasRoots(ss) {
		return
	}
	go func() {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), rootsTimeout)
		defer cancel()
		// Over HTTP the request goes on the client's GET stream, which a client opens after
		// initialized (the TypeScript SDK's does): until it is there, the request is not
		// delivered, and is tried again, a little later each time, within rootsTimeout.
		wait := 20 * time.Millisecond
		for {
			res, err := ss.ListRoots(cctx, nil)
			if err == nil {
				s.g.setRoots(s, res.Roots, true)
				return
			}
			select {
			case <-cctx.Done():
				s.g.logf("gateway: session %s: roots/list: %s", s.id, oneLine(err.Error()))
				return
			case <-time.After(wait):
			}
			wait = min(2*wait, time.Second)
		}
	}()
}

// setRoots records (or, with has false, forgets) a session's roots and, when the roots all
// sessions share changed, gives them to every server's connection, which tells the servers
// (roots/list_changed).
func (g *Gateway) setRoots(s *frontSession, roots []*mcp.Root, has bool) {
	r := &g.roots
	r.mu.Lock()
	if r.bySess == nil {
		r.bySess = map[*frontSession][]*mcp.Root{}
	}
	if has {
		r.bySess[s] = slices.Clone(roots)
	} else {
		if _, ok := r.bySess[s]; !ok {
			r.mu.Unlock()
			return
		}
		delete(r.bySess, s)
	}
	shared := sharedRoots(r.bySess)
	same := slices.EqualFunc(shared, r.shared, func(a, b *mcp.Root) bool { return a.URI == b.URI && a.Name == b.Name })
	old := r.shared
	r.shared = shared
	r.mu.Unlock()
	if same {
		return
	}
	for _, d := range g.downs {
		d.mu.Lock()
		c := d.client
		d.mu.Unlock()
		if c != nil {
			applyRoots(c, old, shared)
		}
	}
}

// currentRoots are the shared roots now.
func (g *Gateway) currentRoots() []*mcp.Root {
	g.roots.mu.Lock()
	defer g.roots.mu.Unlock()
	return g.roots.shared
}

// applyRoots changes a client's roots from old to now.
func applyRoots(c *mcp.Client, old, now []*mcp.Root) {
	var gone []string
	for _, o := range old {
		if !slices.ContainsFunc(now, func(n *mcp.Root) bool { return n.URI == o.URI }) {
			gone = append(gone, o.URI)
		}
	}
	if len(gone) > 0 {
		c.RemoveRoots(gone...)
	}
	if len(now) > 0 {
		c.AddRoots(now...)
	}
}

// sharedRoots are the roots (by URI) every session in by gave, sorted by URI.
func sharedRoots(by map[*frontSession][]*mcp.Root) []*mcp.Root {
	var out []*mcp.Root
	first := true
	for _, roots := range by {
		if first {
			out, first = slices.Clone(roots), false
			continue
		}
		out = slices.DeleteFunc(out, func(r *mcp.Root) bool {
			return !slices.ContainsFunc(roots, func(o *mcp.Root) bool { return o.URI == r.URI })
		})
	}
	slices.SortFunc(out, func(a, b *mcp.Root) int { return strings.Compare(a.URI, b.URI) })
	return slices.CompactFunc(out, func(a, b *mcp.Root) bool { return a.URI == b.URI })
}

// hasRoots reports whether the session's client declared roots.
func hasRoots(ss *mcp.ServerSession) bool {
	ip := ss.InitializeParams()
	return ip != nil && ip.Capabilities != nil && ip.Capabilities.RootsV2 != nil
}
